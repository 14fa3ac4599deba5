"""Keeps what one input produced together in the read models: all of it, or none of it.

Everything one input produced (its *emission*: a stored memory, or a whole consolidation
cycle ending with ``ConsolidationCompleted``) is contiguous in its ledger partition and
numbered ``emission_index`` of ``emission_size`` (``streams.engine.emissions``). A batch
can still end in the middle of one, so :func:`split_at_open_emissions` keeps, per
partition, the records up to the last point where no emission is open, and says where to
resume for the rest: the read models never show half a cycle.

Two cases are not a batch boundary:

- A *partial* emission in the ledger (a prefix that is followed by something other than
  its continuation — in practice the input's own re-emission from index 0, with the same
  event ids) was abandoned by its writer. Its records are skipped: their offsets advance,
  nothing is applied, and the complete emission that follows is applied instead.
- An emission larger than a whole batch cannot be held back forever. When a partition's
  records in a batch are all one open emission, it is held back and read again a few times
  (:class:`HoldBacks`): usually the batch was merely filled by other partitions. An
  emission that still does not fit is applied across batches (and said so). A batch that
  starts inside an emission (index > 0) is the rest of such an emission, because the
  projector stores its position only between emissions otherwise.

Records written before emissions were numbered read as complete on their own (0 of 1);
for them a cycle is held together by its ``cycle_id`` up to ``ConsolidationCompleted``, as
before. :func:`halve` splits a batch being searched for a poison record at the emission
boundary nearest its middle, for the same reason: only an emission that itself holds the
poison record is ever split.
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
    oversized: list[tuple[str, int]] = field(default_factory=list)  # emissions split anyway
    abandoned: int = 0  # records of partial emissions skipped


class HoldBacks:
    """How often each partition's records in a batch were all one open emission, held back at
    the same offset.

    A batch can end inside the first emission it holds of a partition (other partitions'
    records filled it): that emission is held back and read again whole, like any other. Only
    an emission that still does not fit after ``limit`` tries at the same offset is taken to
    be larger than a batch and applied across batches. Holding back without a limit could
    stall a partition whose long emission never fits beside other partitions' records."""

    def __init__(self, limit: int = 3) -> None:
        self.limit = limit
        self._held: dict[tuple[str, int], tuple[int, int]] = {}  # -> (offset, times)

    def may_hold(self, key: tuple[str, int], offset: int) -> bool:
        """Whether the open emission at ``offset`` may be held back (once more)."""
        held_at, times = self._held.get(key, (offset, 0))
        times = times + 1 if held_at == offset else 1
        if times > self.limit:
            self._held.pop(key, None)
            return False
        self._held[key] = (offset, times)
        return True


def split_at_open_emissions(records: list[Consumed], holds: HoldBacks | None = None) -> Split:
    """``records`` of one batch, cut per partition where no emission is open. A partition
    whose records are all one open emission is held back while ``holds`` allows (without
    ``holds``: never), then applied as larger than a batch."""
    by_partition: dict[tuple[str, int], list[Consumed]] = {}
    for record in records:
        by_partition.setdefault((record.topic, record.partition), []).append(record)
    split = Split()
    for key, items in by_partition.items():
        walk = _walk(items)
        cut = walk.closed_at
        if cut == 0 and items:
            if holds is not None and holds.may_hold(key, items[0].offset):
                split.resume_at[key] = items[0].offset
                continue
            split.oversized.append(key)
            cut = len(items)
        ready = [skipped(r) if i in walk.abandoned else r for i, r in enumerate(items[:cut])]
        split.abandoned += sum(1 for i in walk.abandoned if i < cut)
        split.ready.extend(ready)
        if cut < len(items):
            split.resume_at[key] = items[cut].offset
    split.ready.sort(key=lambda r: (r.topic, r.partition, r.offset))
    return split


def halve(records: list[Consumed]) -> tuple[list[Consumed], list[Consumed]]:
    """Two non-empty parts of ``records`` (two or more, sorted by topic, partition, offset),
    cut where no emission is open, as near the middle as possible; in the middle of the only
    emission when there is no such place."""
    assert len(records) >= 2, "only a batch of two or more records can be halved"
    middle = len(records) / 2
    cuts = _cuts_outside_emissions(records)
    cut = min(cuts, key=lambda c: (abs(c - middle), c)) if cuts else len(records) // 2
    return records[:cut], records[cut:]


def _cuts_outside_emissions(records: list[Consumed]) -> list[int]:
    """Positions 1..n-1 where cutting leaves every emission whole on one side: between two
    partitions, or after a record that leaves no emission open in its partition."""
    cuts: list[int] = []
    start = 0
    for position in range(1, len(records) + 1):
        at_end = position == len(records)
        if at_end or _partition(records[position]) != _partition(records[start]):
            walk = _walk(records[start:position])
            cuts.extend(start + closed for closed in walk.closed_positions if closed < position)
            if not at_end:
                cuts.append(position)
            start = position
    return sorted(set(c for c in cuts if 0 < c < len(records)))


def _partition(record: Consumed) -> tuple[str, int]:
    return (record.topic, record.partition)


@dataclass
class _Walk:
    """What walking one partition's records found."""

    closed_positions: list[int] = field(default_factory=list)  # n: records[:n] leave none open
    abandoned: set[int] = field(default_factory=set)  # positions of abandoned partial records

    @property
    def closed_at(self) -> int:
        return self.closed_positions[-1] if self.closed_positions else 0


@dataclass
class _Open:
    """The emission (and, for unnumbered records, the cycle) open after a record."""

    event: ConsolidationEvent
    next_index: int
    positions: list[int]


def _walk(items: list[Consumed]) -> _Walk:
    walk = _Walk()
    open_: _Open | None = None
    for position, record in enumerate(items):
        event = record.event
        if event is None:  # dead-lettered: part of whatever is open, changes nothing
            if open_ is None:
                walk.closed_positions.append(position + 1)
            else:
                open_.positions.append(position)
            continue
        if open_ is not None and not _continues(open_, event):
            if _numbered_and_incomplete(open_):
                walk.abandoned.update(open_.positions)  # a prefix its writer abandoned
                walk.closed_positions.append(position)  # skipping it leaves nothing open
            open_ = None
        if open_ is None:
            open_ = _Open(event, event.emission_index, [])
        open_.positions.append(position)
        open_.next_index = event.emission_index + 1
        open_.event = event
        if _closes(open_):
            open_ = None
            walk.closed_positions.append(position + 1)
    return walk


def _continues(open_: _Open, event: ConsolidationEvent) -> bool:
    last = open_.event
    if last.emission_size > 1 and open_.next_index < last.emission_size:
        return (
            event.emission_index == open_.next_index
            and event.emission_size == last.emission_size
            and event.causation_id == last.causation_id
            and event.user_id == last.user_id
        )
    # an unnumbered (legacy) cycle: records of the same cycle continue it
    return event.cycle_id is not None and event.cycle_id == last.cycle_id


def _numbered_and_incomplete(open_: _Open) -> bool:
    return open_.event.emission_size > 1 and open_.next_index < open_.event.emission_size


def _closes(open_: _Open) -> bool:
    event = open_.event
    if event.emission_size > 1:
        return open_.next_index >= event.emission_size
    # unnumbered: a cycle stays open until its report
    return event.cycle_id is None or isinstance(event.payload, ConsolidationCompleted)
