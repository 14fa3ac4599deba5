"""Applies one :class:`projections.rows.RowBatch` and the projector's position atomically.

One transaction per batch: binary COPY of the folded rows straight into each layer table
(or, when a layer's rows are not all new there, into a temporary staging table and
``INSERT … ON CONFLICT … WHERE version < EXCLUDED.version``), guarded updates and deletes,
the links of forgotten memories deleted, the audit log, and finally ``projection_offsets``.
Either all of it is visible or none, so the stored offset never runs ahead of the rows.

The transaction starts by locking the batch's ``projection_offsets`` rows. After a rebalance
another projector instance may already have applied (and stored) records this batch still
holds, and later ones too: a memory deleted since would come back. So unless every stored
position is at or before the batch's first offset in that partition, the batch is rolled
back untouched (:class:`StaleBatch`) and the projector seeks to the stored position. A missing
row is created (at offset 0) and locked the same way, so two first batches cannot race.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import psycopg
from psycopg.adapt import AdaptersMap, Transformer
from psycopg.pq import Format

from projections.copy_dumpers import register_copy_dumpers
from projections.rows import APPEND_ONLY_COLUMNS, MEMORY_COLUMNS, RowBatch
from projections.schema import LAYER_TABLES
from streams.engine.model import Layer

try:  # psycopg's binary COPY row formatter (C); internal, so its absence only costs speed
    from psycopg._copy_base import BinaryFormatter
except ImportError:  # pragma: no cover - depends on the installed psycopg
    BinaryFormatter = None  # type: ignore[assignment,misc]

_COLUMN_TYPES = {
    "user_id": "text",
    "memory_id": "text",
    "version": "int8",
    "kind": "text",
    "subtype": "text",
    "content": "text",
    "tags": "text[]",
    "importance": "float8",
    "confidence": "float8",
    "emotional_salience": "float8",
    "valence": "float8",
    "priority": "text",
    "scope": "text",
    "scope_id": "text",
    "created_by": "text",
    "consent": "bool",
    "speaker": "text",
    "pinned": "bool",
    "conversation_id": "text",
    "session_id": "text",
    "success": "float8",
    "trigger_conditions": "text[]",
    "embedding": "vector",
    "metadata": "jsonb",
    "created_at": "timestamptz",
    "last_accessed": "timestamptz",
    "access_count": "int4",
    "valid_at": "timestamptz",
    "invalid_at": "timestamptz",
    "status": "text",
    "salience": "float8",
}
"""The layer tables' column types, which binary COPY must name. Keyed by column, so a column
added to ``MEMORY_COLUMNS`` without its type fails at import, not as a misaligned COPY."""
_STAGE_TYPES = ["text", *(_COLUMN_TYPES[c] for c in MEMORY_COLUMNS)]  # the layer, then a row
_COLS = ", ".join(MEMORY_COLUMNS)
_UPDATE_SET = ", ".join(
    f"{c} = EXCLUDED.{c}" for c in MEMORY_COLUMNS if c not in ("user_id", "memory_id")
)


def prepare_connection(conn: psycopg.Connection) -> None:
    """Per-connection setup: the vector type, the session's staging tables, UTF-8 on the
    wire (what :func:`format_copies` encodes text as), and the append-only tables' column
    types (which :func:`format_copies` needs before the first write)."""
    conn.execute("SET client_encoding TO 'UTF8'")
    register_copy_dumpers(conn)
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS stage_memories "
        "(layer text, LIKE working_memories INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
    )
    for table in _APPEND_ONLY:
        conn.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {_APPEND_ONLY[table]} "
            f"(LIKE {table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS"
        )
    with conn.cursor() as cur:
        for table, columns in APPEND_ONLY_COLUMNS.items():
            _types_of(cur, table, columns)
    conn.commit()


def stored_offsets(conn: psycopg.Connection, projector: str, topic: str) -> dict[int, int]:
    rows = conn.execute(
        "SELECT partition, next_offset FROM projection_offsets WHERE projector = %s AND topic = %s",
        (projector, topic),
    ).fetchall()
    conn.commit()
    return {partition: offset for partition, offset in rows}


class StaleBatch(Exception):
    """The stored position is already past where this batch starts: it was built before a
    rebalance, and another projector instance has moved on. Nothing was written."""

    def __init__(self, behind: dict[tuple[str, int], tuple[int, int]]) -> None:
        self.behind = behind  # (topic, partition) -> (batch's first offset, stored next offset)
        super().__init__(
            "; ".join(
                f"{topic}[{partition}] batch starts at {first}, stored position is {stored}"
                for (topic, partition), (first, stored) in sorted(behind.items())
            )
        )


def stale_partitions(
    first_offsets: dict[tuple[str, int], int], stored: dict[tuple[str, int], int]
) -> dict[tuple[str, int], tuple[int, int]]:
    """The partitions whose stored next offset is past the batch's first offset (a missing
    stored position is never past anything)."""
    return {
        key: (first, stored[key])
        for key, first in first_offsets.items()
        if stored.get(key, 0) > first
    }


def write_batch(
    conn: psycopg.Connection,
    batch: RowBatch,
    projector: str,
    copies: Mapping[str, bytes] | None = None,
    *,
    erasing: bool = False,
) -> None:
    """Apply ``batch`` and move the stored offsets, in one transaction; raise
    :class:`StaleBatch` (having written nothing) if the stored position is past its start.

    ``copies``: the batch's direct COPYs already formatted (:func:`format_copies`); a table
    missing from it is formatted here. ``erasing``: the batch deletes what must not stay in
    dead tuples (an erased user, forgotten memories' rows and keys): the vacuum it owes is
    written down with it (:func:`vacuum_pending`)."""
    copies = copies or {}
    with conn.transaction(), conn.cursor() as cur:
        behind = stale_partitions(batch.first_offsets, _lock_offsets(cur, batch, projector))
        if behind:
            raise StaleBatch(behind)
        if erasing:
            cur.execute("INSERT INTO memstream_vacuum_due DEFAULT VALUES")
        _erase_users(cur, batch)
        _apply_deletes(cur, batch)
        _forget_links(cur, batch)
        _upsert_memories(cur, batch, copies)
        _apply_updates(cur, batch)
        _upsert_sessions(cur, batch)
        _upsert_profiles(cur, batch)
        for table, columns, rows in _appends(batch):
            _append(cur, table, columns, rows, copies.get(table))
        cur.executemany(
            "INSERT INTO projection_offsets (projector, topic, partition, next_offset) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (projector, topic, partition) DO UPDATE "
            "SET next_offset = EXCLUDED.next_offset "
            "WHERE projection_offsets.next_offset < EXCLUDED.next_offset",
            [(projector, t, p, o) for (t, p), o in batch.next_offsets.items()],
        )


def format_copies(adapters: AdaptersMap, batch: RowBatch) -> dict[str, bytes]:
    """The data of the batch's direct COPYs (each layer's rows, the append-only rows), in
    PostgreSQL's binary COPY format, keyed by table.

    Why ahead of :func:`write_batch`: the projector formats batch k + 1 while another thread
    writes batch k. Formatting is most of the writer's Python work, and done in the writing
    thread it holds the GIL against the decoding in the main one; with the data ready, the
    writing thread only passes bytes to libpq and waits for the server (see
    ``projections.projector``). ``adapters`` are a prepared connection's
    (:func:`prepare_connection`): only its dumpers are used, never the connection itself,
    which another thread may be using. Text is encoded as UTF-8, the encoding
    :func:`prepare_connection` sets on the wire.

    Returns ``{}`` when this psycopg lacks the formatter (an internal class): every table is
    then formatted by :func:`write_batch` itself, as before."""
    if BinaryFormatter is None:
        return {}
    copies = {
        LAYER_TABLES[layer]: _binary_copy(adapters, _STAGE_TYPES[1:], rows)
        for layer, rows in _rows_by_layer(batch).items()
    }
    for table, _, rows in _appends(batch):
        types = _column_types.get(table)
        if rows and types is not None:
            copies[table] = _binary_copy(adapters, types, rows)
    return copies


def _binary_copy(
    adapters: AdaptersMap, types: list[str], rows: Iterable[Sequence[object]]
) -> bytes:
    assert BinaryFormatter is not None
    transformer = Transformer(adapters)
    transformer.set_dumper_types([adapters.types.get_oid(t) for t in types], Format.BINARY)
    formatter = BinaryFormatter(transformer)
    data = bytearray()
    for row in rows:
        data += formatter.write_row(row)
    data += formatter.end()
    return bytes(data)


def _rows_by_layer(batch: RowBatch) -> dict[Layer, list[list[Any]]]:
    by_layer: dict[Layer, list[list[Any]]] = {}
    for (layer, _, _), row in batch.upserts.items():
        by_layer.setdefault(layer, []).append(row)
    return by_layer


def _upsert_memories(cur: psycopg.Cursor, batch: RowBatch, copies: Mapping[str, bytes]) -> None:
    """Each layer's rows straight into its table by binary COPY, inside a savepoint: the
    common case is that every row of the batch is new there (a memory stored, promoted or
    derived). If one is not, the savepoint is rolled back and that layer's rows go through
    the staging table and ``INSERT … ON CONFLICT … WHERE version < EXCLUDED.version``, so an
    older version never overwrites a newer one either way."""
    for layer, rows in _rows_by_layer(batch).items():
        table = LAYER_TABLES[layer]
        try:
            with cur.connection.transaction():
                _copy_rows(cur, table, MEMORY_COLUMNS, _STAGE_TYPES[1:], rows, copies.get(table))
            continue
        except psycopg.errors.UniqueViolation:
            pass
        _copy_rows(
            cur,
            "stage_memories",
            ("layer", *MEMORY_COLUMNS),
            _STAGE_TYPES,
            ([layer, *row] for row in rows),
        )
        cur.execute(
            f"INSERT INTO {table} ({_COLS}) SELECT {_COLS} FROM stage_memories "  # noqa: S608
            f"WHERE layer = %s ON CONFLICT (user_id, memory_id) DO UPDATE SET "
            f"{_UPDATE_SET} WHERE {table}.version < EXCLUDED.version",
            (layer,),
        )


def _lock_offsets(
    cur: psycopg.Cursor, batch: RowBatch, projector: str
) -> dict[tuple[str, int], int]:
    """Lock (creating at 0 where missing) and read the stored positions of the batch's
    partitions, in a fixed order so two writers never deadlock on them."""
    keys = sorted(batch.first_offsets)
    if not keys:
        return {}
    topics, partitions = [t for t, _ in keys], [p for _, p in keys]
    cur.execute(
        "INSERT INTO projection_offsets (projector, topic, partition, next_offset) "
        "SELECT %s, t, p, 0 FROM unnest(%s::text[], %s::int[]) WITH ORDINALITY AS k(t, p, n) "
        "ORDER BY n ON CONFLICT (projector, topic, partition) DO NOTHING",
        (projector, topics, partitions),
    )
    rows = cur.execute(
        "SELECT topic, partition, next_offset FROM projection_offsets "
        "WHERE projector = %s AND (topic, partition) IN "
        "(SELECT * FROM unnest(%s::text[], %s::int[])) "
        "ORDER BY topic, partition FOR UPDATE",
        (projector, topics, partitions),
    ).fetchall()
    return {(topic, partition): offset for topic, partition, offset in rows}


def _copy_rows(
    cur: psycopg.Cursor,
    table: str,
    columns: Iterable[str],
    types: list[str],
    rows: Iterable[Sequence[object]],
    data: bytes | None = None,
) -> None:
    """COPY ``rows``, or ``data``: the same rows already formatted (:func:`format_copies`)."""
    with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)") as copy:
        if data is not None:
            copy.write(data)
            return
        copy.set_types(types)
        for row in rows:
            copy.write_row(row)


USER_TABLES = (
    *LAYER_TABLES.values(),
    "memory_links",
    "sessions",
    "user_profiles",
    "consolidation_reports",
    "consolidation_log",
)
"""Every read-model table keyed by ``user_id``: what an erasure (``UserErased``) empties of
the user. The user's data key is destroyed by whoever asked (``memstream forget``, the HTTP
API) and by the worker when it applies the erasure, never here: by the time the projector
reads the erasure, a later write may have made the user a new key. The HTTP API's idempotency
records stay until they expire: they hold a request's hash and ids, never a body, and the
projector has no right on them (migration 009)."""


def _erase_users(cur: psycopg.Cursor, batch: RowBatch) -> None:
    if not batch.erased:
        return
    users = sorted(batch.erased)
    for table in USER_TABLES:
        cur.execute(f"DELETE FROM {table} WHERE user_id = ANY(%s)", (users,))


KEY_TABLES = ("memstream_data_keys", "memstream_memory_keys")
"""The key store's tables (migrations 011, 012): a dead tuple of a destroyed memory key opens
with its user's living key, so they are vacuumed with the read models."""


class VacuumHeldBack(Exception):
    """VACUUM (FULL) had to keep dead rows because a transaction older than them was still
    open: an erased row among them would stay in the new files. The debt stays owed."""

    def __init__(self, held: Mapping[str, int]) -> None:
        self.held = dict(held)
        tables = ", ".join(f"{table} ({rows})" for table, rows in sorted(self.held.items()))
        super().__init__(
            f"{sum(self.held.values())} dead row version(s) could not be removed yet from "
            f"{tables}: a transaction older than the erasure is still open (look for an old "
            "xact_start in pg_stat_activity, or a stalled replication slot); the vacuum is "
            "owed until it ends"
        )


_ONE_NUMBER = re.compile(r"\D*(\d+)\D*")


def held_back_rows(detail: str | None) -> int:
    """How many dead row versions VACUUM (FULL, VERBOSE) kept for open transactions, from its
    report's detail: the first of its two lines, "N dead row versions cannot be removed yet."
    (the one line of the report that holds a single number, in every translation; the second
    is the CPU times). 0 for any other detail."""
    if not detail or "\n" not in detail:
        return 0
    found = _ONE_NUMBER.fullmatch(detail.split("\n", 1)[0])
    return int(found.group(1)) if found else 0


def vacuum_erased(conninfo: str, full: bool = True, keys_conninfo: str | None = None) -> None:
    """VACUUM the tables an erasure deleted from, so the user's rows do not stay in dead
    tuples (docs/security.md, "What stays"). ``full``: rewrite them, indexes included, so
    no byte of the deleted rows stays in the data files either (a plain VACUUM leaves them in
    the pages' free space until written over); each table is locked while it is rewritten.
    Either removes only the tuples no open transaction can still see: a rewrite that had to
    keep some raises :class:`VacuumHeldBack` once every table is done (plain VACUUM leaves
    bytes behind anyway and is not checked). The WAL and backups are the operator's retention.
    ``keys_conninfo``: the key store's database, when it is not ``conninfo``
    (MEMSTREAM_KEYS_DATABASE_URL): its key tables are vacuumed there."""
    command = "VACUUM (FULL, VERBOSE)" if full else "VACUUM"
    where = {conninfo: (*USER_TABLES, *KEY_TABLES)}
    if keys_conninfo and keys_conninfo != conninfo:
        where[keys_conninfo] = KEY_TABLES
    held: dict[str, int] = {}
    reports: list[str | None] = []  # this table's VERBOSE report
    for database, tables in where.items():
        with psycopg.connect(database, autocommit=True) as conn:
            conn.add_notice_handler(lambda notice: reports.append(notice.message_detail))
            for table in tables:
                reports.clear()
                conn.execute(f"{command} {table}")  # noqa: S608 - our own table names
                rows = sum(held_back_rows(detail) for detail in reports)
                if rows:
                    held[table] = held.get(table, 0) + rows
    if held:
        raise VacuumHeldBack(held)


VACUUM_LOCK_ID = 0x6D656D76  # "memv": one projector vacuums the erasures' tables at a time


def vacuum_pending(
    conninfo: str, full: bool = True, keys_conninfo: str | None = None
) -> int | None:
    """Pay the vacuum the erasing batches wrote down (``memstream_vacuum_due``, migration 013):
    :func:`vacuum_erased`, then delete the rows seen before it started (a batch committed
    meanwhile keeps its row, for the next vacuum). Returns how many erasing batches it
    covered (0: none was due), or None when another projector is vacuuming now (ask again
    later: that one may have started before the latest erasure committed). Raises
    :class:`VacuumHeldBack`, the debts kept, when an open transaction kept dead rows."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        locked = conn.execute("SELECT pg_try_advisory_lock(%s)", (VACUUM_LOCK_ID,)).fetchone()
        if not (locked and locked[0]):
            return None
        due = [i for (i,) in conn.execute("SELECT id FROM memstream_vacuum_due").fetchall()]
        if due:
            vacuum_erased(conninfo, full, keys_conninfo)
            conn.execute("DELETE FROM memstream_vacuum_due WHERE id = ANY(%s)", (due,))
        return len(due)  # the advisory lock goes with the connection


def vacuum_owed_for(conninfo: str) -> float | None:
    """Seconds since the oldest erasure still waiting for its vacuum; None: none waits."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        row = conn.execute(
            "SELECT extract(epoch FROM statement_timestamp() - min(erased_at))::float8 "
            "FROM memstream_vacuum_due"
        ).fetchone()
    return None if row is None else row[0]


def _apply_deletes(cur: psycopg.Cursor, batch: RowBatch) -> None:
    """One guarded DELETE per table for the whole batch: a promotion deletes its memory from
    the layer it leaves, and one statement per row was 5 µs per ledger event."""
    by_table: dict[str, tuple[list[str], list[str], list[int]]] = {}
    for (layer, user_id, memory_id), version in batch.deletes.items():
        users, memory_ids, versions = by_table.setdefault(LAYER_TABLES[layer], ([], [], []))
        users.append(user_id)
        memory_ids.append(memory_id)
        versions.append(version)
    for table, params in by_table.items():
        cur.execute(
            f"DELETE FROM {table} AS t "  # noqa: S608 - table names come from LAYER_TABLES
            "USING unnest(%s::text[], %s::text[], %s::bigint[]) AS d(user_id, memory_id, version) "
            "WHERE t.user_id = d.user_id AND t.memory_id = d.memory_id AND t.version < d.version",
            params,
        )


def _forget_links(cur: psycopg.Cursor, batch: RowBatch) -> None:
    """Delete the stored links into or out of the memories this batch forgets, before the
    batch's own links are appended (:meth:`projections.rows.RowBatch._forget_links`)."""
    if not batch.forgotten:
        return
    users, memory_ids = zip(*sorted(batch.forgotten), strict=True)
    cur.execute(
        "DELETE FROM memory_links AS l "
        "USING unnest(%s::text[], %s::text[]) AS f(user_id, memory_id) "
        "WHERE l.user_id = f.user_id AND (l.source_id = f.memory_id OR l.target_id = f.memory_id)",
        (list(users), list(memory_ids)),
    )


def _apply_updates(cur: psycopg.Cursor, batch: RowBatch) -> None:
    """Guarded column updates, grouped by table and by the set of columns they change."""
    groups: dict[tuple[str, tuple[str, ...]], list[tuple[object, ...]]] = {}
    for (layer, user_id, memory_id), update in batch.updates.items():
        columns = tuple(sorted(update.fields))
        values = tuple(update.fields[c] for c in columns)
        groups.setdefault((LAYER_TABLES[layer], columns), []).append(
            (update.version, *values, user_id, memory_id, update.version)
        )
    for (table, columns), params in groups.items():
        assignments = ", ".join(
            f"{c} = GREATEST({c}, %s)" if c == "last_accessed" else f"{c} = %s" for c in columns
        )
        cur.executemany(
            f"UPDATE {table} SET version = %s, {assignments} "
            f"WHERE user_id = %s AND memory_id = %s AND version < %s",
            params,
        )


_SESSION_RANK_SQL = "CASE {t}.status WHEN 'active' THEN 0 WHEN 'ended' THEN 1 ELSE 2 END"


def _upsert_sessions(cur: psycopg.Cursor, batch: RowBatch) -> None:
    """Sessions only move forward (active → ended → consolidated): members joined add to
    the count while active, a close sets the authoritative count, nothing moves back."""
    if not batch.sessions:
        return
    rank = _SESSION_RANK_SQL.format(t="sessions")
    cur.executemany(
        "INSERT INTO sessions AS sessions (user_id, session_id, conversation_id, started_at, "
        "last_event_at, ended_at, narrative_id, memory_count, status, end_reason, "
        "compression_ratio, char_ratio) "
        "VALUES (%(user)s, %(session)s, %(conversation)s, %(started)s, %(last)s, %(ended)s, "
        "%(narrative)s, COALESCE(%(count)s, %(joined)s), %(status)s, %(reason)s, %(ratio)s, "
        "%(chars)s) "
        "ON CONFLICT (user_id, session_id) DO UPDATE SET "
        "conversation_id = COALESCE(sessions.conversation_id, EXCLUDED.conversation_id), "
        "started_at = LEAST(sessions.started_at, EXCLUDED.started_at), "
        "last_event_at = GREATEST(sessions.last_event_at, EXCLUDED.last_event_at), "
        "ended_at = COALESCE(EXCLUDED.ended_at, sessions.ended_at), "
        "narrative_id = COALESCE(EXCLUDED.narrative_id, sessions.narrative_id), "
        f"memory_count = COALESCE(%(count)s, CASE WHEN {rank} = 0 "
        "THEN sessions.memory_count + %(joined)s ELSE sessions.memory_count END), "
        f"status = CASE WHEN %(rank)s > {rank} THEN EXCLUDED.status ELSE sessions.status END, "
        "end_reason = COALESCE(EXCLUDED.end_reason, sessions.end_reason), "
        "compression_ratio = COALESCE(EXCLUDED.compression_ratio, sessions.compression_ratio), "
        "char_ratio = COALESCE(EXCLUDED.char_ratio, sessions.char_ratio)",
        [_session_params(row.values()) for row in batch.sessions.values()],
    )


def _session_params(values: tuple[object, ...]) -> dict[str, object]:
    names = (
        "user",
        "session",
        "conversation",
        "started",
        "last",
        "ended",
        "narrative",
        "joined",
        "count",
        "status",
        "rank",
        "reason",
        "ratio",
        "chars",
    )
    return dict(zip(names, values, strict=True))


def _upsert_profiles(cur: psycopg.Cursor, batch: RowBatch) -> None:
    """The user's profile and drift: each part kept from the newest event that set it."""
    if not batch.profiles:
        return
    cur.executemany(
        "INSERT INTO user_profiles AS p (user_id, profile_memory_id, profile_version, "
        "identity_anchor, drift, drift_level, drift_measured_at, updated_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (user_id) DO UPDATE SET "
        "profile_memory_id = CASE WHEN EXCLUDED.profile_version IS NOT NULL AND "
        "(p.profile_version IS NULL OR EXCLUDED.profile_version > p.profile_version) "
        "THEN EXCLUDED.profile_memory_id ELSE p.profile_memory_id END, "
        "profile_version = GREATEST(p.profile_version, EXCLUDED.profile_version), "
        "identity_anchor = CASE WHEN EXCLUDED.drift_measured_at IS NOT NULL AND "
        "(p.drift_measured_at IS NULL OR EXCLUDED.drift_measured_at >= p.drift_measured_at) "
        "THEN EXCLUDED.identity_anchor ELSE p.identity_anchor END, "
        "drift = CASE WHEN EXCLUDED.drift_measured_at IS NOT NULL AND "
        "(p.drift_measured_at IS NULL OR EXCLUDED.drift_measured_at >= p.drift_measured_at) "
        "THEN EXCLUDED.drift ELSE p.drift END, "
        "drift_level = CASE WHEN EXCLUDED.drift_measured_at IS NOT NULL AND "
        "(p.drift_measured_at IS NULL OR EXCLUDED.drift_measured_at >= p.drift_measured_at) "
        "THEN EXCLUDED.drift_level ELSE p.drift_level END, "
        "drift_measured_at = GREATEST(p.drift_measured_at, EXCLUDED.drift_measured_at), "
        "updated_at = GREATEST(p.updated_at, EXCLUDED.updated_at)",
        [row.values() for row in batch.profiles.values()],
    )


_APPEND_ONLY = {
    "consolidation_log": "stage_log",
    "memory_links": "stage_links",
    "consolidation_reports": "stage_reports",
}
_column_types: dict[str, list[str]] = {}


def _appends(batch: RowBatch) -> list[tuple[str, tuple[str, ...], list]]:
    """(table, columns, rows) of the batch's append-only rows, in the order they are written."""
    return [
        (table, APPEND_ONLY_COLUMNS[table], rows)
        for table, rows in batch.append_only_rows().items()
    ]


def _append(
    cur: psycopg.Cursor,
    table: str,
    columns: tuple[str, ...],
    rows: list,
    data: bytes | None = None,
) -> None:
    """Append-only rows keyed by their ledger event. The common case is that none of them
    is there yet: binary COPY straight into the table, inside a savepoint. A replay (after a
    crash or a rewind) finds some already there: the COPY fails on the key, the savepoint
    is rolled back, and the rows go through a staging table and ``INSERT … ON CONFLICT DO
    NOTHING`` instead, so nothing is inserted twice either way."""
    if not rows:
        return
    types = _types_of(cur, table, columns)
    try:
        with cur.connection.transaction():
            _copy_rows(cur, table, columns, types, rows, data)
        return
    except psycopg.errors.UniqueViolation:
        pass
    stage = _APPEND_ONLY[table]
    _copy_rows(cur, stage, columns, types, rows)
    names = ", ".join(columns)
    cur.execute(
        f"INSERT INTO {table} ({names}) SELECT {names} FROM {stage} ON CONFLICT DO NOTHING"  # noqa: S608
    )


def _types_of(cur: psycopg.Cursor, table: str, columns: tuple[str, ...]) -> list[str]:
    """The type names binary COPY needs, read once from the catalog."""
    types = _column_types.get(table)
    if types is None:
        found: dict[str, str] = dict(
            cur.execute(
                "SELECT attname, format_type(atttypid, NULL) FROM pg_attribute "
                "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
                (table,),
            ).fetchall()
        )
        types = _column_types[table] = [found[c] for c in columns]
    return types
