"""Recall latency against how many memories a user has (issue 8): 1k, 10k and 50k.

Each size is one user whose memories are binary-COPYed into ``semantic_facts`` of a fresh
database (the read model the projector writes; random unit embeddings), then
:func:`projections.queries.recall` runs for random query vectors and is timed end to end
from the client: the default physical design (no ANN index, exact cosine over the user's
rows found by the primary key), so the time grows with the user's size, not the table's.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import numpy as np
import psycopg

from bench import progress
from bench.baselines import column_types, copy_rows
from bench.measure import percentiles
from projections import queries
from projections.copy_dumpers import register_copy_dumpers
from projections.rows import MEMORY_COLUMNS, memory_row
from streams.engine.model import Memory

SIZES = (1_000, 10_000, 50_000)
QUERIES = 30
CREATED_AT = 1_790_000_000_000


def measure_recall(
    database_url: str, dim: int, sizes: tuple[int, ...] = SIZES
) -> list[dict[str, Any]]:
    """Per size: {memories, p50_ms, p99_ms, queries}."""
    rng = np.random.default_rng(7)
    results = []
    # The copying connection keeps the COPY dumpers: recall registers pgvector's own on the
    # connection it queries, and those would replace them.
    with (
        psycopg.connect(database_url, autocommit=True) as copying,
        psycopg.connect(database_url) as conn,
    ):
        register_copy_dumpers(copying)
        types = column_types(copying, "semantic_facts", MEMORY_COLUMNS)
        for size in sizes:
            user = f"recall-bench-{size}-{uuid.uuid4().hex[:6]}"
            progress.note(f"{size:,} memories for {user}: copying")
            _fill(copying, user, size, dim, rng, types)
            conn.execute("ANALYZE semantic_facts")
            timings = []
            for _ in range(QUERIES):
                query = _unit(rng.standard_normal(dim)).astype("<f4").tobytes()
                started = time.perf_counter()
                found = queries.recall(conn, user, query, k=5)
                timings.append((time.perf_counter() - started) * 1000)
                if len(found) != 5:
                    raise RuntimeError(f"recall returned {len(found)} of 5 for {user}")
            stats = percentiles(timings)
            progress.note(
                f"{size:,} memories: p50 {stats['p50']:.1f} ms, p99 {stats['p99']:.1f} ms"
            )
            results.append(
                {
                    "memories": size,
                    "p50_ms": stats["p50"],
                    "p99_ms": stats["p99"],
                    "queries": QUERIES,
                }
            )
    return results


def _fill(
    conn: psycopg.Connection, user: str, size: int, dim: int, rng: Any, types: list[str]
) -> None:
    vectors = rng.standard_normal((size, dim)).astype("<f4")
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = (
        memory_row(
            Memory(
                f"{user}-m{i}",
                user,
                f"fact {i} of {user}",
                layer="semantic",
                embedding=vectors[i].tobytes(),
                created_at=CREATED_AT + i,
                valid_at=CREATED_AT + i,
            ),
            1,
        )
        for i in range(size)
    )
    with conn.transaction(), conn.cursor() as cur:
        copy_rows(cur, "semantic_facts", MEMORY_COLUMNS, types, rows)


def _unit(vector: Any) -> Any:
    return vector / np.linalg.norm(vector)
