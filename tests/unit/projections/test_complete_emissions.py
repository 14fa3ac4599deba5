"""What one input produced reaches the read models whole: a batch that ends inside it holds
it back, and a partial emission that its writer abandoned is never applied
(docs/failure-semantics.md, 'An input's output is atomic' / seed 000: one cycle's decisions are
all-or-nothing). Records written before emissions were numbered keep the cycle rule."""

from __future__ import annotations

import pytest

from projections.complete_emissions import (
    Consumed,
    HoldBacks,
    halve,
    skipped,
    split_at_open_emissions,
)
from streams.engine import ledger
from streams.engine.emissions import numbered
from streams.engine.model import Memory

TOPIC = "memory.consolidation"


def event(n: int, cycle: str | None = None, completed: bool = False) -> ledger.ConsolidationEvent:
    payload: ledger.LedgerPayload
    if completed:
        payload = ledger.ConsolidationCompleted("default", 1, 0, 0, 0, 0, 0, 0)
    else:
        payload = ledger.MemoryStored(Memory(f"m{n}", "u", "x"), 1)
    trigger = "manual" if cycle else "ingest"
    return ledger.ConsolidationEvent(f"e{n}", "u", 0, "c", payload, trigger, cycle)  # type: ignore[arg-type]


def consumed(partition: int, offset: int, ev: ledger.ConsolidationEvent | None) -> Consumed:
    return Consumed(TOPIC, partition, offset, ev)


def test_a_batch_of_complete_cycles_is_applied_whole():
    records = [
        consumed(0, 10, event(1)),
        consumed(0, 11, event(2, "c1")),
        consumed(0, 12, event(3, "c1", completed=True)),
    ]

    split = split_at_open_emissions(records)

    assert split.ready == records
    assert split.resume_at == {}


def test_a_batch_ending_inside_a_cycle_holds_the_cycle_back_and_resumes_at_its_start():
    records = [
        consumed(0, 10, event(1)),
        consumed(0, 11, event(2, "c1")),
        consumed(0, 12, event(3, "c1")),
    ]

    split = split_at_open_emissions(records)

    assert split.ready == records[:1]
    assert split.resume_at == {(TOPIC, 0): 11}


def test_partitions_are_cut_independently():
    records = [
        consumed(0, 5, event(1, "c1")),
        consumed(1, 7, event(2)),
        consumed(0, 6, event(3, "c1", completed=True)),
        consumed(1, 8, event(4, "c2")),
    ]

    split = split_at_open_emissions(records)

    assert [(r.partition, r.offset) for r in split.ready] == [(0, 5), (0, 6), (1, 7)]
    assert split.resume_at == {(TOPIC, 1): 8}


def test_a_cycle_larger_than_the_batch_is_applied_rather_than_held_forever():
    records = [consumed(0, 1, event(1, "big")), consumed(0, 2, event(2, "big"))]

    split = split_at_open_emissions(records)

    assert split.ready == records
    assert split.oversized == [(TOPIC, 0)]


def test_a_batch_ending_inside_a_partitions_first_cycle_holds_it_back_to_read_it_whole():
    """Given a batch whose partition 0 holds only the start of a cycle (other partitions
    filled the batch), when it is split with hold-backs, then that start is held back, not
    applied as a cycle larger than the batch."""
    records = [
        consumed(1, 7, event(1)),
        consumed(0, 1, event(2, "c1")),
        consumed(0, 2, event(3, "c1")),
    ]

    split = split_at_open_emissions(records, HoldBacks())

    assert [(r.partition, r.offset) for r in split.ready] == [(1, 7)]
    assert split.resume_at == {(TOPIC, 0): 1}
    assert split.oversized == []


def test_a_cycle_that_still_does_not_fit_after_the_hold_back_limit_is_applied_across_batches():
    """Given a partition whose records are all one open cycle, batch after batch, from the
    same offset, then it is held back ``limit`` times and then applied; a cycle held back at
    another offset starts a new count."""
    holds = HoldBacks(limit=2)
    open_cycle = [consumed(0, 1, event(1, "big")), consumed(0, 2, event(2, "big"))]

    outcomes = [split_at_open_emissions(open_cycle, holds) for _ in range(3)]

    assert [s.resume_at for s in outcomes] == [{(TOPIC, 0): 1}, {(TOPIC, 0): 1}, {}]
    assert outcomes[2].ready == open_cycle
    assert outcomes[2].oversized == [(TOPIC, 0)]
    later = [consumed(0, 9, event(3, "later"))]
    assert split_at_open_emissions(later, holds).resume_at == {(TOPIC, 0): 9}


def test_undecodable_records_do_not_open_or_close_cycles():
    records = [consumed(0, 1, event(1)), consumed(0, 2, None)]

    assert split_at_open_emissions(records).ready == records


# --- halving a batch to find a poison record: cycles stay whole where possible -----------------


def offsets(records: list[Consumed]) -> list[int]:
    return [r.offset for r in records]


def test_a_batch_without_cycles_is_halved_in_the_middle():
    records = [consumed(0, n, event(n)) for n in range(5)]

    left, right = halve(records)

    assert (offsets(left), offsets(right)) == ([0, 1], [2, 3, 4])


def test_halving_cuts_beside_a_cycle_rather_than_through_it():
    records = [
        consumed(0, 0, event(0)),
        consumed(0, 1, event(1, "c1")),
        consumed(0, 2, event(2, "c1")),
        consumed(0, 3, event(3, "c1", completed=True)),
        consumed(0, 4, event(4)),
        consumed(0, 5, event(5)),
    ]

    left, right = halve(records)

    assert (offsets(left), offsets(right)) == ([0, 1, 2, 3], [4, 5])


def test_halving_cuts_between_partitions_even_when_a_cycle_is_open_at_the_end_of_one():
    records = [
        consumed(0, 0, event(0, "big")),
        consumed(0, 1, event(1, "big")),
        consumed(1, 0, event(2, "other")),
        consumed(1, 1, event(3, "other")),
    ]

    left, right = halve(records)

    assert [(r.partition, r.offset) for r in left] == [(0, 0), (0, 1)]
    assert [(r.partition, r.offset) for r in right] == [(1, 0), (1, 1)]


def test_a_batch_that_is_one_cycle_is_halved_through_the_cycle():
    records = [consumed(0, n, event(n, "c1")) for n in range(4)]

    left, right = halve(records)

    assert (offsets(left), offsets(right)) == ([0, 1], [2, 3])


def test_halving_two_records_gives_one_each():
    records = [consumed(0, 0, event(0, "c1")), consumed(0, 1, event(1, "c1"))]

    assert halve(records) == ([records[0]], [records[1]])


def test_a_single_record_cannot_be_halved():
    with pytest.raises(AssertionError):
        halve([consumed(0, 0, event(0))])


def test_a_skipped_record_keeps_its_position_and_loses_its_event():
    assert skipped(consumed(2, 9, event(1))) == consumed(2, 9, None)


# --- numbered emissions -----------------------------------------------------------------------


def emission(cause: str, first: int, size: int) -> tuple[ledger.ConsolidationEvent, ...]:
    """An input's numbered output: ``size`` events, the last one the cycle's report."""
    events = [event(first + n, f"cycle-{cause}", completed=n == size - 1) for n in range(size)]
    return numbered([_caused_by(cause, e) for e in events])


def _caused_by(cause: str, e: ledger.ConsolidationEvent) -> ledger.ConsolidationEvent:
    return ledger.ConsolidationEvent(
        e.event_id, e.user_id, 0, cause, e.payload, e.trigger, e.cycle_id
    )


def at(partition: int, first_offset: int, events) -> list[Consumed]:
    return [consumed(partition, first_offset + n, e) for n, e in enumerate(events)]


def test_a_batch_ending_inside_a_numbered_emission_holds_it_back():
    records = at(0, 10, [*emission("a", 0, 2), *emission("b", 2, 3)[:2]])

    split = split_at_open_emissions(records)

    assert split.ready == records[:2]
    assert split.resume_at == {(TOPIC, 0): 12}


def test_an_abandoned_prefix_is_skipped_and_its_re_emission_applied():
    """Given an input's output committed in part, then emitted again whole,
    when the projector reads both,
    then the prefix only advances the offsets and the whole emission is applied once."""
    whole = emission("a", 0, 3)
    records = at(0, 10, [*whole[:2], *whole, *emission("b", 3, 1)])

    split = split_at_open_emissions(records)

    assert [r.event for r in split.ready] == [None, None, *whole, records[-1].event]
    assert [r.offset for r in split.ready] == list(range(10, 16))
    assert split.abandoned == 2
    assert split.resume_at == {}


def test_a_re_emission_cut_by_the_batch_skips_the_abandoned_prefix_and_holds_back_the_rest():
    whole = emission("a", 0, 3)
    records = at(0, 10, [*whole[:2], *whole[:2]])

    split = split_at_open_emissions(records)

    assert split.ready == [skipped(r) for r in records[:2]]
    assert split.resume_at == {(TOPIC, 0): 12}


def test_a_batch_starting_inside_an_emission_continues_it():
    """The rest of an emission larger than a batch, applied across batches."""
    records = at(0, 50, emission("big", 0, 4)[2:])

    split = split_at_open_emissions(records)

    assert split.ready == records
    assert split.abandoned == 0


def test_halving_keeps_numbered_emissions_whole():
    records = at(0, 0, [*emission("a", 0, 3), *emission("b", 3, 3)])

    left, right = halve(records)

    assert (offsets(left), offsets(right)) == ([0, 1, 2], [3, 4, 5])
