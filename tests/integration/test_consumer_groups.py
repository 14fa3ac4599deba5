"""Describing and deleting a consumer group on the real broker of the test session's stack,
which is started fresh: its group coordinator may still be loading when the first test asks
(memstream/consumer_groups.py)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import Consumer, ConsumerGroupState
from confluent_kafka.admin import NewTopic

from memstream.consumer_groups import delete_group, describe_group
from memstream.stack.kafka_broker import admin_client
from memstream.waiting import wait_until

pytestmark = pytest.mark.integration


def test_a_joined_group_is_described_with_its_member_then_deleted_once_empty(stack: Any) -> None:
    admin = admin_client(stack.kafka_bootstrap)
    name = f"groups-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(name, num_partitions=3, replication_factor=1)])[name].result(60)
    assert describe_group(admin, name).state == ConsumerGroupState.DEAD  # nobody joined yet

    consumer = Consumer({"bootstrap.servers": stack.kafka_bootstrap, "group.id": name})
    consumer.subscribe([name])

    def stable() -> Any:
        consumer.poll(0.1)
        description = describe_group(admin, name)
        return description if description.state == ConsumerGroupState.STABLE else None

    try:
        description = wait_until(stable, timeout=60, what=f"group {name} stable")
        [member] = description.members
        assert member.assignment is not None
        assert {tp.partition for tp in member.assignment.topic_partitions} == {0, 1, 2}
    finally:
        consumer.close()

    delete_group(admin, name)
    listed = admin.list_consumer_groups(request_timeout=30).result(timeout=60)
    assert name not in {g.group_id for g in listed.valid}
