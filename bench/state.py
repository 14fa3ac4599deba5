"""``python -m bench.state``: what the worker's state costs at scale (issue 7).

1. restore vs history: one partition whose ledger holds N events over a small live state
   (8 users using 40 memories again and again, one input a minute, so a week of input ids
   is remembered for deduplication). Its changelog and a local checkpoint
   taken 1,000 records before its end are written as the worker writes them (the
   pure ingest processor's records, produced to real topics), then the partition is
   restored three ways: local checkpoint + changelog tail (what a restart does), the whole
   changelog (a new owner without a local store; flat once compaction has run, here it
   has not), and the ledger fold (``memstream rebuild-state``, the disaster path).
2. worker memory vs users: U users write one memory each to a fresh pipeline; the worker,
   holding at most ``--hot-users`` users in memory, processes them; its resident memory
   is read when it is done.
3. SIGKILL → processing again: a worker with a static member id processes some input, is
   SIGKILLed and started again at once; the time from the restart to the ledger record of
   an input published right then.

Not a test: figures go in the README with the commit they ran on.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections.abc import Sequence
from functools import partial
from typing import Any

import psutil
from confluent_kafka import Producer

from bench import progress
from bench.cleanup import remove_run
from bench.flags import add_keep_flag
from bench.harness import Harness, check_alive
from bench.measure import TopicReader, scrape_metrics
from bench.report import RESULTS_DIR, source_version
from bench.workload import encoded_records, written_events
from memstream.publisher import MemoryPublisher
from memstream.stack import LocalStack
from streams.config.kafka_security import confluent_config
from streams.config.settings import Settings
from streams.engine.model import Memory, MemoryAccessed, MemoryEvent, MemoryWritten
from streams.engine.step import EngineConfig
from streams.ingest_processor import IngestProcessor
from streams.kafka import codec
from streams.state.changelog import Entry
from streams.state.hot_users import UserStates
from streams.state.replay import read_partition
from streams.state.restore import restore_partition, state_topic
from streams.state.store import Checkpoint, LocalStateStore

T0 = 1_790_000_000_000
STORED = ("event_type", b"MemoryStored")
SPACING_MS = 60_000  # one access a minute: a million inputs span two years of event time
TAIL_RECORDS = 1_000  # changelog records after the local checkpoint: a few seconds of input


# --- 1. restore vs history ---------------------------------------------------------------------


def long_history(events: int, users: int = 8, memories: int = 5) -> list[MemoryEvent]:
    """``users`` × ``memories`` writes, then accesses to them up to ``events`` inputs, a
    minute apart: the live state is the memories and a week of seen input ids (the dedupe
    window), whatever the length of the history."""
    history = [
        MemoryEvent(
            _id(f"w-{u}-{m}"),
            f"user-{u}",
            T0 + u * memories + m,
            MemoryWritten(Memory(f"m{m}", f"user-{u}", f"fact {m} of user {u}", layer="semantic")),
        )
        for u in range(users)
        for m in range(memories)
    ]
    for i in range(events - len(history)):
        user = f"user-{i % users}"
        history.append(
            MemoryEvent(
                _id(f"a-{i}"), user, T0 + 1_000 + i * SPACING_MS, MemoryAccessed(f"m{i % memories}")
            )
        )
    return history


def _id(name: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"bench-state/{name}"))


def restore_vs_history(harness: Harness, sizes: Sequence[int]) -> list[dict[str, Any]]:
    rows = []
    for size in sizes:
        settings = harness.pipeline(f"restore{size}")
        progress.phase(f"restore: a partition with a ledger of ~{size:,} events")
        ledger, changelog = _records(long_history(size))
        _produce(settings, settings.ledger_topic, ledger)
        _produce(settings, state_topic(settings), changelog)
        tail = min(TAIL_RECORDS, len(changelog) - 1)
        store = LocalStateStore(harness.workdir / f"restore{size}" / "store")
        checkpointed = changelog[: len(changelog) - tail]
        store.write(
            0,
            (Entry(k, v) for k, v in checkpointed),
            Checkpoint(len(checkpointed), checkpointed[-1][0]),
        )
        row: dict[str, Any] = {"ledger_events": len(ledger), "changelog_length": len(changelog)}
        for way, run in (
            ("checkpoint", partial(_restore, settings, store)),
            ("changelog", partial(_restore, settings, None)),
            ("ledger", partial(_fold_ledger, settings)),
        ):
            started = time.perf_counter()
            read = run()
            row[f"{way}_seconds"] = round(time.perf_counter() - started, 3)
            row[f"{way}_records"] = read
            progress.note(f"{way}: {row[f'{way}_seconds']:.2f} s ({read:,} records read)")
        rows.append(row)
    return rows


def _records(
    history: list[MemoryEvent],
) -> tuple[list[tuple[bytes, bytes]], list[tuple[bytes, bytes | None]]]:
    """The ledger records and state-changelog entries the worker writes for ``history``."""
    processor = IngestProcessor(EngineConfig(), UserStates(), partitions=1)
    ledger: list[tuple[bytes, bytes]] = []
    rejected = 0
    changelog: list[tuple[bytes, bytes | None]] = []
    counter = progress.Counter(len(history), "inputs processed (pure)")
    for i, event in enumerate(history, 1):
        emission = processor.process(event.user_id.encode(), codec.encode_event(event), [])
        rejected += emission.rejection is not None
        ledger += [(r.key or b"", r.value) for r in emission.ledger]
        changelog += [(e.key, e.value) for e in emission.state]
        if i % 10_000 == 0:
            counter.show(i)
    counter.finish()
    if rejected:
        raise RuntimeError(f"{rejected} of the bench's inputs were rejected: fix the workload")
    return ledger, changelog


def _produce(settings: Settings, topic: str, records: Sequence[tuple[bytes, bytes | None]]) -> None:
    producer = Producer({**confluent_config(settings), "linger.ms": 20, "acks": "all"})
    for i, (key, value) in enumerate(records):
        while True:
            try:
                producer.produce(topic, value, key, partition=0)
                break
            except BufferError:
                producer.poll(0.1)
        if i % 10_000 == 0:
            producer.poll(0)
    producer.flush(120)


def _restore(settings: Settings, store: LocalStateStore | None) -> int:
    return restore_partition(settings, 0, store).records


def _fold_ledger(settings: Settings) -> int:
    states = UserStates()
    return states.rebuild_partition(0, read_partition(settings, settings.ledger_topic, 0))


# --- 2. worker memory vs users -----------------------------------------------------------------


def memory_vs_users(harness: Harness, sweep: Sequence[int], hot_users: int) -> list[dict]:
    rows = []
    for users in sweep:
        progress.phase(f"memory: {users:,} users, one memory each, hot users ≤ {hot_users:,}")
        settings = harness.pipeline(f"users{users}").with_overrides(
            hot_users=hot_users, embedder="HASHING"
        )
        encoded = encoded_records(written_events(users, users, settings.embedding_dim))
        with MemoryPublisher(settings, source="bench") as publisher:
            for key, value in encoded:
                publisher.publish_raw(key, value, "MemoryWritten")
            publisher.flush()
        reader = TopicReader(settings, settings.ledger_topic, harness.partitions)
        process = harness.start_memstream(f"worker-users{users}", ["worker"], settings)
        try:
            arrivals = reader.collect(
                users, partial(check_alive, [process]), "inputs done", counting=STORED
            )
            time.sleep(12)  # a checkpoint (5 s), then the eviction timer (5 s)
            rss = psutil.Process(process.pid).memory_info().rss
            hot = scrape_metrics(settings.worker_metrics_port).get("memstream_worker_hot_users")
        finally:
            reader.close()
            harness.stop(process)
        rate = arrivals.rate().per_second
        rows.append(
            {"users": users, "hot": hot, "rss_mb": round(rss / 2**20, 1), "inputs_per_s": rate}
        )
        progress.note(
            f"{users:,} users ({hot:,.0f} hot): worker RSS {rss / 2**20:,.0f} MB "
            f"({rate:,.0f} inputs/s)"
        )
    return rows


# --- 3. SIGKILL → processing again -------------------------------------------------------------


def kill_to_processing(harness: Harness) -> dict[str, float]:
    progress.phase("recovery: SIGKILL a static group member and restart it at once")
    settings = harness.pipeline("recovery").with_overrides(
        instance_id="bench-worker-0", embedder="HASHING"
    )
    first = written_events(200, 10, settings.embedding_dim, seed=5)
    second = written_events(1, 1, settings.embedding_dim, seed=6, base_time=T0 + 10**7)
    reader = TopicReader(settings, settings.ledger_topic, harness.partitions)
    try:
        with MemoryPublisher(settings, source="bench") as publisher:
            for key, value in encoded_records(first):
                publisher.publish_raw(key, value, "MemoryWritten")
            publisher.flush()
            process = harness.start_memstream("worker-recovery", ["worker"], settings)
            reader.collect(len(first), lambda: check_alive([process]), "inputs", counting=STORED)
            time.sleep(6)  # a local checkpoint is written
            process.kill()
            restarted_at = time.perf_counter()
            again = harness.start_memstream("worker-recovery-2", ["worker"], settings)
            for key, value in encoded_records(second):
                publisher.publish_raw(key, value, "MemoryWritten")
            publisher.flush()
            arrivals = reader.collect(1, lambda: check_alive([again]), "input", counting=STORED)
            seconds = arrivals.first_at - restarted_at
            harness.stop(again)
    finally:
        reader.close()
    progress.note(f"restart → first input processed: {seconds:.1f} s")
    return {"restart_to_first_processed_seconds": round(seconds, 2)}


# --- main ----------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.state", description=__doc__)
    parser.add_argument("--sizes", default="10000,100000", help="ledger lengths to restore")
    parser.add_argument("--users", default="1000,10000,100000", help="user counts for memory")
    parser.add_argument("--hot-users", type=int, default=1000, help="MEMSTREAM_HOT_USERS")
    add_keep_flag(parser)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    sweep = [int(u) for u in args.users.split(",") if u]
    settings = Settings.from_env()
    stack = LocalStack(settings).up(progress=progress.note)
    one = Harness(settings, stack, 1)
    many = Harness(settings, stack, settings.partitions, run_id=one.run_id)
    try:
        results = {
            "source": source_version(),
            "restore": restore_vs_history(one, sizes),
            "memory": memory_vs_users(many, sweep, args.hot_users),
            "hot_users": args.hot_users,
            "recovery": kill_to_processing(many),
        }
    finally:
        one.stop_all()
        many.stop_all()
        if not args.keep:
            remove_run(settings, stack.database_url, one.run_id)
    path = RESULTS_DIR / "state.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    print(f"results written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
