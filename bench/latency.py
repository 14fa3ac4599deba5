"""End-to-end latency: publish at a fixed rate, time each write until the read models have it.

A publisher thread sends ``MemoryWritten`` events on a fixed schedule, each with ``occurred_at``
= its publish wall time, and records that time per write together with the id of the ledger
event it will cause (ledger ids derive from the input event id, so the bench can compute them).
The calling thread polls ``consolidation_log`` by primary key every ``interval`` seconds and
stamps when each write's ``MemoryStored`` was applied. (Polling the memory's row instead would
miss rows that a consolidation cycle promotes out of working memory right away.)
Latency = applied − published: the publisher's linger, the worker's transaction commit
interval, the projector's batching and up to one poll interval.

Where the time goes (issue 39: find where the tail comes from): after the run, each write's
``MemoryStored`` is found on the ledger at the partition and offset ``consolidation_log``
recorded for it, and the record's timestamp (set by the worker's producer when it wrote the
record, before its transaction committed) splits the latency in two: *to the ledger* (the
publisher, the broker, the worker's poll, batch and processing) and *after it* (the worker's
wait for its transaction's commit, the projector's fetch, batch and transaction, the poll).

The caller passes one long-lived ``MemoryPublisher`` for the warm-up and the measured run, as
a service keeps one. A new producer's first sends wait for its connection, its idempotence PID
and the topic's metadata. Measured from a fresh producer, that wait (~1 s) set the p99 at
200 ev/s: 1,169 ms, against 444 ms from a producer already connected (at 7ed923c).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg

from bench.harness import BenchError
from bench.measure import TopicReader
from bench.progress import Counter
from bench.workload import written
from memstream.publisher import MemoryPublisher
from streams.config.settings import Settings
from streams.engine.ledger import derived_event_id
from streams.engine.model import Memory

Check = Callable[[], None]
_APPLIED = "SELECT event_id FROM consolidation_log WHERE event_id = ANY(%s)"
_ON_THE_LEDGER = (
    "SELECT event_id, kafka_partition, kafka_offset FROM consolidation_log WHERE event_id = ANY(%s)"
)
LEDGER_READ_SECONDS = 60.0  # reading the run's ledger records back for their timestamps


@dataclass
class LatencyRun:
    """Latencies in ms, plus how closely the publisher kept to its schedule."""

    latencies_ms: list[float] = field(default_factory=list)
    published: int = 0
    publish_seconds: float = 0.0
    visible_seconds: float = 0.0  # from the first publish until the last write was visible
    polls: int = 0
    # per write whose ledger record was read back: published → on the ledger, and the rest
    to_ledger_ms: list[float] = field(default_factory=list)
    after_ledger_ms: list[float] = field(default_factory=list)

    def slowest_after_ledger(self, share: float = 0.01) -> float | None:
        """Of the slowest ``share`` of the writes split at the ledger, the part of their
        latency spent after it (where their tail came from)."""
        split = sorted(
            zip(self.to_ledger_ms, self.after_ledger_ms, strict=True),
            key=lambda pair: pair[0] + pair[1],
        )
        slowest = split[-max(1, int(len(split) * share)) :] if split else []
        total = sum(a + b for a, b in slowest)
        return sum(b for _, b in slowest) / total if total > 0 else None

    @property
    def achieved_rate(self) -> float:
        return self.published / self.publish_seconds if self.publish_seconds > 0 else 0.0

    @property
    def drained_rate(self) -> float:
        """Writes per second that reached the read models: the publish rate when the pipeline
        kept up, its sustainable rate when a backlog built."""
        return self.published / self.visible_seconds if self.visible_seconds > 0 else 0.0

    @property
    def kept_up(self) -> bool:
        return self.drained_rate >= KEPT_UP_SHARE * self.achieved_rate


KEPT_UP_SHARE = 0.95  # drained at ≥ 95 % of the publish rate: no backlog built


class _Publisher(threading.Thread):
    """Publishes ``memories`` at ``rate`` per second; ``sent`` grows as they go out."""

    def __init__(self, publisher: MemoryPublisher, memories: list[Memory], rate: float) -> None:
        super().__init__(name="bench-publisher", daemon=True)
        self.publisher, self.memories, self.rate = publisher, memories, rate
        self.sent: list[tuple[str, float]] = []  # (ledger event id, published at)
        self.seconds = 0.0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            started = time.perf_counter()
            for i, memory in enumerate(self.memories):
                delay = started + i / self.rate - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                now = time.time()
                event_id = str(uuid.uuid4())
                self.publisher.publish(written(memory, int(now * 1000), event_id))
                stored = derived_event_id(memory.user_id, event_id, "stored", memory.memory_id)
                self.sent.append((stored, now))
            self.seconds = time.perf_counter() - started
        except BaseException as exc:  # noqa: BLE001 - reported by the polling thread
            self.error = exc


def measure_latency(
    settings: Settings,
    publisher: MemoryPublisher,
    memories: list[Memory],
    rate: float,
    check: Check,
    label: str,
    interval: float = 0.02,
    stall_timeout: float = 60.0,
) -> LatencyRun:
    """Publish ``memories`` at ``rate``/s and wait until every write is in the read models."""
    publishing = _Publisher(publisher, memories, rate)
    run = LatencyRun()
    pending: dict[str, float] = {}
    seen: dict[str, tuple[float, float]] = {}  # ledger event id -> (published, applied)
    taken = 0
    bar = Counter(len(memories), label)
    started = time.perf_counter()
    publishing.start()
    last_progress = time.perf_counter()
    with psycopg.connect(settings.database_url, autocommit=True) as conn:
        try:
            while len(run.latencies_ms) < len(memories):
                sent = publishing.sent[taken:]
                taken += len(sent)
                pending.update(dict(sent))
                if pending:
                    rows = conn.execute(_APPLIED, (list(pending),)).fetchall()
                    now = time.time()
                    run.polls += 1
                    for (ledger_id,) in rows:
                        published = pending.pop(ledger_id)
                        seen[ledger_id] = (published, now)
                        run.latencies_ms.append((now - published) * 1000)
                    if rows:
                        last_progress = time.perf_counter()
                        bar.show(len(run.latencies_ms))
                if publishing.error is not None:
                    raise BenchError(f"publishing failed: {publishing.error}")
                if time.perf_counter() - last_progress > stall_timeout:
                    raise BenchError(
                        f"{len(pending)} published writes did not reach the read models "
                        f"within {stall_timeout:.0f} s; check the process logs below"
                    )
                check()
                time.sleep(interval)
        finally:
            run.visible_seconds = time.perf_counter() - started
            bar.finish()
            publishing.join(timeout=30)
        written_at = ledger_times(settings, conn, list(seen))
    run.published = len(publishing.sent)
    run.publish_seconds = publishing.seconds
    for ledger_id, (published, applied) in seen.items():
        at = written_at.get(ledger_id)
        if at is not None:
            run.to_ledger_ms.append((at - published) * 1000)
            run.after_ledger_ms.append((applied - at) * 1000)
    return run


def ledger_times(
    settings: Settings, conn: psycopg.Connection, event_ids: list[str]
) -> dict[str, float]:
    """When the worker wrote each of these ledger events (its record's timestamp, epoch
    seconds), read back from the ledger at the positions ``consolidation_log`` holds. An
    event not read within ``LEDGER_READ_SECONDS`` is left out."""
    wanted: dict[tuple[int, int], str] = {
        (partition, offset): event_id
        for event_id, partition, offset in conn.execute(_ON_THE_LEDGER, (event_ids,)).fetchall()
    }
    if not wanted:
        return {}
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for partition, offset in wanted:
        first[partition] = min(first.get(partition, offset), offset)
        last[partition] = max(last.get(partition, offset), offset)
    reader = TopicReader(settings, settings.ledger_topic, len(first), start=first)
    found: dict[str, float] = {}
    try:
        reading = set(first)
        deadline = time.monotonic() + LEDGER_READ_SECONDS
        while reading and time.monotonic() < deadline:
            for message in reader.consumer.consume(1000, 0.5):
                if message.error() is not None:
                    continue
                position = (message.partition(), message.offset())
                if position[0] is None or position[1] is None:
                    continue
                if position in wanted:
                    found[wanted[position]] = message.timestamp()[1] / 1000
                if position[1] >= last[position[0]]:
                    reading.discard(position[0])
    finally:
        reader.close()
    return found
