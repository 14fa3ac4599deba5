"""Per-user exact vector search is the default physical design; a global HNSW index is
opt-in (docs/read-models.md, 'Tables and how they are written')."""

from __future__ import annotations

import uuid

import psycopg
import pytest

from projections.schema import ensure_database, migrate

pytestmark = pytest.mark.integration


def hnsw_indexes(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%'"
        ).fetchall()
    return {row[0] for row in rows}


def test_the_default_has_no_global_ann_index_and_hnsw_is_opt_in(stack):
    """Given a fresh database, when migrated with the default, then no layer table has an
    HNSW index; when migrated with vector_index=hnsw, each layer table gets one; and back."""
    name = f"v_{uuid.uuid4().hex[:10]}"
    url = ensure_database(stack.database_url, name)

    migrate(url, 384)
    assert hnsw_indexes(url) == set()

    migrate(url, 384, "HNSW")
    assert len(hnsw_indexes(url)) == 4

    migrate(url, 384, "none")
    assert hnsw_indexes(url) == set()

    with pytest.raises(ValueError, match="MEMSTREAM_VECTOR_INDEX"):
        migrate(url, 384, "ivfflat")
