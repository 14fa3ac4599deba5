"""The projector's COPY data formatted ahead of the write (``format_copies``, by the main thread
while the writer thread writes the batch before) stores exactly what the writer stores when it
formats the rows itself (real PostgreSQL + pgvector)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from projections.rows import RowBatch
from projections.schema import LAYER_TABLES
from projections.writer import format_copies, prepare_connection, write_batch
from streams.engine import ledger
from streams.engine.model import Memory
from streams.engine.oracle import replay
from streams.engine.validation import Limits
from tests.support import new_migrated_database
from tests.workloads import BASE_TIME, cycle_heavy_workload, embedding, mixed_workload

pytestmark = pytest.mark.integration

TABLES = (
    *LAYER_TABLES.values(),
    "memory_links",
    "consolidation_reports",
    "consolidation_log",
    "sessions",
    "user_profiles",
)
BATCH = 150


def unicode_memory_event() -> ledger.ConsolidationEvent:
    """Text, tags and metadata outside ASCII, quotes and an embedding: what the formatter
    must encode exactly as the server would have received it row by row."""
    import random

    memory = Memory(
        "m-ünïcødé",
        "user-ü",
        'Zoë met José at the Café "Ølkælder" — 3 × 4 = 12',
        tags=("ünïcødé", 'quote"s', "a b"),
        metadata={"städte": "Zürich", "n": "ü"},
        embedding=embedding(random.Random(3)),
        created_at=BASE_TIME,
    )
    return ledger.ConsolidationEvent(
        "00000000-0000-4000-8000-00000000ffff",
        "user-ü",
        BASE_TIME,
        "cause-ü",
        ledger.MemoryStored(memory, 1),
    )


def batches(decisions: list[ledger.ConsolidationEvent]) -> Iterator[RowBatch]:
    for start in range(0, len(decisions), BATCH):
        batch = RowBatch()
        for offset, decision in enumerate(decisions[start : start + BATCH], start):
            batch.add(decision, "ledger", 0, offset)
        yield batch


def contents(url: str) -> dict[str, list[str]]:
    with psycopg.connect(url) as conn:
        return {
            table: [row[0] for row in conn.execute(f"SELECT t::text FROM {table} t ORDER BY 1")]  # noqa: S608
            for table in TABLES
        }


def test_copies_formatted_ahead_store_what_the_writer_formats_itself(stack):
    """Given the ledger of a workload with cycles (links, reports, sessions, profiles) and a
    memory in non-ASCII text, when its batches are written once with their COPY data
    formatted ahead and once formatted by the writer, then every read-model table holds the
    same rows, those of memories updated after an earlier batch stored them included (their
    direct COPY fails on the key, and the writer stages them instead)."""
    decisions = [
        unicode_memory_event(),
        *replay(cycle_heavy_workload(300, users=3, seed=11), Limits()).decisions,
        *replay(mixed_workload(300, users=3, seed=12), Limits()).decisions,
    ]
    ahead, itself = (
        new_migrated_database(stack.database_url),
        new_migrated_database(stack.database_url),
    )
    formatted_tables: set[str] = set()
    with psycopg.connect(ahead) as conn:
        prepare_connection(conn)
        for batch in batches(decisions):
            copies = format_copies(conn.adapters, batch)
            formatted_tables |= set(copies)
            write_batch(conn, batch, "p", copies)
    with psycopg.connect(itself) as conn:
        prepare_connection(conn)
        for batch in batches(decisions):
            write_batch(conn, batch, "p")

    # the formatted-ahead path was taken for every kind of COPY the batches hold
    assert {"working_memories", "memory_links", "consolidation_reports"} <= formatted_tables
    assert "consolidation_log" in formatted_tables
    written = contents(ahead)
    assert written == contents(itself)
    assert len(written["consolidation_log"]) == len(decisions)
    assert any("Ølkælder" in row for row in written["working_memories"])

    with psycopg.connect(ahead) as conn:  # rows updated in a later batch: staged, not copied
        updated = conn.execute("SELECT count(*) FROM working_memories WHERE version > 1")
        assert updated.fetchone()[0] > 0
