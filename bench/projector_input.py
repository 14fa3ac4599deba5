"""The projector phase's input: the worker's ledger, published again, whole and at once, to a
projector whose consumer group is already in place.

Why not start the projector on the worker's ledger as it lies: the phase lasts 1-2 s, and a
projector of several processes (``MEMSTREAM_PROJECTOR_PROCESSES``) forms its group while it
works. With the first member holding every partition until the others' join is noticed
(seconds: the next heartbeat), the phase measured one process and a rebalance, not the
projector. So the projector starts on an empty ledger topic, the bench waits until its group
is stable with every partition assigned, and then the worker's records (same partitions,
keys, values and headers) are committed in one transaction: read_committed consumers see
none of them before the commit and all of them after it.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    ConsumerGroupState,
    Message,
    Producer,
    TopicPartition,
)

from bench.harness import BenchError
from bench.measure import Check
from bench.progress import Counter
from memstream.kafka_security import confluent_config
from memstream.settings import Settings
from memstream.stack import LocalStack

GROUP_TIMEOUT_SECONDS = 120.0
PUBLISH_TIMEOUT_SECONDS = 120.0


@dataclass(frozen=True)
class LedgerRecord:
    partition: int
    key: bytes | None
    value: bytes
    headers: list[tuple[str, str | bytes | None]] | None


def read_ledger(
    settings: Settings, expected: int, stall_timeout: float = 60.0
) -> list[LedgerRecord]:
    """Every committed record of ``settings``' ledger topic, ``expected`` of them."""
    consumer = Consumer(
        {
            **confluent_config(settings),
            "group.id": f"bench-ledger-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    consumer.assign(
        [
            TopicPartition(settings.ledger_topic, p, OFFSET_BEGINNING)
            for p in range(settings.partitions)
        ]
    )
    records: list[LedgerRecord] = []
    last_progress = time.monotonic()
    try:
        while len(records) < expected:
            messages = consumer.consume(2000, 0.2)
            for message in messages:
                if message.error() is None:
                    records.append(
                        LedgerRecord(
                            message.partition() or 0,
                            message.key(),
                            message.value() or b"",
                            _headers(message),
                        )
                    )
            if messages:
                last_progress = time.monotonic()
            elif time.monotonic() - last_progress > stall_timeout:
                raise BenchError(
                    f"read {len(records)} of {expected} ledger records of "
                    f"{settings.ledger_topic}, then nothing for {stall_timeout:.0f} s"
                )
    finally:
        consumer.close()
    return records


def _headers(message: Message) -> list[tuple[str, str | bytes | None]] | None:
    """A consumed record's headers (librdkafka gives a list of pairs, or none)."""
    headers = message.headers()
    return headers if isinstance(headers, list) else None


def wait_for_group(settings: Settings, members: int, check: Check) -> None:
    """Until the projector group is stable with ``members`` members holding every
    partition of the ledger topic."""
    admin = LocalStack(settings).kafka_admin()
    group = settings.projector_group
    deadline = time.monotonic() + GROUP_TIMEOUT_SECONDS
    seen = "no description yet"
    while time.monotonic() < deadline:
        check()
        description = admin.describe_consumer_groups([group])[group].result()
        assigned = sum(
            1
            for member in description.members
            for tp in (member.assignment.topic_partitions if member.assignment else [])
            if tp.topic == settings.ledger_topic
        )
        seen = (
            f"{description.state.name}, {len(description.members)} members, {assigned} partitions"
        )
        if (
            description.state == ConsumerGroupState.STABLE
            and len(description.members) == members
            and assigned == settings.partitions
        ):
            return
        time.sleep(0.2)
    raise BenchError(
        f"projector group {group} not stable with {members} member(s) holding "
        f"{settings.partitions} partitions after {GROUP_TIMEOUT_SECONDS:.0f} s ({seen})"
    )


def publish_at_once(settings: Settings, records: list[LedgerRecord]) -> None:
    """All of ``records`` to ``settings``' ledger topic in one transaction."""
    producer = Producer(
        {
            **confluent_config(settings),
            "transactional.id": f"bench-ledger-{uuid.uuid4().hex[:8]}",
            "linger.ms": 20,
            "batch.size": 524_288,
        }
    )
    producer.init_transactions(PUBLISH_TIMEOUT_SECONDS)
    producer.begin_transaction()
    bar = Counter(len(records), "ledger records published (committed at the end)")
    for n, record in enumerate(records, 1):
        while True:
            try:
                producer.produce(
                    settings.ledger_topic,
                    value=record.value,
                    key=record.key,
                    headers=record.headers,
                    partition=record.partition,
                )
                break
            except BufferError:  # the local queue is full: let it drain
                producer.poll(0.05)
        producer.poll(0)
        if n % 2000 == 0:
            bar.show(n)
    producer.commit_transaction(PUBLISH_TIMEOUT_SECONDS)
    bar.show(len(records))
    bar.finish()
