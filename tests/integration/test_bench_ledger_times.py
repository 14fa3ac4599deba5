"""memstream bench splits each write's latency at the ledger (bench.latency.ledger_times):
every projected ledger event is found at the position consolidation_log recorded, with the
time the worker wrote it, on the real Kafka and PostgreSQL of the local stack."""

from __future__ import annotations

import time

import psycopg
import pytest

from bench.latency import ledger_times
from tests.support import Pipeline
from tests.workloads import mixed_workload

pytestmark = pytest.mark.integration


def test_every_projected_event_is_found_on_the_ledger_when_the_worker_wrote_it(
    pipeline: Pipeline,
) -> None:
    """Given a pipeline that processed 60 writes of three users, when the bench reads back
    the ledger times of every event in consolidation_log, then each is found, written after
    the run began and before the read, and the events of one ledger partition were written
    in the order of their offsets."""
    pipeline.start_all()
    began = time.time()
    events = mixed_workload(60, users=3, seed=39)
    oracle = pipeline.oracle(events)
    for event in events:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()
    pipeline.wait_for_log_count(len(oracle.decisions))
    logged = pipeline.query(
        "SELECT event_id, kafka_partition, kafka_offset FROM consolidation_log "
        "ORDER BY kafka_partition, kafka_offset"
    )

    with psycopg.connect(pipeline.settings.database_url, autocommit=True) as conn:
        written = ledger_times(pipeline.settings, conn, [e for e, _, _ in logged])

    assert set(written) == {e for e, _, _ in logged}
    assert all(began - 1 <= at <= time.time() for at in written.values())
    for partition in {p for _, p, _ in logged}:
        times = [written[e] for e, p, _ in logged if p == partition]
        assert times == sorted(times)
