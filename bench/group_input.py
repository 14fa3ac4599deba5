"""A throughput phase's input, published whole and at once to processes whose consumer group
is already in place: the worker's and the pass-through's input events, and the projector's
ledger (the worker's, published again).

Why not start the processes on an input that is already there: a role of several processes
(``MEMSTREAM_WORKER_PROCESSES``, ``MEMSTREAM_PROJECTOR_PROCESSES``, or pass-through agents
started side by side) forms its group while it works. With the first member holding every
partition until the others' join is noticed (seconds: the next heartbeat), the phase
measured one process and a rebalance, not the role. So the processes start on an empty
topic, the bench waits until their group is stable with every partition assigned, and then
the records (partitions, keys, values and headers) are committed in one transaction:
read_committed consumers see none of them before the commit and all of them after it.
Every throughput phase is timed the same way, from its first output record to its last.
"""

from __future__ import annotations

import uuid

from confluent_kafka import ConsumerGroupState, Producer

from bench.harness import BenchError
from bench.measure import Check, TopicRecord
from bench.progress import Counter
from memstream.consumer_groups import CoordinatorNotReady, describe_group
from memstream.stack import LocalStack
from memstream.waiting import WaitTimeout, wait_until
from streams.config.kafka_security import confluent_config
from streams.config.settings import Settings
from streams.ingest_processor import partition_for

GROUP_TIMEOUT_SECONDS = 120.0
PUBLISH_TIMEOUT_SECONDS = 120.0


def wait_for_group(settings: Settings, group: str, topic: str, members: int, check: Check) -> None:
    """Until ``group`` is stable with ``members`` members holding every partition of
    ``topic``. On a new broker the group's coordinator answers "not yet" for a moment:
    :func:`describe_group` asks again until it is ready."""
    admin = LocalStack(settings).kafka_admin()
    seen = ["no description yet"]

    def formed() -> bool:
        check()
        description = describe_group(admin, group)
        assigned = len(
            [
                tp
                for member in description.members
                for tp in (member.assignment.topic_partitions if member.assignment else [])
                if tp.topic == topic
            ]
        )
        seen[0] = (
            f"{description.state.name}, {len(description.members)} members, {assigned} partitions"
        )
        return (
            description.state == ConsumerGroupState.STABLE
            and len(description.members) == members
            and assigned == settings.partitions
        )

    try:
        wait_until(
            formed,
            timeout=GROUP_TIMEOUT_SECONDS,
            what=f"group {group} stable with {members} member(s) holding the "
            f"{settings.partitions} partitions of {topic}",
            describe=lambda: seen[0],
        )
    except (WaitTimeout, CoordinatorNotReady) as exc:
        raise BenchError(str(exc)) from None


def input_records(encoded: list[tuple[bytes, bytes]], partitions: int) -> list[TopicRecord]:
    """``MemoryWritten`` (key, value) pairs as a service's publisher sends them: to the
    partition Kafka's default partitioner picks for the key, with the event-type header."""
    return [
        TopicRecord(partition_for(key, partitions), key, value, [("event_type", b"MemoryWritten")])
        for key, value in encoded
    ]


def publish_at_once(settings: Settings, topic: str, records: list[TopicRecord]) -> None:
    """All of ``records`` to ``topic`` in one transaction, each to its own partition."""
    producer = Producer(
        {
            **confluent_config(settings),
            "transactional.id": f"bench-input-{uuid.uuid4().hex[:8]}",
            "linger.ms": 20,
            "batch.size": 524_288,
        }
    )
    producer.init_transactions(PUBLISH_TIMEOUT_SECONDS)
    producer.begin_transaction()
    bar = Counter(len(records), f"records published to {topic} (committed at the end)")
    for n, record in enumerate(records, 1):
        while True:
            try:
                producer.produce(
                    topic,
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
