"""The projector's direct binary COPY dumpers store exactly what the stock psycopg and
pgvector dumpers store (real PostgreSQL + pgvector)."""

from __future__ import annotations

import uuid

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector
from psycopg.types.json import Jsonb

from projections.copy_dumpers import register_copy_dumpers

pytestmark = pytest.mark.integration

TYPES = ["vector", "text[]", "jsonb"]
EMBEDDING = np.array([0.25, -1.5, 3.0e-7, 1e30], dtype="<f4")


def copied(conn: psycopg.Connection, rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """Binary COPY ``rows`` into a fresh temporary table and read them back as text."""
    table = f"dumped_{uuid.uuid4().hex[:8]}"
    conn.execute(f"CREATE TEMP TABLE {table} (n serial, v vector(4), a text[], j jsonb)")
    with conn.cursor().copy(f"COPY {table} (v, a, j) FROM STDIN (FORMAT BINARY)") as copy:
        copy.set_types(TYPES)
        for row in rows:
            copy.write_row(row)
    return conn.execute(f"SELECT v::text, a::text, j::text FROM {table} ORDER BY n").fetchall()


def test_direct_dumpers_store_what_the_stock_dumpers_store(database):
    """Given the values a memory row holds (packed embedding bytes, tuples and lists of
    strings with NULLs and non-ASCII text, empty, nested and non-string-keyed metadata), when
    each is COPYed through the direct dumpers and, converted the stock way, through
    pgvector's and psycopg's, then PostgreSQL holds the same values."""
    tags = [("a", "b c", "ünïcødé", 'quote"s'), (), ("x", None), ("y",)]
    metadata = [
        {"k": "v", "n": "ü"},
        {},
        {"nested": {"list": [1, 2]}},
        {1: "a key that is not a string", "big": 2**70},  # what orjson refuses
    ]
    packed = EMBEDDING.tobytes()
    direct_rows = [(packed, tags[i], metadata[i]) for i in range(len(tags))]
    stock_rows = [(EMBEDDING, list(tags[i]), Jsonb(metadata[i])) for i in range(len(tags))]
    with psycopg.connect(database) as stock, psycopg.connect(database) as direct:
        register_vector(stock)
        register_copy_dumpers(direct)
        assert copied(direct, direct_rows) == copied(stock, stock_rows)
        # numpy vectors, lists and Jsonb wrappers go the direct way too
        assert copied(direct, stock_rows) == copied(stock, stock_rows)
        # what the direct dumpers do not know goes to the stock ones: a vector as a list of
        # floats, a two-dimensional array
        others = [(EMBEDDING.tolist(), [["a", "b"], ["c", "d"]], Jsonb({"k": 1}))]
        assert copied(direct, others) == copied(stock, others)


def test_queries_adapting_by_python_type_keep_the_stock_dumpers(database):
    """Given a connection with the direct dumpers, when bytes and lists are passed as query
    parameters, then they still go as bytea and arrays (the dumpers are for COPY only)."""
    with psycopg.connect(database) as conn:
        register_copy_dumpers(conn)
        row = conn.execute("SELECT pg_typeof(%s)::text, %s::text", (b"\x00\x01", ["a"])).fetchone()
    assert row == ("bytea", "{a}")
