"""The baseline for projector throughput: a raw binary COPY of exactly the rows the projector
writes for the same ledger.

The ledger records are folded with :class:`projections.rows.RowBatch`, in batches of the
projector's batch size, before the clock starts: each batch's memory rows, audit-log rows,
links and reports then go by binary COPY into fresh tables created ``LIKE`` the read-model
tables (``INCLUDING ALL``: same columns, keys and indexes), one transaction per batch. What
the baseline times is the database's cost of taking those rows; the projector must also
consume, decode, fold, upsert and store its offsets. Both rates are ledger events per second.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

from bench.harness import BenchError
from bench.measure import Rate
from bench.progress import Counter
from projections.copy_dumpers import register_copy_dumpers
from projections.rows import APPEND_ONLY_COLUMNS, MEMORY_COLUMNS, RowBatch
from projections.schema import LAYER_TABLES
from streams.kafka import codec


@dataclass(frozen=True)
class CopyResult:
    table: str
    rate: Rate
    batches: int


def batches_from_ledger(values: Iterable[bytes], batch_size: int) -> list[RowBatch]:
    """The projector's row batches for these ledger records (decoded and folded as it does)."""
    registry = codec.default_registry()
    batches: list[RowBatch] = []
    batch = RowBatch()
    for offset, value in enumerate(values):
        batch.add(codec.decode_ledger(value, registry), "ledger", 0, offset)
        if len(batch) >= batch_size:
            batches.append(batch)
            batch = RowBatch()
    if len(batch):
        batches.append(batch)
    return batches


def copy_baseline(database_url: str, batches: list[RowBatch]) -> CopyResult:
    """COPY each batch's rows into ``bench_copy_<id>_*`` clones of the read-model tables, one
    transaction per batch; time only those transactions. The rate is ledger events/s."""
    suffix = uuid.uuid4().hex[:8]
    events = sum(len(b) for b in batches)
    bar = Counter(events, "ledger events' rows copied")
    with psycopg.connect(database_url) as conn:
        register_copy_dumpers(conn)
        clones = {
            source: f"bench_copy_{suffix}_{source}"
            for source in (*LAYER_TABLES.values(), *APPEND_ONLY_COLUMNS)
        }
        for source, clone in clones.items():
            conn.execute(f"CREATE TABLE {clone} (LIKE {source} INCLUDING ALL)")
            _copy_storage_parameters(conn, source, clone)
        types = {
            source: column_types(conn, clone, _columns(source)) for source, clone in clones.items()
        }
        conn.commit()
        seen: set[tuple[str, ...]] = set()
        prepared = [_prepared(batch, seen) for batch in batches]
        done = 0
        started = time.perf_counter()
        for batch, rows in zip(batches, prepared, strict=True):
            with conn.transaction(), conn.cursor() as cur:
                for source, table_rows in rows.items():
                    if table_rows:
                        copy_rows(cur, clones[source], _columns(source), types[source], table_rows)
            done += len(batch)
            bar.show(done)
        elapsed = time.perf_counter() - started
    bar.finish()
    table = clones["consolidation_log"]
    return CopyResult(table, Rate(events, elapsed, "first batch→last commit"), len(batches))


def _copy_storage_parameters(conn: psycopg.Connection, source: str, clone: str) -> None:
    """Give ``clone`` the table's storage parameters (``toast_tuple_target``, from migration
    006), which ``LIKE … INCLUDING ALL`` leaves out: the baseline writes rows the same way."""
    row = conn.execute("SELECT reloptions FROM pg_class WHERE oid = %s::regclass", (source,))
    options = (row.fetchone() or (None,))[0]
    if options:
        conn.execute(f"ALTER TABLE {clone} SET ({', '.join(options)})")


def _columns(source: str) -> Sequence[str]:
    return APPEND_ONLY_COLUMNS.get(source, MEMORY_COLUMNS)


def _prepared(batch: RowBatch, seen: set[tuple[str, ...]]) -> dict[str, list[Sequence[Any]]]:
    """Each target table's rows of ``batch`` (sorted out before the clock). A raw COPY
    cannot update, so a row whose key an earlier batch already copied (a memory's later
    version, a link made again) is left out: the baseline writes at most what the projector
    writes."""
    rows: dict[str, list[Sequence[Any]]] = {table: [] for table in LAYER_TABLES.values()}
    for (layer, user_id, memory_id), row in batch.upserts.items():
        if _first(seen, (LAYER_TABLES[layer], user_id, memory_id)):
            rows[LAYER_TABLES[layer]].append(row)
    rows["consolidation_log"] = list(batch.log)
    rows["memory_links"] = [r for r in batch.links if _first(seen, ("link", *map(str, r[:4])))]
    rows["consolidation_reports"] = [r for r in batch.reports if _first(seen, ("report", r[0]))]
    return rows


def _first(seen: set[tuple[str, ...]], key: tuple[str, ...]) -> bool:
    if key in seen:
        return False
    seen.add(key)
    return True


def copy_rows(
    cur: psycopg.Cursor,
    table: str,
    columns: Sequence[str],
    types: list[str],
    rows: Iterable[Sequence[Any]],
) -> None:
    """Binary COPY of ``rows`` into ``table`` (the caller holds the transaction)."""
    sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
    with cur.copy(sql) as copy:
        copy.set_types(types)
        for row in rows:
            copy.write_row(row)


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
            f"{table} has no column(s) {', '.join(missing)} that the projector writes: "
            f"run `memstream migrate` against the bench database, or update the migrations"
        )
    return [by_name[c] for c in columns]
