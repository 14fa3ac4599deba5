"""Archiving by salience (docs/consolidation.md, "archive"; seed 001's PruneArchived)."""

from __future__ import annotations

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.salience import current_salience, last_touched


def archive_stale_memories(cycle: CycleContext) -> None:
    """Salience below the threshold and not accessed within max age → archived. Pinned and
    critical memories are never archived."""
    rule = cycle.policy.archive
    decay = cycle.policy.decay
    if not rule.enabled:
        return
    now = cycle.request.now
    for record in cycle.live():
        memory = record.memory
        if memory.pinned or memory.priority == "critical":
            continue
        salience = current_salience(
            memory, now, decay.half_life_seconds, decay.access_reinforcement
        )
        if salience >= rule.salience_threshold:
            continue
        if (
            rule.max_age_seconds is not None
            and (now - last_touched(memory)) / 1000 < rule.max_age_seconds
        ):
            continue
        cycle.emit(
            "archived",
            memory.memory_id,
            ledger.MemoryArchived(
                memory.memory_id,
                memory.layer,
                cycle.records[memory.memory_id].version + 1,
                "low_salience",
                salience,
            ),
        )
        cycle.count("archived")
