"""Publish → Kafka → worker → ledger → projector → PostgreSQL, on the real stack (issue 2)."""

from __future__ import annotations

import pytest

from tests.workloads import expected_rows, mixed_workload

pytestmark = pytest.mark.integration


def run_to_the_end(pipeline, events):
    """Start the worker and projector, publish ``events``, wait until the read models hold
    every decision the oracle makes for them; the oracle's replay."""
    oracle = pipeline.oracle(events)
    pipeline.start_all()
    for event in events:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()
    pipeline.wait_for_log_count(len(oracle.decisions))
    return oracle


def test_events_of_ten_users_reach_the_right_tables_with_the_right_versions(pipeline):
    """Given 1,000 mixed events for 10 users published through the publisher,
    when the worker and projector run,
    then every live memory is in its layer's table with the oracle's version, and
    the counters in /metrics match what happened."""
    events = mixed_workload(1000, users=10)
    oracle = run_to_the_end(pipeline, events)

    assert pipeline.memory_rows() == expected_rows(oracle)
    logged = {row[0] for row in pipeline.query("SELECT event_id FROM consolidation_log")}
    assert logged == {d.event_id for d in oracle.decisions}
    assert pipeline.metric_sum("worker", "memstream_events_ingested_total") == oracle.accepted
    assert pipeline.metric_sum("worker", "memstream_ledger_events_total") == len(oracle.decisions)
    assert pipeline.metric_sum("worker", "memstream_events_rejected_total") == 0
    log_rows = pipeline.metrics("projector")[
        ("memstream_projector_rows_total", (("table", "consolidation_log"),))
    ]
    assert log_rows == len(oracle.decisions)


def test_the_projector_reports_its_lag_per_ledger_partition(pipeline):
    """Given a few users' events projected, when the projector has caught up, then it
    exports ``memstream_consumer_lag`` for each ledger partition holding their records, at
    0 (read from the consumer's fetch state, without a broker round trip per partition)."""
    from memstream.waiting import wait_until

    run_to_the_end(pipeline, mixed_workload(100, users=4))
    partitions = {row[0] for row in pipeline.query("SELECT kafka_partition FROM consolidation_log")}

    def ledger_lags() -> dict[str, float]:
        return {
            dict(labels)["partition"]: value
            for (name, labels), value in pipeline.metrics("projector").items()
            if name == "memstream_consumer_lag"
            and dict(labels)["topic"] == pipeline.settings.ledger_topic
        }

    wait_until(
        lambda: {str(p) for p in partitions} <= set(ledger_lags()),
        timeout=30,
        what="the projector to report the lag of every partition it projected",
    )
    assert all(ledger_lags()[str(p)] == 0 for p in partitions)


def test_a_republished_event_is_applied_once(pipeline):
    """Given an event already processed, when a producer retry publishes it again,
    then the worker counts a duplicate and the ledger gets nothing new."""
    events = mixed_workload(20, users=2)
    oracle = run_to_the_end(pipeline, events)

    pipeline.publisher.publish(events[0])
    pipeline.publisher.flush()
    from memstream.waiting import wait_until

    wait_until(
        lambda: pipeline.metric_sum("worker", "memstream_events_duplicate_total") == 1,
        timeout=60,
        what="the duplicate to be counted",
    )
    assert pipeline.scalar("SELECT count(*) FROM consolidation_log") == len(oracle.decisions)
