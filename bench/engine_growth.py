"""``python -m bench.engine_growth``: what an input costs the engine as its users' history
grows, with many users on one worker.

docs/benchmarks.md, 'Pure benchmarks'; issue 7: a cycle's cost must grow with what is new, not with
history. The other pure benchmarks hold one user (``bench.cycle_cost``, ``bench.input_cost``); this
one runs the worker's own path over the throughput workload (``bench.workload``: 50 users, on-write
cycles every 20 messages of a conversation): ``IngestProcessor`` decoding, stepping and
encoding each input, as one worker process does, without Kafka. It prints the engine's
time per input over consecutive slices of the run; flat slices mean the cost does not grow
with the users' history. It found the memo of embedding norms churning once a worker held
more live memories than it did (1,110 µs per input at 800 inputs per user against 382 at
the start, before ``1eebcaa``). Run it with ``OPENBLAS_NUM_THREADS=1``, as ``memstream`` runs
its processes. Not a test: figures go in the README with the commit they ran on.
"""

from __future__ import annotations

import argparse
import time

from bench.workload import encoded_records, written_events
from streams.config.settings import Settings, SettingsError
from streams.ingest_processor import IngestProcessor, Input, partition_for
from streams.runtime.collector import tune_collector
from streams.worker_engine import engine_config

USERS = 50
PARTITIONS = 6  # a worker process's share of the bench's 12 partitions, with two processes
BATCH = 500  # inputs per process_batch call, about what the worker's agent takes at once


def slice_costs(settings: Settings, inputs: int, slices: int) -> list[float]:
    """µs per input of each of ``slices`` consecutive slices of ``inputs`` inputs, the engine
    configured as the worker configures it for ``settings`` (policy, contract limits)."""
    records = encoded_records(written_events(inputs, USERS, settings.embedding_dim))
    batch = [Input(key, value, [], partition_for(key, PARTITIONS)) for key, value in records]
    processor = IngestProcessor(engine_config(settings), partitions=PARTITIONS)
    tune_collector()  # as the worker runs
    size = inputs // slices
    costs = []
    for start in range(0, size * slices, size):
        began = time.perf_counter()
        for at in range(start, start + size, BATCH):
            list(processor.process_batch(batch[at : min(at + BATCH, start + size)]))
        costs.append((time.perf_counter() - began) / size * 1e6)
    return costs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.engine_growth", description=__doc__)
    parser.add_argument("--inputs", type=int, default=40_000, help="inputs in all (50 users)")
    parser.add_argument("--slices", type=int, default=8, help="slices the run is timed in")
    args = parser.parse_args(argv)
    if args.inputs < args.slices or args.slices < 1:
        parser.error("--inputs must be at least --slices, and --slices at least 1")
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        parser.error(str(exc))
    size = args.inputs // args.slices
    print(f"{args.inputs:,} inputs, {USERS} users; µs per input by slice of {size:,}:")
    for number, cost in enumerate(slice_costs(settings, args.inputs, args.slices)):
        per_user = (number + 1) * size // USERS
        print(
            f"  inputs {number * size:>7,}-{(number + 1) * size:<7,} (to {per_user:,} per user)"
            f"  {cost:7.0f} µs"
        )


if __name__ == "__main__":
    main()
