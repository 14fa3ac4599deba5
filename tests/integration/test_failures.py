"""Crashes and replays (docs/failure-semantics.md): SIGKILL mid-stream loses nothing and doubles
nothing, and replaying the ledger into empty tables rebuilds identical read models."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)

from memstream.stack.ports import pick_port
from memstream.waiting import wait_until
from projections.schema import migrated_database
from streams.config.kafka_security import confluent_config
from streams.kafka import codec
from tests.support import Pipeline, process_running
from tests.workloads import (
    LINK_QUERY,
    REPORT_QUERY,
    cycle_heavy_workload,
    expected_links,
    expected_reports,
    expected_rows,
    mixed_workload,
)

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
    oracle = pipeline.oracle(events)
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
    replica_url = migrated_database(stack.database_url, replica_db, pipeline.settings.embedding_dim)
    pipeline.settings = pipeline.settings.with_overrides(
        database_url=replica_url,
        projector_group=pipeline.settings.projector_group + "-replay",
        projector_metrics_port=pick_port(None)[0],
    )
    pipeline.start("projector-replay", ["project"])
    pipeline.wait_for_log_count(len(oracle.decisions))
    assert pipeline.dump_tables() == original


def test_a_projector_of_two_processes_killed_mid_stream_loses_and_doubles_nothing(pipeline):
    """Given the projector runs as two processes in one group (MEMSTREAM_PROJECTOR_PROCESSES),
    with a static instance id,
    when its supervisor is SIGKILLed part-way, then its processes die with it;
    and after a restart the read models equal the oracle's, each ledger event logged once,
    with both processes members of the group holding every partition."""
    events = mixed_workload(3000, users=10, seed=17)
    oracle = pipeline.oracle(events)
    pipeline.start("worker")
    two = {"projector_processes": 2, "instance_id": "projector-a"}
    applied_when_killed = _kill_two_processes_mid_stream(pipeline, "projector", two, events)
    pipeline.wait_for_log_count(len(oracle.decisions))

    assert applied_when_killed < len(oracle.decisions)
    assert pipeline.memory_rows() == expected_rows(oracle)
    assert _log_count(pipeline) == len(oracle.decisions)
    settings = pipeline.settings
    members = _group_members(pipeline, settings.projector_group, settings.ledger_topic)
    assert members == {"projector-a-0", "projector-a-1"}


def test_a_worker_of_two_processes_killed_mid_stream_loses_and_doubles_nothing(pipeline):
    """Given the worker runs as two processes in one group (MEMSTREAM_WORKER_PROCESSES), with
    a static instance id, each with its own local store,
    when its supervisor is SIGKILLed part-way through a stream with consolidation cycles,
    then its processes die with it; and after a restart the ledger holds each decision
    once and the read models equal the oracle's, with both processes members of the group
    holding every partition."""
    events = mixed_workload(3000, users=10, seed=29)
    oracle = pipeline.oracle(events)
    pipeline.start("projector")
    two = {"worker_processes": 2, "instance_id": "worker-a"}
    applied_when_killed = _kill_two_processes_mid_stream(pipeline, "worker", two, events)
    pipeline.wait_for_log_count(len(oracle.decisions), timeout=180)

    assert applied_when_killed < len(oracle.decisions)
    ledger = pipeline.read_topic(pipeline.settings.ledger_topic, expected=len(oracle.decisions))
    assert sorted(codec.decode_ledger(m.value()).event_id for m in ledger) == sorted(
        d.event_id for d in oracle.decisions
    )
    assert pipeline.memory_rows() == expected_rows(oracle)
    members = _group_members(pipeline, pipeline.settings.app_id, pipeline.settings.events_topic)
    assert members == {"worker-a-0", "worker-a-1"}
    data = pipeline.workdir / "worker-data"
    assert sorted(p.name for p in data.iterdir() if p.name.startswith("process-")) == [
        "process-0",
        "process-1",
    ]


def _kill_two_processes_mid_stream(pipeline, role: str, two: dict, events) -> int:
    """Start ``role`` (worker or projector) as the two processes ``two`` asks for, publish
    2,000 of ``events``, SIGKILL its supervisor once 200 decisions are applied, see its
    processes die with it, then publish the rest and start it again. Returns the decisions
    applied when it was killed."""
    first = pipeline.start(role, **two)
    children = wait_until(
        lambda: _children(first.pid) if len(_children(first.pid)) == 2 else None,
        timeout=30,
        what=f"the {role}'s two processes",
    )
    _publish(pipeline, events[:2000])
    wait_until(lambda: _log_count(pipeline) >= 200, timeout=120, what=f"the {role} to start")
    first.kill()
    wait_until(
        lambda: not any(process_running(pid) for pid in children),
        timeout=10,
        what=f"the killed {role}'s processes to die with it",
    )
    applied_when_killed = _log_count(pipeline)
    _publish(pipeline, events[2000:])
    pipeline.start(f"{role}-2", **two)
    return applied_when_killed


def _group_members(pipeline, group: str, topic: str) -> set[str | None]:
    """The static ids of ``group``'s members, once they hold every partition of ``topic``."""
    admin = AdminClient(confluent_config(pipeline.settings))

    def members() -> set[str | None] | None:
        description = admin.describe_consumer_groups([group])[group].result()
        held = {
            tp.partition
            for m in description.members
            for tp in (m.assignment.topic_partitions if m.assignment else [])
            if tp.topic == topic
        }
        if len(held) < pipeline.settings.partitions:
            return None
        return {m.group_instance_id for m in description.members}

    return wait_until(members, timeout=30, what=f"group {group} holding all of {topic}")


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as children:
        return [int(child) for child in children.read().split()]


def test_worker_killed_mid_stream_then_restarted_loses_and_doubles_nothing(pipeline):
    """Given the worker is ingesting with exactly-once transactions,
    when it is killed with SIGKILL part-way and restarted (rebuilding its state from the
    ledger), then the ledger holds each decision exactly once and the read models equal
    the oracle's."""
    events = mixed_workload(3000, users=10, seed=23)
    oracle = pipeline.oracle(events)
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
    oracle = pipeline.oracle(events)
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


def test_worker_killed_repeatedly_during_consolidation_cycles_commits_every_input_whole(pipeline):
    """Given a cycle-heavy workload (most inputs end a 20-message conversation window or ask
    for a cycle, so most ledger events belong to cycles of tens of decisions) and a worker
    committing every 0.1 s, where a commit between two sends of one input is likeliest,
    when the worker is SIGKILLed three times while it produces cycles, restarting each time,
    then the ledger holds exactly the oracle's events (none missing, none extra, none twice)
    and the memory rows, links and reports equal the oracle's."""
    events = cycle_heavy_workload(1500, users=12, seed=41)
    oracle = pipeline.oracle(events)
    total = len(oracle.decisions)
    assert pipeline.settings.commit_interval_seconds == 0.1
    assert sum(1 for d in oracle.decisions if d.cycle_id) > total / 2

    _publish(pipeline, events)
    pipeline.start_all()
    for kill, share in enumerate((0.15, 0.4, 0.65)):
        name = "worker" if kill == 0 else f"worker-{kill}"
        wait_until(
            lambda share=share: _log_count(pipeline) >= share * total,
            timeout=240,
            what=f"{share:.0%} of the ledger projected before kill {kill + 1}",
            describe=pipeline.logs,
        )
        pipeline.processes[name].kill()
        pipeline.start(f"worker-{kill + 1}", ["worker"])
    pipeline.wait_for_log_count(total, timeout=300)

    ledger = pipeline.read_topic(pipeline.settings.ledger_topic, expected=total)
    decoded = [(m.partition(), m.offset(), codec.decode_ledger(m.value())) for m in ledger]
    ledger_ids = [event.event_id for _, _, event in decoded]
    assert len(ledger_ids) == len(set(ledger_ids)), _committed_twice(decoded)
    assert sorted(ledger_ids) == sorted(d.event_id for d in oracle.decisions)
    assert _written_in_transactions(decoded), "ledger records were written outside transactions"
    assert pipeline.memory_rows() == expected_rows(oracle)
    assert sorted(pipeline.query(LINK_QUERY), key=repr) == expected_links(oracle)
    assert sorted(pipeline.query(REPORT_QUERY), key=repr) == expected_reports(oracle)
    assert _log_count(pipeline) == total


def _committed_twice(decoded) -> str:
    """Which events are in the ledger twice, where, and as which part of their emission."""
    seen: dict[str, int] = {}
    for _, _, event in decoded:
        seen[event.event_id] = seen.get(event.event_id, 0) + 1
    lines = [
        f"p{partition}@{offset} {event.event_type} {event.emission_index + 1}/"
        f"{event.emission_size} cause={event.causation_id[:8]}"
        for partition, offset, event in decoded
        if seen[event.event_id] > 1
    ]
    return "events committed twice:\n" + "\n".join(lines[:60])


def _written_in_transactions(decoded) -> bool:
    """Transactional records leave a commit marker after each transaction: the offsets of a
    partition's committed records have gaps. Records produced outside any transaction (what
    Faust does for a topic its consumer does not read) are contiguous."""
    by_partition: dict[int, list[int]] = {}
    for partition, offset, _ in decoded:
        by_partition.setdefault(partition, []).append(offset)
    return all(
        any(b > a + 1 for a, b in zip(sorted(offsets), sorted(offsets)[1:], strict=False))
        for offsets in by_partition.values()
        if len(offsets) > 1
    )


def test_a_killed_worker_restarted_with_its_instance_id_resumes_before_the_session_timeout(
    pipeline,
):
    """Given a worker with a static group instance id and a 60 s session timeout, when it is
    SIGKILLed and restarted with the same id, then it takes its partitions back at once:
    new input is processed well before the dead member's session would have expired (with
    dynamic membership the group waits the whole timeout first)."""
    static = {"instance_id": "worker-a", "session_timeout_seconds": 60.0}
    first = mixed_workload(200, users=4, seed=91)
    later = mixed_workload(20, users=4, seed=92)
    pipeline.start("projector")
    pipeline.start("worker", ["worker"], **static)
    _publish(pipeline, first)
    pipeline.wait_for_log_count(len(pipeline.oracle(first).decisions), timeout=120)

    pipeline.processes["worker"].kill()
    pipeline.start("worker-2", ["worker"], **static)
    _publish(pipeline, later)
    expected = len(pipeline.oracle(first + later).decisions)

    # half the session timeout, counted from the restart: a dynamic member could not have
    # been assigned anything yet
    pipeline.wait_for_log_count(expected, timeout=30)


def test_a_ledger_batch_the_broker_refuses_stops_the_worker_before_its_input_commits(
    pipeline,
):
    """Given the ledger topic takes no record batch over 1,000 bytes (a broker refuses such a
    write for good, as it does one its ACLs no longer allow), when the worker processes a
    memory whose stored decision is larger, then aiokafka fails only that batch and keeps
    the transaction open; the worker must not commit the input's offset without its output.
    It stops (exit code 70) before committing, and the input's offset stays uncommitted."""
    settings = pipeline.settings
    admin = AdminClient(confluent_config(settings))
    small = ConfigResource(
        ResourceType.TOPIC,
        settings.ledger_topic,
        incremental_configs=[
            ConfigEntry("max.message.bytes", "1000", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    for future in admin.incremental_alter_configs([small]).values():
        future.result(timeout=30)
    pipeline.start("worker")

    pipeline.publisher.write("refused-user", "a fact the ledger cannot hold", embedding=[0.5] * 384)
    pipeline.publisher.flush()

    worker = pipeline.processes["worker"]
    wait_until(lambda: not worker.alive(), timeout=90, what="the worker to stop")
    assert worker.popen.returncode == 70
    assert "did not land" in worker.log_tail(40)
    assert _committed_offsets(pipeline) == {}


def _committed_offsets(pipeline: Pipeline) -> dict[int, int]:
    """The worker's committed input offsets, by partition (none committed: empty)."""
    settings = pipeline.settings
    consumer = Consumer({**confluent_config(settings), "group.id": settings.app_id})
    try:
        partitions = [TopicPartition(settings.events_topic, p) for p in range(settings.partitions)]
        committed = consumer.committed(partitions, timeout=30)
    finally:
        consumer.close()
    return {tp.partition: tp.offset for tp in committed if tp.offset >= 0}
