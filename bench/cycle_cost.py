"""``python -m bench.cycle_cost``: a consolidation cycle's cost as a user's history grows.

docs/benchmarks.md, 'Pure benchmarks'; issue 7: a cycle's time and its ledger output must grow with
what is new since the user's last cycle, not with how many memories the user has. For users with
100, 1,000 and 10,000 memories (written and consolidated beforehand), this writes 20 new messages to
one conversation (the 20th triggers an on-write cycle under `default`) and measures, on the pure
engine (no Kafka, no Postgres): the wall time of the triggering input, the ledger events the
20 inputs produced, and the state-changelog entries they changed. Not a test: figures go in
the README with the commit they ran on.

``--embedded`` gives every memory an embedding, as the worker records one for each in
production (``MEMSTREAM_EMBEDDER``); without it the engine computes the hashing embedder's
vectors from the content, as it did for these figures before.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import uuid

import numpy as np

from streams.engine.ingest import Accepted
from streams.engine.model import ConsolidationRequested, Memory, MemoryEvent, MemoryWritten
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig, step
from streams.engine.user_state import InMemoryUserState
from streams.state.changelog import changed_entries

SIZES = (100, 1_000, 10_000)
NEW_PER_CYCLE = 20
REPEATS = 3
T0 = 1_790_000_000_000
DAY = 86_400_000
DIM = 384  # the engine's default embedding dimension


def _event(rng: random.Random, user: str, at: int, payload: object) -> MemoryEvent:
    return MemoryEvent(str(uuid.UUID(int=rng.getrandbits(128), version=4)), user, at, payload)  # type: ignore[arg-type]


def _embedding(rng: random.Random, embedded: bool) -> bytes | None:
    """A unit-scale random embedding (packed float32), or none: the engine computes one."""
    if not embedded:
        return None
    seed = rng.getrandbits(32)
    return np.random.default_rng(seed).uniform(-1.0, 1.0, DIM).astype("<f4").tobytes()


def _history(
    size: int, rng: random.Random, config: EngineConfig, embedded: bool
) -> tuple[InMemoryUserState, int]:
    """A user with ``size`` semantic facts, consolidated once (so they are not new)."""
    user = f"bench-{size}"
    state = InMemoryUserState(user)
    at = T0
    for i in range(size):
        memory = Memory(
            f"h{i}",
            user,
            f"Fact {i}: item {rng.randrange(10**6)} at site {i % 97}",
            layer="semantic",
            importance=0.5,
            embedding=_embedding(rng, embedded),
        )
        step(state, _event(rng, user, at, MemoryWritten(memory)), config, user)
        at += 1_000
    step(state, _event(rng, user, at, ConsolidationRequested()), config, user)
    return state, at + DAY


def measure(size: int, config: EngineConfig, embedded: bool = False) -> dict[str, float]:
    rng = random.Random(size)
    state, at = _history(size, rng, config, embedded)
    cycle_seconds: list[float] = []
    ledger_events = entries = 0
    for repeat in range(REPEATS):
        for i in range(NEW_PER_CYCLE):
            memory = Memory(
                f"n{repeat}-{i}",
                state.user_id,
                f"New note {repeat}-{i}",
                layer="working",
                importance=0.9,
                conversation_id=f"c{repeat}",
                embedding=_embedding(rng, embedded),
            )
            event = _event(rng, state.user_id, at, MemoryWritten(memory))
            started = time.perf_counter()
            outcome = step(state, event, config, state.user_id)
            elapsed = time.perf_counter() - started
            at += 1_000
            assert isinstance(outcome, Accepted)
            ledger_events += len(outcome.decisions)
            entries += len(changed_entries(state, event.event_id, outcome.decisions))
            if any(d.cycle_id for d in outcome.decisions):
                cycle_seconds.append(elapsed)
        at += DAY
    inputs = REPEATS * NEW_PER_CYCLE
    return {
        "memories": size,
        "cycle_ms": 1000 * statistics.median(cycle_seconds),
        "ledger_events_per_input": ledger_events / inputs,
        "changelog_entries_per_input": entries / inputs,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.cycle_cost", description=__doc__)
    parser.add_argument(
        "--embedded",
        action="store_true",
        help="give every memory an embedding, as the worker does in production",
    )
    args = parser.parse_args(argv)
    config = EngineConfig(policy=builtin_profile("default"))
    print(
        "memories per user | cycle (ms, median) | ledger events / input | changelog entries / input"
    )
    for size in SIZES:
        row = measure(size, config, args.embedded)
        print(
            f"{row['memories']:>17,} | {row['cycle_ms']:>18.1f} | "
            f"{row['ledger_events_per_input']:>21.2f} | {row['changelog_entries_per_input']:>25.2f}"
        )


if __name__ == "__main__":
    main()
