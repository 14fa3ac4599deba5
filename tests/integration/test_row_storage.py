"""Memory rows are stored whole in their heap page (migration 006), and the bench's raw COPY
baseline writes into tables stored the same way (real PostgreSQL + pgvector)."""

from __future__ import annotations

import random
import string

import psycopg
import pytest

from bench.baselines import copy_baseline
from projections.rows import RowBatch
from projections.schema import LAYER_TABLES
from projections.writer import prepare_connection, write_batch
from streams.engine import ledger
from streams.engine.model import Memory
from tests.workloads import BASE_TIME, embedding

pytestmark = pytest.mark.integration

EMBEDDING_BYTES = 4 * 384 + 8  # pgvector's inline size of a 384-dimension vector


def a_batch_of_large_facts() -> RowBatch:
    """Semantic facts of ~2.4 KB a row: past the 2,032 bytes at which PostgreSQL TOASTs by
    default, well under a page. Their text does not compress (random characters), so only
    moving the embedding out of the row could bring one under the default."""
    rng = random.Random(5)
    batch = RowBatch()
    for n in range(20):
        text = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(700))
        memory = Memory(
            f"m-{n}",
            "user-1",
            f"fact {n}: {text}",
            layer="semantic",
            tags=("finance", "review"),
            embedding=embedding(rng),
            created_at=BASE_TIME,
        )
        event = ledger.ConsolidationEvent(
            f"00000000-0000-4000-8000-{n:012d}",
            "user-1",
            BASE_TIME,
            f"c-{n}",
            ledger.MemoryStored(memory, 1),
        )
        batch.add(event, "ledger", 0, n)
    return batch


def test_a_memory_row_larger_than_the_default_toast_target_keeps_its_embedding_inline(database):
    """Given semantic facts whose rows are ~2.4 KB, when the projector writes them, then each
    embedding is stored in the row itself (not compressed, not moved to the TOAST table),
    so a recall scan reads it without detoasting."""
    with psycopg.connect(database) as conn:
        prepare_connection(conn)
        write_batch(conn, a_batch_of_large_facts(), "p")
        sizes = conn.execute(
            "SELECT pg_column_size(f.*), pg_column_size(embedding) FROM semantic_facts f"
        ).fetchall()
    assert len(sizes) == 20
    assert all(row > 2032 for row, _ in sizes)
    assert all(vector == EMBEDDING_BYTES for _, vector in sizes)


def test_the_copy_baseline_writes_into_tables_stored_like_the_read_models(database):
    """Given the read-model tables with their storage parameters, when the bench's raw COPY
    baseline runs, then its clones carry the same parameters and hold the rows copied."""
    result = copy_baseline(database, [a_batch_of_large_facts()])
    with psycopg.connect(database) as conn:
        options = dict(
            conn.execute(
                "SELECT relname, reloptions FROM pg_class WHERE relname = ANY(%s)",
                (list(LAYER_TABLES.values()),),
            ).fetchall()
        )
        prefix = result.table.removesuffix("consolidation_log")
        for table, expected in options.items():
            clone = conn.execute(
                "SELECT reloptions FROM pg_class WHERE relname = %s", (prefix + table,)
            ).fetchone()
            assert clone == (expected,)
        copied = conn.execute(f"SELECT count(*) FROM {prefix}semantic_facts").fetchone()  # noqa: S608
    assert options["semantic_facts"] == ["toast_tuple_target=8160"]
    assert copied == (20,)
