"""``python -m bench.dense_cycle``: a cycle over many facts that are all alike.

A user who wrote the same fact hundreds of times in a week (a bot's status line, a repeated
note) has every pair of those facts above the pattern and duplicate thresholds. The cycle
then groups all of them into one pattern and merges them into one memory: its work is one
decision per fact, and its comparisons must stay matrix products however many pairs there
are. For N facts around one direction (written beforehand, then one manual cycle) this
measures the wall time of the cycle on the pure engine, and the decisions it made. Not a
test: figures go in the README with the commit they ran on.
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

import numpy as np

from streams.engine import ledger
from streams.engine.model import ConsolidationRequested, Memory, MemoryEvent, MemoryWritten
from streams.engine.oracle import OracleRun
from streams.engine.step import EngineConfig

SIZES = (200, 400, 800)
REPEATS = 3
T0 = 1_790_000_000_000
DIM = 384


def _events(count: int, seed: int) -> list[MemoryEvent]:
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(DIM)
    base /= np.linalg.norm(base)
    events = []
    for i in range(count):
        vector = base + 0.12 * rng.standard_normal(DIM) / np.sqrt(DIM)
        vector /= np.linalg.norm(vector)
        memory = Memory(
            f"m{i}",
            "dense-user",
            f"Deploy note {i}: the pipeline ran step {i}",
            layer="semantic",
            embedding=vector.astype("<f4").tobytes(),
        )
        events.append(
            MemoryEvent(
                str(uuid.UUID(int=i + 1)), "dense-user", T0 + i * 1000, MemoryWritten(memory)
            )
        )
    return events


def measure(count: int, seed: int = 1) -> dict[str, float]:
    """The manual cycle's wall time (median of REPEATS) and its patterns and merges."""
    seconds = []
    for _ in range(REPEATS):
        run, config = OracleRun(), EngineConfig()
        for event in _events(count, seed):
            run.feed(event, config)
        request = ConsolidationRequested(force=True)
        cycle = MemoryEvent(str(uuid.UUID(int=10**9)), "dense-user", T0 + count * 1000, request)
        before = len(run.decisions)
        started = time.perf_counter()
        run.feed(cycle, config)
        seconds.append(time.perf_counter() - started)
        decisions = [d.payload for d in run.decisions[before:]]
    return {
        "seconds": statistics.median(seconds),
        "patterns": sum(isinstance(d, ledger.PatternDetected) for d in decisions),
        "merged": sum(isinstance(d, ledger.MemoryMerged) for d in decisions),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.dense_cycle", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    args = parser.parse_args(argv)
    print("| alike facts | manual cycle (median of 3) | patterns | merged |")
    print("|---:|---:|---:|---:|")
    for size in args.sizes:
        row = measure(size)
        print(
            f"| {size:,} | {row['seconds'] * 1000:,.0f} ms | {row['patterns']:.0f} "
            f"| {row['merged']:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
