"""``python -m bench.engine_cost``: what one input costs the engine on real conversations,
beside the synthetic workload ``memstream bench`` publishes (issue 39).

The synthetic workload (``bench/workload.py``) is short notes, few session ends, a cycle every
20 messages. Real conversations are long assistant answers, a session end every few turns and
a cycle at each. Here both go through the pure engine the way a worker runs it (no Kafka, no
PostgreSQL): inputs in batches of :data:`BATCH`, the memories written without an embedding
embedded by the worker's embedder in one call per batch (MiniLM by default, as the worker
does: ``streams/worker_engine.py``), then each input stepped under the ``default`` profile,
whose own triggers run the cycles (on write, at each ``SessionEnded``); what a cycle writes
is embedded by the same embedder, counted as the embedder's time, not the engine's.

The real workload is the RealMem personas in the repository (``bench/data/realmem/``, read by
``bench.recall_quality.realmem``): each turn a ``MemoryWritten`` without an embedding (the
user's turns spoken by the persona's first name, the assistant's by the agent), each session
closed by a ``SessionEnded`` a minute after its last turn.

Reported per workload: inputs, cycles, the engine's CPU per input (process time of the
engine steps), the embedder's CPU per input and share, and inputs/s of one process (inputs
over the wall time of embedding and stepping, the worker's two costs per input; decoding and
the changelog are left out). Then where the engine's time goes: each cycle rule's CPU per
input, and the fold (what a step does outside its cycle: ingesting, folding the decisions,
keeping the state's indexes). Timing lives here, never in the tests (the engine reads no
clock). Figures go to ``bench/results/engine-cost-<date>-<commit>.md``.
"""

from __future__ import annotations

import argparse
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import wraps

from bench.recall_quality.realmem import ASSISTANT, Persona, load, persona_names
from bench.workload import written_events
from streams.embedders.factory import embedder_for
from streams.engine import cycle as engine_cycle
from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.ingest import Accepted
from streams.engine.model import Memory, MemoryEvent, MemoryWritten, SessionEnded
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig, step
from streams.engine.user_state import InMemoryUserState
from streams.runtime.collector import tune_collector
from streams.worker_engine import missing_embeddings, with_embedding

BATCH = 64  # inputs embedded in one call, as a worker's batch
DEFAULT_INPUTS = 600  # per persona: the first 600 inputs
DIM = 384
SOURCE = "bench.engine_cost"
SHOWN_MS = 0.01  # rules cheaper than this per input are left out of the table


@dataclass
class Cost:
    """What one workload cost: totals in seconds, per rule in CPU seconds."""

    inputs: int = 0
    cycles: int = 0
    engine_cpu: float = 0.0
    engine_wall: float = 0.0
    embed_cpu: float = 0.0
    embed_wall: float = 0.0
    rules: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    @property
    def engine_ms(self) -> float:
        return 1000 * self.engine_cpu / self.inputs

    @property
    def embed_ms(self) -> float:
        return 1000 * self.embed_cpu / self.inputs

    @property
    def embed_share(self) -> float:
        total = self.engine_cpu + self.embed_cpu
        return self.embed_cpu / total if total else 0.0

    @property
    def inputs_per_second(self) -> float:
        return self.inputs / (self.engine_wall + self.embed_wall)

    @property
    def fold_cpu(self) -> float:
        """The engine's time outside its cycles' rules."""
        return self.engine_cpu - sum(self.rules.values())


def realmem_events(persona: Persona, limit: int) -> list[MemoryEvent]:
    """The persona's first ``limit`` inputs: its turns without embeddings, each session
    closed by a ``SessionEnded``."""
    user = persona.user_id
    events: list[MemoryEvent] = []
    for session in persona.sessions:
        for turn in session.turns:
            agent = turn.side == ASSISTANT
            memory = Memory(
                memory_id=turn.turn_id,
                user_id=user,
                content=turn.text,
                created_by="agent" if agent else "user",
                speaker=None if agent else turn.speaker,
                conversation_id=session.session_id,
                session_id=session.session_id,
                created_at=turn.at,
            )
            events.append(_event(f"w/{turn.turn_id}", user, turn.at, MemoryWritten(memory)))
        ended = SessionEnded(session.session_id, session.session_id)
        events.append(_event(f"end/{session.session_id}", user, session.ended_at, ended))
        if len(events) >= limit:
            break
    return events[:limit]


def synthetic_events(count: int, users: int) -> list[MemoryEvent]:
    """``memstream bench``'s throughput workload, its memories without embeddings (so the
    embedder's share is measured on it too)."""
    return [
        e.with_written(e.payload.memory.evolve(embedding=None))
        if isinstance(e.payload, MemoryWritten)
        else e
        for e in written_events(count, users, DIM)
    ]


def _event(key: str, user: str, at: int, payload: MemoryWritten | SessionEnded) -> MemoryEvent:
    event_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{SOURCE}/{user}/{key}"))
    return MemoryEvent(event_id, user, at, payload, SOURCE)


@contextmanager
def timed_rules(cost: Cost, embedding: Cost) -> Iterator[None]:
    """Each rule of a full cycle timed into ``cost.rules`` (CPU), for the run's length,
    without what it spent embedding (counted in ``embedding``)."""
    original = engine_cycle.OPERATIONS["full"]

    def timing(rule: Callable[[CycleContext], None]) -> Callable[[CycleContext], None]:
        @wraps(rule)
        def timed(context: CycleContext) -> None:
            started, embedded = time.process_time(), embedding.embed_cpu
            try:
                rule(context)
            finally:
                spent = time.process_time() - started - (embedding.embed_cpu - embedded)
                cost.rules[rule.__name__] += spent

        return timed

    engine_cycle.OPERATIONS["full"] = tuple(timing(rule) for rule in original)
    try:
        yield
    finally:
        engine_cycle.OPERATIONS["full"] = original


def measure(events: Sequence[MemoryEvent], config: EngineConfig, embed_name: str) -> Cost:
    """Run ``events`` as a worker would (see the module doc) and account for the time."""
    embedder = embedder_for(embed_name, DIM)
    embedder.embed(["warm up"])  # the model's first call loads it: not an input's cost
    states: dict[str, InMemoryUserState] = {}
    cost = Cost()
    inside = Cost()  # what cycles spend embedding what they write: the embedder's, not theirs

    def embed(texts: Sequence[str]) -> list[bytes]:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return embedder.embed(texts)
        finally:
            inside.embed_wall += time.perf_counter() - wall
            inside.embed_cpu += time.process_time() - cpu

    config = replace(config, embed=embed)  # as the worker's (streams/worker_engine.py)
    with timed_rules(cost, inside):
        for start in range(0, len(events), BATCH):
            batch = events[start : start + BATCH]
            wall, cpu = time.perf_counter(), time.process_time()
            vectors = missing_embeddings(batch, embedder)
            batch = [with_embedding(e, v) for e, v in zip(batch, vectors, strict=True)]
            cost.embed_wall += time.perf_counter() - wall
            cost.embed_cpu += time.process_time() - cpu
            wall, cpu = time.perf_counter(), time.process_time()
            for event in batch:
                state = states.setdefault(event.user_id, InMemoryUserState(event.user_id))
                outcome = step(state, event, config, event.user_id)
                assert isinstance(outcome, Accepted), outcome
                cost.cycles += sum(
                    isinstance(d.payload, ledger.ConsolidationCompleted) for d in outcome.decisions
                )
            cost.engine_wall += time.perf_counter() - wall
            cost.engine_cpu += time.process_time() - cpu
            cost.inputs += len(batch)
    cost.engine_cpu -= inside.embed_cpu
    cost.engine_wall -= inside.embed_wall
    cost.embed_cpu += inside.embed_cpu
    cost.embed_wall += inside.embed_wall
    return cost


def report(name: str, cost: Cost) -> list[str]:
    lines = [
        f"**{name}**: {cost.inputs:,} inputs, {cost.cycles} cycles; engine "
        f"{cost.engine_ms:.2f} ms CPU / input; embedder {cost.embed_ms:.2f} ms CPU / input "
        f"({100 * cost.embed_share:.0f} % of the two); {cost.inputs_per_second:.0f} inputs/s "
        "per process",
        "",
        "| where the engine's time goes | ms CPU / input | share |",
        "|---|---:|---:|",
    ]
    parts = sorted(cost.rules.items(), key=lambda item: -item[1])
    parts.append(("fold, ingest and indexes (outside the rules)", cost.fold_cpu))
    for part, seconds in parts:
        if 1000 * seconds / cost.inputs >= SHOWN_MS or part.startswith("fold"):
            share = seconds / cost.engine_cpu if cost.engine_cpu else 0.0
            lines.append(f"| {part} | {1000 * seconds / cost.inputs:.2f} | {100 * share:.0f} % |")
    return lines


BENCH_PERSONAS = ("Kenta_Tanaka",)  # what `memstream bench` replays (the reference)
BENCH_SYNTHETIC = 2_000


def bench_results(embed_name: str = "minilm") -> dict[str, dict[str, float]]:
    """The section ``memstream bench`` reports: both workloads' cost per input, measured in
    process as above (``BENCH_PERSONAS``' first ``DEFAULT_INPUTS`` inputs)."""
    config = EngineConfig(policy=builtin_profile("default"))
    real = Cost()
    for name in BENCH_PERSONAS:
        _add(real, measure(realmem_events(load(name), DEFAULT_INPUTS), config, embed_name))
    synthetic = measure(synthetic_events(BENCH_SYNTHETIC, 10), config, embed_name)
    return {"synthetic": summary(synthetic), "realmem": summary(real)}


def summary(cost: Cost) -> dict[str, float]:
    return {
        "inputs": cost.inputs,
        "cycles": cost.cycles,
        "engine_ms_per_input": round(cost.engine_ms, 3),
        "embed_ms_per_input": round(cost.embed_ms, 3),
        "embed_share": round(cost.embed_share, 3),
        "inputs_per_second": round(cost.inputs_per_second, 1),
        "writers_ms_per_input": round(
            1000 * sum(cost.rules.get(rule, 0.0) for rule in WRITERS) / cost.inputs, 3
        ),
        "contradictions_ms_per_input": round(
            1000 * cost.rules.get("detect_contradictions", 0.0) / cost.inputs, 3
        ),
    }


WRITERS = ("consolidate_ended_sessions", "summarize_episodes", "synthesize_profile")
"""The rules whose cost is the built-in writers' (observations, narratives, digests,
summaries, the profile)."""


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.engine_cost", description=__doc__)
    parser.add_argument("--personas", nargs="*", default=None, help="default: all in the repo")
    parser.add_argument("--inputs", type=int, default=DEFAULT_INPUTS, help="per persona")
    parser.add_argument("--synthetic", type=int, default=2_000, help="inputs (0: skip)")
    parser.add_argument("--embedder", default="minilm", help="minilm or hashing")
    args = parser.parse_args(argv)
    tune_collector()  # as the worker runs
    config = EngineConfig(policy=builtin_profile("default"))
    print(f"embedder: {args.embedder}; batches of {BATCH}; profile default\n")
    if args.synthetic:
        cost = measure(synthetic_events(args.synthetic, 10), config, args.embedder)
        print("\n".join(report("synthetic (memstream bench's workload)", cost)), "\n")
    real = Cost()
    for name in args.personas or persona_names():
        cost = measure(realmem_events(load(name), args.inputs), config, args.embedder)
        print("\n".join(report(f"RealMem {name}, first {args.inputs} inputs", cost)), "\n")
        _add(real, cost)
    print("\n".join(report("RealMem, all personas above", real)))


def _add(total: Cost, cost: Cost) -> None:
    total.inputs += cost.inputs
    total.cycles += cost.cycles
    total.engine_cpu += cost.engine_cpu
    total.engine_wall += cost.engine_wall
    total.embed_cpu += cost.embed_cpu
    total.embed_wall += cost.embed_wall
    for rule, seconds in cost.rules.items():
        total.rules[rule] += seconds


if __name__ == "__main__":
    main()
