"""The two Avro wire formats in one run (issue 40; docs/benchmarks.md, 'Wire formats'): for
single-object and for Confluent (a Schema Registry id per record, the local Apicurio of
`memstream up --registry`), the throughput ratios `memstream bench` holds memstream to:

- worker ≥ 0.7× a bare Faust pass-through of the same input records,
- projector ≥ 0.5× raw binary COPY of the rows it writes.

Each round runs both formats back to back on fresh topics and databases (the same workload,
encoded in the format under test; the worker writes its ledger in that format too), so the
two are measured minutes apart on the same machine. The phases are `memstream bench`'s own
(bench/run.py), reused unchanged. Writes ``bench/results/wire_formats-<date>-<commit>.json``
and ``.md``; every process started here is stopped by pid, the run's topics and databases are
removed unless ``--keep``.

    python -m bench.wire_formats [--events N] [--users M] [--rounds R] [--keep] [--date D]
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Sequence
from typing import Any

from bench import progress
from bench.baselines import batches_from_ledger, copy_baseline
from bench.cleanup import remove_run
from bench.group_input import input_records
from bench.harness import Harness
from bench.report import machine, ratio_bench_main, source_version
from bench.run import _projector, _throughput, default_processes
from bench.workload import written_events
from memstream.stack import LocalStack
from streams.config.settings import Settings
from streams.engine.model import MemoryEvent
from streams.kafka import codec
from streams.kafka.schema_registry import RegistryClient, contract_registry

FORMATS = ("SINGLE-OBJECT", "CONFLUENT")


def encoded(events: list[MemoryEvent], settings: Settings) -> list[tuple[bytes, bytes]]:
    """The workload as a service in ``settings``' wire format publishes it."""
    registry = contract_registry(settings, writes=("MemoryEvent",))
    return [(e.user_id.encode(), codec.encode_event(e, registry)) for e in events]


def one_format(
    harness: Harness, wire_format: str, events: list[MemoryEvent], round_: int
) -> dict[str, float]:
    base = harness.base
    processes = default_processes(harness.partitions)
    tag = f"{wire_format.lower()}{round_}"

    progress.phase(f"[{tag}] worker: {len(events)} events in the {wire_format} format")
    worker_settings = harness.pipeline(f"worker-{tag}")
    records = input_records(encoded(events, worker_settings), harness.partitions)
    worker = _throughput(harness, worker_settings, records, "worker", processes, True)
    ledger, worker.records = worker.records, []

    progress.phase(f"[{tag}] baseline: bare Faust pass-through of the same records")
    passthrough = _throughput(
        harness, harness.pipeline(f"passthrough-{tag}"), records, "passthrough", processes
    )

    progress.phase(f"[{tag}] projector: the worker's {len(ledger)} ledger records")
    projector_settings = harness.fresh_database(
        harness.pipeline(f"projector-{tag}"), f"bench{harness.run_id}_projector_{tag}"
    ).with_overrides(projector_processes=processes)
    projector, _ = _projector(harness, projector_settings, ledger)
    progress.phase(f"[{tag}] baseline: raw binary COPY of the rows it wrote")
    batches = batches_from_ledger((r.value for r in ledger), base.projector_batch_size)
    copied = copy_baseline(projector_settings.database_url, batches)
    rates = {
        "worker": worker.rate().per_second,
        "passthrough": passthrough.rate().per_second,
        "projector": projector.per_second,
        "copy": copied.rate.per_second,
    }
    progress.note(f"[{tag}] {json.dumps({k: round(v) for k, v in rates.items()})}")
    return rates


def run(events: int, users: int, rounds: int, keep: bool, date: str) -> dict[str, Any]:
    settings = Settings.from_env()
    stack = LocalStack(settings).up(progress=progress.note, registry=True)
    # the COPY baseline decodes the ledger in this process: Confluent ids through the registry
    codec.default_registry().resolver = RegistryClient(stack.schema_registry_url).schema
    harness = Harness(
        settings.with_overrides(schema_registry_url=stack.schema_registry_url),
        stack,
        settings.partitions,
        default_processes(settings.partitions),
    )
    host = machine()
    workload = written_events(events, users, settings.embedding_dim)
    measured: dict[str, list[dict[str, float]]] = {f: [] for f in FORMATS}
    started = time.perf_counter()
    completed = False
    try:
        for round_ in range(1, rounds + 1):
            for wire_format in FORMATS:
                base = harness.base
                harness.base = base.with_overrides(wire_format=wire_format)
                try:
                    measured[wire_format].append(one_format(harness, wire_format, workload, round_))
                finally:
                    harness.base = base
        completed = True
    finally:
        harness.stop_all()
        if completed and not keep:
            remove_run(settings, stack.database_url, harness.run_id)
    return {
        "benchmark": "wire_formats",
        "date": date,
        "commit": source_version(),
        "machine": host,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "parameters": {
            "events": events,
            "users": users,
            "rounds": rounds,
            "partitions": settings.partitions,
            "processes": default_processes(settings.partitions),
            "registry": "Apicurio 2.6.13.Final (local, memstream up --registry)",
        },
        "seconds": round(time.perf_counter() - started, 1),
        "formats": {f: summary(rounds_) for f, rounds_ in measured.items()},
    }


def summary(rounds: list[dict[str, float]]) -> dict[str, Any]:
    medians = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    return {
        "rates": {k: round(v, 1) for k, v in medians.items()},
        "worker_vs_passthrough": round(medians["worker"] / medians["passthrough"], 3),
        "projector_vs_copy": round(medians["projector"] / medians["copy"], 3),
        "rounds": rounds,
    }


def render(results: dict[str, Any]) -> str:
    lines = [
        f"# Wire formats: {results['date']}, commit {results['commit']}",
        "",
        f"{results['parameters']['events']} MemoryWritten events, "
        f"{results['parameters']['users']} users, {results['parameters']['partitions']} "
        f"partitions, {results['parameters']['processes']} process(es) per role, "
        f"{results['parameters']['rounds']} round(s) (medians); "
        f"{results['machine']['cores']} cores ({results['machine']['cpu']}), load average "
        f"{results['machine']['load_average_at_start']} at start, "
        f"{results['load_average_at_end']} at end; {results['seconds']} s.",
        "",
        "| format | worker ev/s | pass-through ev/s | worker / pass-through (≥ 0.7) "
        "| projector ev/s | COPY ev/s | projector / COPY (≥ 0.5) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, got in results["formats"].items():
        r = got["rates"]
        lines.append(
            f"| {name.lower()} | {r['worker']:,.0f} | {r['passthrough']:,.0f} | "
            f"{got['worker_vs_passthrough']:.2f} | {r['projector']:,.0f} | {r['copy']:,.0f} | "
            f"{got['projector_vs_copy']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    return ratio_bench_main(argv, "wire_formats", __doc__, run, render)


if __name__ == "__main__":
    raise SystemExit(main())
