"""Per-user isolation against a stolen reader credential (issue 32, migration 008).

The attacker holds a login in ``memstream_reader`` (a service's credential) but not the
database's reader key. It tries every trick it can think of to read another user's rows:
the old setting, forged, expired, re-addressed and foreign grants, other roles, the verifier
and the key table themselves, objects of its own, COPY, server files, statistics, other
sessions. Each test asserts what it gets: an error, or no row of anyone but the user a valid
grant names. A holder of the key (MemoryReader(grant_key=...)) reads exactly one user's rows.

Everything runs on the session's real PostgreSQL (the local stack): a fresh migrated database
per test, rows written by the table owner as the projector writes them.
"""

from __future__ import annotations

import secrets
import stat
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from memstream.waiting import wait_until
from projections import grants, queries
from projections.grants import GRANT_SETTING, GrantKey
from projections.reader import MemoryReader
from projections.schema import LAYER_TABLES, ensure_database, migrate
from streams.config.settings import Settings
from streams.kafka import codec
from tests.workloads import DIM

pytestmark = pytest.mark.integration

ALICE = "alice"
BOB = "bob"
# A user id with the grant's separator, a newline and non-ASCII letters: the grant carries it
# verbatim after the signature, and the database must verify and return it unchanged.
ODD = "carol:ops\nÜnïcödé"
USERS = (ALICE, BOB, ODD)
DENIED = psycopg.errors.InsufficientPrivilege


# ---- a database, its reader login and every user's rows ------------------------------------


@dataclass
class Db:
    server_url: str  # the cluster's superuser: creates roles and databases
    owner_url: str  # the database's owner: migrations, the projector
    reader_url: str  # a login in memstream_reader, as a service (or an attacker) gets
    reader_role: str
    key: GrantKey  # the database's reader key, which the attacker does not hold

    def reader(self) -> psycopg.Connection:
        return psycopg.connect(self.reader_url, autocommit=True)


@contextmanager
def reader_login(server_url: str) -> Iterator[str]:
    """A new login role in memstream_reader (roles belong to the cluster: dropped after)."""
    name = f"svc_reader_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{name}" LOGIN IN ROLE memstream_reader')
    try:
        yield name
    finally:
        _drop_login(server_url, name)


def _drop_login(server_url: str, name: str) -> None:
    """Drop the role once its sessions are gone. A closed client connection returns before
    the server's backend has dropped the session's temporary objects (a test's temp views
    and functions), which depend on the role until the backend exits: DROP ROLE then failed
    with DependentObjectsStillExist. So its backends are ended, and the drop waits until
    none is left."""
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP OWNED BY "{name}"')  # what its tricks left behind
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (name,)
        )

        def sessions() -> int:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = %s", (name,)
            ).fetchone()
            return row[0] if row else 0

        wait_until(
            lambda: sessions() == 0,
            timeout=10,
            interval=0.05,
            what=f"the sessions of {name} to end",
            describe=lambda: f"{sessions()} left",
        )
        conn.execute(f'DROP ROLE "{name}"')


def new_database(server_url: str) -> str:
    url = ensure_database(server_url, f"iso_{uuid.uuid4().hex[:10]}")
    migrate(url, DIM)
    return url


@pytest.fixture
def db(stack: Any) -> Iterator[Db]:
    server = stack.database_url
    owner = new_database(server)
    write_every_users_rows(owner)
    with psycopg.connect(owner) as conn:
        key = grants.current_key(conn)
    with reader_login(server) as role:
        yield Db(server, owner, make_conninfo(owner, user=role), role, key)


def vector_text(index: int) -> str:
    values = ["0"] * DIM
    values[index] = "1"
    return "[" + ",".join(values) + "]"


def unit_vector(index: int) -> bytes:
    values = [0.0] * DIM
    values[index] = 1.0
    return codec.pack_embedding(values)


def write_every_users_rows(owner_url: str) -> None:
    """Each user gets rows in every table keyed by user: two semantic facts m1, m2 (the same
    ids for everyone) and one memory in each other layer, links between them, a session, a
    profile, a consolidation report and log entry. Bob's working memory m9 equals the query
    vector the recall tests use."""
    with psycopg.connect(owner_url) as conn:
        for u, user in enumerate(USERS):
            for layer, table in LAYER_TABLES.items():
                for i in (1, 2) if layer == "semantic" else (3,):
                    conn.execute(
                        f"INSERT INTO {table} (user_id, memory_id, version, kind, content, "
                        "importance, confidence, emotional_salience, valence, priority, scope, "
                        "created_by, consent, created_at, embedding) VALUES (%s, %s, 1, 'fact', "
                        "%s, 0.5, 0.5, 0, 0, 'normal', 'agent', 'user', false, "
                        "to_timestamp(1790000000), %s::vector)",
                        (user, f"m{i}", f"{user}'s {layer} fact {i}", vector_text(10 * u + i)),
                    )
            for source, target, link in (("m2", "m1", "contradicts"), ("m1", "m0", "derived_from")):
                conn.execute(
                    "INSERT INTO memory_links (user_id, source_id, target_id, link_type, "
                    "confidence, created_at, event_id) VALUES (%s, %s, %s, %s, 0.9, "
                    "to_timestamp(1790000000), %s)",
                    (user, source, target, link, f"{user}-{link}"),
                )
            conn.execute("INSERT INTO sessions (user_id, session_id) VALUES (%s, 's1')", (user,))
            conn.execute("INSERT INTO user_profiles (user_id) VALUES (%s)", (user,))
            conn.execute(
                "INSERT INTO consolidation_reports (event_id, user_id, cycle_id, trigger, "
                "occurred_at, processed, patterns, archived, contradictions, duplicates_merged, "
                "links_created, duration_ms) VALUES (%s, %s, 'c1', 'manual', "
                "to_timestamp(1790000000), 1, 0, 0, 1, 0, 1, 5)",
                (f"{user}-report", user),
            )
            conn.execute(
                "INSERT INTO consolidation_log (event_id, user_id, occurred_at, causation_id, "
                "trigger, action, kafka_partition, kafka_offset) VALUES (%s, %s, "
                "to_timestamp(1790000000), 'x', 'manual', 'created', 0, %s)",
                (f"{user}-log", user, u),
            )
        conn.execute(
            "INSERT INTO working_memories (user_id, memory_id, version, kind, content, "
            "importance, confidence, emotional_salience, valence, priority, scope, created_by, "
            "consent, created_at, embedding) VALUES (%s, 'm9', 1, 'fact', %s, 0.5, 0.5, 0, 0, "
            "'normal', 'agent', 'user', false, to_timestamp(1790000000), %s::vector)",
            (BOB, "bob's nearest memory", vector_text(99)),
        )


def user_tables(conn: psycopg.Connection) -> list[str]:
    """Every table with a user_id column, as the migrations find them."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT c.relname FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema() "
            "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'user_id' "
            "AND NOT a.attisdropped WHERE c.relkind IN ('r', 'p') ORDER BY c.relname"
        ).fetchall()
    ]


def users_seen(conn: psycopg.Connection, tables: list[str] | None = None) -> dict[str, set[str]]:
    """Per table keyed by user, whose rows this connection's SELECT returns now."""
    tables = tables if tables is not None else user_tables(conn)
    return {
        table: {r[0] for r in conn.execute(f"SELECT user_id FROM {table}").fetchall()}
        for table in tables
    }


def every_table(users: set[str], owner_url: str) -> dict[str, set[str]]:
    with psycopg.connect(owner_url) as conn:
        return {table: set(users) for table in user_tables(conn)}


def with_grant(conn: psycopg.Connection, grant: str) -> dict[str, set[str]]:
    """Whose rows a transaction that sets ``grant`` (as scope_to_user does) sees."""
    with conn.transaction():
        conn.execute("SELECT set_config(%s, %s, true)", (GRANT_SETTING, grant))
        return users_seen(conn)


# ---- the setup is what the tests assume -----------------------------------------------------


def test_every_table_keyed_by_user_holds_rows_of_every_user(db: Db) -> None:
    """The tricks below read every table keyed by user; each must have rows to leak."""
    with psycopg.connect(db.owner_url) as owner:
        seen = users_seen(owner)

    assert set(seen) >= {*LAYER_TABLES.values(), "memory_links", "sessions", "consolidation_log"}
    assert seen == every_table(set(USERS), db.owner_url)


# ---- what a valid grant reads -----------------------------------------------------------------


@pytest.mark.parametrize("user", USERS)
def test_a_valid_grant_reads_exactly_that_users_rows_in_every_table(db: Db, user: str) -> None:
    """Given rows of three users in every table keyed by user, when the reader presents a
    grant signed with the key for one of them (an id with ':' and a newline included), then
    it sees that user's rows in every table and nobody else's."""
    with db.reader() as conn:
        seen = with_grant(conn, db.key.grant(user))
        verified = _in_grant(conn, db.key.grant(user), "SELECT memstream_grant_user()")

    assert seen == every_table({user}, db.owner_url)
    assert verified == [(user,)]


def test_without_a_grant_the_reader_sees_no_row_of_anyone(db: Db) -> None:
    with db.reader() as conn:
        seen = users_seen(conn)

    assert seen == every_table(set(), db.owner_url)


def test_memory_reader_with_the_key_reads_the_named_user_only(db: Db) -> None:
    """Given bob's memory equal to the query, when alice recalls through MemoryReader holding
    the key, then she gets her own memories, her own contradictions and lineage, none of
    bob's; inside her scope a query for bob's rows returns none."""
    with MemoryReader.connect(db.reader_url, grant_key=db.key) as reader:
        near = reader.nearest(ALICE, unit_vector(99), k=10)
        contradictions = reader.contradictions(ALICE)
        lineage = reader.lineage(ALICE, "m1")
        with reader.as_user(ALICE) as conn:
            bobs_recall = queries.nearest_memories(conn, BOB, unit_vector(99), k=10)
            bobs_count = conn.execute(
                "SELECT count(*) FROM semantic_facts WHERE user_id = %s", (BOB,)
            ).fetchone()

    assert {m.memory_id for m in near} == {"m1", "m2", "m3"}
    assert all(m.content.startswith("alice's") for m in near)
    assert [(lk.source_id, lk.target_id) for lk in contradictions] == [("m2", "m1")]
    assert sorted((lk.source_id, lk.target_id) for lk in lineage) == [("m1", "m0"), ("m2", "m1")]
    assert bobs_recall == []
    assert bobs_count == (0,)


@pytest.mark.parametrize("form", ["text", "path", "file"])
def test_memory_reader_takes_the_key_as_text_as_a_path_or_as_a_key_file(
    db: Db, tmp_path: Path, form: str
) -> None:
    key_file = tmp_path / "reader.key"
    grants.write_key_file(key_file, db.key)
    forms: dict[str, dict[str, Any]] = {
        "text": {"grant_key": db.key.to_text()},
        "path": {"grant_key": key_file},
        "file": {"grant_key_file": str(key_file)},
    }
    options = forms[form]

    with MemoryReader.connect(db.reader_url, **options) as reader:
        links = reader.contradictions(ODD)

    assert [(lk.source_id, lk.target_id) for lk in links] == [("m2", "m1")]
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_memory_reader_without_the_key_reads_nothing(db: Db) -> None:
    """A reader login that was given no key: every call comes back empty, not anyone's."""
    with MemoryReader.connect(db.reader_url) as reader:
        near = reader.nearest(ALICE, unit_vector(1), k=10)
        links = reader.contradictions(ALICE)
        lineage = reader.lineage(ALICE, "m1")

    assert (near, links, lineage) == ([], [], [])


def test_the_grant_ends_with_the_call(db: Db) -> None:
    """Given a reader connection used for alice, when the same connection queries afterwards
    without a grant (a pooled connection's next caller), then it sees nothing."""
    with MemoryReader.connect(db.reader_url, grant_key=db.key) as reader:
        assert reader.contradictions(ALICE)
        after = users_seen(reader.conn)

    assert after == every_table(set(), db.owner_url)


def test_the_owner_reads_every_user_without_a_key(db: Db) -> None:
    """Row-level security does not apply to the table owner (migrations, the projector)."""
    with MemoryReader.connect(db.owner_url) as reader, reader.as_user(ALICE) as conn:
        seen = users_seen(conn)

    assert seen == every_table(set(USERS), db.owner_url)


# ---- tricks: settings and grants --------------------------------------------------------------


def test_the_old_user_setting_opens_nothing(db: Db) -> None:
    """The attack of issue 32: set memstream.user_id to the victim, session-wide or locally."""
    with db.reader() as conn:
        conn.execute("SELECT set_config('memstream.user_id', %s, false)", (BOB,))
        session_wide = users_seen(conn)
        with conn.transaction():
            conn.execute("SET LOCAL memstream.user_id = 'bob'")
            local = users_seen(conn)

    assert session_wide == local == every_table(set(), db.owner_url)


def forged_grants(key: GrantKey) -> dict[str, tuple[str, str]]:
    """Grants the attacker can make without the key, each with the refusal it earns."""
    now = int(time.time())
    alices = key.grant(ALICE)
    _, key_id, expires, signature, _ = alices.split(":", 4)
    guessed = GrantKey(key.key_id, secrets.token_bytes(32))
    return {
        "random signature": (f"v1:{key_id}:{expires}:{'0' * 64}:{BOB}", "valid signature"),
        "alice's grant re-addressed to bob": (
            f"v1:{key_id}:{expires}:{signature}:{BOB}",
            "valid signature",
        ),
        "alice's grant with bob appended": (f"{alices}\n{BOB}", "valid signature"),
        "alice's grant with a later expiry": (
            f"v1:{key_id}:{int(expires) + 600}:{signature}:{ALICE}",
            "valid signature",
        ),
        "signed with a guessed key": (guessed.grant(BOB), "valid signature"),
        "an unknown key id": (
            GrantKey(key.key_id + 1000, key.secret).grant(BOB),
            "does not have or has retired",
        ),
        "the signature in upper case": (
            f"v1:{key_id}:{expires}:{signature.upper()}:{ALICE}",
            "not a memstream grant",
        ),
        "no user": (f"v1:{key_id}:{expires}:{signature}:", "not a memstream grant"),
        "another version": (f"v2:{key_id}:{expires}:{signature}:{ALICE}", "not a memstream grant"),
        "a user id in place of a grant": (BOB, "not a memstream grant"),
        "a huge grant": ("v1:" + "9" * 5000, "characters long"),
        "expired (signed with the key)": (key.sign(BOB, now - 5), "expired"),
        "valid for a day (signed with the key)": (key.sign(BOB, now + 86_400), "more than an hour"),
    }


@pytest.mark.parametrize(
    "name",
    list(forged_grants(GrantKey(1, bytes(32)))),
)
def test_a_forged_expired_or_re_addressed_grant_is_refused(db: Db, name: str) -> None:
    """Given grants made without the key (or with it, but expired or too long-lived), when
    the reader presents one and reads the tables, then the database refuses with a message
    that says why, and returns no row."""
    grant, refusal = forged_grants(db.key)[name]

    with db.reader() as conn, pytest.raises(DENIED, match=refusal):
        with_grant(conn, grant)


def test_a_grant_set_for_the_whole_session_still_names_one_user_and_expires(db: Db) -> None:
    """A grant set session-wide (not SET LOCAL) shows its user only, for as long as it is
    valid: the expiry is checked per statement, so no session outlives its grant."""
    with db.reader() as conn:
        conn.execute("SELECT set_config(%s, %s, false)", (GRANT_SETTING, db.key.grant(ALICE)))
        valid = users_seen(conn)
        expired = db.key.sign(ALICE, int(time.time()) - 1)
        conn.execute("SELECT set_config(%s, %s, false)", (GRANT_SETTING, expired))
        with pytest.raises(DENIED, match="expired"):
            users_seen(conn)

    assert valid == every_table({ALICE}, db.owner_url)


def test_a_grant_for_another_database_opens_nothing_here(db: Db) -> None:
    """Roles belong to the cluster, so a reader login may connect to every database; each
    database has its own key, and a grant signed for one is refused by the other."""
    other_url = new_database(db.server_url)
    write_every_users_rows(other_url)
    with psycopg.connect(other_url) as conn:
        other_key = grants.current_key(conn)
    reader_there = make_conninfo(other_url, user=db.reader_role)

    with db.reader() as conn, pytest.raises(DENIED, match="valid signature|retired"):
        with_grant(conn, other_key.grant(BOB))
    with psycopg.connect(reader_there, autocommit=True) as conn:
        without_grant = users_seen(conn)
        with pytest.raises(DENIED, match="valid signature|retired"):
            with_grant(conn, db.key.grant(BOB))

    assert other_key.secret != db.key.secret
    assert without_grant == every_table(set(), other_url)


# ---- tricks: roles, the verifier and the key table ------------------------------------------


def _attempt(conn: psycopg.Connection, sql: str) -> list[tuple[Any, ...]]:
    """Run ``sql`` in a transaction rolled back afterwards; its rows."""
    with conn.transaction(force_rollback=True):
        cur = conn.execute(sql)
        return cur.fetchall() if cur.description else []


def _in_grant(conn: psycopg.Connection, grant: str, sql: str) -> list[tuple[Any, ...]]:
    with conn.transaction(force_rollback=True):
        conn.execute("SELECT set_config(%s, %s, true)", (GRANT_SETTING, grant))
        return conn.execute(sql).fetchall()


def owner_role(db: Db) -> str:
    with psycopg.connect(db.owner_url) as conn:
        row = conn.execute(
            "SELECT tableowner FROM pg_tables WHERE tablename = 'memstream_grant_keys'"
        ).fetchone()
    assert row is not None
    return str(row[0])


def test_the_reader_cannot_become_the_owner_or_the_projector(db: Db) -> None:
    owner = owner_role(db)
    with db.reader() as conn:
        for sql in (
            f'SET ROLE "{owner}"',
            "SET ROLE memstream_projector",
            f'SET SESSION AUTHORIZATION "{owner}"',
            "SET ROLE postgres",
        ):
            with pytest.raises(DENIED):
                _attempt(conn, sql)
        with pytest.raises(DENIED):
            _attempt(conn, "GRANT memstream_projector TO CURRENT_USER")
        seen = users_seen(conn)

    assert seen == every_table(set(), db.owner_url)


def test_the_reader_cannot_read_the_keys_or_make_one(db: Db) -> None:
    """The key table is the owner's alone; the key maker is not callable by the reader; the
    verifier's source (readable by anyone in pg_proc) holds no secret; the verifier returns
    nothing without a grant, and only the user a valid grant names with one."""
    secret_hex = db.key.secret.hex()
    with db.reader() as conn:
        for sql in (
            "SELECT * FROM memstream_grant_keys",
            "SELECT count(*) FROM memstream_grant_keys",
            "COPY memstream_grant_keys TO STDOUT",
            "SELECT memstream_new_grant_key()",
            "TABLE memstream_grant_keys_key_id_seq",
        ):
            with pytest.raises(DENIED):
                _attempt(conn, sql)
        sources = _attempt(
            conn,
            "SELECT string_agg(prosrc || coalesce(array_to_string(proconfig, ','), ''), ' ') "
            "FROM pg_proc WHERE proname LIKE 'memstream%'",
        )
        verifier_alone = _attempt(conn, "SELECT memstream_grant_user()")

    assert sources[0][0] and secret_hex not in sources[0][0]
    assert verifier_alone == [(None,)]


def test_the_reader_cannot_change_the_verifier_the_policies_or_the_tables(db: Db) -> None:
    with db.reader() as conn:
        for sql in (
            "CREATE OR REPLACE FUNCTION memstream_grant_user() RETURNS text "
            "LANGUAGE sql STABLE AS $$ SELECT 'bob' $$",
            "ALTER FUNCTION memstream_grant_user() SECURITY INVOKER",
            "ALTER TABLE semantic_facts DISABLE ROW LEVEL SECURITY",
            "DROP POLICY memstream_reader_own_rows ON semantic_facts",
            "CREATE POLICY mine ON semantic_facts FOR SELECT USING (true)",
            "ALTER TABLE memstream_grant_keys OWNER TO CURRENT_USER",
            "UPDATE memstream_grant_keys SET retired_at = NULL",
            "INSERT INTO memstream_grant_keys (secret, inner_pad, outer_pad) "
            "VALUES ('\\x00', '\\x00', '\\x00')",
        ):
            with pytest.raises(DENIED):
                _attempt(conn, sql)


def test_objects_of_the_readers_own_see_nothing_more_than_the_reader(db: Db) -> None:
    """The reader may not create in the read models' schema; what it may create (temporary
    views and functions, SECURITY DEFINER included) runs with its own rights, under the same
    policies. A temporary table named like the key table, holding a key the attacker made,
    does not stand in for the real one."""
    fake = GrantKey(db.key.key_id, secrets.token_bytes(32))
    with db.reader() as conn:
        for sql in (
            "CREATE VIEW all_facts AS SELECT * FROM semantic_facts",
            "CREATE FUNCTION peek() RETURNS SETOF text LANGUAGE sql "
            "AS $$ SELECT user_id FROM semantic_facts $$",
            "CREATE TABLE loot AS SELECT * FROM semantic_facts",
        ):
            with pytest.raises(DENIED):
                _attempt(conn, sql)
        conn.execute("SELECT set_config('memstream.user_id', %s, false)", (BOB,))
        conn.execute("CREATE TEMP VIEW facts AS SELECT user_id FROM semantic_facts")
        conn.execute(
            "CREATE TEMP VIEW facts_invoker WITH (security_invoker = true) AS "
            "SELECT user_id FROM memory_links"
        )
        conn.execute(
            "CREATE FUNCTION pg_temp.peek() RETURNS SETOF text LANGUAGE sql SECURITY DEFINER "
            "AS $$ SELECT user_id FROM consolidation_log UNION ALL SELECT user_id FROM sessions $$"
        )
        conn.execute(
            "CREATE TEMP TABLE memstream_grant_keys AS SELECT %s::integer AS key_id, "
            "%s::bytea AS secret, %s::bytea AS inner_pad, %s::bytea AS outer_pad, "
            "NULL::timestamptz AS retired_at",
            (fake.key_id, fake.secret, _pad(fake.secret, 0x36), _pad(fake.secret, 0x5C)),
        )
        through_objects = _attempt(
            conn,
            "SELECT user_id FROM facts UNION ALL SELECT user_id FROM facts_invoker "
            "UNION ALL SELECT * FROM pg_temp.peek()",
        )
        with pytest.raises(DENIED, match="valid signature"):
            with_grant(conn, fake.grant(BOB))

    assert through_objects == []


def _pad(secret: bytes, byte: int) -> bytes:
    return bytes(b ^ byte for b in secret.ljust(64, b"\x00"))


def test_copy_server_files_and_statistics_leak_nothing(db: Db) -> None:
    """COPY reads under the same policies; server files are the superuser's; the planner's
    statistics (most common values of user_id and content) are hidden from a role that row-
    level security applies to."""
    with psycopg.connect(db.owner_url, autocommit=True) as owner:
        owner.execute("ANALYZE")
    with db.reader() as conn:
        copied: list[bytes] = []
        for sql in (
            "COPY semantic_facts TO STDOUT",
            "COPY (SELECT user_id, content FROM memory_links JOIN semantic_facts USING (user_id))"
            " TO STDOUT",
        ):
            with conn.cursor().copy(sql) as copy:
                copied.extend(bytes(chunk) for chunk in copy)
        for sql in (
            "SELECT pg_read_file('postgresql.conf')",
            "SELECT pg_read_binary_file('global/pg_control')",
            "SELECT pg_ls_dir('.')",
            "COPY semantic_facts TO '/tmp/loot.csv'",
            "COPY (SELECT 1) TO PROGRAM 'id'",
        ):
            with pytest.raises(DENIED):
                _attempt(conn, sql)
        stats = _attempt(
            conn,
            "SELECT tablename, attname FROM pg_stats WHERE tablename IN "
            "('semantic_facts', 'memory_links', 'sessions', 'memstream_grant_keys')",
        )

    assert copied == []
    assert stats == []


def test_another_session_of_the_same_login_shows_no_grant(db: Db) -> None:
    """A stolen credential of the service itself: while the service (MemoryReader, holding
    the key) is inside bob's call, another session of the same login reads the activity
    view. The grant went as a bound parameter, so the view shows no grant to replay."""
    with (
        MemoryReader.connect(db.reader_url, grant_key=db.key) as service,
        service.as_user(BOB),
        db.reader() as spy,
    ):
        activity = _attempt(
            spy,
            "SELECT coalesce(string_agg(query, ' | '), '') FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid()",
        )

    assert "set_config" in activity[0][0]  # the service's call is visible, but not its grant
    assert "v1:" not in activity[0][0]


# ---- keys: rotation, migration, the local stack -------------------------------------------------


def test_a_rotated_key_is_accepted_and_the_retired_one_refused(db: Db) -> None:
    """Rotation: a new key verifies at once, the old one keeps verifying until it is retired
    (so readers can move over), then it is refused."""
    old = db.key
    with psycopg.connect(db.owner_url, autocommit=True) as owner:
        new = grants.new_key(owner)
        assert grants.current_key(owner) == new
        with db.reader() as conn:
            both = (with_grant(conn, old.grant(ALICE)), with_grant(conn, new.grant(ALICE)))
            retired = grants.retire_keys(owner, keep=new.key_id)
            after_new = with_grant(conn, new.grant(ALICE))
            with pytest.raises(DENIED, match="retired"):
                with_grant(conn, old.grant(ALICE))

    alices = every_table({ALICE}, db.owner_url)
    assert new.key_id != old.key_id and new.secret != old.secret
    assert both == (alices, alices)
    assert retired == [old.key_id]
    assert after_new == alices


def test_the_migration_runs_again_without_changing_keys_or_weakening_a_policy(db: Db) -> None:
    """Migration 008 applied a second time (idempotent, as a rerun after a partial failure
    would): the same keys, and every reader policy keys on the grant verifier."""
    sql = Path(__file__).parents[2] / "projections/migrations/008_unforgeable_isolation.sql"
    with psycopg.connect(db.owner_url) as owner:
        keys_before = owner.execute("SELECT key_id, secret FROM memstream_grant_keys").fetchall()
        owner.execute(sql.read_text())
        keys_after = owner.execute("SELECT key_id, secret FROM memstream_grant_keys").fetchall()
        policies = owner.execute(
            "SELECT c.relname, pg_get_expr(p.polqual, p.polrelid) FROM pg_policy p "
            "JOIN pg_class c ON c.oid = p.polrelid WHERE p.polname = 'memstream_reader_own_rows'"
        ).fetchall()
        tables = user_tables(owner)
    with db.reader() as conn:
        seen = with_grant(conn, db.key.grant(BOB))

    assert keys_after == keys_before
    assert sorted(name for name, _ in policies) == tables
    assert all("memstream_grant_user()" in expr for _, expr in policies), policies
    assert not any("current_setting" in expr for _, expr in policies), policies
    assert seen == every_table({BOB}, db.owner_url)


def test_the_policy_verifies_the_grant_once_per_query_not_per_row(db: Db) -> None:
    """Given alice with 52 links, when the reader reads them all and then recalls over the
    four layer tables, then the verifier ran once for the first query and once per table
    for the second (an InitPlan), not once per row. Counted by PostgreSQL's own function
    statistics (track_functions, which only a superuser may turn on for the role)."""
    with psycopg.connect(db.owner_url) as owner:
        owner.execute(
            "INSERT INTO memory_links (user_id, source_id, target_id, link_type, created_at, "
            "event_id) SELECT %s, 's' || i, 'm1', 'derived_from', now(), 'e' || i "
            "FROM generate_series(1, 50) i",
            (ALICE,),
        )
    with psycopg.connect(db.server_url, autocommit=True) as server:
        server.execute(f"ALTER ROLE \"{db.reader_role}\" SET track_functions = 'all'")
    calls = (
        "SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions "
        "WHERE funcname = 'memstream_grant_user'"
    )
    with db.reader() as conn, conn.transaction(force_rollback=True):
        conn.execute("SELECT set_config(%s, %s, true)", (GRANT_SETTING, db.key.grant(ALICE)))
        links = conn.execute("SELECT count(*) FROM memory_links").fetchone()
        after_links = conn.execute(calls).fetchone()
        recalled = queries.nearest_memories(conn, ALICE, unit_vector(1), k=10)
        after_recall = conn.execute(calls).fetchone()

    assert links == (52,)
    assert len(recalled) == 5
    assert after_links == (1,)
    assert after_recall == (1 + len(LAYER_TABLES),)


def test_memstream_up_writes_the_reader_key_for_local_tools(stack: Any) -> None:
    """`memstream up` exported the stack database's key to a 0600 file in the 0700 secrets
    directory and named it in stack.env; a reader login of the stack's database reads with
    it, as `memstream recall` does with MEMSTREAM_READER_GRANT_KEY_FILE."""
    settings = Settings.from_env({"MEMSTREAM_STATE_DIR": str(stack.state_dir)})
    key_file = Path(settings.reader_grant_key_file)
    user = f"local-{uuid.uuid4().hex[:8]}"
    with psycopg.connect(stack.database_url, autocommit=True) as owner:
        owner.execute(
            "INSERT INTO memory_links (user_id, source_id, target_id, link_type, created_at, "
            "event_id) VALUES (%s, 'a', 'b', 'contradicts', now(), 'e')",
            (user,),
        )
    try:
        with reader_login(stack.database_url) as role:
            url = make_conninfo(stack.database_url, user=role)
            with MemoryReader.connect(url, grant_key_file=settings.reader_grant_key_file) as r:
                links = r.contradictions(user)
    finally:
        with psycopg.connect(stack.database_url, autocommit=True) as owner:
            owner.execute("DELETE FROM memory_links WHERE user_id = %s", (user,))

    assert conninfo_to_dict(stack.database_url)["dbname"] == "memstream"
    assert key_file.parent == Path(stack.state_dir) / "secrets"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    assert [(lk.source_id, lk.target_id) for lk in links] == [("a", "b")]
