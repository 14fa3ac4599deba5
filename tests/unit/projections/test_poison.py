"""A record that cannot be stored is set aside alone (docs/failure-semantics.md, 'The projector':
the pipeline never stops on bad input): the rest of its batch is applied, its offset is stored so
the partition moves on, and it is dead-lettered before the transaction that skips it commits."""

from __future__ import annotations

from dataclasses import dataclass, field

import psycopg
import pytest
from psycopg import errors

from projections.complete_emissions import Consumed
from projections.poison import Rejected, apply_isolating, fold
from projections.rows import MEMORY_COLUMNS, RowBatch
from streams.engine import ledger
from streams.engine.model import Memory

TOPIC = "memory.consolidation"
T0 = 1_717_000_000_000
YEAR_10000 = 253_402_300_800_000
CONTENT = MEMORY_COLUMNS.index("content")


def record(
    offset: int,
    content: str = "fine",
    partition: int = 0,
    cycle: str | None = None,
    created_at: int = T0,
) -> Consumed:
    memory = Memory(f"m{offset}", "u", content, created_at=created_at)
    event = ledger.ConsolidationEvent(
        f"e{partition}-{offset}",
        "u",
        T0,
        "cause",
        ledger.MemoryStored(memory, 1),
        "manual" if cycle else "ingest",
        cycle,
    )
    return Consumed(TOPIC, partition, offset, event)


@dataclass
class FakeDatabase:
    """Commits batches like PostgreSQL would, refusing text with a NUL byte."""

    committed: list[RowBatch] = field(default_factory=list)
    attempts: int = 0
    outage: bool = False
    events: list[str] = field(default_factory=list)  # commits and dead letters, in order

    def write(self, batch: RowBatch) -> None:
        self.attempts += 1
        if self.outage:
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        if any("\x00" in row[CONTENT] for row in batch.upserts.values()):
            raise errors.CharacterNotInRepertoire('invalid byte sequence for encoding "UTF8"')
        self.committed.append(batch)
        self.events.append(f"commit {sorted(batch.next_offsets.values())}")

    def stored(self) -> dict[tuple[str, int], int]:
        position: dict[tuple[str, int], int] = {}
        for batch in self.committed:
            for key, offset in batch.next_offsets.items():
                position[key] = max(position.get(key, 0), offset)
        return position

    def memory_ids(self) -> set[str]:
        return {memory_id for batch in self.committed for _, _, memory_id in batch.upserts}


def run(records: list[Consumed], db: FakeDatabase) -> list[Rejected]:
    def dead_letter(rejected: Rejected) -> None:
        db.events.append(f"dead letter {rejected.record.offset}")

    return apply_isolating(records, db.write, dead_letter).rejected


# --- folding ----------------------------------------------------------------------------------


def test_a_record_whose_rows_cannot_be_built_is_rejected_and_only_its_offset_advances() -> None:
    records = [record(0), record(1, created_at=YEAR_10000), record(2)]

    folded = fold(records)

    assert [r.record.offset for r in folded.rejected] == [1]
    assert isinstance(folded.rejected[0].error, ValueError)
    assert {key[2] for key in folded.batch.upserts} == {"m0", "m2"}
    assert folded.batch.next_offsets == {(TOPIC, 0): 3}
    assert folded.records[1].event is None


def test_a_rejected_record_leaves_nothing_half_folded_behind() -> None:
    moved = Memory("m0", "u", "moved", layer="semantic", created_at=YEAR_10000)
    bad = Consumed(
        TOPIC,
        0,
        1,
        ledger.ConsolidationEvent("e1", "u", T0, "c", ledger.MemoryStored(moved, 2, "working")),
    )

    folded = fold([record(0), bad])

    assert folded.batch.deletes == {}
    assert list(folded.batch.upserts) == [("working", "u", "m0")]


def test_a_batch_of_good_records_is_one_transaction_and_nothing_is_rejected() -> None:
    db = FakeDatabase()

    rejected = run([record(n) for n in range(6)], db)

    assert rejected == []
    assert db.attempts == 1
    assert db.stored() == {(TOPIC, 0): 6}


# --- isolating what the database refuses ------------------------------------------------------


def test_a_record_the_database_refuses_is_rejected_alone_and_the_others_are_applied() -> None:
    db = FakeDatabase()
    records = [record(n, content="bad\x00" if n == 5 else "fine") for n in range(9)]

    rejected = run(records, db)

    assert [r.record.offset for r in rejected] == [5]
    assert isinstance(rejected[0].error, errors.CharacterNotInRepertoire)
    assert db.memory_ids() == {f"m{n}" for n in range(9)} - {"m5"}
    assert db.stored() == {(TOPIC, 0): 9}


def test_the_search_takes_a_logarithmic_number_of_transactions() -> None:
    db = FakeDatabase()
    records = [record(n, content="bad\x00" if n == 700 else "fine") for n in range(1024)]

    run(records, db)

    assert db.attempts <= 2 * 10 + 2  # two halves per level, plus the skip of the bad record


def test_several_bad_records_in_several_partitions_are_each_rejected() -> None:
    db = FakeDatabase()
    records = [
        *(record(n, partition=0, content="\x00" if n in (0, 3) else "ok") for n in range(4)),
        *(record(n, partition=1, content="\x00" if n == 2 else "ok") for n in range(4)),
    ]

    rejected = run(records, db)

    assert [(r.record.partition, r.record.offset) for r in rejected] == [(0, 0), (0, 3), (1, 2)]
    assert db.stored() == {(TOPIC, 0): 4, (TOPIC, 1): 4}


def test_a_bad_record_is_dead_lettered_before_the_transaction_that_skips_it() -> None:
    db = FakeDatabase()

    run([record(0, content="\x00")], db)

    assert db.events == ["dead letter 0", "commit [1]"]


def test_an_unbuildable_record_is_dead_lettered_before_the_batch_commits() -> None:
    db = FakeDatabase()

    run([record(0), record(1, created_at=YEAR_10000)], db)

    assert db.events == ["dead letter 1", "commit [2]"]


def test_records_of_a_cycle_without_the_bad_record_stay_in_one_transaction() -> None:
    db = FakeDatabase()
    records = [
        record(0, cycle="c1"),
        record(1, cycle="c1"),
        record(2, cycle="c1"),
        Consumed(
            TOPIC,
            0,
            3,
            ledger.ConsolidationEvent(
                "done",
                "u",
                T0,
                "cause",
                ledger.ConsolidationCompleted("default", 3, 0, 0, 0, 0, 0, 0),
                "manual",
                "c1",
            ),
        ),
        record(4, content="\x00"),
        record(5),
    ]

    run(records, db)

    cycle_batches = [b for b in db.committed if {"m0", "m1", "m2"} & {k[2] for k in b.upserts}]
    assert len(cycle_batches) == 1
    assert {k[2] for k in cycle_batches[0].upserts} == {"m0", "m1", "m2"}


def test_a_database_outage_is_not_mistaken_for_a_bad_record() -> None:
    db = FakeDatabase(outage=True)

    with pytest.raises(psycopg.OperationalError):
        run([record(n) for n in range(4)], db)

    assert db.attempts == 1
    assert db.events == []
