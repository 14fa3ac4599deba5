"""bench.recall_latency against the stack's real PostgreSQL: each ranking recalls k memories of
a user of each size, over the exact scan or the opt-in HNSW index it builds."""

from __future__ import annotations

import psycopg
import pytest

from bench import recall_latency

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("vector_index", ["none", "hnsw"])
def test_every_ranking_is_timed_on_each_user_size(database: str, vector_index: str) -> None:
    rows = recall_latency.measure_recall(
        database, 384, sizes=(60, 120), rankings=("vector", "hybrid"), vector_index=vector_index
    )
    assert [(r["memories"], r["ranking"]) for r in rows] == [
        (60, "vector"),
        (60, "hybrid"),
        (120, "vector"),
        (120, "hybrid"),
    ]
    assert all(0 < r["p50_ms"] <= r["p99_ms"] for r in rows)
    with psycopg.connect(database) as conn:
        definitions = [
            d
            for (d,) in conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE tablename = 'semantic_facts'"
            )
        ]
    assert any("USING hnsw" in d for d in definitions) == (vector_index == "hnsw")
