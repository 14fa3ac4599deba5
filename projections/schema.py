"""Applies the read-model migrations in ``projections/migrations`` once each, in order.

Migrations are plain SQL files named ``NNN_name.sql``; ``{embedding_dim}`` is replaced by the
configured vector dimension (pgvector columns and HNSW indexes need a fixed one). Applied
names are recorded in ``schema_migrations`` so running this again is a no-op.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
from psycopg.conninfo import make_conninfo

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
MIGRATION_LOCK_ID = 0x6D656D73  # "mems": the advisory lock key serialising migrations
LAYER_TABLES: dict[str, str] = {
    "working": "working_memories",
    "episodic": "episodic_events",
    "semantic": "semantic_facts",
    "procedural": "procedural_patterns",
}


def migration_files() -> list[Path]:
    return sorted(MIGRATIONS_DIR.glob("[0-9][0-9][0-9]_*.sql"))


VECTOR_INDEXES = ("none", "hnsw")


def migrate(conninfo: str, embedding_dim: int, vector_index: str = "NONE") -> list[str]:
    """Apply pending migrations, then make the per-layer vector indexes what
    ``vector_index`` asks for; return the migration names applied now."""
    applied_now: list[str] = []
    with psycopg.connect(conninfo, autocommit=True) as conn:
        # Several projectors (or k8s init containers) may start together: one migrates at a
        # time, the others then find nothing left to do.
        conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_ID,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " name text PRIMARY KEY, embedding_dim integer NOT NULL)"
        )
        rows = conn.execute("SELECT name, embedding_dim FROM schema_migrations").fetchall()
        done = {name: dim for name, dim in rows}
        if done and embedding_dim not in set(done.values()):
            raise RuntimeError(
                f"the read models were created with embedding dimension "
                f"{sorted(set(done.values()))}, not {embedding_dim}: set MEMSTREAM_EMBEDDING_DIM "
                f"to match, or drop the database and run `memstream up` again"
            )
        for path in migration_files():
            if path.stem in done:
                continue
            sql = path.read_text().replace("{embedding_dim}", str(int(embedding_dim)))
            with conn.transaction():
                conn.execute(sql)
                conn.execute(
                    "INSERT INTO schema_migrations (name, embedding_dim) VALUES (%s, %s)",
                    (path.stem, embedding_dim),
                )
            applied_now.append(path.stem)
        vector_indexes(conn, vector_index)
    return applied_now


def vector_indexes(conn: psycopg.Connection, kind: str) -> None:
    """``none`` (the default: per-user exact search, see migration 005) drops the HNSW
    indexes; ``hnsw`` creates them (for cross-user scopes or very large users)."""
    kind = kind.lower()
    if kind not in VECTOR_INDEXES:
        raise ValueError(
            f"vector index {kind!r} is not one of {', '.join(VECTOR_INDEXES)}: "
            f"set MEMSTREAM_VECTOR_INDEX to one of them"
        )
    for table in LAYER_TABLES.values():
        index = f"{table}_embedding_hnsw"
        if kind == "hnsw":
            conn.execute(
                f"CREATE INDEX IF NOT EXISTS {index} ON {table} "
                f"USING hnsw (embedding vector_cosine_ops)"
            )
        else:
            conn.execute(f"DROP INDEX IF EXISTS {index}")


def ensure_database(server_conninfo: str, dbname: str) -> str:
    """Create ``dbname`` on the server if it does not exist (CREATE DATABASE cannot run in a
    transaction, hence autocommit); return its connection string (the server's, with
    ``dbname``)."""
    with psycopg.connect(server_conninfo, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (dbname,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{dbname}"')
    return make_conninfo(server_conninfo, dbname=dbname)


def migrated_database(server_conninfo: str, dbname: str, embedding_dim: int) -> str:
    """``dbname`` on the server, created if missing, with the read models migrated; its
    connection string. What a benchmark or a test needs of a fresh database."""
    url = ensure_database(server_conninfo, dbname)
    migrate(url, embedding_dim)
    return url
