"""The throughput cost of sealing (issue 43; docs/security.md, 'Erasure'): the worker and the
projector with a master key against the same without one, in one run, as ratios (target:
sealed ≥ 0.85× plain for each).

Each round measures both modes back to back on fresh topics and databases with the same
workload: the worker phase publishes the workload as a service would (sealed by the
publisher's code when sealing is on) and times the ledger; the projector phase replays that
ledger into a fresh database, its keys read from the worker phase's database
(MEMSTREAM_KEYS_DATABASE_URL), as one key store serves every process. The phases are
`memstream bench`'s own (bench/run.py), reused unchanged. Writes
``bench/results/sealing_cost-<date>-<commit>.json`` and ``.md``; every process started here is
stopped by pid, the run's topics and databases are removed unless ``--keep``.

    python -m bench.sealing_cost [--events N] [--users M] [--rounds R] [--keep] [--date D]
"""

from __future__ import annotations

import base64
import json
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import progress
from bench.cleanup import remove_run
from bench.group_input import input_records
from bench.harness import Harness
from bench.report import machine, ratio_bench_main, source_version
from bench.run import _projector, _throughput, default_processes
from bench.workload import written_events
from memstream.stack import LocalStack
from streams.config.settings import Settings
from streams.engine.model import MemoryEvent
from streams.erasure.sealing import sealing_of
from streams.kafka import codec

MODES = ("plain", "sealed")
RESULTS = Path(__file__).resolve().parent / "results"


def encoded(events: list[MemoryEvent], settings: Settings) -> list[tuple[bytes, bytes]]:
    """The workload as the publisher sends it in ``settings``' mode."""
    sealing = sealing_of(settings)
    if sealing is not None:
        try:
            events = sealing.seal_inputs(events)
        finally:
            sealing.close()
    return [(e.user_id.encode(), codec.encode_event(e)) for e in events]


def one_mode(
    harness: Harness, mode: str, events: list[MemoryEvent], round_: int
) -> dict[str, float]:
    processes = default_processes(harness.partitions)
    tag = f"{mode}{round_}"

    progress.phase(f"[{tag}] worker: {len(events)} events, sealing {mode}")
    # a database of its own: the sealed worker's keys, made with this run's master key
    worker_settings = harness.pipeline(f"worker-{tag}", database=True)
    records = input_records(encoded(events, worker_settings), harness.partitions)
    worker = _throughput(harness, worker_settings, records, "worker", processes, True)
    ledger, worker.records = worker.records, []

    progress.phase(f"[{tag}] projector: the worker's {len(ledger)} ledger records")
    projector_settings = harness.fresh_database(
        harness.pipeline(f"projector-{tag}"), f"bench{harness.run_id}_projector_{tag}"
    ).with_overrides(projector_processes=processes)
    # the one key store: the worker phase's database
    projector_settings = projector_settings.with_overrides(
        keys_database_url=worker_settings.database_url
    )
    projector, _ = _projector(harness, projector_settings, ledger)
    rates = {"worker": worker.rate().per_second, "projector": projector.per_second}
    progress.note(f"[{tag}] {json.dumps({k: round(v) for k, v in rates.items()})}")
    return rates


def run(events: int, users: int, rounds: int, keep: bool, date: str) -> dict[str, Any]:
    settings = Settings.from_env()
    stack = LocalStack(settings).up(progress=progress.note)
    master = base64.b64encode(os.urandom(32)).decode("ascii")
    harness = Harness(settings, stack, settings.partitions, default_processes(settings.partitions))
    host = machine()
    workload = written_events(events, users, settings.embedding_dim)
    measured: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
    started = time.perf_counter()
    completed = False
    try:
        for round_ in range(1, rounds + 1):
            for mode in MODES:
                base = harness.base
                key = master if mode == "sealed" else ""
                harness.base = base.with_overrides(master_key=key, master_key_file="")
                try:
                    measured[mode].append(one_mode(harness, mode, workload, round_))
                finally:
                    harness.base = base
        completed = True
    finally:
        harness.stop_all()
        if completed and not keep:
            remove_run(settings, stack.database_url, harness.run_id)
    medians = {
        mode: {k: statistics.median(r[k] for r in got) for k in got[0]}
        for mode, got in measured.items()
    }
    return {
        "benchmark": "sealing_cost",
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
        },
        "seconds": round(time.perf_counter() - started, 1),
        "rates": {m: {k: round(v, 1) for k, v in r.items()} for m, r in medians.items()},
        "worker_sealed_vs_plain": round(
            medians["sealed"]["worker"] / medians["plain"]["worker"], 3
        ),
        "projector_sealed_vs_plain": round(
            medians["sealed"]["projector"] / medians["plain"]["projector"], 3
        ),
        "rounds": measured,
    }


def render(results: dict[str, Any]) -> str:
    p, r = results["parameters"], results["rates"]
    return (
        "\n".join(
            [
                f"# Sealing cost: {results['date']}, commit {results['commit']}",
                "",
                f"{p['events']} MemoryWritten events, {p['users']} users, {p['partitions']} "
                f"partitions, {p['processes']} process(es) per role, {p['rounds']} round(s) "
                f"(medians); {results['machine']['cores']} cores "
                f"({results['machine']['cpu']}), load average "
                f"{results['machine']['load_average_at_start']} at start, "
                f"{results['load_average_at_end']} at end; {results['seconds']} s.",
                "",
                "| role | plain ev/s | sealed ev/s | sealed / plain (≥ 0.85) |",
                "|---|---:|---:|---:|",
                f"| worker | {r['plain']['worker']:,.0f} | {r['sealed']['worker']:,.0f} | "
                f"{results['worker_sealed_vs_plain']:.2f} |",
                f"| projector | {r['plain']['projector']:,.0f} | "
                f"{r['sealed']['projector']:,.0f} | {results['projector_sealed_vs_plain']:.2f} |",
            ]
        )
        + "\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    return ratio_bench_main(argv, "sealing_cost", __doc__, run, render)


if __name__ == "__main__":
    raise SystemExit(main())
