"""A bench run removes its own topics, consumer groups and databases from the local stack,
and only its own (real broker, real PostgreSQL: what `memstream bench` runs on)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from bench.cleanup import remove_bench_objects
from bench.harness import Harness
from memstream.stack.kafka_broker import admin_client
from memstream.waiting import wait_until
from streams.config.settings import Settings

pytestmark = pytest.mark.integration


def a_run(stack: Any) -> tuple[Harness, Settings]:
    """A bench run with one projecting phase: its topics and database exist, and its
    projector group has committed an offset (so the group exists, empty)."""
    harness = Harness(Settings(state_dir=Path(stack.state_dir)), stack, partitions=2)
    settings = harness.pipeline("phase", database=True)
    consumer = Consumer(
        {"bootstrap.servers": stack.kafka_bootstrap, "group.id": settings.projector_group}
    )
    try:
        commit_when_the_coordinator_is_ready(consumer, TopicPartition(settings.ledger_topic, 0, 0))
    finally:
        consumer.close()
    return harness, settings


COORDINATOR_NOT_READY = (
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
    KafkaError.NOT_COORDINATOR,
)


def commit_when_the_coordinator_is_ready(consumer: Consumer, offset: TopicPartition) -> None:
    """A new group's coordinator may still be loading on a fresh broker: retry until it
    takes the commit."""

    def committed() -> bool:
        try:
            consumer.commit(offsets=[offset], asynchronous=False)
        except KafkaException as exc:
            error = exc.args[0]
            if not (error.retriable() or error.code() in COORDINATOR_NOT_READY):
                raise
            return False
        return True

    wait_until(committed, timeout=30, what="the group coordinator taking a commit")


def objects_of(stack: Any, run_id: str) -> tuple[set[str], set[str], set[str]]:
    admin = admin_client(stack.kafka_bootstrap)
    prefix = f"bench{run_id}"
    topics = {t for t in admin.list_topics(timeout=30).topics if t.startswith(prefix)}
    listed = admin.list_consumer_groups(request_timeout=30).result(timeout=60)
    groups = {g.group_id for g in listed.valid if g.group_id.startswith(prefix)}
    with psycopg.connect(stack.database_url, autocommit=True) as conn:
        rows = conn.execute("SELECT datname FROM pg_database").fetchall()
    databases = {r[0] for r in rows if r[0].startswith(prefix)}
    return topics, groups, databases


def test_a_run_removes_its_own_topics_groups_and_databases_and_no_other_s(stack: Any) -> None:
    ours, _ = a_run(stack)
    theirs, their_settings = a_run(stack)
    topics, groups, databases = objects_of(stack, ours.run_id)
    assert len(topics) >= 3 and len(groups) == 1 and len(databases) == 1

    removed = remove_bench_objects(
        admin_client(stack.kafka_bootstrap), stack.database_url, ours.run_id
    )

    assert (removed.topics, removed.groups, removed.databases) == (len(topics), 1, 1)
    assert objects_of(stack, ours.run_id) == (set(), set(), set())
    their_topics, their_groups, their_databases = objects_of(stack, theirs.run_id)
    assert their_settings.events_topic in their_topics
    assert their_groups == {their_settings.projector_group}
    assert len(their_databases) == 1


def test_a_clean_removes_every_run_s_leftovers(stack: Any) -> None:
    first, _ = a_run(stack)
    second, _ = a_run(stack)

    removed = remove_bench_objects(admin_client(stack.kafka_bootstrap), stack.database_url)

    assert removed.databases >= 2
    assert objects_of(stack, first.run_id) == (set(), set(), set())
    assert objects_of(stack, second.run_id) == (set(), set(), set())
