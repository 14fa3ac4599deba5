"""ANALYZE keeps no copy of personal values (migration 014; docs/security.md, "What stays").

pg_statistic's most common values and histogram bounds are copies of a column's values,
and an erasure deletes and vacuums rows, never statistics: a memory's text, its embedding or
a wrapped key sampled there would outlive its forget."""

from __future__ import annotations

import os

import psycopg
import pytest

from projections import schema
from projections.schema import LAYER_TABLES
from tests.support import new_migrated_database

pytestmark = pytest.mark.integration

PERSONAL = {
    **{
        table: ("content", "speaker", "tags", "metadata", "trigger_conditions", "embedding", "tsv")
        for table in LAYER_TABLES.values()
    },
    "user_profiles": ("identity_anchor",),
    "consolidation_reports": ("warnings",),
    "memstream_data_keys": ("wrapped_key",),
    "memstream_memory_keys": ("wrapped_key",),
}
SECRET = "Zebulon hides the boat keys inside the red teapot"


def fill(url: str) -> None:
    """A few users' memories in every layer and their keys, each value distinct, so that
    ANALYZE would keep all of them as histogram bounds."""
    vector = "[" + ",".join(["0.25"] * 384) + "]"
    with psycopg.connect(url, autocommit=True) as conn:
        for table in LAYER_TABLES.values():
            for i in range(40):
                conn.execute(
                    f"INSERT INTO {table} (user_id, memory_id, version, kind, content, "
                    "importance, confidence, emotional_salience, valence, priority, scope, "
                    "created_by, consent, created_at, speaker, tags, metadata, "
                    "trigger_conditions, embedding) VALUES (%s, %s, 1, 'fact', %s, 0.5, 0.8, "
                    "0, 0, 'normal', 'user', 'user', true, now(), %s, %s, %s, %s, %s::vector)",
                    (
                        f"u{i % 4}",
                        f"m{i}",
                        f"{SECRET} {i}",
                        f"Zebulon {i}",
                        [f"tag{i}"],
                        f'{{"where": "teapot {i}"}}',
                        [f"when the boat {i}"],
                        vector,
                    ),
                )
        for i in range(40):
            conn.execute(
                "INSERT INTO memstream_data_keys (key_user_id, master_key_id, wrapped_key) "
                "VALUES (%s, 'local:test', %s)",
                (f"u{i}", os.urandom(60)),
            )
            conn.execute(
                "INSERT INTO memstream_memory_keys (key_user_id, key_memory_id, generation, "
                "wrapped_key) VALUES ('u0', %s, 1, %s)",
                (f"m{i}", os.urandom(60)),
            )
        conn.execute("ANALYZE")


def sampled(url: str) -> dict[str, set[str]]:
    """table -> the columns pg_stats holds statistics of."""
    found: dict[str, set[str]] = {}
    with psycopg.connect(url) as conn:
        for table, column in conn.execute(
            "SELECT tablename, attname FROM pg_stats WHERE schemaname = current_schema()"
        ).fetchall():
            found.setdefault(table, set()).add(column)
    return found


def test_analyze_samples_ids_and_times_but_no_personal_column(stack: object) -> None:
    url = new_migrated_database(stack.database_url)  # type: ignore[attr-defined]
    fill(url)
    stats = sampled(url)
    for table, columns in PERSONAL.items():
        assert not stats.get(table, set()) & set(columns), table
    for table in LAYER_TABLES.values():  # what the planner does use is still sampled
        assert {"user_id", "memory_id", "created_at"} <= stats[table], table
    assert {"key_user_id", "key_memory_id"} <= stats["memstream_memory_keys"]
    with psycopg.connect(url) as conn:
        copies = conn.execute(
            "SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() "
            "AND (histogram_bounds::text LIKE %s OR most_common_vals::text LIKE %s)",
            (f"%{SECRET}%", f"%{SECRET}%"),
        ).fetchone()
    assert copies == (0,)


def test_statistics_sampled_before_the_migration_are_cleared(
    stack: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Given a database migrated up to 013 whose personal columns ANALYZE already sampled,
    when 014 is applied, then those statistics are gone and the ids' stay."""
    files = schema.migration_files()
    monkeypatch.setattr(schema, "migration_files", lambda: [f for f in files if f.stem < "014"])
    url = new_migrated_database(stack.database_url)  # type: ignore[attr-defined]
    fill(url)
    before = sampled(url)
    assert {"content", "embedding", "tsv"} <= before["semantic_facts"]
    assert "wrapped_key" in before["memstream_memory_keys"]
    monkeypatch.setattr(schema, "migration_files", lambda: files)

    assert "014_no_statistics_of_personal_columns" in schema.migrate(url, 384)

    after = sampled(url)
    for table, columns in PERSONAL.items():
        assert not after.get(table, set()) & set(columns), table
    assert {"user_id", "memory_id"} <= after["semantic_facts"]
