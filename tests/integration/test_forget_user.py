"""Forgetting a user for real (issue 43): `memstream forget --user U` on a sealed pipeline
destroys U's data key, the worker drops U's state, the projector every row of U; afterwards
no topic, no state store and no database file holds U's contents, name or embeddings, the
other users equal the oracle, and a projector replaying the whole ledger into an empty
database reaches the same read models without stopping."""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest

from memstream.stack.ports import pick_port
from memstream.waiting import wait_until
from projections.schema import migrated_database
from projections.writer import USER_TABLES
from streams.engine.model import Memory, MemoryEvent, MemoryWritten
from streams.engine.oracle import OracleRun
from streams.kafka import codec
from streams.state.restore import state_topic
from tests.integration.test_sealing import files_under, personal_values, raw_values
from tests.support import Pipeline
from tests.workloads import cycle_heavy_workload, expected_rows

pytestmark = pytest.mark.integration

VICTIM = "user-1"
NAME = "Zebulon Quarkworth"
SECRET = "Zebulon keeps the spare key under the blue flowerpot by the gate"


def workload() -> list[MemoryEvent]:
    """Three users talking in sessions, with forgets and cycles; the victim also says one
    thing of their own, in their own name, with an embedding of its own."""
    events = cycle_heavy_workload(240, users=3, seed=4343, forgets=0.08)
    last = events[-1].occurred_at
    secret = Memory(
        memory_id=f"{VICTIM}-secret",
        user_id=VICTIM,
        content=SECRET,
        speaker=NAME,
        importance=0.9,
        embedding=codec.pack_embedding([((i * 7919) % 997) / 997 - 0.5 for i in range(384)]),
    )
    return [*events, MemoryEvent(str(uuid.uuid4()), VICTIM, last + 1000, MemoryWritten(secret))]


def victims_values(events: list[MemoryEvent]) -> tuple[set[bytes], set[bytes]]:
    texts, embeddings = personal_values([e for e in events if e.user_id == VICTIM])
    shared = {b"Caroline", b"Melanie"}  # the workload's speakers, shared with other users
    return texts - shared, embeddings


def scan(
    pipeline: Pipeline, stack: object, texts: set[bytes], embeddings: set[bytes]
) -> list[tuple[str, bytes]]:
    """Where any of the values is found: every topic's raw record values, the Kafka log
    segments, the worker's state store, and the database's files (the WAL left out: its
    retention is the operator's, docs/security.md)."""
    settings = pipeline.settings
    found: list[tuple[str, bytes]] = []
    places = {
        topic: raw_values(pipeline, topic)
        for topic in (settings.events_topic, settings.ledger_topic, state_topic(settings))
    }
    state_dir = Path(stack.state_dir)  # type: ignore[attr-defined]
    places["kafka log segments"] = files_under(state_dir / "kafka")
    places["worker state"] = files_under(settings.worker_data_dir)
    pgdata = state_dir / "postgres" / "pgdata"
    places["database files"] = b"\x00".join(
        p.read_bytes()
        for p in pgdata.rglob("*")
        if p.is_file() and "pg_wal" not in p.parts and not p.name.startswith("postmaster")
    )
    for place, held in places.items():
        found += [(place, t) for t in texts if t in held]
        found += [(place, b"an embedding") for e in embeddings if e in held]
    return found


def others_rows(pipeline: Pipeline) -> dict:
    return {k: v for k, v in pipeline.memory_rows().items() if k[1] != VICTIM}


def assert_no_row_of_the_victim_and_the_others_as_the_oracle(
    sealed: Pipeline, oracle: OracleRun
) -> None:
    for table in USER_TABLES:
        left = sealed.query(
            f"SELECT count(*) FROM {table} WHERE user_id = %s "  # noqa: S608 - our tables
            + ("AND action <> 'UserErased'" if table == "consolidation_log" else ""),
            (VICTIM,),
        )
        assert left == [(0,)], table
    assert others_rows(sealed) == {k: v for k, v in expected_rows(oracle).items() if k[1] != VICTIM}


def assert_nothing_of_the_victim_on_disk(
    sealed: Pipeline, stack: object, events: list[MemoryEvent], worker: str
) -> None:
    """The worker stopped and a checkpoint taken (what VACUUM left is on disk, as it would be
    in time), no byte of the victim's texts, name or embeddings is in any copy."""
    sealed.wait_for_vacuum_paid()
    sealed.processes[worker].stop()
    with psycopg.connect(sealed.settings.database_url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
    texts, embeddings = victims_values(events)
    assert scan(sealed, stack, texts, embeddings) == []


def test_forgetting_a_user_leaves_nothing_of_them_anywhere_and_a_replay_agrees(
    sealed: Pipeline, stack: object
) -> None:
    """Given a sealed pipeline that processed three users' conversations,
    when `memstream forget --user user-1` runs,
    then the key is gone at once, the read models drop user-1 (the ledger records the
    erasure), the other users equal the oracle, no topic, Kafka segment, worker store or
    database file holds user-1's contents, speaker name or embeddings, and a projector
    replaying the ledger from the start into an empty database reaches the same tables."""
    sealed.start_all()
    events = workload()
    oracle = sealed.oracle(events)
    for event in events:
        sealed.publisher.publish(event)
    sealed.publisher.flush()
    sealed.wait_for_log_count(len(oracle.decisions))
    assert sealed.scalar("SELECT count(*) FROM working_memories WHERE content = %s", (SECRET,))
    before = sealed.dump_tables()
    sealed.analyze()

    forgot = sealed.cli("forget", "--user", VICTIM)

    assert forgot.returncode == 0, forgot.stderr
    assert not sealed.query("SELECT 1 FROM memstream_data_keys WHERE key_user_id = %s", (VICTIM,))
    wait_until(
        lambda: sealed.query(
            "SELECT 1 FROM consolidation_log WHERE user_id = %s AND action = 'UserErased'",
            (VICTIM,),
        ),
        timeout=90,
        what="the projector to apply the erasure",
        describe=sealed.logs,
    )
    assert_no_row_of_the_victim_and_the_others_as_the_oracle(sealed, oracle)
    after = sealed.dump_tables()
    for table, rows in before.items():
        assert [r for r in after[table] if VICTIM not in r] == [
            r for r in rows if VICTIM not in r
        ], table
    assert [r[6] for rows in after.values() for r in rows if VICTIM in r] == ["UserErased"]

    assert {NAME.encode(), SECRET.encode()} <= victims_values(events)[0]  # the scan seeks them
    assert_nothing_of_the_victim_on_disk(sealed, stack, events, "worker")

    replica_url = migrated_database(
        stack.database_url,  # type: ignore[attr-defined]
        f"r_{uuid.uuid4().hex[:10]}",
        sealed.settings.embedding_dim,
    )
    sealed.settings = sealed.settings.with_overrides(
        keys_database_url=sealed.settings.database_url,  # the one key store, kept
        database_url=replica_url,
        projector_group=sealed.settings.projector_group + "-replay",
        projector_metrics_port=pick_port(None)[0],
    )
    sealed.start("projector-replay", ["project"])
    logged = len(after["consolidation_log"])
    sealed.wait_for_log_count(logged)
    assert sealed.dump_tables() == after
    assert sealed.processes["projector-replay"].alive()


def test_a_worker_killed_during_a_forget_finishes_it_after_the_restart(
    sealed: Pipeline, stack: object
) -> None:
    """Given a sealed pipeline that processed two users' conversations,
    when `memstream forget --user user-1` runs and the worker is SIGKILLed right after it,
    then the restarted worker completes the erasure: user-1's rows are gone, the other user
    equals the oracle, and nothing of user-1 is on any topic, in the worker's store or in
    the database's files."""
    events = cycle_heavy_workload(120, users=2, seed=4344, forgets=0.08)
    secret = Memory(
        f"{VICTIM}-secret-2",
        VICTIM,
        "Zebulon hides the boat keys inside the red teapot",
        speaker="Zebulon Quarkworth-Smythe",
        embedding=codec.pack_embedding([((i * 104729) % 991) / 991 - 0.5 for i in range(384)]),
    )
    events.append(
        MemoryEvent(str(uuid.uuid4()), VICTIM, events[-1].occurred_at + 1, MemoryWritten(secret))
    )
    oracle = sealed.oracle(events)
    sealed.start_all()
    for event in events:
        sealed.publisher.publish(event)
    sealed.publisher.flush()
    sealed.wait_for_log_count(len(oracle.decisions))
    sealed.analyze()

    forgot = sealed.cli("forget", "--user", VICTIM)
    sealed.processes["worker"].kill()
    sealed.start("worker-2", ["worker"])

    assert forgot.returncode == 0, forgot.stderr
    wait_until(
        lambda: sealed.query(
            "SELECT 1 FROM consolidation_log WHERE user_id = %s AND action = 'UserErased'",
            (VICTIM,),
        ),
        timeout=120,
        what="the restarted worker and the projector to apply the erasure",
        describe=sealed.logs,
    )
    assert_no_row_of_the_victim_and_the_others_as_the_oracle(sealed, oracle)
    assert_nothing_of_the_victim_on_disk(sealed, stack, events, "worker-2")
