"""Read helpers over the read models: what services ask memstream's PostgreSQL side.

The functions filter by ``user_id`` themselves, and a connection of the ``memstream_reader``
role is additionally held to one user by row-level security (migration 004): inside a
transaction, :func:`scope_to_user` names the user, and PostgreSQL returns no other user's rows
whatever the query says. :class:`projections.reader.MemoryReader` does both for each call.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from projections.schema import LAYER_TABLES

# The session setting the row-level security policies of migration 004 read.
USER_SETTING = "memstream.user_id"


@dataclass(frozen=True)
class NearMemory:
    layer: str
    memory_id: str
    content: str
    distance: float


@dataclass(frozen=True)
class Link:
    source_id: str
    target_id: str
    link_type: str
    confidence: float | None
    created_at: datetime


def scope_to_user(conn: psycopg.Connection, user_id: str) -> None:
    """Name the user whose rows the ``memstream_reader`` role may see, until the current
    transaction ends (``set_config(..., true)`` is ``SET LOCAL``: a pooled connection cannot
    carry one caller's user into the next caller's transaction)."""
    if not user_id:
        raise ValueError("user_id is empty: a reader must say whose memories it reads")
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.INTRANS:
        raise RuntimeError(
            "scope_to_user needs an open transaction (inside `with conn.transaction():`); "
            "outside one the setting would end at once and the reader would see nothing"
        )
    conn.execute("SELECT set_config(%s, %s, true)", (USER_SETTING, user_id))


def nearest_memories(
    conn: psycopg.Connection,
    user_id: str,
    embedding: bytes,
    k: int = 5,
    include_inactive: bool = False,
) -> list[NearMemory]:
    """The user's ``k`` memories closest to ``embedding`` (exact cosine distance over the
    user's rows, found by the primary key; with ``MEMSTREAM_VECTOR_INDEX=hnsw``, the HNSW
    indexes).

    By default only current memories: not archived or superseded, and not invalidated by a
    newer contradicting fact (their history stays queryable with ``include_inactive``).

    With HNSW, the indexes hold every user's memories, and the user/status filter applies to
    what the index returns: with a plain scan (``hnsw.ef_search`` candidates) a user with few
    memories among many could get fewer than ``k``. pgvector's iterative scan keeps searching until
    ``k`` rows pass the filter; its ``relaxed_order`` may return them slightly out of order,
    so the outer query sorts again by the exact distance (``+ 0``: an expression the planner
    cannot take from the index's ordering)."""
    register_vector(conn)
    query = np.frombuffer(embedding, dtype="<f4")
    current = "" if include_inactive else " AND status = 'active' AND invalid_at IS NULL"
    union = " UNION ALL ".join(
        f"(SELECT '{layer}' AS layer, memory_id, content, embedding <=> %(q)s AS distance "
        f"FROM {table} WHERE user_id = %(u)s AND embedding IS NOT NULL{current} "
        f"ORDER BY embedding <=> %(q)s LIMIT %(k)s)"
        for layer, table in LAYER_TABLES.items()
    )
    with conn.transaction():
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        rows = conn.execute(
            f"SELECT layer, memory_id, content, distance FROM ({union}) AS near "
            f"ORDER BY distance + 0, memory_id LIMIT %(k)s",
            {"q": query, "u": user_id, "k": k},
        ).fetchall()
    return [NearMemory(*row) for row in rows]


def contradictions(conn: psycopg.Connection, user_id: str) -> list[Link]:
    return _links(conn, "user_id = %s AND link_type = 'contradicts'", (user_id,))


def lineage(conn: psycopg.Connection, user_id: str, memory_id: str) -> list[Link]:
    """Every link into or out of a memory: where it came from and what it became."""
    return _links(
        conn, "user_id = %s AND (source_id = %s OR target_id = %s)", (user_id, memory_id, memory_id)
    )


def _links(conn: psycopg.Connection, where: str, params: tuple[str, ...]) -> list[Link]:
    rows = conn.execute(
        f"SELECT source_id, target_id, link_type, confidence, created_at FROM memory_links "
        f"WHERE {where} ORDER BY created_at, source_id, target_id",
        params,
    ).fetchall()
    return [Link(*row) for row in rows]


@dataclass(frozen=True)
class Recalled:
    """One recalled memory: how similar it is, how present (current salience), its fate."""

    layer: str
    memory_id: str
    content: str
    status: str
    current: bool  # active and not invalidated
    similarity: float
    salience: float
    score: float
    derived_from: tuple[str, ...] = ()  # the memories it was made from (its sources)
    summarized_into: tuple[str, ...] = ()  # the narratives/summaries that carry it now


RECALL_CANDIDATES_PER_LAYER = 4  # × k nearest per layer, then ranked by score


def recall(
    conn: psycopg.Connection,
    user_id: str,
    embedding: bytes,
    k: int = 5,
    include_archived: bool = False,
    half_life_seconds: float = 604800.0,
    access_reinforcement: float = 0.1,
) -> list[Recalled]:
    """The user's memories for a query: nearest by cosine, ranked by similarity weighted by
    current salience (computed now, SQL ``memstream_salience``), current memories first;
    archived, superseded and invalidated ones only with ``include_archived`` (they stay
    searchable, ranked below)."""
    register_vector(conn)
    query = np.frombuffer(embedding, dtype="<f4")
    current = "status = 'active' AND invalid_at IS NULL"
    only_current = "" if include_archived else f" AND {current}"
    union = " UNION ALL ".join(
        f"(SELECT '{layer}' AS layer, memory_id, content, status, ({current}) AS current, "
        f"1 - (embedding <=> %(q)s) AS similarity, "
        f"memstream_salience(importance, access_count, COALESCE(last_accessed, created_at), "
        f"now(), %(h)s, %(r)s) AS salience "
        f"FROM {table} WHERE user_id = %(u)s AND embedding IS NOT NULL{only_current} "
        f"ORDER BY embedding <=> %(q)s LIMIT %(n)s)"
        for layer, table in LAYER_TABLES.items()
    )
    rows = conn.execute(
        f"SELECT layer, memory_id, content, status, current, similarity, salience, "
        f"similarity * (0.5 + 0.5 * salience) AS score FROM ({union}) AS found "
        f"ORDER BY current DESC, score DESC, memory_id LIMIT %(k)s",
        {
            "q": query,
            "u": user_id,
            "k": k,
            "n": k * RECALL_CANDIDATES_PER_LAYER,
            "h": half_life_seconds,
            "r": access_reinforcement,
        },
    ).fetchall()
    found = [Recalled(*row) for row in rows]
    lineage = _lineage_of(conn, user_id, [r.memory_id for r in found])
    return [
        replace(
            r,
            derived_from=lineage.get((r.memory_id, "derived_from"), ()),
            summarized_into=lineage.get((r.memory_id, "summarized_into"), ()),
        )
        for r in found
    ]


def _lineage_of(
    conn: psycopg.Connection, user_id: str, memory_ids: list[str]
) -> dict[tuple[str, str], tuple[str, ...]]:
    """(memory id, link type) → the linked memory ids, oldest link first, for what a memory
    was derived from and what it was summarized into: one query for all recalled memories."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        "SELECT source_id, link_type, target_id FROM memory_links "
        "WHERE user_id = %s AND source_id = ANY(%s) "
        "AND link_type IN ('derived_from', 'summarized_into') "
        "ORDER BY created_at, target_id",
        (user_id, memory_ids),
    ).fetchall()
    lineage: dict[tuple[str, str], tuple[str, ...]] = {}
    for source, link_type, target in rows:
        lineage[(source, link_type)] = (*lineage.get((source, link_type), ()), target)
    return lineage
