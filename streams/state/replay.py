"""Reads one partition of a topic (the ledger, the state changelog) up to its last stable
offset.

Used when the worker is assigned a partition (to restore state) and by tools. Reads with
``isolation.level=read_committed``: events of aborted or still-open transactions are not
state. This is blocking I/O; the worker runs it in a thread.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

from streams.config.kafka_security import confluent_config, resolve
from streams.config.settings import Settings
from streams.engine.ledger import ConsolidationEvent
from streams.kafka import codec

POLL_SECONDS = 0.5


def read_partition(
    kafka: str | Settings, topic: str, partition: int, timeout: float = 300.0
) -> Iterator[ConsolidationEvent]:
    """Every committed ledger event of ``topic[partition]`` up to the last stable offset.

    ``kafka``: settings, or a bootstrap address (the security settings then come from this
    process's environment, where every memstream process reads them)."""
    registry = codec.default_registry()
    for _, _, value in read_committed(kafka, topic, partition, timeout=timeout):
        if value is not None:
            yield codec.decode_ledger(value, registry)


def read_committed(
    kafka: str | Settings,
    topic: str,
    partition: int,
    start: int = OFFSET_BEGINNING,
    limit: int | None = None,
    timeout: float = 300.0,
) -> Iterator[tuple[int, bytes | None, bytes | None]]:
    """Committed (offset, key, value) records of ``topic[partition]`` from ``start`` up to the
    last stable offset, at most ``limit`` of them; a None value is a tombstone."""
    consumer = Consumer(
        {
            **confluent_config(resolve(kafka)),
            "group.id": "memstream-partition-reader",  # never committed; assign() needs none
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
        }
    )
    tp = TopicPartition(topic, partition, start)
    try:
        low, end = consumer.get_watermark_offsets(tp, timeout=30)
        if end <= max(low, start):
            return
        consumer.assign([tp])
        deadline = time.monotonic() + timeout
        yielded = 0
        while limit is None or yielded < limit:
            message = consumer.poll(POLL_SECONDS)
            error = message.error() if message is not None else None
            if message is not None and error is None:
                offset = message.offset() or 0
                yield offset, message.key(), message.value()
                yielded += 1
                if offset + 1 >= end:
                    return
            elif (
                error is not None
                and error.code() == KafkaError._PARTITION_EOF
                # The end may be a transaction marker, which is never delivered.
                and consumer.position([tp])[0].offset >= end
            ):
                return
            if time.monotonic() > deadline:
                raise KafkaException(
                    f"reading {topic}[{partition}] to offset {end} took over {timeout:.0f} s"
                )
    finally:
        consumer.close()
