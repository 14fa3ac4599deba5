"""Keeps a consolidation cycle's decisions together: all of them in one transaction, or none.

A cycle's decisions are contiguous in their ledger partition (one input event produced
them, in one Kafka transaction) and end with ``ConsolidationCompleted``. A consumed batch
can still end in the middle of one. :func:`split_at_open_cycles` keeps, per partition, the
records up to the last point where no cycle is open, and says where to resume for the rest,
so the read models never show half a cycle. A cycle larger than a whole batch cannot be
held back forever; it is applied across batches (and said so).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from streams.engine.ledger import ConsolidationCompleted, ConsolidationEvent


@dataclass(frozen=True, slots=True)
class Consumed:
    topic: str
    partition: int
    offset: int
    event: ConsolidationEvent | None  # None: undecodable (dead-lettered, skipped)


@dataclass
class Split:
    ready: list[Consumed] = field(default_factory=list)
    resume_at: dict[tuple[str, int], int] = field(default_factory=dict)  # first held-back offset
    oversized: list[tuple[str, int]] = field(default_factory=list)  # cycles split anyway


def split_at_open_cycles(records: list[Consumed]) -> Split:
    by_partition: dict[tuple[str, int], list[Consumed]] = {}
    for record in records:
        by_partition.setdefault((record.topic, record.partition), []).append(record)
    split = Split()
    for key, items in by_partition.items():
        cut = _last_closed_position(items)
        if cut == 0 and items:
            split.oversized.append(key)
            cut = len(items)
        split.ready.extend(items[:cut])
        if cut < len(items):
            split.resume_at[key] = items[cut].offset
    split.ready.sort(key=lambda r: (r.topic, r.partition, r.offset))
    return split


def _last_closed_position(items: list[Consumed]) -> int:
    """How many leading records end outside any open cycle."""
    open_cycle: str | None = None
    closed_at = 0
    for position, record in enumerate(items, start=1):
        event = record.event
        if event is not None and event.cycle_id is not None:
            completed = isinstance(event.payload, ConsolidationCompleted)
            open_cycle = None if completed else event.cycle_id
        if open_cycle is None:
            closed_at = position
    return closed_at
