"""A consolidation cycle reaches the read models whole: a batch that ends inside one holds
it back (SPEC §5 / seed 000: one cycle's decisions are all-or-nothing)."""

from __future__ import annotations

from projections.cycles import Consumed, split_at_open_cycles
from streams.engine import ledger
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

    split = split_at_open_cycles(records)

    assert split.ready == records
    assert split.resume_at == {}


def test_a_batch_ending_inside_a_cycle_holds_the_cycle_back_and_resumes_at_its_start():
    records = [
        consumed(0, 10, event(1)),
        consumed(0, 11, event(2, "c1")),
        consumed(0, 12, event(3, "c1")),
    ]

    split = split_at_open_cycles(records)

    assert split.ready == records[:1]
    assert split.resume_at == {(TOPIC, 0): 11}


def test_partitions_are_cut_independently():
    records = [
        consumed(0, 5, event(1, "c1")),
        consumed(1, 7, event(2)),
        consumed(0, 6, event(3, "c1", completed=True)),
        consumed(1, 8, event(4, "c2")),
    ]

    split = split_at_open_cycles(records)

    assert [(r.partition, r.offset) for r in split.ready] == [(0, 5), (0, 6), (1, 7)]
    assert split.resume_at == {(TOPIC, 1): 8}


def test_a_cycle_larger_than_the_batch_is_applied_rather_than_held_forever():
    records = [consumed(0, 1, event(1, "big")), consumed(0, 2, event(2, "big"))]

    split = split_at_open_cycles(records)

    assert split.ready == records
    assert split.oversized == [(TOPIC, 0)]


def test_undecodable_records_do_not_open_or_close_cycles():
    records = [consumed(0, 1, event(1)), consumed(0, 2, None)]

    assert split_at_open_cycles(records).ready == records
