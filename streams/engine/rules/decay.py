"""Salience decay, derived rather than stored (docs/consolidation.md, "decay"; seeds 001, 002).

Salience is a pure function of (importance, access count, last touch, now)
(``streams.engine.salience.current_salience``), so a cycle does not write it back for every
memory: that made every cycle's ledger output grow with the user's history. Rules that act
on salience (001's archive, 002's pruner) compute it when they decide, and record it in the
decision that changes the memory's fate; read models compute current salience at query time
(``memstream_salience()`` in SQL). Seed 001's report still counts the decayed memories.
"""

from __future__ import annotations

from streams.engine.context import CycleContext
from streams.engine.model import Memory
from streams.engine.salience import current_salience, last_touched

DECAYED_BY = 0.05  # a memory counts as decayed once it lost this much salience

FRESH_HALF_LIVES = 0.07
"""No memory loses ``DECAYED_BY`` of its salience in less than this many half-lives of
idleness: salience starts at or above the memory's importance (access only adds to it), and
importance × (1 - 2^-0.07) is under 0.0474 for any importance up to 1, short of 0.05 by far
more than salience's rounding to six decimals. (The exact bound is -log2(0.95) = 0.0740.)"""


def has_decayed(memory: Memory, now: int, half_life_seconds: float, reinforcement: float) -> bool:
    """Whether ``memory`` has lost ``DECAYED_BY`` of its salience by ``now``. A memory idle
    for less than ``FRESH_HALF_LIVES`` cannot have, and is answered without computing its
    salience: a cycle's live memories are mostly recent."""
    if now - last_touched(memory) <= FRESH_HALF_LIVES * half_life_seconds * 1000:
        return False
    salience = current_salience(memory, now, half_life_seconds, reinforcement)
    return min(1.0, memory.importance) - salience >= DECAYED_BY


def count_decayed_memories(cycle: CycleContext) -> None:
    """How many of the memories the cycle looks at have decayed (seed 001's DecayedCount)."""
    rule = cycle.policy.decay
    if not rule.enabled:
        return
    now = cycle.request.now
    half_life, reinforcement = rule.half_life_seconds, rule.access_reinforcement
    decayed = sum(
        has_decayed(record.memory, now, half_life, reinforcement) for record in cycle.live()
    )
    cycle.count("decayed", decayed)
