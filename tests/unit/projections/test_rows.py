"""Folding a batch of ledger events into row operations (docs/read-models.md, 'Tables and how they
are written'): within a batch the last version of a memory wins, forgets become deletes, offsets
advance past the batch, every event is logged."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from projections.rows import LOG_COLUMNS, MEMORY_COLUMNS, FieldUpdate, RowBatch, to_datetime
from streams.engine import ledger
from streams.engine.model import Memory

USER = "u-1"
TOPIC = "memory.consolidation"
T0 = 1_717_000_000_000


def a_memory(memory_id: str = "m-1", layer: str = "working", **changes: object) -> Memory:
    return Memory(memory_id, USER, f"about {memory_id}", layer=layer).evolve(**changes)  # type: ignore[arg-type]


def at(payload: object, n: int = 0, user: str = USER) -> ledger.ConsolidationEvent:
    return ledger.ConsolidationEvent(
        event_id=f"00000000-0000-4000-8000-{n:012d}",
        user_id=user,
        occurred_at=T0 + n,
        causation_id=f"cause-{n}",
        payload=payload,  # type: ignore[arg-type]
    )


def stored(
    version: int, memory_id: str = "m-1", layer: str = "working", **kw: object
) -> ledger.MemoryStored:
    previous = kw.pop("previous_layer", None)
    return ledger.MemoryStored(a_memory(memory_id, layer, **kw), version, previous)  # type: ignore[arg-type]


def batch_of(*payloads: object, partition: int = 0) -> RowBatch:
    batch = RowBatch()
    for n, payload in enumerate(payloads):
        batch.add(at(payload, n), TOPIC, partition, n)
    return batch


def column(row: list[object], name: str) -> object:
    return row[MEMORY_COLUMNS.index(name)]


def ms(millis: int) -> datetime:
    return datetime.fromtimestamp(millis / 1000, tz=UTC)


KEY = ("working", USER, "m-1")


# --- one memory within one batch -------------------------------------------------------------


def test_a_stored_memory_becomes_one_upsert_row() -> None:
    batch = batch_of(stored(1, content="hello", tags=("a", "b")))

    row = batch.upserts[KEY]
    assert column(row, "version") == 1
    assert column(row, "content") == "hello"
    assert column(row, "tags") == ("a", "b")
    assert column(row, "status") == "active"
    assert batch.deletes == {}
    assert batch.updates == {}


@pytest.mark.parametrize("speaker", ["Caroline", None])
def test_a_stored_memory_s_row_names_its_speaker(speaker: str | None) -> None:
    batch = batch_of(stored(1, speaker=speaker, created_by="user"))

    row = batch.upserts[KEY]
    assert column(row, "speaker") == speaker
    assert column(row, "created_by") == "user"


def test_every_field_of_a_memory_has_its_column_and_lands_in_it() -> None:
    """Each Memory field but the layer (which picks the table) is a column, and a memory
    whose fields all differ puts each value in its own column: a field added to the
    contract cannot be dropped, or shifted into its neighbour's column, on the way to the
    read models."""
    memory = Memory(
        "m-9",
        USER,
        "content",
        layer="semantic",
        kind="kind",
        subtype="subtype",
        tags=("tag",),
        importance=0.1,
        confidence=0.2,
        emotional_salience=0.3,
        valence=-0.4,
        priority="critical",
        scope="team",
        scope_id="scope",
        created_by="user",
        consent=True,
        speaker="speaker",
        pinned=False,
        conversation_id="conversation",
        session_id="session",
        success=0.6,
        trigger_conditions=("trigger",),
        embedding=b"\x00\x00\x80?",
        metadata={"k": "v"},
        created_at=T0 + 1,
        last_accessed=T0 + 2,
        access_count=7,
        valid_at=T0 + 3,
        invalid_at=T0 + 4,
        salience=0.7,
        status="archived",
    )
    fields = [f for f in dataclasses.fields(Memory) if f.name != "layer"]
    expected = {
        f.name: to_datetime(getattr(memory, f.name))
        if f.name in ("created_at", "last_accessed", "valid_at", "invalid_at")
        else getattr(memory, f.name)
        for f in fields
    }

    row = batch_of(ledger.MemoryStored(memory, 5)).upserts[("semantic", USER, "m-9")]

    assert sorted(MEMORY_COLUMNS) == sorted([*expected, "version"])
    assert len(row) == len(MEMORY_COLUMNS)
    assert {name: column(row, name) for name in expected} == expected
    assert column(row, "version") == 5


def test_stored_then_accessed_in_one_batch_is_one_upsert_with_the_access_applied() -> None:
    batch = batch_of(
        stored(1),
        ledger.MemoryAccessRecorded("m-1", "working", 2, T0 + 500, 1),
        ledger.MemoryAccessRecorded("m-1", "working", 3, T0 + 900, 2),
    )

    assert list(batch.upserts) == [KEY]
    row = batch.upserts[KEY]
    assert column(row, "version") == 3
    assert column(row, "access_count") == 2
    assert column(row, "last_accessed") == ms(T0 + 900)
    assert batch.updates == {}


def test_stored_then_forgotten_in_one_batch_is_only_a_delete_of_the_forgotten_version() -> None:
    batch = batch_of(
        stored(1),
        ledger.MemoryAccessRecorded("m-1", "working", 2, T0 + 1, 1),
        ledger.MemoryForgotten("m-1", "working", 3, "gdpr"),
    )

    assert batch.upserts == {}
    assert batch.updates == {}
    assert batch.deletes == {KEY: 3}


def test_forgotten_then_restored_in_one_batch_keeps_the_delete_and_the_new_upsert() -> None:
    batch = batch_of(ledger.MemoryForgotten("m-1", "working", 4, "gdpr"), stored(5))

    assert batch.deletes == {KEY: 4}
    assert column(batch.upserts[KEY], "version") == 5


def test_an_access_to_a_memory_not_in_the_batch_is_an_access_update() -> None:
    batch = batch_of(ledger.MemoryAccessRecorded("m-9", "semantic", 7, T0 + 42, 3))

    assert batch.upserts == {}
    assert batch.updates == {
        ("semantic", USER, "m-9"): FieldUpdate(
            version=7, fields={"access_count": 3, "last_accessed": ms(T0 + 42)}
        )
    }


def test_of_several_accesses_outside_the_batch_the_highest_version_wins() -> None:
    batch = batch_of(
        ledger.MemoryAccessRecorded("m-9", "semantic", 8, T0 + 2, 4),
        ledger.MemoryAccessRecorded("m-9", "semantic", 7, T0 + 1, 3),
    )

    assert batch.updates[("semantic", USER, "m-9")].version == 8
    assert batch.updates[("semantic", USER, "m-9")].fields["access_count"] == 4


def test_a_layer_move_deletes_the_row_under_the_old_layer() -> None:
    batch = batch_of(stored(2, layer="semantic", previous_layer="working"))

    assert batch.deletes == {("working", USER, "m-1"): 2}
    assert column(batch.upserts[("semantic", USER, "m-1")], "version") == 2
    assert ("working", USER, "m-1") not in batch.upserts


def test_stored_then_moved_in_one_batch_leaves_no_upsert_under_the_old_layer() -> None:
    batch = batch_of(stored(1), stored(2, layer="episodic", previous_layer="working"))

    assert list(batch.upserts) == [("episodic", USER, "m-1")]
    assert batch.deletes == {("working", USER, "m-1"): 2}


def test_the_same_memory_id_of_two_users_makes_two_rows() -> None:
    batch = RowBatch()
    batch.add(at(stored(1), 0, user="alice"), TOPIC, 0, 1)
    batch.add(at(stored(1), 1, user="bob"), TOPIC, 0, 2)

    assert set(batch.upserts) == {("working", "alice", "m-1"), ("working", "bob", "m-1")}


def test_a_row_carries_times_as_utc_datetimes() -> None:
    batch = batch_of(stored(1, created_at=T0, valid_at=T0 + 1, last_accessed=None))

    row = batch.upserts[KEY]
    assert column(row, "created_at") == ms(T0)
    assert column(row, "valid_at") == ms(T0 + 1)
    assert column(row, "last_accessed") is None
    assert column(row, "created_at").tzinfo is UTC  # type: ignore[union-attr]


# --- offsets, log, counts --------------------------------------------------------------------


def test_next_offsets_are_the_last_offset_plus_one_per_topic_partition() -> None:
    batch = RowBatch()
    batch.add(at(stored(1), 0), TOPIC, 0, 10)
    batch.add(at(stored(2), 1), TOPIC, 0, 11)
    batch.add(at(stored(1, "m-2"), 2), TOPIC, 3, 5)
    batch.add(at(stored(1, "m-3"), 3), "other.topic", 0, 99)

    assert batch.next_offsets == {(TOPIC, 0): 12, (TOPIC, 3): 6, ("other.topic", 0): 100}


def test_an_older_offset_never_moves_the_position_back() -> None:
    batch = RowBatch()
    batch.add(at(stored(2), 0), TOPIC, 0, 20)
    batch.add(at(stored(1), 1), TOPIC, 0, 7)

    assert batch.next_offsets == {(TOPIC, 0): 21}


def test_first_offsets_are_the_lowest_offset_per_topic_partition() -> None:
    batch = RowBatch()
    batch.add(at(stored(1), 0), TOPIC, 0, 11)
    batch.add(at(stored(2), 1), TOPIC, 0, 10)
    batch.add(at(stored(1, "m-2"), 2), TOPIC, 3, 5)

    assert batch.first_offsets == {(TOPIC, 0): 10, (TOPIC, 3): 5}


def test_a_record_without_rows_can_be_where_the_batch_starts() -> None:
    batch = RowBatch()
    batch.advance(TOPIC, 0, 7)
    batch.add(at(stored(1), 0), TOPIC, 0, 8)

    assert batch.first_offsets == {(TOPIC, 0): 7}


def test_advance_moves_the_position_for_records_without_rows() -> None:
    batch = RowBatch()

    batch.advance(TOPIC, 2, 41)

    assert batch.next_offsets == {(TOPIC, 2): 42}
    assert len(batch) == 0


def log_rows(batch: RowBatch) -> list[dict[str, object]]:
    return [dict(zip(LOG_COLUMNS, row, strict=True)) for row in batch.log]


def test_the_log_has_one_row_per_event_naming_the_action_and_the_memory() -> None:
    batch = RowBatch()
    events = [
        at(stored(1), 0),
        at(ledger.MemoryAccessRecorded("m-1", "working", 2, T0, 1), 1),
        at(ledger.MemoryForgotten("m-1", "working", 3, "gdpr"), 2),
        at(
            ledger.MemoryPromoted(
                "m-2", "working", 4, True, a_memory("m-2s", "semantic"), 1, "importance"
            ),
            3,
        ),
        at(ledger.ConsolidationCompleted("default", 1, 0, 0, 0, 0, 0, 10), 4),
    ]
    for offset, event in enumerate(events, start=100):
        batch.add(event, TOPIC, 1, offset)

    rows = log_rows(batch)

    assert len(batch) == 5
    assert [r["action"] for r in rows] == [
        "MemoryStored",
        "MemoryAccessRecorded",
        "MemoryForgotten",
        "MemoryPromoted",
        "ConsolidationCompleted",
    ]
    assert [(r["memory_id"], r["layer"], r["version"]) for r in rows] == [
        ("m-1", "working", 1),
        ("m-1", "working", 2),
        ("m-1", "working", 3),
        ("m-2s", "semantic", 1),
        (None, None, None),
    ]
    assert [r["event_id"] for r in rows] == [e.event_id for e in events]
    assert [r["kafka_offset"] for r in rows] == [100, 101, 102, 103, 104]
    assert {r["kafka_partition"] for r in rows} == {1}
    assert rows[0]["causation_id"] == "cause-0"
    assert rows[0]["trigger"] == "ingest"
    assert rows[0]["occurred_at"] == ms(T0)


def test_a_folded_batch_still_logs_every_event() -> None:
    batch = batch_of(stored(1), ledger.MemoryForgotten("m-1", "working", 2, "gdpr"))

    assert batch.upserts == {}
    assert [r["action"] for r in log_rows(batch)] == ["MemoryStored", "MemoryForgotten"]


def test_the_batch_remembers_the_last_event_time() -> None:
    batch = batch_of(stored(1), stored(2), stored(3))

    assert batch.last_event_time_ms == T0 + 2


def test_actions_counts_the_ledger_events_of_each_type() -> None:
    batch = batch_of(stored(1), stored(2), ledger.MemoryForgotten("m-1", "working", 3, "gdpr"))

    assert batch.actions() == {"MemoryStored": 2, "MemoryForgotten": 1}


def test_tables_touched_counts_rows_per_table_and_log_lines() -> None:
    batch = batch_of(
        stored(1, "a"),
        stored(1, "b"),
        stored(1, "c", layer="semantic", previous_layer="working"),
        ledger.MemoryAccessRecorded("e", "episodic", 4, T0, 2),
        ledger.MemoryForgotten("p", "procedural", 6, "gdpr"),
    )

    assert batch.tables_touched() == {
        "working_memories": 3,  # upserts a, b; delete of c's old layer
        "semantic_facts": 1,
        "episodic_events": 1,
        "procedural_patterns": 1,
        "consolidation_log": 5,
    }


def test_an_empty_batch_touches_nothing() -> None:
    assert RowBatch().tables_touched() == {}


# --- archive salience (as the worker's fold: no salience keeps the last one) ------------------


def test_an_archive_without_a_salience_keeps_the_salience_of_a_row_in_the_batch() -> None:
    batch = batch_of(
        stored(1, salience=0.4),
        ledger.MemoryArchived("m-1", "working", 2, "stale", salience=None),
    )

    row = batch.upserts[KEY]
    assert column(row, "status") == "archived"
    assert column(row, "salience") == 0.4


def test_an_archive_without_a_salience_leaves_the_stored_salience_alone() -> None:
    batch = batch_of(ledger.MemoryArchived("m-1", "working", 2, "stale", salience=None))

    assert batch.updates[KEY] == FieldUpdate(version=2, fields={"status": "archived"})


def test_an_archive_with_a_salience_sets_it() -> None:
    batch = batch_of(ledger.MemoryArchived("m-1", "working", 2, "stale", salience=0.05))

    assert batch.updates[KEY].fields == {"status": "archived", "salience": 0.05}


def test_a_decay_then_an_archive_without_a_salience_keep_the_decayed_salience() -> None:
    batch = batch_of(
        ledger.SalienceDecayed("m-1", "working", 2, 0.9, 0.3),
        ledger.MemoryArchived("m-1", "working", 3, "stale", salience=None),
    )

    assert batch.updates[KEY] == FieldUpdate(
        version=3, fields={"salience": 0.3, "status": "archived"}
    )


def test_every_conversion_is_the_instant_asked_for_however_many_were_asked_before() -> None:
    """Given more distinct instants than the recent conversions kept, each asked twice,
    when they are converted, then every answer is that instant in UTC (the kept conversions
    never answer for another instant, before or after they are dropped)."""
    instants = [1_790_000_000_000 + 997 * n for n in range(10_000)]
    for millis in instants + instants[::-1]:
        expected = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=millis)
        assert to_datetime(millis) == expected
    assert to_datetime(None) is None


# --- values no row can hold -------------------------------------------------------------------


@pytest.mark.parametrize("millis", [253_402_300_800_000, 2**62, -62_135_596_800_001])
def test_a_timestamp_outside_years_1_to_9999_is_a_value_error(millis: int) -> None:
    with pytest.raises(ValueError, match="outside the representable dates"):
        to_datetime(millis)


def test_adding_a_memory_created_after_year_9999_raises_a_value_error() -> None:
    with pytest.raises(ValueError):
        batch_of(stored(1, created_at=253_402_300_800_000))


# --- links of forgotten memories (issue 42) --------------------------------------------------


def narrative_of(*sources: str, version: int = 1) -> ledger.EpisodesSummarized:
    return ledger.EpisodesSummarized(a_memory("summary", "semantic"), version, tuple(sources))


def test_a_forget_drops_the_batch_s_links_into_the_forgotten_memory_and_names_it() -> None:
    batch = batch_of(
        narrative_of("turn-1", "turn-2"), ledger.MemoryForgotten("turn-1", "working", 2, "gdpr")
    )

    assert [(link[1], link[2]) for link in batch.links] == [("summary", "turn-2")]
    assert batch.forgotten == {(USER, "turn-1")}


def test_a_link_made_after_the_forget_in_the_same_batch_stays() -> None:
    """As it would if the forget had come in an earlier batch: the writer deletes the stored
    links before it appends the batch's own."""
    batch = batch_of(ledger.MemoryForgotten("turn-1", "working", 2, "gdpr"), narrative_of("turn-1"))

    assert [(link[1], link[2]) for link in batch.links] == [("summary", "turn-1")]


def test_a_forget_leaves_another_user_s_links_and_a_prune_leaves_its_own() -> None:
    batch = RowBatch()
    batch.add(at(narrative_of("turn-1"), 0, user="other"), TOPIC, 0, 0)
    batch.add(at(narrative_of("turn-2"), 1), TOPIC, 0, 1)
    batch.add(at(ledger.MemoryForgotten("turn-1", "working", 2, "gdpr"), 2), TOPIC, 0, 2)
    batch.add(at(ledger.MemoryDeleted("turn-2", "working", 2, "pruned"), 3), TOPIC, 0, 3)

    assert [(link[0], link[2]) for link in batch.links] == [("other", "turn-1"), (USER, "turn-2")]
    assert batch.forgotten == {(USER, "turn-1")}
