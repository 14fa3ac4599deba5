"""The event-type occurrence table procedural learning reads: kept in step with the memories
by every change, shared with a cycle's copy until one side writes."""

from __future__ import annotations

import random

from streams.engine.model import Memory
from streams.engine.occurrences import Occurrences, occurrence_of
from streams.engine.user_state import MemoryRecord
from tests.record_walks import walk_records

KINDS = ("deploy", "rollback", "review")
LAYERS = ("episodic", "episodic", "semantic", "working")
STATUSES = ("active", "active", "active", "archived")


def _record(rng: random.Random, memory_id: str) -> MemoryRecord:
    memory = Memory(
        memory_id,
        "u",
        f"content of {memory_id}",
        layer=rng.choice(LAYERS),  # type: ignore[arg-type]
        kind=rng.choice(KINDS),
        success=rng.choice((None, 0.2, 0.9)),
        created_at=rng.randrange(0, 10) * 1_000,  # many share a time: ids break the tie
        status=rng.choice(STATUSES),
    )
    return MemoryRecord(memory, 1, forgotten=rng.random() < 0.05)


def _expected(records: dict[str, MemoryRecord], kind: str, since: int) -> list[str]:
    """The brute-force answer: every record's occurrence of ``kind`` from ``since``, sorted."""
    found = [occurrence_of(r) for r in records.values()]
    window = sorted(f[1] for f in found if f and f[0] == kind and f[1][0] >= since)
    return [memory_id for _, memory_id in window]


def test_moves_keep_the_table_equal_to_one_built_from_the_records() -> None:
    rng = random.Random(7)
    records: dict[str, MemoryRecord] = {}
    table = Occurrences()
    walk_records(rng, table.move, _record, records, steps=3_000, ids=200)
    rebuilt = Occurrences.of(records.values())
    assert all(table.since(kind, 0) for kind in KINDS)  # the walk left occurrences of each
    assert table.event_types() == rebuilt.event_types()
    for kind in KINDS:
        for since in (0, 4_000, 9_000, 10_000):
            assert table.since(kind, since) == rebuilt.since(kind, since)
            assert table.since(kind, since) == _expected(records, kind, since)


def test_a_copy_and_its_original_do_not_see_each_others_changes() -> None:
    def deploy(memory_id: str, at: int) -> MemoryRecord:
        memory = Memory(
            memory_id, "u", "x", layer="episodic", kind="deploy", success=1.0, created_at=at
        )
        return MemoryRecord(memory, 1)

    first, second = deploy("a", 1), deploy("b", 2)
    original = Occurrences.of([first, second])
    copy = original.copy()

    copy.move(None, deploy("c", 3))
    copy.move(first, None)
    original.move(None, deploy("d", 0))

    assert original.since("deploy", 0) == ["d", "a", "b"]
    assert copy.since("deploy", 0) == ["b", "c"]


def test_a_change_that_keeps_an_occurrence_leaves_the_lists_shared() -> None:
    memory = Memory("a", "u", "x", layer="episodic", kind="deploy", success=1.0, created_at=1)
    original = Occurrences.of([MemoryRecord(memory, 1)])
    copy = original.copy()
    marked = memory.evolve(metadata={"consolidated_to_procedural": "5"})

    copy.move(MemoryRecord(memory, 1), MemoryRecord(marked, 2))

    assert copy._by_key["deploy"] is original._by_key["deploy"]
