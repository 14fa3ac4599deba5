"""Runs the Faust worker process: checks the topics, serves /metrics, then runs the app
until SIGTERM/SIGINT, and exits within ``SHUTDOWN_DEADLINE_SECONDS`` of one."""

from __future__ import annotations

import signal
import sys

from faust.worker import Worker as FaustWorker
from prometheus_client import disable_created_metrics, start_http_server

from streams.app import build_app
from streams.config.kafka_security import KafkaAccessError, KafkaSecurityError, probe
from streams.config.settings import Settings
from streams.engine.policy import PolicyError
from streams.runtime.collector import tune_collector
from streams.runtime.stopping import SHUTDOWN_DEADLINE_SECONDS, stop_within


class BoundedStopWorker(FaustWorker):
    """Faust's worker, whose stop on SIGTERM/SIGINT is bounded: Faust waits for every input
    an agent took to be acked ("Wait for streams..."), which a failed agent never does, and
    for the producer's flush, which an unreachable broker holds for up to its request
    timeout. Past the deadline the worker exits without committing (code 70); its inputs
    are processed again from the last commit."""

    def _schedule_shutdown(self, sig: signal.Signals) -> None:
        if not self._signal_stop_time:  # the first signal arms the deadline
            stop_within(SHUTDOWN_DEADLINE_SECONDS, f"{sig.name} received")
        super()._schedule_shutdown(sig)


class TopologyError(RuntimeError):
    """The topics cannot be co-partitioned as the worker requires."""


def check_topics(settings: Settings, timeout: float = 30.0) -> None:
    """The ledger is partitioned like the input (it is the worker's changelog): both must
    exist with the same number of partitions. Refused credentials or TLS fail here, in
    seconds and in words, rather than deep inside Faust."""
    try:
        metadata = probe(settings, timeout=timeout)
    except (KafkaAccessError, KafkaSecurityError) as exc:
        raise TopologyError(str(exc)) from None
    counts = {}
    for name in (settings.events_topic, settings.ledger_topic, settings.deadletter_topic):
        topic = metadata.topics.get(name)
        if topic is None or topic.error is not None:
            raise TopologyError(
                f"topic {name} does not exist: run `memstream up` (local) or create it with "
                f"{settings.partitions} partitions"
            )
        counts[name] = len(topic.partitions)
    if counts[settings.events_topic] != settings.partitions:
        raise TopologyError(
            f"{settings.events_topic} has {counts[settings.events_topic]} partitions but "
            f"MEMSTREAM_PARTITIONS is {settings.partitions}: set it to match the topic"
        )
    if counts[settings.events_topic] != counts[settings.ledger_topic]:
        raise TopologyError(
            f"{settings.events_topic} has {counts[settings.events_topic]} partitions but "
            f"{settings.ledger_topic} has {counts[settings.ledger_topic]}: they must match, "
            f"because each ledger partition is the state of one input partition"
        )


def run_worker(settings: Settings, loglevel: str = "INFO") -> None:
    try:
        check_topics(settings)
    except TopologyError as exc:
        print(f"memstream worker: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    settings.worker_data_dir.mkdir(parents=True, exist_ok=True)
    disable_created_metrics()
    start_http_server(settings.worker_metrics_port, addr=settings.metrics_bind)
    try:
        worker = build_app(settings)
    except (PolicyError, ValueError) as exc:
        print(f"memstream worker: configuration error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    print(
        f"memstream worker: {settings.events_topic} -> {settings.ledger_topic} "
        f"(state: local checkpoint + memory.state changelog; metrics "
        f"{settings.metrics_bind}:{settings.worker_metrics_port}/metrics)",
        flush=True,
    )
    tune_collector()
    BoundedStopWorker(worker.app, loglevel=loglevel).execute_from_commandline()
