"""Reads one partition of the ledger from the beginning to its last stable offset.

Used when the worker is assigned a partition (to rebuild state) and by tools. Reads with
``isolation.level=read_committed``: events of aborted or still-open transactions are not
state. This is blocking I/O; the worker runs it in a thread.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

from streams import codec
from streams.engine.ledger import ConsolidationEvent

POLL_SECONDS = 0.5


def read_partition(
    bootstrap: str, topic: str, partition: int, timeout: float = 300.0
) -> Iterator[ConsolidationEvent]:
    """Every committed ledger event of ``topic[partition]`` up to the last stable offset."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "memstream-ledger-replay",  # never committed; assign() needs none
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
        }
    )
    tp = TopicPartition(topic, partition, OFFSET_BEGINNING)
    try:
        low, end = consumer.get_watermark_offsets(tp, timeout=30)
        if end <= low:
            return
        consumer.assign([tp])
        registry = codec.default_registry()
        deadline = time.monotonic() + timeout
        while True:
            message = consumer.poll(POLL_SECONDS)
            error = message.error() if message is not None else None
            if message is not None and error is None:
                value = message.value()
                if value is not None:
                    yield codec.decode_ledger(value, registry)
                if (message.offset() or 0) + 1 >= end:
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
