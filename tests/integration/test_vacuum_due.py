"""The vacuum erasures owe (projections.writer.vacuum_pending, migration 013) on a real
PostgreSQL: it is paid once for every debt written down, one projector at a time, and rewrites
the tables it covers."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from memstream.waiting import wait_until
from projections.writer import (
    VACUUM_LOCK_ID,
    VacuumHeldBack,
    vacuum_owed_for,
    vacuum_pending,
)
from tests.support import Pipeline

pytestmark = pytest.mark.integration


def _owe(database: str, batches: int) -> None:
    with psycopg.connect(database, autocommit=True) as conn:
        for _ in range(batches):
            conn.execute("INSERT INTO memstream_vacuum_due DEFAULT VALUES")


def _file_node(database: str, table: str) -> int:
    with psycopg.connect(database, autocommit=True) as conn:
        row = conn.execute("SELECT pg_relation_filenode(%s::regclass)", (table,)).fetchone()
    assert row is not None
    return int(row[0])


def test_nothing_owed_is_nothing_to_pay(database: str) -> None:
    assert vacuum_owed_for(database) is None
    before = _file_node(database, "semantic_facts")
    assert vacuum_pending(database) == 0
    assert _file_node(database, "semantic_facts") == before  # no rewrite for nothing


def test_every_debt_is_paid_by_one_rewrite_and_then_forgotten(database: str) -> None:
    _owe(database, 3)
    owed_for = vacuum_owed_for(database)
    assert owed_for is not None and owed_for >= 0
    before = _file_node(database, "semantic_facts")
    assert vacuum_pending(database) == 3
    assert _file_node(database, "semantic_facts") != before
    assert vacuum_owed_for(database) is None
    assert vacuum_pending(database) == 0


def test_while_another_projector_vacuums_the_debt_waits(database: str) -> None:
    _owe(database, 1)
    with psycopg.connect(database, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", (VACUUM_LOCK_ID,))
        assert vacuum_pending(database) is None
        assert vacuum_owed_for(database) is not None
    assert vacuum_pending(database) == 1


def _table_file(database: str, table: str) -> bytes:
    """The table's data file as it is on disk (after a checkpoint)."""
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        row = conn.execute(
            "SELECT current_setting('data_directory') || '/' || pg_relation_filepath(%s::regclass)",
            (table,),
        ).fetchone()
    assert row is not None
    return Path(row[0]).read_bytes()


def test_a_rewrite_an_older_transaction_held_back_stays_owed_until_it_ends(
    database: str,
) -> None:
    """Given an erased key row that a transaction begun before the erasure can still see,
    the rewrite keeps the row's bytes, so the vacuum raises naming the table and the debt stays
    owed; once that transaction ends, the next vacuum pays it and the bytes are gone."""
    secret = b"wrapped-key-of-an-erased-user"
    with psycopg.connect(database, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO memstream_data_keys (key_user_id, master_key_id, wrapped_key) "
            "VALUES ('erased-user', 'm1', %s)",
            (secret,),
        )
    older = psycopg.connect(database)
    try:
        older.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        older.execute("SELECT 1")  # its snapshot, taken now, still sees the row; no lock on it
        with psycopg.connect(database, autocommit=True) as conn:
            conn.execute("DELETE FROM memstream_data_keys WHERE key_user_id = 'erased-user'")
        _owe(database, 1)
        with pytest.raises(VacuumHeldBack) as held:
            vacuum_pending(database)
        assert held.value.held == {"memstream_data_keys": 1}
        assert "pg_stat_activity" in str(held.value)
        assert vacuum_owed_for(database) is not None
        assert secret in _table_file(database, "memstream_data_keys")
    finally:
        older.close()
    assert vacuum_pending(database) == 1
    assert vacuum_owed_for(database) is None
    assert secret not in _table_file(database, "memstream_data_keys")


def test_a_running_projector_pays_a_debt_another_left_behind(pipeline: Pipeline) -> None:
    """Given a running projector and a debt written down by another that stopped for good
    (a row in memstream_vacuum_due, none of this projector's batches), then this projector
    finds it and pays it: the row is gone and the user tables have new files."""
    pipeline.start("projector", erasure_vacuum_delay_seconds=0)
    url = pipeline.settings.database_url
    wait_until(  # running: past its start, consuming the ledger
        lambda: "INFO memstream.projector: assigned" in pipeline.processes["projector"].log_tail(),
        timeout=60,
        what="the projector to be assigned the ledger's partitions",
        describe=pipeline.logs,
    )
    before = _file_node(url, "semantic_facts")
    _owe(url, 1)
    wait_until(
        lambda: vacuum_owed_for(url) is None,
        timeout=60,
        what="the projector to pay the debt it found",
        describe=pipeline.logs,
    )
    assert _file_node(url, "semantic_facts") != before
