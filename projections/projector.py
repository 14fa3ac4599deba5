"""The projector process: memory.consolidation → PostgreSQL read models, exactly once.

decode → fold into a :class:`RowBatch` → write rows + offsets in one transaction → repeat.
Kafka offsets are never committed to Kafka: the position lives in ``projection_offsets``,
written with the rows, and the consumer seeks to it whenever partitions are assigned. When
Postgres fails, the batch is retried with backoff; if it still fails, the consumer is rewound
to the stored position so nothing past unapplied work is ever considered done.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import psycopg
from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    Message,
    Producer,
    TopicPartition,
)

from memstream.settings import Settings
from projections import metrics
from projections.cycles import Consumed, split_at_open_cycles
from projections.rows import RowBatch
from projections.writer import prepare_connection, stored_offsets, write_batch
from streams import codec

log = logging.getLogger("memstream.projector")
LAG_REPORT_SECONDS = 5.0
T = TypeVar("T")


class Projector:
    def __init__(self, settings: Settings, name: str | None = None) -> None:
        self.settings = settings
        self.name = name or settings.projector_group
        self.topic = settings.ledger_topic
        self.registry = codec.default_registry()
        self._conn: psycopg.Connection | None = None
        self._last_lag_report = 0.0
        self.consumer = Consumer(
            {
                "bootstrap.servers": settings.kafka_bootstrap,
                "group.id": self.name,
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
                "fetch.wait.max.ms": 50,
            }
        )
        self._deadletter: Producer | None = None

    # -- connection ---------------------------------------------------------------------------

    def connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            conn = psycopg.connect(self.settings.database_url)
            prepare_connection(conn)
            self._conn = conn
        return self._conn

    def _drop_connection(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
        self._conn = None

    # -- assignment ---------------------------------------------------------------------------

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """Seek each assigned partition to the offset stored with the rows."""
        stored = self._with_retries(
            lambda: stored_offsets(self.connection(), self.name, self.topic), forever=True
        )
        for tp in partitions:
            tp.offset = stored.get(tp.partition, OFFSET_BEGINNING)
        consumer.assign(partitions)
        log.info("assigned %s", {tp.partition: tp.offset for tp in partitions})

    def _rewind(self, batch: RowBatch) -> None:
        """Go back to the stored position of every partition the failed batch touched."""
        stored = self._with_retries(
            lambda: stored_offsets(self.connection(), self.name, self.topic), forever=True
        )
        for topic, partition in batch.next_offsets:
            offset = stored.get(partition, OFFSET_BEGINNING)
            self.consumer.seek(TopicPartition(topic, partition, offset))

    # -- the loop -----------------------------------------------------------------------------

    def run(
        self, stop: threading.Event | None = None, on_batch: Callable[[int], None] | None = None
    ) -> None:
        stop = stop or threading.Event()
        self.consumer.subscribe([self.topic], on_assign=self._on_assign)
        try:
            while not stop.is_set():
                messages = self.consumer.consume(
                    self.settings.projector_batch_size, self.settings.projector_batch_ms / 1000
                )
                batch = self._fold(messages)
                if len(batch.next_offsets):
                    self._apply(batch)
                    if on_batch is not None:
                        on_batch(len(batch))
                self._report_lag()
        finally:
            self.consumer.close()
            self._drop_connection()
            if self._deadletter is not None:
                self._deadletter.flush(10)

    def _fold(self, messages: list[Message]) -> RowBatch:
        """Decode, hold back any cycle the batch cuts in half, fold the rest into rows."""
        split = split_at_open_cycles(self._decode(messages))
        for topic, partition in split.oversized:
            log.warning(
                "a consolidation cycle in %s[%d] is larger than a batch "
                "(MEMSTREAM_PROJECTOR_BATCH_SIZE); it is applied across batches",
                topic,
                partition,
            )
        for (topic, partition), offset in split.resume_at.items():
            self.consumer.seek(TopicPartition(topic, partition, offset))
        batch = RowBatch()
        for record in split.ready:
            if record.event is None:
                batch.advance(record.topic, record.partition, record.offset)
                continue
            batch.add(record.event, record.topic, record.partition, record.offset)
            metrics.projector_events.labels(record.event.event_type).inc()
        return batch

    def _decode(self, messages: list[Message]) -> list[Consumed]:
        records = []
        for message in messages:
            error = message.error()
            if error is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    log.warning("consumer error: %s", error)
                continue
            topic, partition, offset = _position(message)
            try:
                event = codec.decode_ledger(message.value() or b"", self.registry)
            except codec.DecodeError as exc:
                self._dead_letter(message, exc)
                event = None
            records.append(Consumed(topic, partition, offset, event))
        return records

    def _apply(self, batch: RowBatch) -> None:
        started = time.perf_counter()
        try:
            self._with_retries(lambda: write_batch(self.connection(), batch, self.name))
        except psycopg.Error as exc:
            log.error(
                "batch not applied after %d attempts (%s); rewinding",
                self.settings.retry_attempts,
                exc,
            )
            self._rewind(batch)
            return
        metrics.projector_batch.observe(time.perf_counter() - started)
        for table, rows in batch.tables_touched().items():
            metrics.projector_rows.labels(table).inc(rows)
        if batch.last_event_time_ms is not None:
            metrics.projector_lag.set(max(0.0, time.time() - batch.last_event_time_ms / 1000))

    def _with_retries(self, action: Callable[[], T], forever: bool = False) -> T:
        """Run ``action``; on a database error wait ``backoff × attempt`` and try again."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return action()
            except psycopg.Error as exc:
                self._drop_connection()
                metrics.projector_retries.inc()
                if not forever and attempt >= self.settings.retry_attempts:
                    raise
                delay = min(self.settings.retry_backoff_seconds * attempt, 60.0)
                log.warning(
                    "database error (%s); attempt %d, retrying in %.1fs", exc, attempt, delay
                )
                time.sleep(delay)

    def _dead_letter(self, message: Message, exc: codec.DecodeError) -> None:
        metrics.projector_undecodable.inc()
        log.error(
            "undecodable ledger record at %s[%d]@%d: %s",
            message.topic(),
            message.partition(),
            message.offset(),
            exc,
        )
        if self._deadletter is None:
            self._deadletter = Producer({"bootstrap.servers": self.settings.kafka_bootstrap})
        self._deadletter.produce(
            self.settings.deadletter_topic,
            key=message.key(),
            value=message.value() or b"",
            headers=[
                ("reason", f"ledger_{exc.reason}".encode()),
                ("detail", exc.detail.encode()),
                ("source.topic", (message.topic() or "").encode()),
                ("source.partition", str(message.partition()).encode()),
                ("source.offset", str(message.offset()).encode()),
            ],
        )
        self._deadletter.poll(0)

    def _report_lag(self) -> None:
        now = time.monotonic()
        if now - self._last_lag_report < LAG_REPORT_SECONDS:
            return
        self._last_lag_report = now
        try:
            positions = self.consumer.position(self.consumer.assignment())
        except Exception:  # noqa: BLE001 - lag is best effort, never stops projecting
            return
        for tp in positions:
            try:
                _, high = self.consumer.get_watermark_offsets(tp, timeout=1.0)
            except Exception:  # noqa: BLE001
                continue
            done = tp.offset if tp.offset >= 0 else 0
            metrics.consumer_lag.labels(tp.topic, str(tp.partition)).set(max(0, high - done))


def _position(message: Message) -> tuple[str, int, int]:
    """(topic, partition, offset) of a consumed record; librdkafka sets all three on data."""
    topic, partition, offset = message.topic(), message.partition(), message.offset()
    assert topic is not None and partition is not None and offset is not None
    return topic, partition, offset


def run_projector(settings: Settings) -> None:
    """Process entry point: metrics endpoint, migrations check, then project until signalled."""
    import signal

    from prometheus_client import start_http_server

    from projections.schema import migrate

    logging.basicConfig(
        level=logging.INFO, format="[%(asctime)s] %(levelname)s %(name)s: %(message)s"
    )
    migrate(settings.database_url, settings.embedding_dim)
    start_http_server(settings.projector_metrics_port, addr="0.0.0.0")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(
        f"memstream projector: {settings.ledger_topic} -> {settings.database_url.split('@')[-1]} "
        f"(metrics :{settings.projector_metrics_port}/metrics)",
        flush=True,
    )
    Projector(settings).run(stop)
