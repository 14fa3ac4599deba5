"""The baseline for projector throughput: a raw binary COPY of the rows the projector wrote.

The rows are built with :func:`projections.rows.memory_row` from the decoded ledger records,
so they are the projector's rows exactly; they go into a fresh table created ``LIKE
working_memories INCLUDING ALL`` (same columns, primary key and HNSW index) with psycopg's
binary COPY, in batches of the projector's batch size, one transaction each. Converting the
rows for COPY happens before the clock starts: the baseline is the database's write cost.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from pgvector.psycopg import register_vector

from bench.harness import BenchError
from bench.measure import Rate
from bench.progress import Counter
from projections.rows import MEMORY_COLUMNS, memory_row
from projections.writer import copy_row
from streams import codec
from streams.engine import ledger


@dataclass(frozen=True)
class CopyResult:
    table: str
    rate: Rate
    batches: int


def rows_from_ledger(values: Iterable[bytes]) -> list[list[Any]]:
    """The layer-table rows the projector makes of ``MemoryStored`` ledger records."""
    registry = codec.default_registry()
    rows = []
    for value in values:
        event = codec.decode_ledger(value, registry)
        if isinstance(event.payload, ledger.MemoryStored):
            rows.append(memory_row(event.payload.memory, event.payload.version))
    return rows


def copy_baseline(
    database_url: str, rows: list[list[Any]], batch_size: int, vector_index: bool = True
) -> CopyResult:
    """COPY ``rows`` into a new ``bench_copy_<id>`` table; time only the COPY transactions.

    ``vector_index=False`` drops the new table's HNSW index first: a diagnostic that shows
    how much of the write cost is the vector index (the projector's tables always have it).
    """
    table = f"bench_copy_{uuid.uuid4().hex[:8]}{'' if vector_index else '_nohnsw'}"
    columns = ", ".join(MEMORY_COLUMNS)
    prepared = [copy_row(row) for row in rows]
    batch_size = max(1, batch_size)
    batches = [prepared[i : i + batch_size] for i in range(0, len(prepared), batch_size)]
    label = "rows copied" if vector_index else "rows copied (no HNSW index)"
    bar = Counter(len(prepared), label)
    with psycopg.connect(database_url) as conn:
        register_vector(conn)
        conn.execute(f"CREATE TABLE {table} (LIKE working_memories INCLUDING ALL)")
        if not vector_index:
            _drop_vector_indexes(conn, table)
        types = column_types(conn, table, MEMORY_COLUMNS)
        conn.commit()
        done = 0
        started = time.perf_counter()
        for batch in batches:
            with conn.transaction(), conn.cursor() as cur:
                sql = f"COPY {table} ({columns}) FROM STDIN (FORMAT BINARY)"
                with cur.copy(sql) as copy:
                    copy.set_types(types)
                    for row in batch:
                        copy.write_row(row)
            done += len(batch)
            bar.show(done)
        elapsed = time.perf_counter() - started
    bar.finish()
    return CopyResult(table, Rate(len(prepared), elapsed, "first batch→last commit"), len(batches))


def column_types(conn: psycopg.Connection, table: str, columns: Sequence[str]) -> list[str]:
    """The type names binary COPY needs for ``columns``, read from the catalog so they follow
    the migrations."""
    rows = conn.execute(
        "SELECT attname, format_type(atttypid, NULL) FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
        (table,),
    ).fetchall()
    by_name: dict[str, str] = {name: kind for name, kind in rows}
    missing = [c for c in columns if c not in by_name]
    if missing:
        raise BenchError(
            f"working_memories has no column(s) {', '.join(missing)} that the projector writes: "
            f"run `memstream migrate` against the bench database, or update the migrations"
        )
    return [by_name[c] for c in columns]


def _drop_vector_indexes(conn: psycopg.Connection, table: str) -> None:
    """Drop the HNSW indexes of ``table`` (a table this module just created)."""
    names = conn.execute(
        "SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexdef ILIKE %s",
        (table, "%USING hnsw%"),
    ).fetchall()
    for (name,) in names:
        conn.execute(f'DROP INDEX "{name}"')
