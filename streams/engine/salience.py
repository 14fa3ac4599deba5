"""Salience: how present a memory is, decaying exponentially with event time since last use.

salience(t) = min(1, importance + reinforcement * access_count) * 0.5 ** (idle / half_life)
where idle is the time since the memory was last accessed (or created). Computed from event
time only (seeds 001, 002), never the wall clock.
"""

from __future__ import annotations

from streams.engine.model import Memory


def last_touched(memory: Memory) -> int:
    return memory.last_accessed or memory.created_at or 0


def current_salience(
    memory: Memory, now: int, half_life_seconds: float, access_reinforcement: float
) -> float:
    base = min(1.0, memory.importance + access_reinforcement * memory.access_count)
    idle_seconds = max(0, now - last_touched(memory)) / 1000
    return round(base * 0.5 ** (idle_seconds / half_life_seconds), 6)
