"""Forgetting one memory for real (issue 43): on a sealed pipeline, a forgotten memory's text
and embedding, and the old versions of what consolidation derived from it, no longer open
anywhere the log went, with the key store and the master key in hand, while the user's other
memories still do; no database file holds them, nor the destroyed keys; the read models
equal the oracle's, and a projector replaying the whole ledger into an empty database
reaches the same tables."""

from __future__ import annotations

import base64
import re
import uuid
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from memstream.stack.ports import pick_port
from memstream.waiting import wait_until
from projections.schema import migrated_database
from projections.writer import KEY_TABLES, USER_TABLES
from streams.engine.model import ForgetRequested, MemoryEvent, MemoryWritten
from streams.engine.oracle import OracleRun
from streams.erasure.cipher import Unreadable
from streams.erasure.data_keys import LIVE_KEYS_SQL, text_array
from streams.erasure.sealing import sealing_of
from streams.kafka import codec
from streams.state.changelog import split_key
from streams.state.restore import state_topic
from tests.integration.test_forget_user import scan
from tests.integration.test_sealing import every_record
from tests.support import Pipeline
from tests.workloads import cycle_heavy_workload, expected_rows

pytestmark = pytest.mark.integration

# Seeds of their own: the byte scans of test_forget_user.py read every database of the shared
# stack, and must not find the live memories of these tests' users (nor these theirs).

VICTIM_USER = "user-1"


def quoted_victim(events: list[MemoryEvent], run: OracleRun) -> tuple[str, str]:
    """A live memory of the victim user that an observation quotes word for word: its id and
    the observation's."""
    state = run.users[VICTIM_USER]
    for event in events:
        payload = event.payload
        if event.user_id != VICTIM_USER or not isinstance(payload, MemoryWritten):
            continue
        record = state.memories.get(payload.memory.memory_id)
        if record is None or record.forgotten:
            continue
        for other in state.memories.values():
            if (
                other.memory.memory_id != payload.memory.memory_id
                and not other.forgotten
                and payload.memory.content in other.memory.content
            ):
                return payload.memory.memory_id, other.memory.memory_id
    raise AssertionError("the workload has no memory an observation quotes: change its seed")


@dataclass(frozen=True)
class ForgetRun:
    events: list[MemoryEvent]
    before: OracleRun  # the oracle of ``events``
    after: OracleRun  # ... and of the forget after them
    forget: MemoryEvent
    victim: str  # the memory forgotten
    observation: str  # an observation quoting it


def processed_before_a_forget(sealed: Pipeline, seed: int) -> ForgetRun:
    """Three users' conversations with forgets, processed by the sealed pipeline, and the
    forget (not yet published) of a memory of user-1 that an observation quotes."""
    events = cycle_heavy_workload(240, users=3, seed=seed, forgets=0.08)
    before = sealed.oracle(events)
    victim, observation = quoted_victim(events, before)
    forget = MemoryEvent(
        str(uuid.uuid4()),
        VICTIM_USER,
        events[-1].occurred_at + 1000,
        ForgetRequested(victim, "user_request"),
        source="tests",
    )
    after = sealed.oracle([*events, forget])
    sealed.start_all()
    for event in events:
        sealed.publisher.publish(event)
    sealed.publisher.flush()
    sealed.wait_for_log_count(len(before.decisions))
    sealed.analyze()  # statistics sampled from what is about to be forgotten, as autovacuum's
    return ForgetRun(events, before, after, forget, victim, observation)


def forgotten_values(
    events: list[MemoryEvent], before: OracleRun, after: OracleRun
) -> tuple[set[bytes], set[bytes]]:
    """The contents and embeddings of every written memory the final state has forgotten (as
    the state held them before they were forgotten, the worker's embedding included), and of
    every memory derived from one that the forget cascade forgot with it."""
    texts: set[bytes] = set()
    embeddings: set[bytes] = set()
    for user, state in after.users.items():
        for memory_id, record in state.memories.items():
            if not record.forgotten:
                continue
            held = before.users[user].memories.get(memory_id)
            if held is not None and not held.forgotten:
                texts.add(held.memory.content.encode())
                if held.memory.embedding:
                    embeddings.add(held.memory.embedding)
    for event in events:
        payload = event.payload
        if isinstance(payload, MemoryWritten):
            final = after.users[event.user_id].memories.get(payload.memory.memory_id)
            if final is not None and final.forgotten:
                texts.add(payload.memory.content.encode())
                if payload.memory.embedding:
                    embeddings.add(payload.memory.embedding)
    return texts, embeddings


def opened_log(pipeline: Pipeline) -> tuple[bytes, int]:
    """What every record of the input topic, the ledger and the state changelog opens to with
    the key store as it is now (the master key in hand): the plaintext an attacker holding
    both would read, and how many records stayed closed."""
    sealing = sealing_of(pipeline.settings)
    assert sealing is not None
    try:
        settings = pipeline.settings
        opened: list[bytes] = []
        closed = 0
        for _, value in every_record(pipeline, settings.events_topic):
            try:
                event = sealing.open_input(codec.decode_event(value))
            except (Unreadable, codec.DecodeError):
                closed += 1
                continue
            opened.append(codec.encode_event(event))
        for _, value in every_record(pipeline, settings.ledger_topic):
            try:
                record, erased = sealing.open_ledger_keeping(codec.decode_ledger(value))
            except Unreadable:
                closed += 1
                continue
            closed += erased
            opened.append(codec.encode_ledger(record))
        for key, value in every_record(pipeline, state_topic(settings)):
            if key is None:
                continue
            user, table, entry_id = split_key(key)
            plain = sealing.open_entry(user, table, value, entry_id)
            if plain is None:
                closed += 1
            else:
                opened.append(plain)
        return b"\x00".join(opened), closed
    finally:
        sealing.close()


def keys_left(pipeline: Pipeline, memories: list[tuple[str, str]]) -> list[tuple[object, ...]]:
    """The key rows the store still holds for these (user, memory) pairs."""
    arrays = (text_array(u for u, _ in memories), text_array(m for _, m in memories))
    return pipeline.query(LIVE_KEYS_SQL, arrays)


def test_forgetting_one_memory_erases_it_and_what_quoted_it_from_every_copy(
    sealed: Pipeline, stack: object
) -> None:
    """Given a sealed pipeline that processed three users' conversations with forgets, and a
    memory of user-1 that an observation quotes word for word,
    when user-1 forgets that memory,
    then its keys are gone (and vacuumed out of the database's files), no record on the input
    topic, the ledger or the state changelog, aborted ones included, opens to the text or
    embedding of it or of any memory the workload forgot, while user-1's other memories
    still open; the read models equal the oracle; and a projector replaying the ledger from
    the start into an empty database reaches the same tables."""
    # the database files are scanned right after the forget: nothing may wait for its vacuum
    sealed.settings = sealed.settings.with_overrides(erasure_vacuum_delay_seconds=0)
    run = processed_before_a_forget(sealed, seed=4346)
    events, before, after, forget = run.events, run.before, run.after, run.forget
    victim, observation = run.victim, run.observation
    doomed = sealed.query(
        "SELECT wrapped_key FROM memstream_memory_keys WHERE key_user_id = %s "
        "AND key_memory_id = ANY(%s)",
        (VICTIM_USER, [victim, observation]),
    )
    assert doomed, "the victim and its observation have keys of their own"

    sealed.publisher.publish(forget)
    sealed.publisher.flush()
    sealed.wait_for_log_count(len(after.decisions))

    forgotten_ids = [
        (user, memory_id)
        for user, state in after.users.items()
        for memory_id, record in state.memories.items()
        if record.forgotten
    ]
    assert (VICTIM_USER, victim) in forgotten_ids and (VICTIM_USER, observation) in forgotten_ids
    assert keys_left(sealed, forgotten_ids) == []
    assert sealed.memory_rows() == expected_rows(after)

    texts, embeddings = forgotten_values(events, before, after)
    victim_text = next(
        e.payload.memory.content.encode()
        for e in events
        if isinstance(e.payload, MemoryWritten) and e.payload.memory.memory_id == victim
    )
    assert victim_text in texts and len(texts) > 10
    plaintext, closed = opened_log(sealed)
    assert closed > 0
    still_found = [t for t in texts if t in plaintext]
    still_found += [
        b"an embedding" for e in embeddings if e in plaintext or base64.b64encode(e) in plaintext
    ]
    assert still_found == []
    live = [
        r.memory.content.encode()
        for r in after.users[VICTIM_USER].memories.values()
        if not r.forgotten and re.search(r"fact number \d+", r.memory.content)
    ]
    assert live and all(t in plaintext for t in live)  # the user's other memories still open

    sealed.wait_for_vacuum_paid()
    sealed.processes["worker"].stop()
    with psycopg.connect(sealed.settings.database_url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
    assert scan(sealed, stack, texts, embeddings) == []
    pgdata = Path(stack.state_dir) / "postgres" / "pgdata"  # type: ignore[attr-defined]
    files = b"\x00".join(
        p.read_bytes()
        for p in pgdata.rglob("*")
        if p.is_file() and "pg_wal" not in p.parts and not p.name.startswith("postmaster")
    )
    assert [k for (k,) in doomed if bytes(k) in files] == []

    live_tables = sealed.dump_tables()
    replica_url = migrated_database(
        stack.database_url,  # type: ignore[attr-defined]
        f"r_{uuid.uuid4().hex[:10]}",
        sealed.settings.embedding_dim,
    )
    sealed.settings = sealed.settings.with_overrides(
        keys_database_url=sealed.settings.database_url,
        database_url=replica_url,
        projector_group=sealed.settings.projector_group + "-replay",
        projector_metrics_port=pick_port(None)[0],
    )
    sealed.start("projector-replay", ["project"])
    sealed.wait_for_log_count(len(live_tables["consolidation_log"]))
    assert sealed.dump_tables() == live_tables
    assert sealed.processes["projector-replay"].alive()


def test_a_worker_killed_during_a_memory_forget_finishes_it_after_the_restart(
    sealed: Pipeline, stack: object
) -> None:
    """Given a sealed pipeline that processed three users' conversations with forgets,
    when user-1 forgets a memory an observation quotes and the worker is SIGKILLed right
    after, then the restarted worker completes the forget and its cascade: the read models
    equal the oracle's, the forgotten memories have no key left, and no record opens to the
    text of any of them."""
    run = processed_before_a_forget(sealed, seed=4347)
    events, before, after, forget = run.events, run.before, run.after, run.forget

    sealed.publisher.publish(forget)
    sealed.publisher.flush()
    sealed.processes["worker"].kill()
    sealed.start("worker-2", ["worker"])

    sealed.wait_for_log_count(len(after.decisions), timeout=120)
    assert sealed.memory_rows() == expected_rows(after)
    forgotten_ids = [
        (user, memory_id)
        for user, state in after.users.items()
        for memory_id, record in state.memories.items()
        if record.forgotten
    ]
    assert keys_left(sealed, forgotten_ids) == []
    texts, _ = forgotten_values(events, before, after)
    plaintext, _ = opened_log(sealed)
    assert [t for t in texts if t in plaintext] == []


def table_files(pipeline: Pipeline) -> dict[str, int]:
    """Each user table's and key table's file node: a VACUUM (FULL) gives the table a new one."""
    return {
        table: pipeline.scalar("SELECT pg_relation_filenode(%s::regclass)", (table,))
        for table in (*USER_TABLES, *KEY_TABLES)
    }


def test_forgets_wait_together_for_one_vacuum_that_a_restarted_projector_still_pays(
    sealed: Pipeline,
) -> None:
    """Given a sealed pipeline whose projector lets forgotten memories wait an hour for their
    vacuum, when conversations with forgets are projected, then the read models equal the
    oracle's, no table was rewritten (each keeps its file) and the vacuum owed is written
    down; when that projector stops and one that lets nothing wait starts, it pays at once:
    every user and key table rewritten, nothing owed, the rows unchanged."""
    sealed.settings = sealed.settings.with_overrides(erasure_vacuum_delay_seconds=3600)
    events = cycle_heavy_workload(160, users=2, seed=4348, forgets=0.1)
    oracle = sealed.oracle(events)
    assert any(r.forgotten for s in oracle.users.values() for r in s.memories.values())
    files = table_files(sealed)  # the pipeline's database is migrated already
    sealed.start_all()
    for event in events:
        sealed.publisher.publish(event)
    sealed.publisher.flush()
    sealed.wait_for_log_count(len(oracle.decisions))
    assert sealed.memory_rows() == expected_rows(oracle)
    owed = sealed.scalar("SELECT count(*) FROM memstream_vacuum_due")
    assert owed >= 1
    assert table_files(sealed) == files

    sealed.processes["projector"].stop()
    sealed.start("projector-2", ["project"], erasure_vacuum_delay_seconds=0)
    wait_until(
        lambda: sealed.scalar("SELECT count(*) FROM memstream_vacuum_due") == 0,
        timeout=60,
        what="the restarted projector's vacuum",
        describe=sealed.logs,
    )
    rewritten = table_files(sealed)
    assert [t for t, node in rewritten.items() if node == files[t]] == []
    assert sealed.memory_rows() == expected_rows(oracle)
