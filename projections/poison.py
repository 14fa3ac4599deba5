"""Applies a batch of ledger records, setting aside exactly the records that cannot be stored.

One poison record (text PostgreSQL refuses, a date no column can hold) must not block every
user of its partition, and must not take good records down with it. So:

1. the batch is folded into rows; a record whose rows cannot even be built is rejected and the
   batch is folded again without it (a failed fold may have half-updated the batch);
2. the batch is written in one transaction, as usual;
3. only if that fails with a poison error (:func:`projections.failures.is_poison`), the records
   are halved — at a cycle boundary where possible
   (:func:`projections.complete_emissions.halve`) — and
   each half is written in its own transaction, recursively, until the record that fails on
   its own is found. It is rejected, and its offset is stored on its own so the partition
   moves past it.

Every rejected record is handed to ``reject`` (the projector dead-letters it) *before* the
transaction that skips it commits: a crash in between re-delivers it, nothing is lost. Any
other error (transient, stale batch, bug) propagates at once; what was committed before it
stays committed, with its offsets, so a rewind resumes exactly after it.

Pure: the writing and the dead-lettering are passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from projections.complete_emissions import Consumed, halve, skipped
from projections.failures import BUILD_ERRORS, is_poison
from projections.rows import RowBatch


@dataclass(frozen=True)
class Rejected:
    record: Consumed
    error: Exception


@dataclass
class Folded:
    batch: RowBatch
    records: list[Consumed]  # the input, with rejected records turned into skipped ones
    rejected: list[Rejected] = field(default_factory=list)


@dataclass
class Applied:
    """What one call of :func:`apply_isolating` did."""

    batches: list[RowBatch] = field(default_factory=list)  # one per committed transaction
    rejected: list[Rejected] = field(default_factory=list)

    @property
    def events(self) -> int:
        return sum(len(batch) for batch in self.batches)


def fold(records: Sequence[Consumed]) -> Folded:
    """Rows for ``records``; those whose rows cannot be built are rejected and skipped."""
    prepared = list(records)
    rejected: list[Rejected] = []
    while True:
        try:
            return Folded(_fold_all(prepared), prepared, rejected)
        except _Unbuildable as failure:
            rejected.append(Rejected(prepared[failure.position], failure.error))
            prepared[failure.position] = skipped(prepared[failure.position])


def apply_isolating(
    records: Sequence[Consumed],
    write: Callable[[RowBatch], None],
    reject: Callable[[Rejected], None],
) -> Applied:
    """Write ``records`` (sorted by topic, partition, offset) with ``write`` — one call per
    transaction — rejecting exactly the records that cannot be built or stored."""
    applied = Applied()
    folded = fold(records)
    for rejection in folded.rejected:
        _reject(applied, reject, rejection)
    _write_or_halve(folded.records, folded.batch, write, reject, applied)
    return applied


def _write_or_halve(
    records: list[Consumed],
    batch: RowBatch,
    write: Callable[[RowBatch], None],
    reject: Callable[[Rejected], None],
    applied: Applied,
) -> None:
    try:
        _write(batch, write, applied)
    except Exception as exc:
        if not is_poison(exc):
            raise
        if len(records) == 1:
            _reject(applied, reject, Rejected(records[0], exc))
            _write(_fold_all([skipped(records[0])]), write, applied)
            return
        for half in halve(records):
            _write_or_halve(half, _fold_all(half), write, reject, applied)


def _write(batch: RowBatch, write: Callable[[RowBatch], None], applied: Applied) -> None:
    write(batch)
    applied.batches.append(batch)


def _reject(applied: Applied, reject: Callable[[Rejected], None], rejection: Rejected) -> None:
    reject(rejection)
    applied.rejected.append(rejection)


class _Unbuildable(Exception):
    def __init__(self, position: int, error: Exception) -> None:
        super().__init__(str(error))
        self.position = position
        self.error = error


def _fold_all(records: Sequence[Consumed]) -> RowBatch:
    batch = RowBatch()
    for position, record in enumerate(records):
        if record.event is None:
            batch.advance(record.topic, record.partition, record.offset)
            continue
        try:
            batch.add(record.event, record.topic, record.partition, record.offset)
        except BUILD_ERRORS as exc:
            raise _Unbuildable(position, exc) from exc
    return batch
