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

import uuid

from confluent_kafka import ConsumerGroupState, Producer

from bench.harness import BenchError
from bench.measure import Check, TopicRecord
from bench.progress import Counter
from memstream.kafka_security import confluent_config
from memstream.settings import Settings
from memstream.stack import LocalStack
from memstream.waiting import WaitTimeout, wait_until

GROUP_TIMEOUT_SECONDS = 120.0
PUBLISH_TIMEOUT_SECONDS = 120.0


def wait_for_group(settings: Settings, members: int, check: Check) -> None:
    """Until the projector group is stable with ``members`` members holding every
    partition of the ledger topic."""
    admin = LocalStack(settings).kafka_admin()
    group = settings.projector_group
    seen = ["no description yet"]

    def formed() -> bool:
        check()
        description = admin.describe_consumer_groups([group])[group].result()
        assigned = sum(
            1
            for member in description.members
            for tp in (member.assignment.topic_partitions if member.assignment else [])
            if tp.topic == settings.ledger_topic
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
            what=f"projector group {group} stable with {members} member(s) holding "
            f"{settings.partitions} partitions",
            describe=lambda: seen[0],
        )
    except WaitTimeout as exc:
        raise BenchError(str(exc)) from None


def publish_at_once(settings: Settings, records: list[TopicRecord]) -> None:
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
