"""``python -m bench.input_cost``: what one input writes to the state changelog, and what it
costs, as writes pile up between two cycles and a session grows.

docs/benchmarks.md, 'Pure benchmarks'; issue 7: an input's cost must grow with its own work, not
with history. A user here writes 100, 1,000 and 10,000 memories one minute apart into one session,
under `default` with its on-write triggers off (as if only periodic cycles ran, and none fell
due), so no cycle runs and every memory stays among those changed since the user's last
cycle. Measured on the pure engine and the changelog encoding (no Kafka, no Postgres) over
the last 50 inputs: the state entries and bytes each wrote, and the time of the engine
step plus the entries' encoding.
Until the state-changelog changes of this stop the session's entry listed every member and
the user's meta entry every changed memory, and each input re-sent both. Not a test: figures
go in the README with the commit they ran on.
"""

from __future__ import annotations

import random
import statistics
import time
import uuid
from dataclasses import replace

from streams.engine.ingest import Accepted
from streams.engine.model import Memory, MemoryEvent, MemoryWritten
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig, step
from streams.engine.user_state import InMemoryUserState
from streams.runtime.collector import tune_collector
from streams.state.changelog import changed_entries

try:  # the worker's way; older trees (measured for comparison) had no before-input snapshot
    from streams.state.changelog import before_input
except ImportError:  # pragma: no cover - only when run against an older tree
    before_input = None  # type: ignore[assignment]

SIZES = (100, 1_000, 10_000)
MEASURED = 50  # the last inputs of each run
T0 = 1_790_000_000_000
MINUTE = 60_000


def measure(size: int, config: EngineConfig) -> dict[str, float]:
    rng = random.Random(size)
    user = f"bench-{size}"
    state = InMemoryUserState(user)
    entries: list[int] = []
    sizes: list[int] = []
    seconds: list[float] = []
    for i in range(size):
        at = T0 + i * MINUTE
        memory = Memory(
            f"m{i}",
            user,
            f"Note {i}: item {rng.randrange(10**6)} on shelf {i % 97}",
            session_id="s-1",
            created_at=at,
        )
        event = MemoryEvent(
            str(uuid.UUID(int=rng.getrandbits(128), version=4)), user, at, MemoryWritten(memory)
        )
        started = time.perf_counter()
        before = before_input(state) if before_input is not None else None
        outcome = step(state, event, config, user)
        assert isinstance(outcome, Accepted)
        written = (
            changed_entries(state, event.event_id, outcome.decisions, before)
            if before is not None
            else changed_entries(state, event.event_id, outcome.decisions)
        )
        elapsed = time.perf_counter() - started
        if i >= size - MEASURED:
            entries.append(len(written))
            sizes.append(sum(len(e.key) + len(e.value or b"") for e in written))
            seconds.append(elapsed)
    if len(state.facets.changed_ids) != size:
        raise RuntimeError("a cycle ran during the run: the figures would not be between two")
    return {
        "writes": size,
        "changed": len(state.facets.changed_ids),
        "members": len(state.facets.sessions["s-1"].member_ids),
        "entries_per_input": statistics.mean(entries),
        "bytes_per_input": statistics.mean(sizes),
        "input_us": 1e6 * statistics.median(seconds),
    }


def main() -> None:
    tune_collector()  # as the worker runs
    default = builtin_profile("default")
    no_cycles = replace(default, triggers=replace(default.triggers, on_write=False))
    config = EngineConfig(policy=no_cycles)
    print(
        "writes since the last cycle | session members | entries / input | bytes / input | "
        "engine step + entries (µs, median)"
    )
    for size in SIZES:
        row = measure(size, config)
        print(
            f"{row['changed']:>27,} | {row['members']:>15,} | {row['entries_per_input']:>15.2f} | "
            f"{row['bytes_per_input']:>13,.0f} | {row['input_us']:>34.0f}"
        )


if __name__ == "__main__":
    main()
