"""Keeps a consolidation cycle's decisions together: all of them in one transaction, or none.

A cycle's decisions are contiguous in their ledger partition (one input event produced
them, in one Kafka transaction) and end with ``ConsolidationCompleted``. A consumed batch
can still end in the middle of one. :func:`split_at_open_cycles` keeps, per partition, the
records up to the last point where no cycle is open, and says where to resume for the rest,
so the read models never show half a cycle. A cycle larger than a whole batch cannot be
held back forever; it is applied across batches (and said so). :func:`halve` splits a batch
being searched for a poison record at the cycle boundary nearest its middle, for the same
reason: only a cycle that itself holds the poison record is ever split.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from streams.engine.ledger import ConsolidationCompleted, ConsolidationEvent


@dataclass(frozen=True, slots=True)
class Consumed:
    topic: str
    partition: int
    offset: int
    event: ConsolidationEvent | None  # None: dead-lettered, only the offset advances


def skipped(record: Consumed) -> Consumed:
    """The same position with nothing to apply: the stored offset moves past it."""
    return Consumed(record.topic, record.partition, record.offset, None)


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


def halve(records: list[Consumed]) -> tuple[list[Consumed], list[Consumed]]:
    """Two non-empty parts of ``records`` (two or more, sorted by topic, partition, offset),
    cut where no cycle is open, as near the middle as possible; in the middle of the only
    cycle when there is no such place."""
    assert len(records) >= 2, "only a batch of two or more records can be halved"
    middle = len(records) / 2
    cuts = _cuts_outside_cycles(records)
    cut = min(cuts, key=lambda c: (abs(c - middle), c)) if cuts else len(records) // 2
    return records[:cut], records[cut:]


def _cuts_outside_cycles(records: list[Consumed]) -> list[int]:
    """Positions 1..n-1 where cutting leaves every cycle whole on one side: between two
    partitions, or after a record that leaves no cycle open in its partition."""
    cuts = []
    open_cycle: str | None = None
    for position, (record, following) in enumerate(zip(records, records[1:], strict=False), 1):
        open_cycle = _open_cycle_after(open_cycle, record)
        if (following.topic, following.partition) != (record.topic, record.partition):
            open_cycle = None  # each partition's records start outside any cycle
            cuts.append(position)
        elif open_cycle is None:
            cuts.append(position)
    return cuts


def _last_closed_position(items: list[Consumed]) -> int:
    """How many leading records (of one partition) end outside any open cycle."""
    open_cycle: str | None = None
    closed_at = 0
    for position, record in enumerate(items, start=1):
        open_cycle = _open_cycle_after(open_cycle, record)
        if open_cycle is None:
            closed_at = position
    return closed_at


def _open_cycle_after(open_cycle: str | None, record: Consumed) -> str | None:
    """The cycle still open once ``record`` is applied (records without events change
    nothing: they are dead-lettered)."""
    event = record.event
    if event is None or event.cycle_id is None:
        return open_cycle
    return None if isinstance(event.payload, ConsolidationCompleted) else event.cycle_id
