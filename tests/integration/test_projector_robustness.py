"""The projector on the real stack when the ledger or the cluster misbehaves
(docs/failure-semantics.md, 'The projector'): a record no row can hold is set aside alone, a schema
it does not know stops it without skipping anything, a batch built before a rebalance writes
nothing, and the nearest-memory query still finds ``k`` rows when the HNSW index is full of rows its
filter rejects."""

from __future__ import annotations

import threading

import numpy as np
import psycopg
import pytest
from confluent_kafka import KafkaError, Message, Producer
from pgvector.psycopg import register_vector

from memstream.waiting import wait_until
from projections.queries import nearest_memories
from projections.rows import RowBatch
from projections.writer import StaleBatch, prepare_connection, write_batch
from streams.engine import ledger
from streams.engine.model import Memory
from streams.kafka import codec
from tests.support import Pipeline
from tests.workloads import BASE_TIME

pytestmark = pytest.mark.integration

USER = "user-ledger"
YEAR_10000 = 253_402_300_800_000  # epoch milliseconds of 10000-01-01


def stored_event(
    n: int, content: str = "fine", created_at: int = BASE_TIME
) -> ledger.ConsolidationEvent:
    memory = Memory(f"m-{n}", USER, content, created_at=created_at)
    return ledger.ConsolidationEvent(
        f"00000000-0000-4000-8000-{n:012d}",
        USER,
        BASE_TIME + n,
        f"cause-{n}",
        ledger.MemoryStored(memory, 1),
    )


def produce_to_ledger(pipeline: Pipeline, values: list[bytes]) -> list[tuple[int, int]]:
    """Append ``values`` to the ledger topic under one key, as the worker would; return the
    (partition, offset) of each."""
    producer = Producer(
        {"bootstrap.servers": pipeline.settings.kafka_bootstrap, "enable.idempotence": True}
    )
    delivered: list[tuple[int, int]] = []

    def on_delivery(err: KafkaError | None, message: Message) -> None:
        assert err is None, err
        delivered.append((message.partition() or 0, message.offset() or 0))

    for value in values:
        producer.produce(
            pipeline.settings.ledger_topic, key=USER.encode(), value=value, on_delivery=on_delivery
        )
    assert producer.flush(30) == 0
    return sorted(delivered, key=lambda position: position[1])  # one key: one partition


def stored_position(pipeline: Pipeline, partition: int) -> int | None:
    rows = pipeline.query(
        "SELECT next_offset FROM projection_offsets WHERE projector = %s AND partition = %s",
        (pipeline.settings.projector_group, partition),
    )
    return rows[0][0] if rows else None


def memory_ids(pipeline: Pipeline) -> set[str]:
    return {row[0] for row in pipeline.query("SELECT memory_id FROM working_memories")}


# --- a record no row can hold ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad_event", "detail"),
    [
        (stored_event(3, content="NUL \x00 in text"), "0x00"),
        (stored_event(3, created_at=YEAR_10000), "outside the representable dates"),
    ],
    ids=["nul-byte-postgres-refuses", "date-past-year-9999"],
)
def test_a_ledger_record_whose_row_cannot_be_stored_is_dead_lettered_and_the_rest_flows(
    pipeline: Pipeline, bad_event: ledger.ConsolidationEvent, detail: str
) -> None:
    """Given a ledger record whose row cannot be stored between good ones (Avro allows what
    PostgreSQL or a date column refuses),
    when the projector applies them,
    then the good ones are projected, the bad one is in memory.deadletter with reason
    ledger_unprojectable and where it came from, the stored position moves past it, and the
    projector keeps projecting what follows."""
    events = [stored_event(1), stored_event(2), bad_event, stored_event(4), stored_event(5)]
    values = [codec.encode_ledger(event) for event in events]
    positions = produce_to_ledger(pipeline, values)
    partition, bad_offset = positions[2]
    pipeline.start("projector")

    wait_until(
        lambda: stored_position(pipeline, partition) == positions[-1][1] + 1,
        timeout=60,
        what="the projector to store a position past every record",
        describe=lambda: f"stored {stored_position(pipeline, partition)}\n{pipeline.logs()}",
    )
    assert memory_ids(pipeline) == {"m-1", "m-2", "m-4", "m-5"}
    (letter,) = pipeline.read_topic(pipeline.settings.deadletter_topic, expected=1)
    headers = {name: value.decode() for name, value in letter.headers()}
    assert headers["reason"] == "ledger_unprojectable"
    assert detail in headers["detail"]
    assert headers["source.topic"] == pipeline.settings.ledger_topic
    assert (headers["source.partition"], headers["source.offset"]) == (
        str(partition),
        str(bad_offset),
    )
    assert letter.value() == values[2]
    assert pipeline.metric_sum("projector", "memstream_projector_unprojectable_total") == 1

    produce_to_ledger(pipeline, [codec.encode_ledger(stored_event(6))])
    wait_until(
        lambda: "m-6" in memory_ids(pipeline),
        timeout=60,
        what="a record after the bad one to be projected",
        describe=pipeline.logs,
    )
    assert pipeline.processes["projector"].alive()


def cycle_event(n: int, index: int, size: int) -> ledger.ConsolidationEvent:
    memory = Memory(f"c-{n}", USER, "part of one cycle", created_at=BASE_TIME)
    return ledger.ConsolidationEvent(
        f"00000000-0000-4000-c000-{n:012d}",
        USER,
        BASE_TIME + n,
        "cause-of-the-cycle",
        ledger.MemoryStored(memory, 1),
        "manual",
        "cycle-1",
        index,
        size,
    )


def test_an_emission_longer_than_a_batch_is_held_back_a_few_times_then_projected(
    pipeline: Pipeline,
) -> None:
    """Given one input's output of 5 ledger events and a projector batch of 2,
    when the projector reads it,
    then it holds the open emission back a bounded number of times (it may only have been
    cut by other partitions' records) and then applies it across batches: all 5 rows."""
    values = [codec.encode_ledger(cycle_event(n, n, 5)) for n in range(5)]
    produce_to_ledger(pipeline, values)
    pipeline.start("projector", projector_batch_size=2)

    wait_until(
        lambda: pipeline.scalar("SELECT count(*) FROM consolidation_log") == 5,
        timeout=60,
        what="the whole emission to be projected",
        describe=pipeline.logs,
    )
    assert memory_ids(pipeline) == {f"c-{n}" for n in range(5)}
    assert pipeline.metric_sum("projector", "memstream_projector_emissions_held_back_total") >= 3
    assert "larger than a batch" in pipeline.logs()


# --- a schema the projector does not know ------------------------------------------------------


def test_a_ledger_record_of_an_unknown_schema_stops_the_projector_without_skipping_it(
    pipeline: Pipeline,
) -> None:
    """Given a ledger record framed with a schema fingerprint this projector does not know
    (written by a newer worker),
    when the projector reaches it,
    then it exits non-zero saying which record, which fingerprint and what to do, and the
    stored position does not move past that record."""
    good = codec.encode_ledger(stored_event(1))
    newer = codec.MAGIC + bytes.fromhex("0101010101010101") + good[codec.HEADER_SIZE :]
    positions = produce_to_ledger(pipeline, [good, newer, codec.encode_ledger(stored_event(2))])
    partition, newer_offset = positions[1]
    projector = pipeline.start("projector")

    wait_until(
        lambda: not projector.alive(),
        timeout=60,
        what="the projector to stop",
        describe=pipeline.logs,
    )
    assert projector.popen.returncode != 0
    log = projector.log_tail(20)
    assert (
        f"ledger record at {pipeline.settings.ledger_topic}[{partition}]@{newer_offset} uses "
        f"schema fingerprint 0101010101010101 unknown to this projector: upgrade the projector "
        f"(memstream) to the worker's version; nothing was skipped"
    ) in log
    assert "Traceback" not in log
    assert (stored_position(pipeline, partition) or 0) <= newer_offset
    assert "m-2" not in memory_ids(pipeline)


# --- a batch built before a rebalance ----------------------------------------------------------


def batch_of(*events: tuple[int, ledger.ConsolidationEvent]) -> RowBatch:
    batch = RowBatch()
    for offset, event in events:
        batch.add(event, "memory.consolidation", 0, offset)
    return batch


def connect(pipeline: Pipeline, autocommit: bool = False) -> psycopg.Connection:
    conn = psycopg.connect(pipeline.settings.database_url, autocommit=autocommit)
    prepare_connection(conn)
    return conn


def forgotten_event(n: int) -> ledger.ConsolidationEvent:
    return ledger.ConsolidationEvent(
        f"00000000-0000-4000-9000-{n:012d}",
        USER,
        BASE_TIME + 100 + n,
        f"forget-{n}",
        ledger.MemoryForgotten(f"m-{n}", "working", 2, "gdpr"),
    )


def test_a_stale_batch_cannot_bring_back_a_row_deleted_after_it(pipeline: Pipeline) -> None:
    """Given one projector instance stored and forgot memory m-1 (offsets 0 and 1),
    when another instance, which consumed offset 0 before a rebalance, writes its batch,
    then the write is refused as stale and nothing of it is written: m-1 stays forgotten."""
    current, stale = connect(pipeline), connect(pipeline)
    try:
        write_batch(current, batch_of((0, stored_event(1)), (1, forgotten_event(1))), "p")

        with pytest.raises(StaleBatch):
            write_batch(stale, batch_of((0, stored_event(1))), "p")

        assert memory_ids(pipeline) == set()
        assert pipeline.scalar("SELECT count(*) FROM consolidation_log") == 2
        assert pipeline.scalar("SELECT next_offset FROM projection_offsets") == 2
    finally:
        current.close()
        stale.close()


def test_a_batch_racing_a_newer_one_waits_for_it_then_writes_nothing(pipeline: Pipeline) -> None:
    """Given an instance is committing offsets 0..9 of a partition (its transaction holds the
    partition's stored position),
    when another instance writes a batch starting at offset 5 of that partition,
    then that write waits for the first to commit, then is refused as stale."""
    holder, racer, observer = connect(pipeline), connect(pipeline), connect(pipeline, True)
    outcome: list[BaseException | None] = []

    def race() -> None:
        try:
            write_batch(racer, batch_of((5, stored_event(5))), "p")
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    racer_pid = racer.info.backend_pid
    try:
        with holder.transaction():
            write_batch(holder, batch_of((0, stored_event(1))), "p")  # creates the row
            holder.execute("UPDATE projection_offsets SET next_offset = 10 WHERE projector = 'p'")
            thread = threading.Thread(target=race)
            thread.start()
            wait_until(
                lambda: (
                    observer.execute(
                        "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = %s",
                        (racer_pid,),
                    ).fetchone()
                    == (True,)
                ),
                timeout=30,
                what="the racing batch to wait for the stored position's lock",
            )
        thread.join(30)

        assert len(outcome) == 1 and isinstance(outcome[0], StaleBatch)
        assert memory_ids(pipeline) == {"m-1"}
    finally:
        for conn in (holder, racer, observer):
            conn.close()


def version_of(n: int, version: int, content: str) -> ledger.ConsolidationEvent:
    memory = Memory(f"m-{n}", USER, content, created_at=BASE_TIME)
    return ledger.ConsolidationEvent(
        f"00000000-0000-4000-a000-{n:06d}{version:06d}",
        USER,
        BASE_TIME + 1000 * version + n,
        f"cause-{n}-{version}",
        ledger.MemoryStored(memory, version),
    )


def test_a_layer_whose_rows_are_not_all_new_is_upserted_under_the_version_guard(
    pipeline: Pipeline,
) -> None:
    """Given m-1 at version 1 (a batch of new rows, copied straight into the table),
    when a batch holds m-1 at version 3 with a new m-2, and a later one m-1 at version 2
    (a replayed, older decision) with a new m-3,
    then each batch's new rows are there, and m-1 keeps the content of its newest version."""
    conn = connect(pipeline)
    try:
        write_batch(conn, batch_of((0, version_of(1, 1, "first"))), "p")
        write_batch(
            conn, batch_of((1, version_of(1, 3, "third")), (2, version_of(2, 1, "two"))), "p"
        )
        write_batch(
            conn, batch_of((3, version_of(1, 2, "second")), (4, version_of(3, 1, "3"))), "p"
        )
    finally:
        conn.close()

    rows = pipeline.query("SELECT memory_id, version, content FROM working_memories")
    assert sorted(rows) == [("m-1", 3, "third"), ("m-2", 1, "two"), ("m-3", 1, "3")]
    assert pipeline.scalar("SELECT count(*) FROM consolidation_log") == 5


def forgotten_at(n: int, version: int) -> ledger.ConsolidationEvent:
    return ledger.ConsolidationEvent(
        f"00000000-0000-4000-b000-{n:06d}{version:06d}",
        USER,
        BASE_TIME + 1000 * version + n,
        f"forget-{n}-{version}",
        ledger.MemoryForgotten(f"m-{n}", "working", version, "gdpr"),
    )


def test_deletes_remove_only_rows_older_than_the_decision(pipeline: Pipeline) -> None:
    """Given m-1 at version 3 and m-2, m-3 at version 1,
    when one batch forgets m-1 at version 2 (a decision older than the row), m-2 at version 2
    and m-3 at version 2,
    then m-1 stays and the others are gone: every delete of a batch is guarded by version."""
    conn = connect(pipeline)
    try:
        write_batch(
            conn,
            batch_of(
                (0, version_of(1, 3, "newest")),
                (1, version_of(2, 1, "two")),
                (2, version_of(3, 1, "three")),
            ),
            "p",
        )
        write_batch(conn, batch_of((3, forgotten_at(1, 2)), (4, forgotten_at(2, 2))), "p")
        write_batch(conn, batch_of((5, forgotten_at(3, 2))), "p")
    finally:
        conn.close()

    assert pipeline.query("SELECT memory_id, version FROM working_memories") == [("m-1", 3)]


# --- nearest memories under a filter the index cannot see -------------------------------------


def test_nearest_memories_finds_k_current_memories_behind_many_archived_closer_ones(
    pipeline: Pipeline,
) -> None:
    """Given a user whose archived memories are all closer to the query than any current one
    (more of them than HNSW's default candidate list),
    when asking for the 5 nearest current memories,
    then 5 are returned, in order of distance."""
    dim = pipeline.settings.embedding_dim
    rng = np.random.default_rng(5)
    query = rng.normal(size=dim).astype("<f4")
    archived = [query + rng.normal(scale=0.05, size=dim).astype("<f4") for _ in range(1000)]
    current = [rng.normal(size=dim).astype("<f4") for _ in range(1000)]
    with connect(pipeline) as conn:
        register_vector(conn)
        with conn.cursor().copy(
            "COPY semantic_facts (user_id, memory_id, version, kind, content, importance, "
            "confidence, emotional_salience, valence, priority, scope, created_by, consent, "
            "created_at, status, embedding) FROM STDIN"
        ) as copy:
            for status, vectors in (("archived", archived), ("active", current)):
                for n, vector in enumerate(vectors):
                    copy.write_row(
                        (
                            USER,
                            f"{status}-{n}",
                            1,
                            "fact",
                            "x",
                            0.5,
                            0.5,
                            0.0,
                            0.0,
                            "normal",
                            "agent",
                            "agent",
                            True,
                            "2026-01-01",
                            status,
                            vector,
                        )
                    )
        conn.commit()
        conn.execute("ANALYZE semantic_facts")
        conn.commit()

        near = nearest_memories(conn, USER, query.tobytes(), k=5)

    assert len(near) == 5
    assert all(m.memory_id.startswith("active-") for m in near)
    assert [m.distance for m in near] == sorted(m.distance for m in near)
