"""``memstream demo``: the main job on the local stack, end to end, with progress shown.

up → worker + projector → publish a built-in multi-user sample (and a few bad records) →
wait until the read models hold what the batch oracle says they must → print what reached
PostgreSQL → stop the two processes (the stack stays up for exploring; `memstream down`).
The sample has fixed event ids, so running the demo again changes nothing: the worker
recognises every event as already applied.
"""

from __future__ import annotations

import random
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from typing import Any

import psycopg
from prometheus_client.parser import text_string_to_metric_families

from memstream.processes import ManagedProcess, start_command
from memstream.publisher import MemoryPublisher
from memstream.stack import LocalStack, StackError
from memstream.stack.ports import pick_port
from memstream.waiting import WaitTimeout, wait_until
from projections.schema import LAYER_TABLES
from streams.config.settings import Settings
from streams.engine.embedder import hashing_embedding
from streams.engine.model import (
    ConsolidationRequested,
    ForgetRequested,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryPinned,
    MemoryWritten,
    SessionEnded,
)
from streams.kafka import codec
from streams.worker_engine import replay_as_worker

DEMO_NAMESPACE = uuid.UUID("0b8f0c3e-6d65-4d6f-8000-64656d6f0001")
DEMO_START = 1_793_000_000_000  # fixed event time of the sample (2026-10-26)
TOPICS = [
    ("prefers", ["dark mode", "short answers", "Python", "vim keybindings", "tea over coffee"]),
    ("works on", ["the billing service", "a Kafka migration", "the mobile app", "search ranking"]),
    ("uses", ["PostgreSQL", "Kubernetes", "Grafana", "pytest", "Faust"]),
    ("met", ["Ana at the offsite", "the SRE team", "a new customer", "the design lead"]),
]
LAYER_OF = {"prefers": "semantic", "works on": "working", "uses": "semantic", "met": "episodic"}


def _event_id(*parts: object) -> str:
    return str(uuid.uuid5(DEMO_NAMESPACE, "/".join(map(str, parts))))


def sample_events(users: int, dim: int) -> list[MemoryEvent]:
    """A realistic, deterministic day of memory traffic for ``users`` demo users."""
    rng = random.Random(42)
    events: list[MemoryEvent] = []
    for u in range(users):
        user = f"demo-user-{u + 1}"
        at = DEMO_START + u * 10_000
        written: list[str] = []
        for n in range(24):
            verb, objects = TOPICS[n % len(TOPICS)]
            content = f"{user} {verb} {rng.choice(objects)}"
            memory_id = _event_id(user, "memory", n)
            memory = Memory(
                memory_id=memory_id,
                user_id=user,
                content=content,
                layer=LAYER_OF[verb],  # type: ignore[arg-type]
                kind=verb.replace(" ", "_"),
                importance=round(rng.uniform(0.2, 0.95), 2),
                emotional_salience=round(rng.random(), 2),
                valence=round(rng.uniform(-1, 1), 2),
                conversation_id=f"{user}-conv-{n // 8}",
                session_id=f"{user}-session-{n // 12}",
                embedding=hashing_embedding(content, dim),
            )
            at += 60_000
            events.append(
                MemoryEvent(_event_id(user, "write", n), user, at, MemoryWritten(memory), "demo")
            )
            written.append(memory_id)
            if n % 3 == 2:
                at += 5_000
                accessed = rng.choice(written)
                events.append(
                    MemoryEvent(
                        _event_id(user, "access", n), user, at, MemoryAccessed(accessed), "demo"
                    )
                )
        events.append(
            MemoryEvent(_event_id(user, "pin"), user, at + 1, MemoryPinned(written[0]), "demo")
        )
        events.append(
            MemoryEvent(
                _event_id(user, "forget"),
                user,
                at + 2,
                ForgetRequested(written[5], "user asked"),
                "demo",
            )
        )
        events.append(
            MemoryEvent(
                _event_id(user, "end"), user, at + 3, SessionEnded(f"{user}-session-1"), "demo"
            )
        )
        # End of the day: a manual consolidation cycle (what `memstream consolidate` sends).
        events.append(
            MemoryEvent(
                _event_id(user, "consolidate"),
                user,
                at + 20 * 60_000,
                ConsolidationRequested(),
                "demo",
            )
        )
    return events


def bad_records(dim: int) -> list[tuple[str, bytes, bytes]]:
    """(what, key, value): records the worker must dead-letter without stopping."""
    user = "demo-user-1"
    nan = Memory(
        memory_id="bad-nan", user_id=user, content="importance is NaN", importance=float("nan")
    )
    short = Memory(
        memory_id="bad-dim",
        user_id=user,
        content="short vector",
        embedding=codec.pack_embedding([0.1] * (dim - 1)),
    )
    return [
        ("not Avro at all", user.encode(), b'{"json": "is not the contract"}'),
        (
            "NaN importance",
            user.encode(),
            codec.encode_event(
                MemoryEvent(_event_id("bad", 1), user, DEMO_START, MemoryWritten(nan))
            ),
        ),
        (
            "embedding of the wrong size",
            user.encode(),
            codec.encode_event(
                MemoryEvent(_event_id("bad", 2), user, DEMO_START, MemoryWritten(short))
            ),
        ),
        (
            "access to a memory that does not exist",
            user.encode(),
            codec.encode_event(
                MemoryEvent(_event_id("bad", 3), user, DEMO_START, MemoryAccessed("nope"))
            ),
        ),
    ]


class ProgressBar:
    """One self-rewriting line on a terminal; elsewhere (CI logs, a pipe) a line each time
    another quarter is done, so a log shows the work advancing without a line per poll."""

    def __init__(self, total: int, label: str) -> None:
        self.total, self.label = max(total, 1), label
        self.last_percent = self.last_quarter = -1
        self.tty = sys.stdout.isatty()

    def show(self, done: int) -> None:
        percent = min(100, done * 100 // self.total)
        if percent == self.last_percent:
            return
        self.last_percent = percent
        filled = percent * 30 // 100
        line = f"  [{'#' * filled}{'.' * (30 - filled)}] {done}/{self.total} {self.label}"
        if self.tty:
            print(f"\r{line}", end="", flush=True)
        elif percent // 25 != self.last_quarter:
            # a poll rarely lands on an exact quarter: print on crossing one
            self.last_quarter = percent // 25
            print(line, flush=True)

    def finish(self) -> None:
        if self.tty:
            print(flush=True)


def run_demo(settings: Settings, users: int = 5) -> int:
    print("memstream demo: publish → Kafka → Faust worker → ledger → projector → PostgreSQL\n")
    try:
        info = LocalStack(settings).up(progress=lambda m: print(f"  {m}", flush=True))
    except StackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    settings = settings.with_overrides(
        kafka_bootstrap=info.kafka_bootstrap,
        database_url=info.database_url,
        worker_metrics_port=pick_port(None)[0],
        projector_metrics_port=pick_port(None)[0],
    )
    events = sample_events(users, settings.embedding_dim)
    # the worker's own engine (policy, limits, embedder): what it will decide, exactly
    oracle = replay_as_worker(events, settings)
    expected = {d.event_id for d in oracle.decisions}
    log_dir = settings.state_dir / "logs"
    processes = [
        start_command("worker", ["worker"], settings, log_dir),
        start_command("projector", ["project"], settings, log_dir),
    ]
    print(
        f"\n  worker pid {processes[0].pid}, projector pid {processes[1].pid} (logs in {log_dir})"
    )
    try:
        started = time.monotonic()
        with MemoryPublisher(settings, source="demo") as publisher:
            for event in events:
                publisher.publish(event)
            bad = bad_records(settings.embedding_dim)
            for what, key, value in bad:
                publisher.publish_raw(key, value, event_type="demo-bad-record", label=what)
        print(f"  published {len(events)} events for {users} users + {len(bad)} bad records")
        _wait_for_read_models(settings, expected, processes)
        wait_until(
            lambda: sum(_rejections(settings.worker_metrics_port).values()) >= len(bad),
            timeout=30,
            what="the bad records to be dead-lettered",
        )
        elapsed = time.monotonic() - started
        print(
            f"  the read models hold all {len(expected)} ledger events the oracle predicts "
            f"({elapsed:.1f} s)\n"
        )
        _report(settings, events)
        _recall_by_meaning(settings)
    except (WaitTimeout, psycopg.Error) as exc:
        print(f"\nerror: {exc}", file=sys.stderr)
        for process in processes:
            print(f"--- {process.name} log:\n{process.log_tail()}", file=sys.stderr)
        return 1
    finally:
        for process in processes:
            process.stop()
    print("\nThe stack keeps running for you to explore (see `memstream status`);")
    print("`memstream down` stops it. Worker and projector logs are in", log_dir)
    return 0


def _wait_for_read_models(
    settings: Settings, expected: set[str], processes: list[ManagedProcess]
) -> None:
    bar = ProgressBar(len(expected), "ledger events projected")
    ids = list(expected)

    def projected() -> bool:
        for process in processes:
            if not process.alive():
                raise WaitTimeout(f"the {process.name} exited (code {process.popen.returncode})")
        with psycopg.connect(settings.database_url) as conn:
            done = _one(
                conn, "SELECT count(*) FROM consolidation_log WHERE event_id = ANY(%s)", (ids,)
            )[0]
        bar.show(done)
        return done >= len(ids)

    try:
        wait_until(projected, timeout=180, interval=0.25, what="the read models to catch up")
    finally:
        bar.finish()


def _report(settings: Settings, events: list[MemoryEvent]) -> None:
    users = sorted({e.user_id for e in events})
    with psycopg.connect(settings.database_url) as conn:
        print(
            f"  {'user':<14}"
            + "".join(f"{layer:>12}" for layer in LAYER_TABLES)
            + f"{'accesses':>10}{'pinned':>8}"
        )
        for user in users:
            counts = []
            accesses = pinned = 0
            for table in LAYER_TABLES.values():
                n, a, p = _one(
                    conn,
                    f"SELECT count(*), coalesce(sum(access_count), 0), "
                    f"count(*) FILTER (WHERE pinned) FROM {table} WHERE user_id = %s",
                    (user,),
                )
                counts.append(n)
                accesses += a
                pinned += p
            print(
                f"  {user:<14}" + "".join(f"{n:>12}" for n in counts) + f"{accesses:>10}{pinned:>8}"
            )
        forgotten = _one(
            conn,
            "SELECT count(*) FROM consolidation_log "
            "WHERE action = 'MemoryForgotten' AND user_id LIKE 'demo-%'",
        )[0]
        actions: Counter[str] = Counter(
            dict(
                conn.execute(
                    "SELECT action, count(*) FROM consolidation_log "
                    "WHERE user_id LIKE 'demo-%' GROUP BY action"
                ).fetchall()
            )
        )
        print(f"\n  ledger actions: {', '.join(f'{a} {n}' for a, n in sorted(actions.items()))}")
        print("\n  consolidation cycles (profile default):")
        for user, processed, patterns, archived, contradictions, merged, links in conn.execute(
            "SELECT user_id, processed, patterns, archived, contradictions, duplicates_merged, "
            "links_created FROM consolidation_reports WHERE user_id LIKE 'demo-%' ORDER BY 1"
        ).fetchall():
            print(
                f"    {user:<14} processed {processed:>3}, patterns {patterns}, merged {merged}, "
                f"contradictions {contradictions}, archived {archived}, links {links}"
            )
        print(f"  forgotten memories removed from every table: {forgotten}")
    rejected = _rejections(settings.worker_metrics_port)
    print(f"\n  dead-lettered to {settings.deadletter_topic} (the pipeline kept going):")
    for reason, count in sorted(rejected.items()):
        print(f"    {reason:<22}{count:>4}")


READER = "demo-reader"
READER_MEMORIES = (
    "She keeps her notes in Obsidian.",
    "The team ships a release every Friday.",
    "Her favourite food is ramen.",
)
READER_QUESTION = "What note-taking app does she use?"


def _recall_by_meaning(settings: Settings) -> None:
    """Memories written as plain text: the worker embeds them (MEMSTREAM_EMBEDDER, MiniLM by
    default); a service then recalls by a paraphrase that shares no word with the answer."""
    from projections.reader import MemoryReader
    from streams.embedders.factory import embedder_for

    with MemoryPublisher(settings, source="demo") as publisher:
        for n, content in enumerate(READER_MEMORIES):
            publisher.write(READER, content, memory_id=f"{READER}-{n}", layer="semantic")
    wait_until(
        lambda: (
            _one(
                psycopg.connect(settings.database_url),
                "SELECT count(*) FROM semantic_facts WHERE user_id = %s AND embedding IS NOT NULL",
                (READER,),
            )[0]
            >= len(READER_MEMORIES)
        ),
        timeout=60,
        what="the plain-text memories to be embedded and projected",
    )
    embedder = embedder_for(settings.embedder.lower(), settings.embedding_dim)
    with MemoryReader.connect(
        settings.database_url, grant_key_file=settings.reader_grant_key_file or None
    ) as reader:
        found = reader.recall(READER, READER_QUESTION, embedder, k=3)
    how = f"{settings.embedder.lower()} embedder"
    print(f"\n  recall by meaning ({how}), {READER}: {READER_QUESTION!r}")
    for memory in found:
        print(f"    {memory.score:.3f}  [{memory.layer}] {memory.content}")


def _one(conn: psycopg.Connection, sql: str, params: tuple[object, ...] = ()) -> tuple[Any, ...]:
    row = conn.execute(sql, params or None).fetchone()  # no params: '%' is not a placeholder
    assert row is not None, "an aggregate query returns one row"
    return row


def _rejections(port: int) -> dict[str, int]:
    """The worker's rejection counters, read from its /metrics like Prometheus would (empty
    while the worker is still starting and not listening yet)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
    except urllib.error.URLError:
        return {}
    counts: dict[str, int] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "memstream_events_rejected_total":
                counts[sample.labels["reason"]] = int(sample.value)
    return counts
