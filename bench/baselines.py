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
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg.types.json import Jsonb

from bench.measure import Rate
from bench.progress import Counter
from projections.rows import MEMORY_COLUMNS, memory_row
from streams import codec
from streams.engine import ledger

# Binary COPY needs the wire type of every column, in MEMORY_COLUMNS order.
COLUMN_TYPES: dict[str, str] = {
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
}


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


def _for_copy(row: list[Any]) -> list[Any]:
    adapted = list(row)
    at_embedding = MEMORY_COLUMNS.index("embedding")
    at_metadata = MEMORY_COLUMNS.index("metadata")
    packed = adapted[at_embedding]
    adapted[at_embedding] = None if packed is None else np.frombuffer(packed, dtype="<f4")
    adapted[at_metadata] = Jsonb(adapted[at_metadata])
    return adapted


def copy_baseline(database_url: str, rows: list[list[Any]], batch_size: int) -> CopyResult:
    """COPY ``rows`` into a new ``bench_copy_<id>`` table; time only the COPY transactions."""
    table = f"bench_copy_{uuid.uuid4().hex[:8]}"
    columns = ", ".join(MEMORY_COLUMNS)
    types = [COLUMN_TYPES[c] for c in MEMORY_COLUMNS]
    prepared = [_for_copy(row) for row in rows]
    batch_size = max(1, batch_size)
    batches = [prepared[i : i + batch_size] for i in range(0, len(prepared), batch_size)]
    bar = Counter(len(prepared), "rows copied")
    with psycopg.connect(database_url) as conn:
        register_vector(conn)
        conn.execute(f"CREATE TABLE {table} (LIKE working_memories INCLUDING ALL)")
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
