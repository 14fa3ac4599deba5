"""The worker as a map: which topics it reads and writes, which tables it keeps, which agents
run. Read this file to know the worker; the logic lives in ``streams.ingest`` and
``streams.engine``.

    memory.events ──ingest──▶ memory.consolidation   (accepted: versioned ledger events)
                      └─────▶ memory.deadletter      (rejected: original bytes + reason)
    tables (changelog-backed, co-partitioned with memory.events by user_id):
      memories     user_id␟memory_id → state.MemoryRecord
      seen_events  user_id␟event_id  → 1   (idempotency)

Runs with ``processing_guarantee="exactly_once"``: a record's table writes, its ledger
events and its input offset commit in one Kafka transaction.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import faust
from faust.types import TP

from memstream.settings import Settings
from streams import metrics
from streams.engine.validation import Limits
from streams.ingest import Emission, IngestProcessor


@dataclass
class Worker:
    app: faust.App
    processor: IngestProcessor


def build_app(settings: Settings) -> Worker:
    app = faust.App(
        settings.app_id,
        broker=f"kafka://{settings.kafka_bootstrap}",
        store=settings.table_store,
        datadir=str(settings.worker_data_dir / settings.app_id),
        processing_guarantee="exactly_once",
        topic_partitions=settings.partitions,
        topic_replication_factor=1,
        broker_commit_interval=settings.commit_interval_seconds,
        consumer_auto_offset_reset="earliest",
        web_enabled=False,
    )
    raw: dict[str, Any] = {"key_serializer": "raw", "value_serializer": "raw"}
    events = app.topic(settings.events_topic, partitions=settings.partitions, **raw)
    ledger = app.topic(settings.ledger_topic, partitions=settings.partitions, **raw)
    deadletter = app.topic(settings.deadletter_topic, partitions=settings.partitions, **raw)

    # Values are our own Avro bytes. key_type/value_type=bytes is what makes Faust pick the
    # raw codec for the store and the changelog alike (a schema alone only covers the latter).
    table: dict[str, Any] = {
        "partitions": settings.partitions,
        "key_type": bytes,
        "value_type": bytes,
        "schema": faust.Schema(key_type=bytes, value_type=bytes, **raw),
    }
    memories = app.Table("memories", **table)
    seen_events = app.Table("seen_events", **table)

    limits = Limits(settings.embedding_dim, settings.max_content_bytes)
    processor = IngestProcessor(memories, seen_events, limits)
    progress = _PartitionProgress(settings.events_topic)

    @app.agent(events, name="ingest")
    async def ingest(stream: faust.StreamT) -> None:
        async for event in stream.events():
            message = event.message
            source = _source_headers(message.topic, message.partition, message.offset)
            emission = processor.process(message.key, message.value, source)
            for record in emission.ledger:
                await ledger.send(key=record.key, value=record.value, headers=record.headers)
            if emission.deadletter is not None:
                letter = emission.deadletter
                await deadletter.send(key=letter.key, value=letter.value, headers=letter.headers)
            _observe(emission)
            progress.processed(message.partition, message.offset)

    @app.timer(interval=5.0)
    async def report_consumer_lag() -> None:
        progress.report(app)

    @app.on_partitions_assigned.connect  # type: ignore[arg-type]
    async def on_assigned(app: faust.App, assigned: set[TP], **_: Any) -> None:
        owned = {tp for tp in app.consumer.assignment() if tp.topic == settings.events_topic}
        metrics.partitions_assigned.set(len(owned))

    return Worker(app, processor)


def _source_headers(topic: str, partition: int, offset: int) -> list[tuple[str, bytes]]:
    return [
        ("source.topic", topic.encode()),
        ("source.partition", str(partition).encode()),
        ("source.offset", str(offset).encode()),
    ]


def _observe(emission: Emission) -> None:
    if emission.rejection is not None:
        metrics.events_rejected.labels(emission.rejection.reason).inc()
        return
    if emission.duplicate:
        metrics.events_duplicate.inc()
        return
    metrics.events_ingested.labels(emission.event_type or "unknown").inc()
    now = time.time()
    for decision in emission.ledger_events:
        metrics.ledger_events.labels(decision.event_type).inc()
        metrics.event_lag.observe(max(0.0, now - decision.occurred_at / 1000))


class _PartitionProgress:
    """Last processed offset per input partition, to export consumer lag."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.next_offsets: dict[int, int] = {}

    def processed(self, partition: int, offset: int) -> None:
        self.next_offsets[partition] = offset + 1

    def report(self, app: faust.App) -> None:
        consumer = app.consumer
        for tp in consumer.assignment():
            if tp.topic != self.topic:
                continue
            highwater = consumer.highwater(tp)
            if highwater is None:
                continue
            done = self.next_offsets.get(tp.partition, highwater)
            metrics.consumer_lag.labels(tp.topic, str(tp.partition)).set(max(0, highwater - done))
