"""Read queries the HTTP API needs beyond :mod:`projections.queries`: one memory, a user's
sessions, profile and consolidation reports, and whether a user or a memory exists.

Like :mod:`projections.queries`, each function filters by ``user_id`` itself and runs on a
connection that :class:`projections.reader.MemoryReader` has scoped to that user
(``with reader.as_user(user_id) as conn``), so row-level security holds it to that user's
rows whatever the query says. This module must never write: it is the read side.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from projections import rows
from projections.schema import LAYER_TABLES

# What a memory's row says, in this order (the embedding stays in the database: a client
# that wants vectors reads the ledger).
MEMORY_COLUMNS = tuple(
    column for column in rows.MEMORY_COLUMNS if column not in ("user_id", "embedding", "salience")
)


@dataclass(frozen=True)
class StoredMemory:
    """One memory as the read models hold it now, with its layer."""

    layer: str
    fields: dict[str, Any]


@dataclass(frozen=True)
class Session:
    session_id: str
    conversation_id: str | None
    status: str
    started_at: datetime | None
    last_event_at: datetime | None
    ended_at: datetime | None
    end_reason: str | None
    narrative_id: str | None
    memory_count: int


@dataclass(frozen=True)
class Profile:
    """A user's procedural profile (its memory, if synthesized) and identity drift."""

    profile_memory_id: str | None
    profile_version: int | None
    profile_content: str | None
    drift: float | None
    drift_level: str | None
    drift_measured_at: datetime | None
    updated_at: datetime | None


@dataclass(frozen=True)
class Report:
    """One consolidation cycle's report."""

    event_id: str
    cycle_id: str
    trigger: str
    occurred_at: datetime
    profile: str | None
    processed: int
    patterns: int
    archived: int
    decayed: int
    contradictions: int
    duplicates_merged: int
    links_created: int
    duration_ms: int
    warnings: list[str]  # text[]: psycopg reads it as a list


# Tables any of whose rows make a user known to the read models.
_USER_TABLES = (*LAYER_TABLES.values(), "sessions", "user_profiles", "consolidation_reports")


def user_exists(conn: psycopg.Connection, user_id: str) -> bool:
    """Whether the read models hold anything of ``user_id`` (a memory, a session, a profile
    or a report): one index probe per table, stopping at the first hit."""
    probes = " OR ".join(
        f"EXISTS (SELECT 1 FROM {table} WHERE user_id = %(u)s)" for table in _USER_TABLES
    )
    row = conn.execute(f"SELECT {probes}", {"u": user_id}).fetchone()
    return bool(row and row[0])


def memory(conn: psycopg.Connection, user_id: str, memory_id: str) -> StoredMemory | None:
    """The user's memory ``memory_id`` in whichever layer holds it, or None."""
    columns = ", ".join(MEMORY_COLUMNS)
    union = " UNION ALL ".join(
        f"SELECT '{layer}' AS layer, {columns} FROM {table} "
        f"WHERE user_id = %(u)s AND memory_id = %(m)s"
        for layer, table in LAYER_TABLES.items()
    )
    row = conn.execute(
        f"SELECT * FROM ({union}) AS found LIMIT 1", {"u": user_id, "m": memory_id}
    ).fetchone()
    if row is None:
        return None
    return StoredMemory(row[0], dict(zip(MEMORY_COLUMNS, row[1:], strict=True)))


def sessions(conn: psycopg.Connection, user_id: str, limit: int = 100) -> list[Session]:
    """The user's sessions, the most recently active first."""
    rows = conn.execute(
        "SELECT session_id, conversation_id, status, started_at, last_event_at, ended_at, "
        "end_reason, narrative_id, memory_count FROM sessions WHERE user_id = %s "
        "ORDER BY last_event_at DESC NULLS LAST, session_id LIMIT %s",
        (user_id, limit),
    ).fetchall()
    return [Session(*row) for row in rows]


def profile(conn: psycopg.Connection, user_id: str) -> Profile | None:
    """The user's profile row, with the content of the procedural profile memory."""
    row = conn.execute(
        "SELECT profile_memory_id, profile_version, drift, drift_level, drift_measured_at, "
        "updated_at FROM user_profiles WHERE user_id = %s",
        (user_id,),
    ).fetchone()
    if row is None:
        return None
    memory_id, version, drift, level, measured, updated = row
    content = None
    if memory_id is not None:
        found = memory(conn, user_id, memory_id)
        content = found.fields["content"] if found is not None else None
    return Profile(memory_id, version, content, drift, level, measured, updated)


def reports(conn: psycopg.Connection, user_id: str, limit: int = 50) -> list[Report]:
    """The user's consolidation reports, the newest first."""
    rows = conn.execute(
        "SELECT event_id, cycle_id, trigger, occurred_at, profile, processed, patterns, "
        "archived, decayed, contradictions, duplicates_merged, links_created, duration_ms, "
        "warnings FROM consolidation_reports WHERE user_id = %s "
        "ORDER BY occurred_at DESC, event_id LIMIT %s",
        (user_id, limit),
    ).fetchall()
    return [Report(*row) for row in rows]
