"""Salience decay, derived rather than stored (SPEC §5 decision 9; seeds 001, 002).

Salience is a pure function of (importance, access count, last touch, now)
(``streams.engine.salience.current_salience``), so a cycle does not write it back for every
memory: that made every cycle's ledger output grow with the user's history. Rules that act
on salience (001's archive, 002's pruner) compute it when they decide, and record it in the
decision that changes the memory's fate; read models compute current salience at query time
(``memstream_salience()`` in SQL). Seed 001's report still counts the decayed memories.
"""

from __future__ import annotations

from streams.engine.context import CycleContext
from streams.engine.salience import current_salience

DECAYED_BY = 0.05  # a memory counts as decayed once it lost this much salience


def count_decayed_memories(cycle: CycleContext) -> None:
    """How many of the memories the cycle looks at have decayed (seed 001's DecayedCount)."""
    rule = cycle.policy.decay
    if not rule.enabled:
        return
    now = cycle.request.now
    decayed = sum(
        1
        for record in cycle.live()
        if min(1.0, record.memory.importance)
        - current_salience(record.memory, now, rule.half_life_seconds, rule.access_reinforcement)
        >= DECAYED_BY
    )
    cycle.count("decayed", decayed)
