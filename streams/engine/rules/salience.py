"""Salience decay recorded in the ledger (SPEC §5 decision 9; seed 001)."""

from __future__ import annotations

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.salience import current_salience


def decay_salience(cycle: CycleContext) -> None:
    """Salience decays with event time since last access; recorded when it moved ≥ 0.05."""
    rule = cycle.policy.decay
    if not rule.enabled:
        return
    for record in cycle.live():
        memory = record.memory
        after = current_salience(
            memory, cycle.request.now, rule.half_life_seconds, rule.access_reinforcement
        )
        before = memory.salience if memory.salience is not None else min(1.0, memory.importance)
        if memory.salience is not None and abs(after - before) < 0.05:
            continue
        cycle.emit(
            "decayed",
            memory.memory_id,
            ledger.SalienceDecayed(
                memory.memory_id, memory.layer, record.version + 1, before, after
            ),
        )
