"""``memstream bench``: the six benchmark phases in one run on the local stack (docs/benchmarks.md,
'The pipeline: `memstream bench`').

1. worker throughput   N MemoryWritten → ``memstream worker`` → ledger topic (timed by
                       inputs: its one ``MemoryStored`` per written memory); one process
                       per core (``--worker-processes``)
2. pass-through        the same N records → bare exactly_once Faust agents, as many
                       processes as the worker's → output topic;
                       then, as a diagnostic, the worker on the same memories without
                       conversations: no on-write cycle runs, so the two worker rates
                       split its cost between consolidation and everything else (ingest,
                       state, changelog, transactions). Phases 1 and 2 alternate for
                       ``THROUGHPUT_ROUNDS`` rounds, each on topics of its own; the medians
                       are reported. Each starts on an empty input topic, and its N
                       records are committed in one transaction once its group has formed
                       (bench/group_input.py)
3. projector rate      phase 1's full ledger → ``memstream project`` → a fresh database;
                       the projector (one process per core, ``--projector-processes``)
                       forms its group on an empty ledger topic first, then the ledger is
                       committed to it in one transaction (bench/group_input.py)
4. raw COPY            the rows the projector writes (memory, log, links, reports), binary
                       COPY in batches of its batch size; both rates in ledger events/s.
                       Phases 3 and 4 alternate for ``PROJECTOR_ROUNDS`` rounds, each on a
                       fresh database; the medians are reported
5. latency             worker (as in phase 1, its group formed before the first event) +
                       projector (one process), publish at a fixed rate, time until rows show:
                       at 200 ev/s, at the target (1,000) and, if the pipeline did not
                       hold the target rate within the p99 target (it fell behind, or kept
                       up with a queueing tail), at 80 % of the rate it drained at there
6. recall              MemoryReader.recall latency for users of 1k, 10k and 50k memories

Each phase has fresh topics with the same partition count; the ratios worker/pass-through
and projector/COPY compare numbers measured minutes apart on the same machine. Every
process started here is stopped by pid before returning; topics and databases are kept.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import psycopg
from confluent_kafka import KafkaException

from bench import progress
from bench.baselines import CopyResult, batches_from_ledger, copy_baseline
from bench.cleanup import remove_run
from bench.group_input import input_records, publish_at_once, wait_for_group
from bench.harness import BenchError, Harness, check_alive
from bench.latency import LatencyRun, measure_latency
from bench.measure import (
    Arrivals,
    Rate,
    TopicReader,
    TopicRecord,
    cpu_seconds,
    percentiles,
    scrape_metrics,
    watch_count,
)
from bench.passthrough import passthrough_group
from bench.recall_latency import measure_recall
from bench.report import TARGET_P99_MS, machine, render, save, save_dated, source_version
from bench.workload import encoded_records, new_memories, written_events
from memstream.processes import ManagedProcess
from memstream.publisher import MemoryPublisher, PublishError
from memstream.stack import LocalStack, StackError
from streams.config.settings import Settings
from streams.runtime.worker_processes import process_plans as worker_process_plans

DEFAULT_LATENCY_RATE = 1000.0
DEFAULT_LATENCY_SECONDS = 10.0
POLL_INTERVAL_S = 0.02
# Each latency run measures the pipeline's steady state, after this long a warm-up: a new
# worker's first inputs pay one-off costs (its first batch took 653 ms: imports, the first
# transactions, opening the local store). Until the worker bounded its consumer's fetch wait
# (streams/kafka/fetch_wait.py), its first second of input also came out late, and 2 s of warm-up
# took the first run's p99 at 200 ev/s from 618-1,827 ms to 425 ms.
WARMUP_SECONDS = 2.0
WARMUP_MAX_RATE = 500.0
# Rounds of the projector phase and the COPY baseline, alternating, each on a fresh
# database. Either one alone lasts 0.5-1.6 s, and over seven single-round runs the same
# baseline moved between 36.9k and 59.0k ev/s: one round's ratio said more about the
# machine's moment than about the projector. The medians go into the ratio; every round's
# figures are in the details.
PROJECTOR_ROUNDS = 3
# Rounds of the worker and pass-through phases, alternating, each on topics of its own: the
# pass-through moved between 2,896 and 4,336 ev/s over two stops' runs, and a single pair
# measured minutes apart gave the worker's ratio a spread of 0.35-0.52 on unchanged code.
THROUGHPUT_ROUNDS = 3


@dataclass
class ProjectorRound:
    """One round of phases 3 and 4 on one fresh database."""

    projector: Rate
    metrics: dict[str, float]
    copied: CopyResult
    settings: Settings


def run_bench(
    settings: Settings,
    events: int = 20000,
    users: int = 50,
    partitions: int | None = None,
    latency_rate: float = DEFAULT_LATENCY_RATE,
    latency_seconds: float = DEFAULT_LATENCY_SECONDS,
    keep: bool = False,
    projector_processes: int | None = None,
    worker_processes: int | None = None,
) -> int:
    """Run every phase, print the table, write ``bench/results/latest.json``; then remove the
    run's topics, consumer groups and databases unless ``keep`` or a phase failed (then they
    are kept for inspection; bench/cleanup.py).

    Returns 0 when every phase completed (whether or not the targets were met; the table
    says), 1 when a phase failed, 2 for bad parameters.
    """
    if events < 1 or users < 1 or latency_rate <= 0 or latency_seconds <= 0:
        print("error: --events, --users, --rate and --duration must be positive", file=sys.stderr)
        return 2
    partitions = partitions or settings.partitions
    processes = Processes(
        worker=worker_processes or default_processes(partitions),
        projector=projector_processes or default_processes(partitions),
    )
    for flag, count in (
        ("--worker-processes", processes.worker),
        ("--projector-processes", processes.projector),
    ):
        if not 1 <= count <= partitions:
            print(f"error: {flag} must be 1..{partitions} (the partitions)", file=sys.stderr)
            return 2
    started = time.perf_counter()
    progress.phase(f"memstream bench: {events} events, {users} users, {partitions} partitions")
    try:
        stack = LocalStack(settings).up(progress=progress.note)
    except StackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    harness = Harness(settings, stack, partitions, max(processes.worker, processes.projector))
    progress.note(f"run {harness.run_id}: logs in {harness.workdir / 'logs'}")
    completed = False
    try:
        results = _run_phases(harness, events, users, latency_rate, latency_seconds, processes)
        results["engine_cost"] = _engine_cost()
        completed = True
    except (BenchError, StackError, PublishError, KafkaException, psycopg.Error) as exc:
        print(f"\nerror: {exc}", file=sys.stderr)
        for process in harness.processes:
            print(
                f"--- {process.name} (pid {process.pid}) log {process.log_path}:", file=sys.stderr
            )
            print(process.log_tail(25), file=sys.stderr)
        print(
            "\nThe stack stays up: `memstream status` shows it; rerun the bench once it is "
            "healthy, or `memstream down` and `memstream up` to restart it. The run's topics "
            "and databases are kept for inspection; `memstream bench --clean` removes them.",
            file=sys.stderr,
        )
        return 1
    finally:
        harness.stop_all()
        if completed and not keep:
            remove_run(settings, stack.database_url, harness.run_id)
    results["run"]["seconds"] = round(time.perf_counter() - started, 1)
    table = render(results)
    print(table)
    path = save(results)
    dated = save_dated(results, table, str(results["run"]["source"]))
    print(
        f"results written to {path} and {dated} (+ .json); run logs in {harness.workdir / 'logs'}"
    )
    return 0


def _engine_cost() -> dict[str, Any]:
    """The engine's cost per input on real conversations (RealMem) beside the synthetic
    workload, in this process, embedding with MiniLM: ``bench/engine_cost.py`` (issue 39)."""
    from bench.engine_cost import bench_results  # loads the corpus and the model: only here

    progress.phase("engine cost per input: RealMem and the synthetic workload, MiniLM")
    return bench_results()


@dataclass(frozen=True)
class Processes:
    """How many processes the throughput phases run: the worker's (and the pass-through's,
    the same number) and the projector's."""

    worker: int
    projector: int


def default_processes(partitions: int) -> int:
    """A throughput phase's processes: one per core, as an operator would run the role on
    this machine (streams/runtime/supervisor.py), never more than there are partitions."""
    return max(1, min(os.cpu_count() or 1, partitions))


def _run_phases(
    harness: Harness,
    events: int,
    users: int,
    latency_rate: float,
    latency_seconds: float,
    processes: Processes,
) -> dict[str, Any]:
    base = harness.base
    host = machine()  # before the phases, so the load average is the one they started with
    progress.phase(f"generating {events} MemoryWritten events for {users} users")
    dim = base.embedding_dim
    partitions = harness.partitions
    encoded = input_records(encoded_records(written_events(events, users, dim)), partitions)
    uncycled = input_records(
        encoded_records(written_events(events, users, dim, conversations=False)), partitions
    )
    n_workers = processes.worker

    workers: list[Arrivals] = []
    passthroughs: list[Arrivals] = []
    without_cycles: list[Arrivals] = []
    phase_prefixes: list[str] = []
    worker_settings = harness.pipeline("worker1")  # its ledger is the projector phase's input
    for n in range(1, THROUGHPUT_ROUNDS + 1):
        progress.phase(
            f"[1/6] worker throughput, round {n} of {THROUGHPUT_ROUNDS}: {events} events → "
            f"memstream worker ({n_workers} process(es)) → ledger"
        )
        settings = worker_settings if n == 1 else harness.pipeline(f"worker{n}")
        workers.append(
            _throughput(harness, settings, encoded, "worker", n_workers, keep_records=n == 1)
        )
        progress.phase(
            f"[2/6] baseline, round {n}: bare Faust pass-through agents ({n_workers} "
            f"process(es)), the same {events} records"
        )
        passthrough_settings = harness.pipeline(f"passthrough{n}")
        passthroughs.append(
            _throughput(harness, passthrough_settings, encoded, "passthrough", n_workers)
        )
        progress.phase(
            f"[2/6] diagnostic, round {n}: memstream worker, the same memories without "
            f"conversations (no on-write cycle)"
        )
        uncycled_settings = harness.pipeline(f"nocycles{n}")
        without_cycles.append(
            _throughput(harness, uncycled_settings, uncycled, "worker", n_workers)
        )
        phase_prefixes += [
            settings.topic_prefix,
            passthrough_settings.topic_prefix,
            uncycled_settings.topic_prefix,
        ]
    del encoded, uncycled
    worker = workers[0]

    # the projector and the COPY baseline take the same records: the ledger as phase 1 read it
    ledger, worker.records = worker.records, []
    batches = batches_from_ledger((r.value for r in ledger), base.projector_batch_size)
    rounds: list[ProjectorRound] = []
    for n in range(1, PROJECTOR_ROUNDS + 1):
        progress.phase(
            f"[3/6] projector rate, round {n} of {PROJECTOR_ROUNDS}: the full ledger of "
            f"phase 1 → {processes.projector} projector process(es) → a fresh database"
        )
        settings = harness.fresh_database(
            harness.pipeline(f"projector{n}"), f"bench{harness.run_id}_projector{n}"
        ).with_overrides(projector_processes=processes.projector)
        phase_prefixes.append(settings.topic_prefix)
        projector, projector_metrics = _projector(harness, settings, ledger)
        progress.phase(f"[4/6] baseline, round {n}: raw binary COPY of the rows it wrote")
        copied = copy_baseline(settings.database_url, batches)
        progress.note(f"{copied.rate.per_second:,.0f} ledger events/s of rows into bench_copy_*")
        rounds.append(ProjectorRound(projector, projector_metrics, copied, settings))
    ledger_events = len(ledger)
    del batches, ledger

    # the worker as in phase 1 (the pipeline's rate is the worker's); one projector process,
    # the product's default: at these rates a process of it has ~15x the capacity needed
    e2e_settings = harness.pipeline("e2e", database=True).with_overrides(worker_processes=n_workers)
    latency_runs: list[tuple[float, LatencyRun]] = []
    for rate in latency_rates(latency_rate):
        progress.phase(f"[5/6] end-to-end latency: {rate:.0f} events/s for {latency_seconds:.0f} s")
        latency_runs.append((rate, _latency(harness, e2e_settings, users, rate, latency_seconds)))
    target_rate, latency = next(run for run in latency_runs if run[0] == latency_rate)
    sustainable = sustainable_rate(latency)
    if sustainable is not None:
        progress.phase(
            f"[5/6] end-to-end latency at 80 % of the rate drained at {latency_rate:.0f} events/s "
            f"({latency.drained_rate:.0f} events/s): {sustainable:.0f} "
            f"events/s for {latency_seconds:.0f} s"
        )
        latency_runs.append(
            (sustainable, _latency(harness, e2e_settings, users, sustainable, latency_seconds))
        )

    progress.phase("[6/6] recall latency per user size (1k / 10k / 50k memories)")
    recall_settings = harness.fresh_database(
        base.with_overrides(database_url=harness.stack.database_url),
        f"bench{harness.run_id}_recall",
    )
    recall = measure_recall(recall_settings.database_url, base.embedding_dim)

    rates = {
        "worker": statistics.median(w.rate().per_second for w in workers),
        "passthrough": statistics.median(p.rate().per_second for p in passthroughs),
        "worker_without_cycles": statistics.median(w.rate().per_second for w in without_cycles),
        "projector": statistics.median(r.projector.per_second for r in rounds),
        "copy": statistics.median(r.copied.rate.per_second for r in rounds),
    }
    return {
        "machine": host,
        "parameters": {
            "events": events,
            "users": users,
            "partitions": harness.partitions,
            "commit_interval_seconds": base.commit_interval_seconds,
            "projector_batch_size": base.projector_batch_size,
            "projector_batch_ms": base.projector_batch_ms,
            "projector_processes": processes.projector,
            "worker_processes": processes.worker,
            "embedding_dim": base.embedding_dim,
            "latency_rate": latency_rate,
            "latency_seconds": latency_seconds,
            "poll_interval_ms": POLL_INTERVAL_S * 1000,
        },
        "rates": rates,
        "ratios": {
            "worker_vs_passthrough": rates["worker"] / rates["passthrough"],
            "worker_without_cycles_vs_passthrough": (
                rates["worker_without_cycles"] / rates["passthrough"]
            ),
            "projector_vs_copy": rates["projector"] / rates["copy"],
        },
        "latency": _latency_summary(target_rate, latency_seconds, latency),
        "recall": recall,
        "latency_runs": [
            _latency_summary(rate, latency_seconds, run) for rate, run in latency_runs
        ],
        "details": {
            "worker": {"rounds": [_arrivals_detail(w) for w in workers]},
            "passthrough": {"rounds": [_arrivals_detail(p) for p in passthroughs]},
            "worker_without_cycles": {"rounds": [_arrivals_detail(w) for w in without_cycles]},
            "projector": {
                "rows_per_s_in_write_transactions": _median_or_none(
                    _write_only_rate(r.metrics, ledger_events, processes.projector) for r in rounds
                ),
                "rounds": [
                    {
                        **_rate_detail(r.projector),
                        "metrics": r.metrics,
                        "rows_per_s_in_write_transactions": _write_only_rate(
                            r.metrics, ledger_events, processes.projector
                        ),
                    }
                    for r in rounds
                ],
            },
            "copy": {
                "rounds": [
                    {**_rate_detail(r.copied.rate), "batches": r.copied.batches} for r in rounds
                ]
            },
        },
        "run": {
            "run_id": harness.run_id,
            "source": source_version(),
            "topic_prefixes": [*phase_prefixes, e2e_settings.topic_prefix],
            "databases": [
                *(_dbname(r.settings) for r in rounds),
                _dbname(e2e_settings),
                _dbname(recall_settings),
            ],
            "copy_tables": [r.copied.table for r in rounds],
            "logs": str(harness.workdir / "logs"),
        },
    }


LOW_LATENCY_RATE = 200.0
SUSTAINABLE_SHARE = 0.8


def latency_rates(target: float) -> list[float]:
    """The latency phase's first input rates: 200 ev/s and the target (1,000)."""
    return sorted({LOW_LATENCY_RATE, target})


def sustainable_rate(at_target: LatencyRun) -> float | None:
    """80 % of the rate the pipeline (worker and projector together, on the same cores as
    Kafka and PostgreSQL) drained at the target rate, when the target rate could not be held
    within the latency target: it fell behind, or it kept up with a p99 over the target
    (queueing at near-full load: 545-937 ms in runs that kept up). The 80 % run measures
    the p99 of a pipeline with headroom. None when the target rate was held within it.

    The rate is measured with both processes running, not taken from the worker's own
    throughput phase: run alone, each has the machine to itself."""
    latencies = at_target.latencies_ms
    if at_target.kept_up and latencies and percentiles(latencies)["p99"] < TARGET_P99_MS:
        return None
    return float(round(SUSTAINABLE_SHARE * at_target.drained_rate))


def _latency_summary(rate: float, seconds: float, run: LatencyRun) -> dict[str, Any]:
    return {
        "target_rate": rate,
        "seconds": seconds,
        "achieved_rate": run.achieved_rate,
        "drained_rate": run.drained_rate,
        "kept_up": run.kept_up,
        "events": len(run.latencies_ms),
        "polls": run.polls,
        **{f"{name}_ms": value for name, value in percentiles(run.latencies_ms).items()},
        **_split_at_the_ledger(run),
    }


def _split_at_the_ledger(run: LatencyRun) -> dict[str, Any]:
    """The latency's two parts (``bench.latency``): to the ledger and after it."""
    if not run.to_ledger_ms:
        return {}
    to_ledger = percentiles(run.to_ledger_ms)
    after = percentiles(run.after_ledger_ms)
    return {
        "split": len(run.to_ledger_ms),
        "to_ledger_p50_ms": to_ledger["p50"],
        "to_ledger_p99_ms": to_ledger["p99"],
        "after_ledger_p50_ms": after["p50"],
        "after_ledger_p99_ms": after["p99"],
        "slowest_after_ledger_share": run.slowest_after_ledger(),
    }


def _throughput(
    harness: Harness,
    settings: Settings,
    records: list[TopicRecord],
    kind: str,
    processes: int,
    keep_records: bool = False,
) -> Arrivals:
    """Start ``processes`` of ``kind`` on the empty input topic, commit ``records`` to it once
    their group has formed (bench/group_input.py), time the output first to last record."""
    reader = TopicReader(settings, settings.ledger_topic, harness.partitions)
    try:
        settings = settings.with_overrides(worker_processes=processes)
        if kind == "worker":
            started = [harness.start_memstream("worker", ["worker"], settings)]
            group = settings.app_id
        else:  # agents side by side, each told what the worker's process would be told
            started = [
                harness.start_module(f"passthrough-{p.index}", "bench.passthrough", p.settings)
                for p in worker_process_plans(settings)
            ]
            group = passthrough_group(settings)

        def check() -> None:
            check_alive(started)

        progress.note(
            f"{kind} pid(s) {', '.join(str(p.pid) for p in started)}; waiting for group {group}"
        )
        wait_for_group(settings, group, settings.events_topic, processes, check)
        # the worker's CPU from here to its last output (the pass-through serves no metrics)
        cpu_port = settings.worker_metrics_port if kind == "worker" else None
        cpu_before = None if cpu_port is None else cpu_seconds(cpu_port, processes)
        publish_at_once(settings, settings.events_topic, records)
        progress.note(f"input committed; waiting for its output on {settings.ledger_topic}")
        # The worker writes several ledger records per input (its decisions); the pass-through
        # one. Both are timed by inputs: the worker's one MemoryStored per written memory.
        counting = ("event_type", b"MemoryStored") if kind == "worker" else None
        arrivals = reader.collect(
            len(records), check, "inputs done", keep_records=keep_records, counting=counting
        )
        if cpu_port is not None and cpu_before is not None:
            cpu_after = cpu_seconds(cpu_port, processes)
            arrivals.cpu_seconds = None if cpu_after is None else cpu_after - cpu_before
    finally:
        reader.close()
    for process in started:
        harness.stop(process)
    rate = arrivals.rate()
    progress.note(f"{rate.per_second:,.0f} events/s ({rate.count} records in {rate.seconds:.2f} s)")
    return arrivals


def _projector(
    harness: Harness, settings: Settings, ledger: list[TopicRecord]
) -> tuple[Rate, dict[str, float]]:
    """The projector's rate over ``ledger``, published at once to its group already formed
    (bench/group_input.py), and its metrics summed over its processes."""
    process = harness.start_memstream("projector", ["project"], settings)
    progress.note(f"projector pid {process.pid}; waiting for its group to form")
    wait_for_group(
        settings,
        settings.projector_group,
        settings.ledger_topic,
        settings.projector_processes,
        lambda: check_alive([process]),
    )
    port, processes = settings.projector_metrics_port, settings.projector_processes
    cpu_before = cpu_seconds(port, processes)
    publish_at_once(settings, settings.ledger_topic, ledger)
    progress.note("ledger committed; polling consolidation_log")
    watch = watch_count(
        settings.database_url,
        "SELECT count(*) FROM consolidation_log",
        len(ledger),
        lambda: check_alive([process]),
        "ledger events projected",
        interval=POLL_INTERVAL_S,
    )
    metrics = _projector_metrics(port, processes)
    cpu_after = cpu_seconds(port, processes)
    if cpu_before is not None and cpu_after is not None:
        metrics["cpu_seconds"] = cpu_after - cpu_before  # from ledger committed to projected
    harness.stop(process)
    rate = watch.rate
    progress.note(f"{rate.per_second:,.0f} rows/s ({rate.count} rows in {rate.seconds:.2f} s)")
    return rate, metrics


def _projector_metrics(port: int, processes: int) -> dict[str, float]:
    """The projector's counters summed over its processes (process k serves port + k)."""
    wanted = (
        "memstream_projector_rows_total",
        "memstream_projector_batch_seconds_sum",
        "memstream_projector_batch_seconds_count",
    )
    totals: dict[str, float] = {}
    for k in range(processes):
        try:
            sums = scrape_metrics(port + k)
        except OSError:
            return {}
        for name in wanted:
            if name in sums:
                totals[name] = totals.get(name, 0.0) + sums[name]
    return totals


def _write_only_rate(metrics: dict[str, float], rows: int, processes: int) -> float | None:
    """The rate if only the write transactions took time. The processes write side by side,
    so their summed seconds are divided among them: each wrote its share in its own time."""
    seconds = metrics.get("memstream_projector_batch_seconds_sum")
    return rows * processes / seconds if seconds else None


def _median_or_none(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _latency(
    harness: Harness, settings: Settings, users: int, rate: float, seconds: float
) -> LatencyRun:
    processes: list[ManagedProcess] = [
        harness.start_memstream("e2e-worker", ["worker"], settings),
        harness.start_memstream("e2e-projector", ["project"], settings),
    ]

    def check() -> None:
        check_alive(processes)

    progress.note(f"worker pid {processes[0].pid}, projector pid {processes[1].pid}")
    # a worker of several processes forms its group before the first event: a rebalance
    # while the warm-up or the run publishes would measure the rebalance
    wait_for_group(
        settings, settings.app_id, settings.events_topic, settings.worker_processes, check
    )
    progress.note("worker group formed; warming up")
    dim = settings.embedding_dim
    warmup_rate = min(rate, WARMUP_MAX_RATE)
    warmup_count = max(users, int(warmup_rate * WARMUP_SECONDS))
    # Conversations of its own: continued by the run, the warm-up's messages would bring the
    # users' 20th messages (and cycles) back into step.
    warmup = new_memories(warmup_count, users, dim, seed=101, staggered=True, label="warmup")
    memories = new_memories(max(1, int(rate * seconds)), users, dim, seed=202, staggered=True)
    with MemoryPublisher(settings, source="bench") as publisher:
        measure_latency(
            settings,
            publisher,
            warmup,
            warmup_rate,
            check,
            "warm-up memories visible",
            interval=POLL_INTERVAL_S,
            stall_timeout=180.0,
        )
        run = measure_latency(
            settings,
            publisher,
            memories,
            rate,
            check,
            "memories visible",
            interval=POLL_INTERVAL_S,
        )
    for process in processes:
        harness.stop(process)
    stats = percentiles(run.latencies_ms)
    progress.note(
        f"published at {run.achieved_rate:,.0f} ev/s; p50 {stats['p50']:.0f} ms, "
        f"p99 {stats['p99']:.0f} ms"
    )
    return run


def _arrivals_detail(arrivals: Arrivals) -> dict[str, Any]:
    producer = arrivals.producer_rate()
    return {
        **_rate_detail(arrivals.rate()),
        "first_chunk": arrivals.first_chunk,
        "startup_seconds": round(arrivals.first_at - arrivals.started, 2),
        "producer_timestamp_rate": producer.per_second if producer else None,
    }


def _rate_detail(rate: Rate) -> dict[str, Any]:
    return {
        "per_second": rate.per_second,
        "count": rate.count,
        "seconds": rate.seconds,
        "method": rate.method,
    }


def _dbname(settings: Settings) -> str:
    return psycopg.conninfo.conninfo_to_dict(settings.database_url).get("dbname", "?")  # type: ignore[return-value]
