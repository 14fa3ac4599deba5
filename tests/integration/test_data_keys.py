"""Users' data keys in PostgreSQL (issue 43's key store), on the stack's real database: made
once whoever asks first, erased by deleting one row, re-wrapped by a master-key rotation
without touching what they sealed, and held to one user for a reader login."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest
from psycopg import pq
from psycopg.conninfo import make_conninfo

from projections import grants
from streams.erasure.cipher import Unreadable, field_context
from streams.erasure.data_keys import (
    LIVE_KEYS_SQL,
    LocalMasterKey,
    MasterKeyError,
    PostgresKeyStore,
    text_array,
)

pytestmark = pytest.mark.integration

CONTENT = field_context("alice", "content")


@pytest.fixture
def master() -> LocalMasterKey:
    return LocalMasterKey(os.urandom(32))


def store(url: str, master: LocalMasterKey, **kwargs: object) -> PostgresKeyStore:
    return PostgresKeyStore(url, master, **kwargs)  # type: ignore[arg-type]


def test_two_processes_making_a_users_key_at_once_agree_on_one(
    database: str, master: LocalMasterKey
) -> None:
    first, second = store(database, master), store(database, master)
    try:
        sealed = first.cipher("alice").seal_text("moved to Lisbon", CONTENT)
        both = second.ciphers(["bob", "alice", "bob"])
        assert list(both) == ["bob", "alice"]
        assert both["alice"].open_text(sealed, CONTENT) == "moved to Lisbon"
        with psycopg.connect(database) as conn:
            rows = conn.execute("SELECT key_user_id, wrapped_key FROM memstream_data_keys")
            wrapped: dict[str, bytes] = dict(rows.fetchall())
        assert sorted(wrapped) == ["alice", "bob"]
    finally:
        first.close()
        second.close()


def test_an_erased_key_leaves_what_it_sealed_unreadable_everywhere(
    database: str, master: LocalMasterKey
) -> None:
    writer, reader = store(database, master), store(database, master)
    try:
        sealed = writer.cipher("alice").seal_text("moved to Lisbon", CONTENT)
        assert reader.existing("alice") is not None  # cached by the reader too
        assert writer.erase("alice") is True
        assert writer.erase("alice") is False
        reader.forget_cached("alice")  # as the erasure event tells every process
        assert reader.existing("alice") is None
        assert store(database, master).existing("alice") is None
        # a user who comes back gets a new key, which opens nothing of the old life
        with pytest.raises(Unreadable):
            writer.cipher("alice").open_text(sealed, CONTENT)
    finally:
        writer.close()
        reader.close()


def test_rotating_the_master_key_rewraps_every_data_key_and_opens_all_that_was_sealed(
    database: str, master: LocalMasterKey
) -> None:
    old = store(database, master)
    sealed = {user: old.cipher(user).seal(b"a fact", CONTENT) for user in ("a", "b", "c")}
    old.close()
    new_master = LocalMasterKey(os.urandom(32))
    rotating = store(database, new_master, retired=[master])
    assert rotating.rewrap(batch=2) == 3
    assert rotating.rewrap() == 0
    rotating.close()
    new_only = store(database, new_master)
    for user, value in sealed.items():
        assert new_only.cipher(user).open(value, CONTENT) == b"a fact"
    new_only.close()
    old_only = store(database, master)
    with pytest.raises(MasterKeyError, match="not configured"):
        old_only.existing("a")
    old_only.close()


@pytest.fixture
def reader_role(stack: object, database: str) -> Iterator[str]:
    name = f"svc_keys_{uuid.uuid4().hex[:8]}"
    server = stack.database_url  # type: ignore[attr-defined]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{name}" LOGIN IN ROLE memstream_reader')
    try:
        yield make_conninfo(database, user=name)
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f'DROP OWNED BY "{name}"')
            conn.execute(f'DROP ROLE "{name}"')


def test_a_reader_login_sees_and_makes_only_its_granted_users_key(
    database: str, master: LocalMasterKey, reader_role: str
) -> None:
    owner = store(database, master)
    owner.ciphers(["alice", "bob"])
    owner.close()
    with psycopg.connect(database) as conn:
        key = grants.current_key(conn)
    with psycopg.connect(reader_role, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM memstream_data_keys").fetchone() == (0,)
        with conn.transaction():
            conn.execute(
                "SELECT set_config(%s, %s, true)", (grants.GRANT_SETTING, key.grant("alice"))
            )
            seen = conn.execute("SELECT key_user_id FROM memstream_data_keys").fetchall()
            assert seen == [("alice",)]
        for forbidden in (
            "DELETE FROM memstream_data_keys WHERE key_user_id = 'alice'",
            "UPDATE memstream_data_keys SET wrapped_key = '\\x00' WHERE key_user_id = 'alice'",
            "INSERT INTO memstream_data_keys (key_user_id, master_key_id, wrapped_key) "
            "VALUES ('mallory', 'x', '\\x00')",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
                conn.execute(
                    "SELECT set_config(%s, %s, true)", (grants.GRANT_SETTING, key.grant("alice"))
                )
                conn.execute(forbidden)
        with conn.transaction():
            conn.execute(
                "SELECT set_config(%s, %s, true)", (grants.GRANT_SETTING, key.grant("carol"))
            )
            conn.execute(
                "INSERT INTO memstream_data_keys (key_user_id, master_key_id, wrapped_key) "
                "VALUES ('carol', 'x', '\\x00')"
            )  # a service's first write of a new user makes that user's key
    with psycopg.connect(database) as conn:
        users = conn.execute("SELECT key_user_id FROM memstream_data_keys ORDER BY 1").fetchall()
    assert users == [("alice",), ("bob",), ("carol",)]


def test_a_batchs_keys_are_read_by_primary_key_however_many_keys_exist(
    database: str, master: LocalMasterKey
) -> None:
    # 20,000 keys of 200 users: a size at which PostgreSQL's planner would scan and sort
    # (or hash) the whole table for a batch's few hundred keys, a cost that grows with every
    # key ever made; the key store's session reads them by primary key.
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO memstream_memory_keys (key_user_id, key_memory_id, generation, "
            "wrapped_key) SELECT 'u' || (i % 200), 'm' || i, 1, '\\x00'::bytea "
            "FROM generate_series(1, 20000) AS i"
        )
        conn.execute("ANALYZE memstream_memory_keys")
        batch = ([f"u{i % 200}" for i in range(1, 500)], [f"m{i}" for i in range(1, 500)])
        anywhere = plan(conn, batch)
        assert "Seq Scan" in anywhere, anywhere  # the plan a session of its own gets
    keys = store(database, master)
    try:
        by_key = plan(keys._connection(), batch)
        assert "Index Scan using memstream_memory_keys_pkey" in by_key, by_key
        assert "Seq Scan" not in by_key, by_key
    finally:
        keys.close()


ODD_IDS = ['a"b', "c\\d", "x,y{}", " spaced ", "NULL", "", "é\u00a0ü", '\\"', "{}"]


def test_a_batchs_keys_are_found_whatever_their_ids_hold(
    database: str, master: LocalMasterKey
) -> None:
    """The key read sends its ids as array literals it writes itself (``text_array``):
    quotes, backslashes, commas, braces, spaces, the word NULL and the empty id come back as
    the ids they were, each key under its own memory."""
    with psycopg.connect(database, autocommit=True) as conn:
        assert conn.execute("SELECT %s::text[]", (text_array(ODD_IDS),)).fetchone() == (ODD_IDS,)
        assert conn.execute("SELECT %s::text[]", (text_array([]),)).fetchone() == ([],)
    keys = store(database, master)
    try:
        # each odd id is a user's id and that user's memory's id
        made = {i: keys.ensure_memory_keys(i, [(i, 1, False)])[i][1] for i in ODD_IDS}
        keys._memory_cache.clear()  # read, not remembered
        live = keys.memory_keys([(i, i) for i in ODD_IDS] + [("nobody", "nothing")])
        assert live[("nobody", "nothing")] == {}
        for i in ODD_IDS:
            [(generation, key)] = live[(i, i)].items()
            sealed = made[i].seal(b"hello", b"field")
            assert (generation, key.open(sealed, b"field")) == (1, b"hello")
    finally:
        keys.close()


def plan(conn: psycopg.Connection, batch: tuple[list[str], list[str]]) -> str:
    users, memories = batch
    rows = conn.execute("EXPLAIN " + LIVE_KEYS_SQL, (text_array(users), text_array(memories)))
    return "\n".join(row[0] for row in rows)


def test_erased_memory_keys_leave_the_process_and_others_stay(
    database: str, master: LocalMasterKey
) -> None:
    # An erased key must not stay unwrapped in a process's memory; the erasure finds the
    # memory's cached keys directly (it once walked the whole cache for every memory erased).
    keys = store(database, master)
    try:
        keys.ensure_memory_keys("alice", [("m1", 1, False), ("m2", 1, False)])
        keys.ensure_memory_keys("alice", [("m1", 3, True)])
        assert keys.erase_memory_keys([("alice", "m1", 2), ("alice", "m2", 1)]) == 2
        cached = {pair: sorted(gens) for pair, gens in keys._memory_cache.items()}
        assert cached == {("alice", "m1"): [3]}
        live = keys.memory_keys([("alice", "m1"), ("alice", "m2")])
        assert {pair: sorted(gens) for pair, gens in live.items()} == {
            ("alice", "m1"): [3],
            ("alice", "m2"): [],
        }
    finally:
        keys.close()


def test_drafted_memory_keys_are_stored_in_one_statement_and_an_earlier_key_wins(
    database: str, master: LocalMasterKey
) -> None:
    # The worker drafts a batch's new memories' keys and stores them at the batch's end; a
    # worker that ran the same input before (and stopped) stored its own: that one stays,
    # and the second worker gets it back to seal with.
    first, second = store(database, master), store(database, master)
    user = f"drafts-{uuid.uuid4()}"
    try:
        earlier = first.draft_memory_key(user, "m1", 1)
        assert first.store_drafts()[1] == {(user, "m1", 1)}
        mine = second.draft_memory_key(user, "m1", 1)
        other = second.draft_memory_key(user, "m2", 1)
        second.draft_memory_key(user, "m3", 1)
        second.drop_drafts("someone else")
        found, stored = second.store_drafts()
        assert stored == {(user, "m2", 1), (user, "m3", 1)}
        assert set(found) == {(user, "m1"), (user, "m2"), (user, "m3")}
        assert found[(user, "m2")][1] is other
        sealed = earlier.seal(b"Alice's secret", CONTENT)
        assert found[(user, "m1")][1].open(sealed, CONTENT) == b"Alice's secret"
        with pytest.raises(Unreadable):
            mine.open(sealed, CONTENT)
        assert second.store_drafts() == ({}, set())  # nothing drafted since
        # a reader in a third process opens what the stored drafts sealed
        reader = store(database, master)
        try:
            live = reader.memory_keys([(user, "m2")])[(user, "m2")][1]
            assert live.open(other.seal(b"m2's text", CONTENT), CONTENT) == b"m2's text"
        finally:
            reader.close()
    finally:
        first.close()
        second.close()


def test_an_erased_users_drafts_are_never_stored(database: str, master: LocalMasterKey) -> None:
    keys = store(database, master)
    user = f"drafts-{uuid.uuid4()}"
    try:
        keys.draft_memory_key(user, "m1", 1)
        keys.erase(user)
        assert keys.store_drafts() == ({}, set())
        assert keys.memory_keys([(user, "m1")]) == {(user, "m1"): {}}
    finally:
        keys.close()


def _sent(conn: psycopg.Connection, action: Callable[[], object]) -> list[str]:
    """The kinds of the messages ``action`` sends to the server ("Query", "Parse", "Sync" ...),
    from libpq's trace: a "Query" or a "Sync" is one round trip."""
    with tempfile.TemporaryFile("w+") as trace:
        conn.pgconn.trace(trace.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        try:
            action()
        finally:
            conn.pgconn.untrace()
        trace.seek(0)
        return [line.split("\t")[2] for line in trace.read().splitlines() if line[:1] == "F"]


def test_a_deferred_stores_flush_is_one_round_trip_and_a_lost_connection_comes_back(
    database: str, master: LocalMasterKey
) -> None:
    # The worker flushes its key writes once per batch: BEGIN, two statements and COMMIT
    # sent one by one were four round trips of every batch.
    keys = store(database, master, deferred=True)
    user = f"flush-{uuid.uuid4()}"
    try:
        keys.draft_memory_key(user, "m1", 1)
        keys.store_drafts()
        sent = _sent(keys._connection(), keys.flush)
        assert [kind for kind in sent if kind in ("Query", "Sync")] == ["Query"]
        assert _sent(keys._connection(), keys.flush) == []  # nothing written since
        # a flush that fails (here: its connection is gone) raises, and the store goes on
        keys.draft_memory_key(user, "m2", 1)
        keys.store_drafts()
        pid = keys._connection().info.backend_pid
        with psycopg.connect(database, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(psycopg.OperationalError):
            keys.flush()
        assert set(keys.memory_keys([(user, "m1"), (user, "m2")])[(user, "m2")]) == {1}
    finally:
        keys.close()
