"""A pipeline with a master key (issue 43): every personal field is sealed on every topic and
in the worker's state, while the read models, reached through the real worker and projector,
are exactly the oracle's; state restored from the sealed changelog goes on as before; `tail`
with the key prints plaintext, without it only sealed text."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition

from streams.config.kafka_security import confluent_config
from streams.engine.model import MemoryEvent, MemoryWritten
from streams.state.restore import state_topic
from tests.support import Pipeline
from tests.workloads import LINK_QUERY, cycle_heavy_workload, expected_links, expected_rows

pytestmark = pytest.mark.integration


def raw_values(pipeline: Pipeline, topic: str) -> bytes:
    """Every record value of ``topic``, committed or not, as the broker holds them."""
    return b"\x00".join(value for _, value in every_record(pipeline, topic))


def every_record(pipeline: Pipeline, topic: str) -> list[tuple[bytes | None, bytes]]:
    """Every (key, value) of ``topic`` the broker holds, aborted transactions' included."""
    consumer = Consumer(
        {
            **confluent_config(pipeline.settings),
            "group.id": f"scan-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "isolation.level": "read_uncommitted",
            "enable.partition.eof": True,
        }
    )
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        left, records = set(partitions), list[tuple[bytes | None, bytes]]()
        while left:
            for message in consumer.consume(500, 1.0):
                error = message.error()
                if error is not None and error.code() == KafkaError._PARTITION_EOF:
                    left.discard(message.partition())
                elif error is None and (value := message.value()) is not None:
                    records.append((message.key(), value))
        return records
    finally:
        consumer.close()


def files_under(directory: Path) -> bytes:
    return b"\x00".join(p.read_bytes() for p in directory.rglob("*") if p.is_file())


def personal_values(events: list[MemoryEvent]) -> tuple[set[bytes], set[bytes]]:
    """The texts (contents, speakers) and embeddings the workload writes."""
    texts, embeddings = set(), set()
    for event in events:
        if isinstance(event.payload, MemoryWritten):
            memory = event.payload.memory
            texts.add(memory.content.encode())
            if memory.speaker:
                texts.add(memory.speaker.encode())
            if memory.embedding:
                embeddings.add(memory.embedding)
    return texts, embeddings


def test_a_sealed_pipeline_reaches_the_oracles_read_models_with_no_plaintext_on_any_topic(
    sealed: Pipeline,
) -> None:
    """Given a master key and a cycle-heavy workload of three users with named speakers,
    forgets and sessions,
    when the real worker and projector run it,
    then the read models and links equal the oracle's, and no topic (input, ledger, state
    changelog) nor the worker's local store holds a content, a speaker's name or an
    embedding in clear."""
    sealed.start_all()
    events = cycle_heavy_workload(240, users=3, seed=43, forgets=0.08)
    oracle = sealed.oracle(events)

    for event in events:
        sealed.publisher.publish(event)
    sealed.publisher.flush()
    sealed.wait_for_log_count(len(oracle.decisions))

    assert sealed.memory_rows() == expected_rows(oracle)
    assert sorted(sealed.query(LINK_QUERY), key=repr) == expected_links(oracle)
    texts, embeddings = personal_values(events)
    settings = sealed.settings
    for topic in (settings.events_topic, settings.ledger_topic, state_topic(settings)):
        held = raw_values(sealed, topic)
        assert held, topic
        assert [t for t in texts if t in held] == [], topic
        assert [e for e in embeddings if e in held] == [], topic
    sealed.processes["worker"].stop()  # its last checkpoint on disk
    stored = files_under(settings.worker_data_dir)
    assert [t for t in texts if t in stored] == []
    assert [e for e in embeddings if e in stored] == []


def test_state_restored_from_the_sealed_changelog_goes_on_like_the_oracle(
    sealed: Pipeline,
) -> None:
    """Given a sealed pipeline that processed half a workload,
    when the worker is stopped, its local store deleted, and it restarts (restoring every
    user from the sealed changelog) to process the other half,
    then the read models equal the oracle's for the whole workload."""
    events = cycle_heavy_workload(200, users=2, seed=7, forgets=0.08)
    oracle = sealed.oracle(events)
    first, second = events[:100], events[100:]
    sealed.start_all()
    for event in first:
        sealed.publisher.publish(event)
    sealed.publisher.flush()
    sealed.wait_for_log_count(len(sealed.oracle(first).decisions))
    sealed.processes["worker"].stop()
    shutil.rmtree(sealed.settings.worker_data_dir)

    sealed.start("worker")
    for event in second:
        sealed.publisher.publish(event)
    sealed.publisher.flush()
    sealed.wait_for_log_count(len(oracle.decisions))

    assert sealed.memory_rows() == expected_rows(oracle)


def test_tail_opens_the_ledger_with_the_key_and_shows_sealed_text_without_it(
    sealed: Pipeline,
) -> None:
    sealed.start("worker")
    sealed.publisher.write("tail-sealed", "Sealed Sam keeps bees in Porto", speaker="Sam")
    sealed.publisher.flush()
    sealed.read_topic(sealed.settings.ledger_topic, expected=1)

    with_key = sealed.cli("tail", "--from-beginning", "--event-type", "MemoryStored", "--max", "1")
    key = sealed.settings.master_key
    sealed.settings = sealed.settings.with_overrides(master_key="")
    try:
        without = sealed.cli(
            "tail", "--from-beginning", "--event-type", "MemoryStored", "--max", "1"
        )
    finally:
        sealed.settings = sealed.settings.with_overrides(master_key=key)

    assert with_key.returncode == 0, with_key.stderr
    [opened] = [json.loads(line) for line in with_key.stdout.splitlines()]
    assert opened["payload"]["memory"]["content"] == "Sealed Sam keeps bees in Porto"
    assert opened["payload"]["memory"]["speaker"] == "Sam"
    assert without.returncode == 0, without.stderr
    [closed] = [json.loads(line) for line in without.stdout.splitlines()]
    assert closed["payload"]["memory"]["content"].startswith(("ms3:", "ms4:"))
    assert "Porto" not in without.stdout
    assert closed["payload"]["memory"]["memory_id"] == opened["payload"]["memory"]["memory_id"]
