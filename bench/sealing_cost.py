"""The throughput cost of sealing (issue 43; docs/security.md, 'Erasure'): the worker and the
projector with a master key against the same without one, in one run, as ratios (target:
sealed ≥ 0.85× plain for each). Sealed twice: with per-memory keys (``memory``, the default,
which lets forgetting one memory erase it) and with the user's key alone (``user``), so the
run also gives the price of per-memory keys against per-user sealing. A third phase times what
a publisher (and so the HTTP API) pays per write, one write at a time, in each sealed mode.

Each round measures the three modes back to back, each round starting one mode further on
(:func:`in_turn`), on fresh topics and databases with the same workload, each timed phase
after a checkpoint (:func:`checkpoint`): the worker phase publishes the workload as a service
would (sealed by the publisher's code when sealing is on) and times the ledger; the projector
phase replays that ledger into a fresh database, its keys read from the worker phase's database
(MEMSTREAM_KEYS_DATABASE_URL), as one key store serves every process. The phases are
`memstream bench`'s own (bench/run.py), reused unchanged. Writes
``bench/results/sealing_cost-<date>-<commit>.json`` and ``.md``; every process started here is
stopped by pid, the run's topics and databases are removed unless ``--keep``.

    python -m bench.sealing_cost [--events N] [--users M] [--rounds R] [--keep] [--date D]

By default 60,000 events and 4 rounds (~11 minutes here): at 10,000 the projector's phase
lasted under a second and its rounds went from 0.56 to 1.26 of plain within one run; at
60,000 its phase lasts ~4 s, the worker's ~26 s, and the rounds 0.74 to 1.02
(docs/benchmarks.md, "Sealing cost").
"""

from __future__ import annotations

import base64
import contextlib
import gc
import json
import os
import statistics
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import psycopg

from bench import progress
from bench.cleanup import remove_run
from bench.engine_cost import realmem_events
from bench.group_input import input_records
from bench.harness import Harness
from bench.recall_quality.realmem import load, persona_names
from bench.report import machine, ratio_bench_main, source_version
from bench.run import _projector, _throughput, default_processes
from bench.workload import written_events
from memstream.stack import LocalStack
from streams.config.settings import Settings
from streams.engine.embedder import hashing_embedding
from streams.engine.model import MemoryEvent, MemoryWritten
from streams.erasure.sealing import sealing_of
from streams.ingest_processor import IngestProcessor, Input
from streams.kafka import codec
from streams.worker_engine import engine_config

MODES = ("plain", "user", "memory")
EVENTS = 60_000  # --events by default (module doc: shorter phases measure mostly noise)
ROUNDS = 4
PUBLISHED_ONE_BY_ONE = 1000  # writes the publisher phase seals one at a time, per mode
IN_PROCESS_INPUTS = 3000  # inputs of the in-process phase, per mode and round
IN_PROCESS_BATCH = 200  # inputs per process_batch call (a worker's batch)
OPENED_BATCH = 500  # ledger records opened per batch (a projector's)
REAL_PERSONAS = 2  # RealMem personas of the in-process phase on real conversations ...
REAL_INPUTS = 600  # ... and the inputs of each (its first turns and session ends)


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

    progress.phase(f"[{tag}] worker: {len(events)} events, sealing: {mode}")
    # a database of its own: the sealed worker's keys, made with this run's master key
    worker_settings = harness.pipeline(f"worker-{tag}", database=True)
    records = input_records(encoded(events, worker_settings), harness.partitions)
    checkpoint(harness)
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
    checkpoint(harness)
    projector, metrics = _projector(harness, projector_settings, ledger)
    rates = {"worker": worker.rate().per_second, "projector": projector.per_second}
    # CPU per event of the role's processes, where their metrics say it (Linux)
    if worker.cpu_seconds is not None:
        rates[CPU_KEYS["worker"]] = worker.cpu_seconds / len(events) * 1e6
    if "cpu_seconds" in metrics:
        rates[CPU_KEYS["projector"]] = metrics["cpu_seconds"] / len(ledger) * 1e6
    progress.note(f"[{tag}] {json.dumps({k: round(v) for k, v in rates.items()})}")
    return rates


CPU_KEYS = {"worker": "worker_cpu_us", "projector": "projector_cpu_us"}
"""A phase's CPU per event (µs) in a mode's results: per input for the worker, per ledger
record for the projector."""


def in_turn(round_: int) -> tuple[str, ...]:
    """The modes in the order round ``round_`` (from 1) runs them: each round starts one
    further on, so no mode is always measured last, after the others' writes (a fixed order
    put memory keys last in every round, where the database's write-back of the two phases
    before it lands)."""
    start = (round_ - 1) % len(MODES)
    return MODES[start:] + MODES[:start]


def checkpoint(harness: Harness) -> None:
    """Write the database's dirty pages back before a timed phase, so each phase starts from
    the same state instead of paying for the write-back of the phases before it (as pgbench's
    documentation advises before each run)."""
    with psycopg.connect(harness.stack.database_url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")


PUBLISHING_THREADS = 8  # concurrent writers, as the HTTP API's request threads


def publisher_cost(settings: Settings, events: list[MemoryEvent]) -> dict[str, float]:
    """What a publisher pays to seal writes one at a time, as the HTTP API does (with memory
    keys, each write's key is a committed row): µs per write from one thread, and writes/s
    from :data:`PUBLISHING_THREADS` threads sharing one publisher (and its key store's
    commits: ``sealing._GroupCommit``)."""
    sealing = sealing_of(settings)
    assert sealing is not None
    try:
        half = len(events) // 2
        started = time.perf_counter()
        for event in events[:half]:
            sealing.seal_inputs([event])
        serial_us = (time.perf_counter() - started) / half * 1e6
        rest = events[half:]
        chunks = [rest[i::PUBLISHING_THREADS] for i in range(PUBLISHING_THREADS)]

        def seal_all(chunk: list[MemoryEvent]) -> None:
            for event in chunk:
                sealing.seal_inputs([event])

        threads = [threading.Thread(target=seal_all, args=(c,)) for c in chunks]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        concurrent = len(rest) / (time.perf_counter() - started)
        return {"us_per_write": round(serial_us, 1), "writes_per_s_concurrent": round(concurrent)}
    finally:
        sealing.close()


def in_process(
    settings: Settings, master: str, events: list[MemoryEvent], rounds: int
) -> dict[str, dict[str, float]]:
    """Per mode, the median over ``rounds`` of: the worker's inputs/s through
    ``process_batch`` (keys in ``settings``' database, made durable once per batch as the
    worker does), and the records/s of decoding its ledger and opening it as the projector
    does (a batch's memory keys read first). Each mode and round writes as users of its own,
    so every key is made as it would be for new memories."""
    rates: dict[str, dict[str, list[float]]] = {m: {"worker": [], "opened": []} for m in MODES}
    # An untimed pass first: what cycles write is the same text in every mode, and its
    # embeddings are cached after the first (else the first mode measured pays for them).
    warm = IngestProcessor(engine_config(settings.with_overrides(master_key="")))
    for i in range(0, len(events), IN_PROCESS_BATCH):
        warm.process_batch(
            _inputs(encoded(_as_users(events[i : i + IN_PROCESS_BATCH], "-w"), settings))
        )
    for round_ in range(1, rounds + 1):
        for mode in in_turn(round_):
            progress.note(f"[in process {mode}{round_}] {len(events)} inputs")
            mode_settings = settings.with_overrides(
                master_key="" if mode == "plain" else master,
                master_key_file="",
                erasure_keys="USER" if mode == "user" else "MEMORY",
            )
            written = _as_users(events, f"-{mode}{round_}")
            records = encoded(written, mode_settings)
            sealing = sealing_of(mode_settings, deferred=True)
            processor = IngestProcessor(engine_config(mode_settings), sealing=sealing)
            ledger: list[bytes] = []
            with _no_gc():  # the bench's own heap is large: a full collection is not sealing
                started = time.perf_counter()
                for i in range(0, len(records), IN_PROCESS_BATCH):
                    batch = _inputs(records[i : i + IN_PROCESS_BATCH])
                    for emission in processor.process_batch(batch):
                        ledger.extend(r.value for r in emission.ledger)
                rates[mode]["worker"].append(len(records) / (time.perf_counter() - started))
            if sealing is not None:
                sealing.close()
            reader = sealing_of(mode_settings)
            with _no_gc():
                started = time.perf_counter()
                for i in range(0, len(ledger), OPENED_BATCH):
                    decoded = [codec.decode_ledger(v) for v in ledger[i : i + OPENED_BATCH]]
                    if reader is not None:
                        _open_as_the_projector(reader, decoded)
                rates[mode]["opened"].append(len(ledger) / (time.perf_counter() - started))
            if reader is not None:
                reader.close()
    return {
        mode: {role: statistics.median(values) for role, values in got.items()}
        for mode, got in rates.items()
    }


def real_conversations(inputs: int, personas: int) -> list[MemoryEvent]:
    """The first ``inputs`` inputs of the first ``personas`` RealMem personas in the repository
    (turns and session ends, ``bench.engine_cost``'s), in time order, each turn carrying the
    engine's hashing embedding: the worker would embed a turn with MiniLM (~80 ms of CPU for
    a long answer), which would hide every other cost; here the engine's cycles and the
    sealing of their long texts are what is timed."""
    events = [e for name in persona_names()[:personas] for e in realmem_events(load(name), inputs)]
    embedded = [
        e.with_written(
            e.payload.memory.evolve(embedding=hashing_embedding(e.payload.memory.content))
        )
        if isinstance(e.payload, MemoryWritten)
        else e
        for e in events
    ]
    return sorted(embedded, key=lambda e: e.occurred_at)


def _inputs(records: list[tuple[bytes, bytes]]) -> list[Input]:
    return [Input(key, value, [], 0) for key, value in records]


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector off while timing (as ``timeit`` does), after a full
    collection: a pass over the bench's whole heap would otherwise land in some mode's time."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _open_as_the_projector(reader: Any, decoded: list[Any]) -> None:
    """What ``Projector._open_all`` does with a batch (its key-store waits aside)."""
    reader.new_batch()
    reader.prefetch_ledger(decoded)
    for event in decoded:
        if not reader.open_decoded(event):
            reader.open_ledger_keeping(event)


def _as_users(events: list[MemoryEvent], suffix: str) -> list[MemoryEvent]:
    """``events`` written by users of their own (each user id with ``suffix``)."""
    renamed = []
    for event in events:
        user = event.user_id + suffix
        payload = event.payload
        if isinstance(payload, MemoryWritten):
            event = event.with_written(payload.memory.evolve(user_id=user))
        renamed.append(replace(event, user_id=user))
    return renamed


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
            for mode in in_turn(round_):
                base = harness.base
                key = "" if mode == "plain" else master
                harness.base = base.with_overrides(
                    master_key=key,
                    master_key_file="",
                    erasure_keys="USER" if mode == "user" else "MEMORY",
                )
                try:
                    measured[mode].append(one_mode(harness, mode, workload, round_))
                finally:
                    harness.base = base
        progress.phase(f"publisher: {PUBLISHED_ONE_BY_ONE} writes sealed one at a time")
        keys_at = harness.pipeline("publisher", database=True)
        one_by_one = written_events(PUBLISHED_ONE_BY_ONE, users, settings.embedding_dim)
        publisher = {
            mode: publisher_cost(
                keys_at.with_overrides(
                    master_key=master, master_key_file="", erasure_keys=mode.upper()
                ),
                one_by_one,
            )
            for mode in ("user", "memory")
        }
        progress.phase("in one process: the worker's batches, then opening their ledger")
        alone = in_process(
            harness.pipeline("in-process", database=True),
            master,
            workload[:IN_PROCESS_INPUTS],
            rounds,
        )
        progress.phase("in one process, real conversations (RealMem)")
        real = real_conversations(REAL_INPUTS, REAL_PERSONAS)
        alone_real = in_process(
            harness.pipeline("in-process-real", database=True), master, real, rounds
        )
        completed = True
    finally:
        harness.stop_all()
        if completed and not keep:
            remove_run(settings, stack.database_url, harness.run_id)
    medians = {  # of what every round measured (CPU: where the processes' metrics say it)
        mode: {k: statistics.median(r[k] for r in got) for k in set.intersection(*map(set, got))}
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
        "ratios": {
            f"{role}_{a}_vs_{b}": round(medians[a][role] / medians[b][role], 3)
            for role in ("worker", "projector")
            for a, b in (("memory", "plain"), ("user", "plain"), ("memory", "user"))
        },
        "publisher": publisher,
        "in_process": {m: {k: round(v, 1) for k, v in r.items()} for m, r in alone.items()},
        "in_process_real": {
            m: {k: round(v, 1) for k, v in r.items()} for m, r in alone_real.items()
        },
        "real_inputs": len(real),
        "rounds": measured,
    }


def render(results: dict[str, Any]) -> str:
    p, r, q = results["parameters"], results["rates"], results["ratios"]
    lines = [
        f"# Sealing cost: {results['date']}, commit {results['commit']}",
        "",
        f"{p['events']} MemoryWritten events, {p['users']} users, {p['partitions']} "
        f"partitions, {p['processes']} process(es) per role, {p['rounds']} round(s) "
        f"(medians); {results['machine']['cores']} cores "
        f"({results['machine']['cpu']}), load average "
        f"{results['machine']['load_average_at_start']} at start, "
        f"{results['load_average_at_end']} at end; {results['seconds']} s.",
        "",
        "| role | plain ev/s | user key ev/s | memory keys ev/s | memory / plain (≥ 0.85) "
        "| user / plain | memory / user |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for role in ("worker", "projector"):
        lines.append(
            f"| {role} | {r['plain'][role]:,.0f} | {r['user'][role]:,.0f} | "
            f"{r['memory'][role]:,.0f} | {q[f'{role}_memory_vs_plain']:.2f} | "
            f"{q[f'{role}_user_vs_plain']:.2f} | {q[f'{role}_memory_vs_user']:.2f} |"
        )
    lines += round_ratios(results.get("rounds", {}))
    lines += cpu_lines(r)
    pub = results["publisher"]
    lines += [
        "",
        f"A publisher sealing writes one at a time (the HTTP API's path): "
        f"{pub['user']['us_per_write']:,.0f} µs per write with the user's key, "
        f"{pub['memory']['us_per_write']:,.0f} µs with memory keys (a committed key row per "
        f"write); {PUBLISHING_THREADS} threads sharing it: "
        f"{pub['user']['writes_per_s_concurrent']:,.0f} and "
        f"{pub['memory']['writes_per_s_concurrent']:,.0f} writes/s.",
    ]
    alone = results.get("in_process")
    if alone:
        lines += _in_process_table(
            alone,
            f"In one process, no Kafka ({min(p['events'], IN_PROCESS_INPUTS):,} inputs in "
            f"batches of {IN_PROCESS_BATCH}, medians of {p['rounds']} round(s)):",
        )
    real = results.get("in_process_real")
    if real:
        lines += _in_process_table(
            real,
            f"The same on real conversations: {results['real_inputs']:,} inputs of "
            f"{REAL_PERSONAS} RealMem personas (long assistant answers, a session end every "
            f"few turns, a cycle at each; turns carry the engine's hashing embedding, not "
            f"MiniLM's):",
        )
    return "\n".join(lines) + "\n"


def cpu_lines(medians: dict[str, dict[str, float]]) -> list[str]:
    """The roles' CPU per event in each mode and plain's against memory keys': what sealing
    costs the processes themselves, whatever else the machine did meanwhile (a rate also
    counts the time a process waited, on the broker, the database or the other processes)."""
    cells = []
    for role, key in CPU_KEYS.items():
        if all(key in medians[mode] for mode in MODES):
            plain, user, memory = (medians[mode][key] for mode in ("plain", "user", "memory"))
            cells.append(
                f"{role} {plain:,.0f} / {user:,.0f} / {memory:,.0f} µs "
                f"(plain / memory keys {plain / memory:.2f})"
            )
    if not cells:
        return []
    return [
        "",
        "CPU per event of the role's processes, plain / user key / memory keys: "
        + "; ".join(cells)
        + ".",
    ]


def round_ratios(rounds: dict[str, list[dict[str, float]]]) -> list[str]:
    """Memory keys against plain round by round: each round runs the three modes back to back,
    so a ratio within a round is spared the drift between rounds (this machine's plain rates
    differ by a third from one run to the next); the spread says how far the medians can be
    trusted. Nothing for a single round."""
    plain, memory = rounds.get("plain", []), rounds.get("memory", [])
    if len(plain) < 2 or len(plain) != len(memory):
        return []
    cells = [
        f"{role} "
        + ", ".join(f"{m[role] / p[role]:.2f}" for p, m in zip(plain, memory, strict=True))
        for role in ("worker", "projector")
    ]
    return ["", "Memory keys / plain in each round, in the order run: " + "; ".join(cells) + "."]


def _in_process_table(alone: dict[str, dict[str, float]], title: str) -> list[str]:
    plain = alone["plain"]
    lines = [
        "",
        title,
        "",
        "| in one process | plain | user key | memory keys |",
        "|---|---:|---:|---:|",
    ]
    for role, what in (
        ("worker", "worker, inputs/s"),
        ("opened", "decode and open a ledger record, records/s"),
    ):
        cells = [f"{plain[role]:,.0f}"] + [
            f"{alone[m][role]:,.0f} ({alone[m][role] / plain[role]:.2f})"
            for m in ("user", "memory")
        ]
        lines.append(f"| {what} | " + " | ".join(cells) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    return ratio_bench_main(
        argv, "sealing_cost", __doc__, run, render, events=EVENTS, rounds=ROUNDS
    )


if __name__ == "__main__":
    raise SystemExit(main())
