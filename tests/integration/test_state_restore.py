"""Worker state at scale (issue 7): a restarted worker restores its partitions from the local
checkpoint plus the state changelog's tail, not by folding the ledger, and still equals the
oracle."""

from __future__ import annotations

import pytest

from memstream.stack.ports import pick_port
from memstream.waiting import wait_until
from streams.engine.model import MemoryEvent
from streams.kafka import codec
from tests.integration.test_failures import _committed_twice
from tests.scenarios import Scenario
from tests.support import Pipeline, scrape
from tests.workloads import (
    BASE_TIME,
    LINK_QUERY,
    cycle_heavy_workload,
    expected_links,
    expected_rows,
)

pytestmark = pytest.mark.integration

LEDGER_EVENTS = 50_000


def a_long_history(users: int = 8) -> list[MemoryEvent]:
    """Each user writes a few memories and then uses them again and again: a ledger of
    50,000 events over a small live state."""
    events: list[MemoryEvent] = []
    for u in range(users):
        s = Scenario(f"long-{u}", namespace="restore")
        for m in range(5):
            s.write(f"m{m}", f"fact {m} of user {u}", layer="semantic", at=BASE_TIME + m)
        events += s.events
    per_user = (LEDGER_EVENTS - len(events)) // users + 1
    for u in range(users):
        s = Scenario(f"long-{u}", namespace="restore-access")
        for i in range(per_user):
            s.access(f"m{i % 5}", at=BASE_TIME + 1_000 + i)
        events += s.events
    return events


def _restores(pipeline: Pipeline, source: str) -> float:
    return sum(
        v
        for (name, labels), v in pipeline.metrics("worker").items()
        if name == "memstream_worker_state_restores_total" and ("source", source) in labels
    )


def test_a_restart_after_50k_ledger_events_restores_from_the_checkpoint_not_the_ledger(pipeline):
    """Given a worker that processed 50,000 inputs (a ledger of 50,000 events), when it is
    SIGKILLed and restarted, then every partition is restored from the local checkpoint and
    the changelog's tail (the restore read far fewer records than the ledger holds, and
    folded no ledger event), and what follows is processed as the oracle says."""
    history = a_long_history()
    late = Scenario("long-0", namespace="restore-late")
    late.write("after", "written after the restart", layer="semantic", at=BASE_TIME + 10**7)
    oracle = pipeline.oracle(history + late.events)
    assert len(oracle.decisions) >= LEDGER_EVENTS

    pipeline.start_all()
    for event in history:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()
    pipeline.wait_for_log_count(len(oracle.decisions) - 1, timeout=400)
    wait_until(
        lambda: pipeline.metric_sum("worker", "memstream_worker_state_checkpoint_pending") == 0,
        timeout=60,
        what="the worker's local checkpoint to catch up",
    )

    pipeline.processes["worker"].kill()
    pipeline.start("worker-2", ["worker"])
    for event in late.events:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()
    pipeline.wait_for_log_count(len(oracle.decisions), timeout=180)

    metrics = pipeline.metrics("worker")
    read = sum(
        v for (n, _), v in metrics.items() if n == "memstream_worker_state_restore_entries_total"
    )
    folded = sum(
        v for (n, _), v in metrics.items() if n == "memstream_worker_state_rebuild_events_total"
    )
    assert _restores(pipeline, "checkpoint") >= 1
    assert _restores(pipeline, "ledger") == 0 and folded == 0
    assert read < LEDGER_EVENTS / 10
    assert pipeline.memory_rows() == expected_rows(oracle)


def test_output_split_over_many_record_batches_lands_whole_and_checkpoints_right(pipeline):
    """Given a worker whose producer's record batches hold 16 KiB (Faust's default; the
    worker's is 512 KiB), so that a partition's share of a batch of inputs (~2 KB ledger
    records and state entries) goes out as several batches in a row, when it processes a
    workload with cycles and
    is then SIGKILLed and restarted, then the read models equal the oracle's, and the
    restart trusts the local checkpoint: the offset it recorded (a batch's first offset +
    its records - 1) is where the last state entry landed, as the restore checks."""
    small = {"producer_batch_bytes": 16_384}
    events = cycle_heavy_workload(300, users=4, seed=31)
    late = Scenario("user-0", namespace="small-batches-late")
    late.write("after", "written after the restart", layer="semantic", at=BASE_TIME + 10**7)
    before = pipeline.oracle(events)
    oracle = pipeline.oracle(events + late.events)
    pipeline.start("projector")
    pipeline.start("worker", ["worker"], **small)
    for event in events:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()
    pipeline.wait_for_log_count(len(before.decisions), timeout=240)
    wait_until(
        lambda: pipeline.metric_sum("worker", "memstream_worker_state_checkpoint_pending") == 0,
        timeout=60,
        what="the worker's local checkpoint to catch up",
    )

    pipeline.processes["worker"].kill()
    pipeline.start("worker-2", ["worker"], **small)
    for event in late.events:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()
    pipeline.wait_for_log_count(len(oracle.decisions), timeout=120)

    assert pipeline.memory_rows() == expected_rows(oracle)
    assert _restores(pipeline, "checkpoint") >= 1
    assert _restores(pipeline, "changelog") == 0 and _restores(pipeline, "ledger") == 0


def test_scale_out_and_a_killed_worker_move_partitions_with_their_state(stack, tmp_path_factory):
    """Given three workers in one group over 12 partitions, running consolidation cycles,
    when a fourth joins and then one of the first three is SIGKILLed mid-stream (so
    partitions move while state is in flight), then the ledger holds exactly the oracle's
    events, the read models equal the oracle's, and the partitions' new owners restored
    their state from the changelog (never from the ledger). Each worker holds only 3 users
    in memory, so users are evicted to the local store and read back throughout."""
    p = Pipeline.create(stack, tmp_path_factory.mktemp("scale"), partitions=12)
    ports: dict[str, int] = {}

    def worker(n: int) -> None:
        name = f"worker-{n}"
        ports[name] = pick_port(None)[0]
        p.start(
            name,
            ["worker"],
            worker_metrics_port=ports[name],
            worker_data_dir=p.workdir / f"worker-data-{n}",
            hot_users=3,  # of ~6 users each: users go cold and are read back all along
        )

    try:
        events = cycle_heavy_workload(2400, users=24, seed=61)
        oracle = p.oracle(events)
        total = len(oracle.decisions)
        thirds = [
            events[: len(events) // 3],
            events[len(events) // 3 : 2 * len(events) // 3],
            events[2 * len(events) // 3 :],
        ]

        def own_partitions(names: list[str]) -> None:
            """Wait until each of ``names`` owns partitions: the scale-out and the kill move
            partitions only from workers that hold some (a worker still joining when the
            first workers had drained the workload was killed owning none)."""
            for name in names:
                wait_until(
                    lambda name=name: _owned(ports[name]) >= 1,
                    timeout=120,
                    what=f"{name} to own partitions",
                    describe=p.logs,
                )

        for n in range(3):
            worker(n)
        own_partitions(["worker-0", "worker-1", "worker-2"])
        p.start("projector")

        _publish(p, thirds[0])
        wait_until(
            lambda: _log_count(p) >= 0.2 * total,
            timeout=240,
            what="20% of the ledger before the fourth worker joins",
            describe=p.logs,
        )
        worker(3)
        own_partitions(["worker-0", "worker-1", "worker-2", "worker-3"])
        _publish(p, thirds[1])
        wait_until(
            lambda: _log_count(p) >= 0.5 * total,
            timeout=300,
            what="50% of the ledger before the kill",
            describe=p.logs,
        )
        p.processes["worker-1"].kill()
        _publish(p, thirds[2])
        p.wait_for_log_count(total, timeout=400)

        ledger = p.read_topic(p.settings.ledger_topic, expected=total)
        decoded = [(m.partition(), m.offset(), codec.decode_ledger(m.value())) for m in ledger]
        ids = [event.event_id for _, _, event in decoded]
        assert len(ids) == len(set(ids)), _committed_twice(decoded) + "\n" + p.logs()
        assert sorted(ids) == sorted(d.event_id for d in oracle.decisions)
        assert p.memory_rows() == expected_rows(oracle)
        assert sorted(p.query(LINK_QUERY), key=repr) == expected_links(oracle)

        alive = [name for name in ports if p.processes[name].alive()]
        restores: dict[str, float] = {}
        for name in alive:
            for (metric, labels), value in scrape(ports[name]).items():
                if metric == "memstream_worker_state_restores_total":
                    source = dict(labels)["source"]
                    restores[source] = restores.get(source, 0) + value
        assert restores.get("ledger", 0) == 0
        assert restores.get("changelog", 0) + restores.get("checkpoint", 0) >= 1
        hot = [
            value
            for name in alive
            for (metric, _), value in scrape(ports[name]).items()
            if metric == "memstream_worker_hot_users"
        ]
        assert hot and max(hot) <= 3 + 24  # the capacity, plus users touched since a checkpoint
        assert (
            sum(
                value
                for name in alive
                for (metric, _), value in scrape(ports[name]).items()
                if metric == "memstream_worker_user_loads_total"
            )
            > 0
        ), "no user was ever read back from the local store"
    finally:
        p.close()


def _publish(pipeline: Pipeline, events: list[MemoryEvent]) -> None:
    for event in events:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()


def _owned(port: int) -> float:
    """The partitions a worker says it owns; 0 until its metrics answer (it is starting)."""
    try:
        return scrape(port).get(("memstream_worker_partitions_assigned", ()), 0)
    except OSError:
        return 0


def _log_count(pipeline: Pipeline) -> int:
    return pipeline.scalar("SELECT count(*) FROM consolidation_log")


def test_rebuild_state_recovers_the_workers_state_from_the_ledger(pipeline):
    """Given a stopped worker whose state changelog is dropped (`memstream rebuild-state`),
    when it starts again, then it rebuilds from the ledger, writes the state back to the
    changelog with its next input, and the next restart restores from the changelog; the
    read models equal the oracle's throughout."""
    from tests.workloads import mixed_workload

    events = mixed_workload(600, users=6, seed=71)
    first, second, third = events[:400], events[400:500], events[500:]
    oracle = pipeline.oracle(events)
    pipeline.start_all()
    _publish(pipeline, first)
    pipeline.wait_for_log_count(len(pipeline.oracle(first).decisions))
    pipeline.processes["worker"].stop()

    dropped = pipeline.cli("rebuild-state", "--yes")
    assert dropped.returncode == 0, dropped.stderr
    pipeline.start("worker-2", ["worker"], worker_data_dir=pipeline.workdir / "fresh-data")
    _publish(pipeline, second)
    pipeline.wait_for_log_count(len(pipeline.oracle(first + second).decisions))
    assert _restores(pipeline, "ledger") >= 1

    pipeline.processes["worker-2"].kill()
    pipeline.start("worker-3", ["worker"], worker_data_dir=pipeline.workdir / "other-data")
    _publish(pipeline, third)
    pipeline.wait_for_log_count(len(oracle.decisions))
    assert _restores(pipeline, "ledger") == 0 and _restores(pipeline, "changelog") >= 1
    assert pipeline.memory_rows() == expected_rows(oracle)
