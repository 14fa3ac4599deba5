"""Procedural rules: an episodic event type seen often enough with enough success becomes a
learned procedure (docs/consolidation.md, "procedures"; seed 000 op 3)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import fmean

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.model import Memory
from streams.engine.text.budget import bounded_union, listed_tail
from streams.engine.user_state import MemoryRecord


def learn_procedures(cycle: CycleContext) -> None:
    """Episodic → procedural: an event type seen ≥ 3 times in 30 days with average success
    > 0.6 becomes ``<event_type>_learned_pattern``.

    The occurrences come from the window table (:mod:`streams.engine.occurrences`): each
    event type's window is found by bisection, so a cycle reads the last 30 days of each
    type, all of them, however long the user's history."""
    rule = cycle.policy.procedural
    if not rule.enabled:
        return
    since = cycle.request.now - rule.window_seconds * 1000
    for event_type in cycle.occurrences.event_types():
        occurrences = [cycle.records[i] for i in cycle.occurrences.since(event_type, since)]
        if not occurrences:
            continue
        # what it is learned from and lists as evidence: the newest occurrences that fit
        # LISTED_IDS_BYTES (an agent calling one tool 4,000 times in the window listed
        # 964 KB); counts, success and triggers come from these same occurrences, so
        # forgetting any of them still finds the procedure through its evidence
        records = listed_tail(occurrences, lambda r: r.memory.memory_id)
        count = len(records)
        average = fmean(r.memory.success or 0.0 for r in records)
        if count < rule.min_occurrences or average <= rule.min_success:
            continue
        latest = max(records, key=lambda r: r.memory.age_order)
        pattern_id = cycle.new_id("procedure", event_type)
        existing = cycle.records.get(pattern_id)
        truncated = count < len(occurrences)
        if existing is not None and _unchanged(existing.memory, records, truncated):
            continue
        procedure = Memory(
            memory_id=pattern_id,
            user_id=cycle.user_id,
            content=latest.memory.content,
            embedding=latest.memory.embedding or cycle.embed([latest.memory.content])[0],
            layer="procedural",
            kind=f"{event_type}_learned_pattern",
            trigger_conditions=bounded_union(r.memory.trigger_conditions for r in records),
            importance=max(r.memory.importance for r in records),
            confidence=round(average, 6),
            success=round(average, 6),
            metadata={
                "source": "episodic_promotion",
                "occurrence_count": str(count),
                "avg_success_rate": repr(round(average, 6)),
                "success_count": str(_round_half_up(count * average)),
                "failure_count": str(_round_half_up(count * (1 - average))),
                "evidence": _evidence(records),
            },
            created_at=cycle.request.now,
        )
        version = existing.version + 1 if existing else 1
        cycle.emit("procedure", pattern_id, ledger.MemoryStored(procedure, version))
        cycle.count("links", count)
        for record in records:
            if "consolidated_to_procedural" in record.memory.metadata:
                continue
            current = cycle.records[record.memory.memory_id]
            marked = current.memory.evolve(
                metadata={
                    **current.memory.metadata,
                    "consolidated_to_procedural": str(cycle.request.now),
                }
            )
            cycle.emit(
                "consolidated_to_procedural",
                record.memory.memory_id,
                ledger.MemoryStored(marked, current.version + 1),
            )


def _first_known(*values: int | None) -> int:
    return next(v for v in values if v is not None)


def _round_half_up(value: float) -> int:
    """SQL ROUND (seed 000 computes the counts in SQL), not Python's banker's rounding."""
    return math.floor(round(value, 9) + 0.5)  # round(…, 9): 3 * (1 - 5/6) is 0.4999…


def _evidence(records: Sequence[MemoryRecord]) -> str:
    return ",".join(sorted(r.memory.memory_id for r in records))


def _unchanged(existing: Memory, records: Sequence[MemoryRecord], truncated: bool) -> bool:
    """Nothing to learn again: the same count and, when the procedure lists only the newest
    occurrences (whose count stays the same as new ones come), the same evidence."""
    if existing.metadata.get("occurrence_count") != str(len(records)):
        return False
    return not truncated or existing.metadata.get("evidence") == _evidence(records)
