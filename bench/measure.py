"""Timing what the pipeline produces: records arriving on a topic, rows appearing in a table.

Rates are measured from the first arrival to the last, and the records (rows) that arrived
with the first observation are left out of the count: exactly-once output becomes visible a
transaction (projector batch) at a time, so counting the first chunk against a span that
excludes its processing time would overstate the rate. When everything arrives at once the
rate falls back to a start-inclusive span, and ``method`` says so.
"""

from __future__ import annotations

import time
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import psycopg
from confluent_kafka import OFFSET_BEGINNING, Consumer, Message, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from bench.harness import BenchError
from bench.progress import Counter
from streams.config.kafka_security import confluent_config, resolve
from streams.config.settings import Settings

Check = Callable[[], None]  # raises BenchError when a process the phase needs has died


@dataclass(frozen=True)
class Rate:
    """``count`` items over ``seconds``; ``method`` says which span was timed."""

    count: int
    seconds: float
    method: str

    @property
    def per_second(self) -> float:
        return self.count / self.seconds if self.seconds > 0 else float("nan")


def chunked_rate(
    total: int, first_chunk: int, first_at: float, last_at: float, started: float, what: str
) -> Rate:
    """The rate of the items after the first visible chunk, or from ``started`` if none."""
    if total > first_chunk and last_at > first_at:
        return Rate(total - first_chunk, last_at - first_at, f"first→last {what}")
    return Rate(total, last_at - started, f"start→last {what} (all arrived at once)")


@dataclass(frozen=True)
class TopicRecord:
    """A record as read, with what publishing it again needs (bench/group_input.py)."""

    partition: int
    key: bytes | None
    value: bytes
    headers: list[tuple[str, str | bytes | None]] | None

    @classmethod
    def of(cls, message: Message) -> TopicRecord:
        headers = message.headers()  # librdkafka gives a list of pairs, or none
        return cls(
            message.partition() or 0,
            message.key(),
            message.value() or b"",
            headers if isinstance(headers, list) else None,
        )


@dataclass
class Arrivals:
    """What a :class:`TopicReader` saw: arrival times, producer timestamps, the records."""

    count: int = 0
    started: float = 0.0
    first_at: float = 0.0
    first_chunk: int = 0
    last_at: float = 0.0
    min_timestamp_ms: int | None = None
    max_timestamp_ms: int | None = None
    records: list[TopicRecord] = field(default_factory=list)
    cpu_seconds: float | None = None  # the timed processes', from input committed to output read

    def rate(self) -> Rate:
        return chunked_rate(
            self.count, self.first_chunk, self.first_at, self.last_at, self.started, "record read"
        )

    def producer_rate(self) -> Rate | None:
        """The rate by the records' producer timestamps (when the sender created them)."""
        if self.min_timestamp_ms is None or self.max_timestamp_ms is None:
            return None
        span = (self.max_timestamp_ms - self.min_timestamp_ms) / 1000
        return Rate(self.count - 1, span, "producer timestamps first→last") if span > 0 else None


class TopicReader:
    """Reads a topic from the beginning of every partition (or from ``start``: partition ->
    offset, those partitions only), read_committed, without a group."""

    def __init__(
        self,
        kafka: str | Settings,
        topic: str,
        partitions: int,
        start: Mapping[int, int] | None = None,
    ) -> None:
        """``kafka``: the pipeline's settings (a bare bootstrap address takes the security
        settings from the environment)."""
        self.topic = topic
        self.consumer = Consumer(
            {
                **confluent_config(resolve(kafka)),
                "group.id": f"bench-reader-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "fetch.wait.max.ms": 10,
            }
        )
        start = start or dict.fromkeys(range(partitions), OFFSET_BEGINNING)
        self.consumer.assign([TopicPartition(topic, p, o) for p, o in start.items()])

    def collect(
        self,
        expected: int,
        check: Check,
        label: str,
        keep_records: bool = False,
        first_timeout: float = 180.0,
        stall_timeout: float = 60.0,
        counting: tuple[str, bytes] | None = None,
    ) -> Arrivals:
        """Read until ``expected`` records arrived; raise if they stop coming. ``counting``:
        count only the records with this header (name, value), e.g. the worker's one
        ``MemoryStored`` per input, so a rate is inputs/s however many records an input
        makes; every record is still kept with ``keep_records``."""
        seen = Arrivals(started=time.perf_counter())
        bar = Counter(expected, label)
        last_progress = seen.started
        try:
            while seen.count < expected:
                messages = self.consumer.consume(1000, 0.05)
                now = time.perf_counter()
                got = 0
                for message in messages:
                    if message.error() is not None:
                        continue
                    if keep_records:
                        seen.records.append(TopicRecord.of(message))
                    if counting is not None and counting not in (message.headers() or ()):
                        continue
                    got += 1
                    _, stamp = message.timestamp()
                    if seen.min_timestamp_ms is None or stamp < seen.min_timestamp_ms:
                        seen.min_timestamp_ms = stamp
                    if seen.max_timestamp_ms is None or stamp > seen.max_timestamp_ms:
                        seen.max_timestamp_ms = stamp
                if got:
                    if seen.count == 0:
                        seen.first_at, seen.first_chunk = now, got
                    seen.count += got
                    seen.last_at = last_progress = now
                    bar.show(seen.count)
                    continue
                limit = stall_timeout if seen.count else first_timeout
                if now - last_progress > limit:
                    raise BenchError(
                        f"only {seen.count} of {expected} records reached {self.topic} and none "
                        f"for {limit:.0f} s; check the process log below and "
                        f"`memstream status`"
                    )
                check()
        finally:
            bar.finish()
        return seen

    def close(self) -> None:
        self.consumer.close()


@dataclass(frozen=True)
class CountWatch:
    rate: Rate
    polls: int


def watch_count(
    database_url: str,
    sql: str,
    expected: int,
    check: Check,
    label: str,
    interval: float = 0.02,
    first_timeout: float = 180.0,
    stall_timeout: float = 60.0,
) -> CountWatch:
    """Poll ``sql`` (a count) every ``interval`` s until it reaches ``expected``."""
    bar = Counter(expected, label)
    started = last_progress = time.perf_counter()
    first_at = 0.0
    first_count = count = polls = 0
    with psycopg.connect(database_url, autocommit=True) as conn:
        try:
            while count < expected:
                row = conn.execute(sql).fetchone()
                now = time.perf_counter()
                polls += 1
                current = int(row[0]) if row else 0
                if current > count:
                    if count == 0:
                        first_at, first_count = now, current
                    count, last_progress = current, now
                    bar.show(count)
                    continue
                limit = stall_timeout if count else first_timeout
                if now - last_progress > limit:
                    raise BenchError(
                        f"only {count} of {expected} rows after waiting {limit:.0f} s for more; "
                        f"check the process log below"
                    )
                check()
                time.sleep(interval)
        finally:
            bar.finish()
    rate = chunked_rate(count, first_count, first_at, last_progress, started, "row visible")
    return CountWatch(rate, polls)


def percentiles(values_ms: list[float], points: tuple[int, ...] = (50, 95, 99)) -> dict[str, float]:
    """``{"p50": …, "max": …}`` of ``values_ms`` (linear interpolation)."""
    array = np.asarray(values_ms, dtype=float)
    result = {f"p{p}": float(np.percentile(array, p)) for p in points}
    result["max"] = float(array.max())
    result["mean"] = float(array.mean())
    return result


def cpu_seconds(port: int, processes: int) -> float | None:
    """CPU seconds (user + system) the processes serving metrics on ``port`` .. ``port +
    processes - 1`` have used so far (``process_cpu_seconds_total``, which prometheus_client
    exports on Linux); None when one does not say. Two readings around a phase give its CPU
    per event: steadier on a shared machine than a rate, which also counts waiting."""
    total = 0.0
    for k in range(processes):
        try:
            seconds = scrape_metrics(port + k).get("process_cpu_seconds_total")
        except OSError:
            return None
        if seconds is None:
            return None
        total += seconds
    return total


def scrape_metrics(port: int) -> dict[str, float]:
    """Sum of every sample per metric name on ``127.0.0.1:<port>/metrics``."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    sums: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            sums[sample.name] = sums.get(sample.name, 0.0) + sample.value
    return sums
