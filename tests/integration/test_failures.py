"""Crashes and replays (SPEC §8): SIGKILL mid-stream loses nothing and doubles nothing, and
replaying the ledger into empty tables rebuilds identical read models."""

from __future__ import annotations

import pytest
from psycopg.conninfo import make_conninfo

from memstream.stack.ports import pick_port
from memstream.waiting import wait_until
from projections.schema import ensure_database, migrate
from streams import codec
from streams.engine.oracle import replay
from streams.engine.validation import Limits
from tests.support import Pipeline
from tests.workloads import expected_rows, mixed_workload

pytestmark = pytest.mark.integration


def _publish(pipeline: Pipeline, events) -> None:
    for event in events:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()


def _log_count(pipeline: Pipeline) -> int:
    return pipeline.scalar("SELECT count(*) FROM consolidation_log")


def test_projector_killed_mid_stream_then_restarted_loses_and_doubles_nothing(pipeline, stack):
    """Given the projector is applying a stream of events,
    when it is killed with SIGKILL part-way and more events arrive while it is down,
    then after a restart the read models equal the oracle's, each ledger event logged once,
    and a replay of the whole ledger into an empty database yields identical tables."""
    events = mixed_workload(3000, users=10, seed=11)
    oracle = replay(events, Limits())
    pipeline.start_all()

    _publish(pipeline, events[:2000])
    wait_until(lambda: _log_count(pipeline) >= 200, timeout=90, what="the projector to start")
    pipeline.processes["projector"].kill()
    applied_when_killed = _log_count(pipeline)
    _publish(pipeline, events[2000:])
    pipeline.start("projector-2", ["project"])
    pipeline.wait_for_log_count(len(oracle.decisions))

    assert applied_when_killed < len(oracle.decisions)
    assert pipeline.memory_rows() == expected_rows(oracle)
    assert _log_count(pipeline) == len(oracle.decisions)
    original = pipeline.dump_tables()
    pipeline.processes["projector-2"].stop()

    replica_db = f"{pipeline.settings.database_url.split('dbname=')[-1].split()[0]}_replay"
    ensure_database(stack.database_url, replica_db)
    replica_url = make_conninfo(stack.database_url, dbname=replica_db)
    migrate(replica_url, pipeline.settings.embedding_dim)
    pipeline.settings = pipeline.settings.with_overrides(
        database_url=replica_url,
        projector_group=pipeline.settings.projector_group + "-replay",
        projector_metrics_port=pick_port(None)[0],
    )
    pipeline.start("projector-replay", ["project"])
    pipeline.wait_for_log_count(len(oracle.decisions))
    assert pipeline.dump_tables() == original


def test_worker_killed_mid_stream_then_restarted_loses_and_doubles_nothing(pipeline):
    """Given the worker is ingesting with exactly-once transactions,
    when it is killed with SIGKILL part-way and restarted (rebuilding its state from the
    ledger), then the ledger holds each decision exactly once and the read models equal
    the oracle's."""
    events = mixed_workload(3000, users=10, seed=23)
    oracle = replay(events, Limits())
    pipeline.start_all()

    _publish(pipeline, events[:2000])
    wait_until(lambda: _log_count(pipeline) >= 200, timeout=120, what="the worker to start")
    pipeline.processes["worker"].kill()
    _publish(pipeline, events[2000:])
    pipeline.start("worker-2", ["worker"])
    pipeline.wait_for_log_count(len(oracle.decisions), timeout=180)

    ledger = pipeline.read_topic(pipeline.settings.ledger_topic, expected=len(oracle.decisions))
    assert sorted(codec.decode_ledger(m.value()).event_id for m in ledger) == sorted(
        d.event_id for d in oracle.decisions
    )
    assert pipeline.memory_rows() == expected_rows(oracle)
    assert _log_count(pipeline) == len(oracle.decisions)


def test_postgres_restarted_mid_stream_the_projector_recovers_and_loses_nothing(pipeline, stack):
    """Given the projector is applying a stream of events,
    when PostgreSQL stops part-way (and more events arrive) and then comes back,
    then the projector retries with backoff, rewinds to the offsets stored in the database,
    and the read models end equal to the oracle's with every ledger event logged once."""
    from memstream.stack import postgres

    events = mixed_workload(2000, users=10, seed=31)
    oracle = replay(events, Limits())
    pipeline.start_all()
    _publish(pipeline, events[:1000])
    wait_until(lambda: _log_count(pipeline) >= 100, timeout=90, what="the projector to start")

    postgres.stop(stack.pgdata)
    try:
        _publish(pipeline, events[1000:])
        wait_until(
            lambda: pipeline.metric_sum("projector", "memstream_projector_retries_total") >= 2,
            timeout=60,
            what="the projector to retry against the stopped database",
        )
        assert pipeline.processes["projector"].alive()
    finally:
        postgres.start(stack.pgdata)

    pipeline.wait_for_log_count(len(oracle.decisions), timeout=180)
    assert pipeline.memory_rows() == expected_rows(oracle)
    assert _log_count(pipeline) == len(oracle.decisions)
