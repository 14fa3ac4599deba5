"""Recall latency against how many memories a user has (issues 8 and 30): 1k, 10k and 50k.

Each size is one user whose memories are binary-COPYed into ``semantic_facts`` of a fresh
database (the read model the projector writes; random unit embeddings, and ~130 characters of
words each, the length of a conversation turn, since the hybrid ranking reads every memory's
words), then :func:`projections.queries.recall` runs for random questions and is timed end to
end from the client: the default physical design (no ANN index: exact cosine over the user's
rows; the words from the stored ``tsv`` column through its GIN index, BM25's corpus statistics
from an index-only scan, migration 010), after a ``VACUUM (ANALYZE)`` as autovacuum would run.

``python -m bench.recall_latency --server-url URL`` measures both rankings on the same users
(and, with ``--ingest``, what a stored tsvector column would cost the projector's COPY), in a
database of its own that it drops afterwards, and writes what it printed to
``bench/results/recall_latency[-hnsw]-<date>-<commit>.{md,json}`` (``--no-save``: print
only). ``--vector-index hnsw`` measures the opt-in ANN index instead of the exact scan
(``MEMSTREAM_VECTOR_INDEX=hnsw``, migration 005), built after each size's rows are in, as an
operator would build it on a large table.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from bench import progress
from bench.baselines import column_types, copy_rows
from bench.measure import percentiles
from bench.report import RESULTS_DIR, machine, save_named, source_version
from projections import queries
from projections.copy_dumpers import register_copy_dumpers
from projections.queries import RANKINGS, Ranking
from projections.rows import MEMORY_COLUMNS, memory_row
from projections.schema import MIGRATIONS_DIR, migrated_database, vector_indexes
from streams.engine.model import Memory

SIZES = (1_000, 10_000, 50_000)
QUERIES = 100  # timed per size and ranking: enough for a p99 that is not simply the maximum
# Asked first and not timed, as a service's connection is warm: the first query after the
# fill reads the indexes' pages into the buffers and plans a large statement (~2x a warm one).
WARM_UP_QUERIES = 3
CREATED_AT = 1_790_000_000_000
K = 5
TURN_CHARS = 130
# A made-up vocabulary (so no word list is needed) drawn Zipf-like, as words are in speech:
# a few very common, most rare. The most common words of speech are stop words, which full
# text drops and never matches: the draws skip the first STOP_RANKS ranks, so that a
# question's words match a share of the memories as content words do, not all of them.
_SYLLABLES = ("ka", "lo", "mi", "ren", "to", "sa", "vel", "dor", "pi", "an", "ush", "te")
VOCABULARY = tuple(a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES)
STOP_RANKS = 30
_WEIGHTS = np.arange(1, len(VOCABULARY) + 1, dtype=float) ** -1.0
_WEIGHTS[:STOP_RANKS] = 0
_WEIGHTS /= _WEIGHTS.sum()


def measure_recall(
    database_url: str,
    dim: int,
    sizes: tuple[int, ...] = SIZES,
    rankings: Sequence[Ranking] = ("hybrid",),
    vector_index: str = "none",
) -> list[dict[str, Any]]:
    """Per size and ranking: {memories, ranking, p50_ms, p99_ms, queries}. The default is
    the product's default ranking (what ``memstream bench`` reports) and physical design
    (``vector_index`` "none": exact cosine; "hnsw": the opt-in ANN index)."""
    rng = np.random.default_rng(7)
    results = []
    # The copying connection keeps the COPY dumpers: recall registers pgvector's own on the
    # connection it queries, and those would replace them.
    with (
        psycopg.connect(database_url, autocommit=True) as copying,
        psycopg.connect(database_url, autocommit=True) as conn,
    ):
        register_copy_dumpers(copying)
        types = column_types(copying, "semantic_facts", MEMORY_COLUMNS)
        for size in sizes:
            user = f"recall-bench-{size}-{uuid.uuid4().hex[:6]}"
            progress.note(f"{size:,} memories for {user}: copying")
            _fill(copying, user, size, dim, rng, types)
            if vector_index == "hnsw":
                _build_hnsw(conn)
            # As autovacuum leaves a table between bursts of writes: the visibility map set,
            # so the corpus statistics come from the index alone (migration 010).
            conn.execute("VACUUM (ANALYZE) semantic_facts")
            for ranking in rankings:
                stats = _time_recalls(conn, user, dim, rng, ranking)
                progress.note(
                    f"{size:,} memories, {ranking}: p50 {stats['p50']:.1f} ms, "
                    f"p99 {stats['p99']:.1f} ms"
                )
                results.append(
                    {
                        "memories": size,
                        "ranking": ranking,
                        "p50_ms": stats["p50"],
                        "p99_ms": stats["p99"],
                        "queries": QUERIES,
                    }
                )
    return results


def _time_recalls(
    conn: psycopg.Connection, user: str, dim: int, rng: Any, ranking: Ranking
) -> dict[str, float]:
    timings = []
    for asked in range(WARM_UP_QUERIES + QUERIES):
        query = _unit(rng.standard_normal(dim)).astype("<f4").tobytes()
        text = "what about " + " ".join(_words(rng, 6)) + "?"
        started = time.perf_counter()
        found = queries.recall(conn, user, query, k=K, text=text, ranking=ranking)
        if asked >= WARM_UP_QUERIES:
            timings.append((time.perf_counter() - started) * 1000)
        if len(found) != K:
            raise RuntimeError(f"recall returned {len(found)} of {K} for {user}")
    return percentiles(timings)


def measure_ingest(database_url: str, dim: int, rows: int, rounds: int = 3) -> dict[str, Any]:
    """Binary COPY of ``rows`` memories into ``semantic_facts`` as migrated (with recall's
    stored words: the generated ``tsv`` and ``lexemes`` columns and their indexes, migration
    010) and without them (dropped, as before 010): median rows/s of each over ``rounds``
    alternating rounds. Run it on a scratch database: the words are dropped and made again."""
    rng = np.random.default_rng(11)
    rates: dict[str, list[float]] = {"stored_words": [], "plain": []}
    words = _stored_words_sql("semantic_facts")
    with psycopg.connect(database_url, autocommit=True) as conn:
        register_copy_dumpers(conn)
        types = column_types(conn, "semantic_facts", MEMORY_COLUMNS)
        for _ in range(rounds):
            for variant in rates:
                if variant == "plain":
                    conn.execute("ALTER TABLE semantic_facts DROP COLUMN tsv, DROP COLUMN lexemes")
                conn.execute("TRUNCATE semantic_facts")
                built = _rows(f"ingest-{variant}-{uuid.uuid4().hex[:6]}", rows, dim, rng)
                started = time.perf_counter()  # the COPY only, not building its rows
                _copy(conn, built, types)
                rates[variant].append(rows / (time.perf_counter() - started))
                if variant == "plain":
                    conn.execute("TRUNCATE semantic_facts")
                    for statement in words:
                        conn.execute(statement)
        conn.execute("TRUNCATE semantic_facts")
    return {
        "rows": rows,
        "rounds": rounds,
        **{f"{variant}_rows_per_s": float(np.median(r)) for variant, r in rates.items()},
    }


def _stored_words_sql(table: str) -> list[str]:
    """Migration 010's statements for ``table``: what :func:`measure_ingest` drops and makes
    again."""
    sql = (MIGRATIONS_DIR / "010_recall_words.sql").read_text()
    statements = (
        " ".join(line for line in part.splitlines() if not line.startswith("--")).split()
        for part in sql.split(";")
    )
    return [" ".join(words) for words in statements if table in words]


def _build_hnsw(conn: psycopg.Connection) -> None:
    """The HNSW indexes (``projections.schema.vector_indexes``) made again over every row now
    in the tables, with memory enough to build the graph at once (at the 64 MB default a
    50,000-row build spills)."""
    vector_indexes(conn, "none")
    conn.execute("SET maintenance_work_mem = '1GB'")
    vector_indexes(conn, "hnsw")
    conn.execute("RESET maintenance_work_mem")


def _fill(
    conn: psycopg.Connection, user: str, size: int, dim: int, rng: Any, types: list[str]
) -> None:
    _copy(conn, _rows(user, size, dim, rng), types)


def _rows(user: str, size: int, dim: int, rng: Any) -> list[list[Any]]:
    """``size`` memories of ``user`` as the projector's COPY rows."""
    vectors = rng.standard_normal((size, dim)).astype("<f4")
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [
        memory_row(
            Memory(
                f"{user}-m{i}",
                user,
                _turn(rng),
                layer="semantic",
                embedding=vectors[i].tobytes(),
                created_at=CREATED_AT + i,
                valid_at=CREATED_AT + i,
            ),
            1,
        )
        for i in range(size)
    ]


def _copy(conn: psycopg.Connection, rows: list[list[Any]], types: list[str]) -> None:
    with conn.transaction(), conn.cursor() as cur:
        copy_rows(cur, "semantic_facts", MEMORY_COLUMNS, types, rows)


def _words(rng: Any, n: int) -> list[str]:
    return [VOCABULARY[r] for r in rng.choice(len(VOCABULARY), n, p=_WEIGHTS)]


def _turn(rng: Any) -> str:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < TURN_CHARS:
        words.extend(_words(rng, 4))
    return " ".join(words).capitalize()[:TURN_CHARS] + "."


def _unit(vector: Any) -> Any:
    return vector / np.linalg.norm(vector)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.recall_latency",
        description="recall latency per user size and ranking (and the COPY cost of a "
        "stored tsvector column), in a database of its own",
    )
    parser.add_argument("--server-url", required=True, help="a PostgreSQL server's conninfo")
    parser.add_argument("--dim", type=int, default=384, help="embedding dimension")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--ranking", choices=[*RANKINGS, "both"], default="both")
    parser.add_argument(
        "--vector-index",
        choices=["none", "hnsw"],
        default="none",
        help="none: exact cosine over the user's rows (the default); hnsw: the opt-in ANN index",
    )
    parser.add_argument(
        "--ingest",
        type=int,
        default=0,
        help="also COPY this many rows with and without recall's stored words (migration 010)",
    )
    parser.add_argument(
        "--no-save", action="store_true", help="print only, write nothing to bench/results/"
    )
    args = parser.parse_args(argv)
    rankings: tuple[Ranking, ...] = RANKINGS if args.ranking == "both" else (args.ranking,)
    name = f"recall_latency_{uuid.uuid4().hex[:8]}"
    host, source = machine(), source_version()
    url = migrated_database(args.server_url, name, args.dim)
    lines: list[str] = []
    ingest: dict[str, Any] | None = None
    try:
        rows = measure_recall(url, args.dim, tuple(args.sizes), rankings, args.vector_index)
        lines += [row_line(row, args.vector_index) for row in rows]
        print("\n".join(lines))
        if args.ingest:
            ingest = measure_ingest(url, args.dim, args.ingest)
            plain, words = ingest["plain_rows_per_s"], ingest["stored_words_rows_per_s"]
            lines.append(
                f"COPY {ingest['rows']:,} rows (median of {ingest['rounds']}): "
                f"{plain:,.0f} rows/s without recall's stored words, {words:,.0f} rows/s "
                f"with them ({words / plain:.2f}x)"
            )
            print(lines[-1])
    finally:
        with psycopg.connect(args.server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    if not args.no_save:
        command = shlex.join(["python", "-m", "bench.recall_latency", *(argv or sys.argv[1:])])
        results = {
            "benchmark": "recall_latency",
            "date": datetime.now(UTC).date().isoformat(),
            "commit": source,
            "command": command,
            "machine": host,
            "parameters": {"dim": args.dim, "vector_index": args.vector_index, "k": K},
            "rows": rows,
            "ingest": ingest,
        }
        print(f"results written to {save_results(results, lines)}")
    return 0


def row_line(row: dict[str, Any], vector_index: str) -> str:
    """One measured size and ranking as the bench prints it."""
    return (
        f"{row['memories']:>7,} memories  {row['ranking']:<7} {vector_index:<5} "
        f"p50 {row['p50_ms']:7.1f} ms  p99 {row['p99_ms']:7.1f} ms  "
        f"({row['queries']} queries, k={K})"
    )


def save_results(
    results: dict[str, Any], lines: Sequence[str], results_dir: Path = RESULTS_DIR
) -> Path:
    """``results`` and the printed ``lines`` as
    ``recall_latency[-hnsw]-<date>-<commit>.{json,md}`` (the .md headed by the command, the
    commit and the machine, as docs/benchmarks.md cites them); returns the .md."""
    index = results["parameters"]["vector_index"]
    kind = "recall_latency" if index == "none" else f"recall_latency-{index}"
    host = results["machine"]
    report = (
        f"# Recall latency: {results['date']}, commit {results['commit']}\n\n"
        f"`{results['command']}`; {host['cores']} cores ({host['cpu']}), Python "
        f"{host['python']}, load average {host['load_average_at_start']} at start; "
        f"{QUERIES} timed questions per line after {WARM_UP_QUERIES} untimed ones.\n\n"
        "```\n" + "\n".join(lines) + "\n```\n"
    )
    return save_named(kind, results, report, results_dir)


if __name__ == "__main__":
    raise SystemExit(main())
