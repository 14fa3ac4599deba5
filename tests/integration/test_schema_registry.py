"""The Confluent wire format with a real Schema Registry (issue 40): the local Apicurio that
`memstream up --registry` runs, the real broker, worker, projector and `memstream tail`.

- Memory events written by confluent-kafka's standard AvroSerializer (no memstream code) are
  consolidated, and its standard AvroDeserializer reads the ledger back equal to `tail`.
- A Java consumer with Apicurio's standard Kafka deserializer reads the same ledger.
- A migration: a topic and a ledger holding both formats are read without error, and a record
  naming an id the registry does not have is a dead letter (`unknown_schema`).
- The registry stopped mid-run: nothing is lost, processing goes on with the cached ids, and
  the stream equals the batch oracle; once restarted, a new reader resolves every id again.

The registry is started once per session (the `schema_registry` fixture); these tests are
few on purpose (each starts a worker and a projector)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from memstream.publisher import MemoryPublisher
from memstream.waiting import wait_until
from streams.config.kafka_security import confluent_config
from streams.engine.model import Memory, MemoryAccessed, MemoryEvent, MemoryWritten
from streams.kafka import codec
from tests.support import Pipeline
from tests.workloads import expected_rows

pytestmark = pytest.mark.integration

JAVA_PROJECT = Path(__file__).resolve().parents[1] / "java" / "ledger-reader"
T0 = 1_790_000_000_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@pytest.fixture
def confluent(stack, schema_registry, tmp_path_factory):
    """A pipeline whose worker writes the Confluent wire format, ids from the real registry."""
    url = schema_registry.running().url
    p = Pipeline.create(stack, tmp_path_factory.mktemp("confluent"))
    p.settings = p.settings.with_overrides(wire_format="CONFLUENT", schema_registry_url=url)
    try:
        yield p
    finally:
        p.close()


def an_event(n: int, user: str, payload: Any) -> MemoryEvent:
    event_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"schema-registry-test/{user}/{n}"))
    return MemoryEvent(event_id, user, T0 + n * 1000, payload, source="tests")


def writes(user: str, texts: list[str], first: int = 0) -> list[MemoryEvent]:
    return [
        an_event(first + i, user, MemoryWritten(Memory(f"{user}-m{first + i}", user, text)))
        for i, text in enumerate(texts)
    ]


def tail_documents(pipeline: Pipeline) -> dict[str, dict[str, Any]]:
    """`memstream tail` of the whole ledger, embeddings included: event id -> JSON."""
    done = pipeline.cli("tail", "--from-beginning", "--timeout", "5", "--embeddings", "base64")
    assert done.returncode == 0, done.stderr
    assert "undecodable" not in done.stderr, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return {line["event_id"]: line for line in lines}


def without_derived_fields(document: Any) -> Any:
    """`tail`'s JSON without what it adds beside the Avro fields: ISO twins of the times, the
    Kafka coordinates and the top-level ``event_type`` (the payload's record name)."""
    if isinstance(document, dict):
        return {
            key: without_derived_fields(value)
            for key, value in document.items()
            if not key.endswith("_iso") and key not in ("kafka", "event_type")
        }
    if isinstance(document, list):
        return [without_derived_fields(v) for v in document]
    return document


def as_tail_writes_it(value: Any) -> Any:
    """A datum as a standard Avro reader gives it, in tail's terms: timestamp-millis as epoch
    milliseconds (the reader builds datetimes), uuid-typed ids as text (it builds UUIDs),
    bytes (packed float32 embeddings) as base64."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime):
        return (value - EPOCH) // timedelta(milliseconds=1)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: as_tail_writes_it(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_tail_writes_it(v) for v in value]
    return value


def read_ledger_with_the_standard_deserializer(pipeline: Pipeline, url: str, expected: int):
    client = SchemaRegistryClient({"url": url})
    deserializer = AvroDeserializer(client)
    topic = pipeline.settings.ledger_topic
    records = pipeline.read_topic(topic, expected=expected)
    context = SerializationContext(topic, MessageField.VALUE)
    return [deserializer(r.value(), context) for r in records], records


def test_standard_confluent_serdes_write_events_and_read_the_ledger_as_tail_does(
    confluent, schema_registry
):
    """Given a worker writing the Confluent format, with its schemas in the real registry,
    when a plain confluent-kafka producer with the standard AvroSerializer (schema fetched
    from the registry, nothing of memstream) publishes memory events,
    then the worker consolidates them, and the standard AvroDeserializer reads every ledger
    record through the registry equal to what `memstream tail` prints (embeddings: the
    packed float32 bytes tail shows as base64)."""
    url = schema_registry.running().url
    confluent.start_all()
    client = SchemaRegistryClient({"url": url})
    subject = f"{confluent.settings.events_topic}-value"
    wait_until(
        lambda: subject in client.get_subjects(),
        timeout=90,
        what=f"the worker to register {subject}",
    )
    schema = client.get_latest_version(subject).schema
    serializer = AvroSerializer(
        client, schema.schema_str, conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    producer = Producer({**confluent_config(confluent.settings), "partitioner": "murmur2_random"})
    embedding = [((i % 7) - 3) / 10 for i in range(confluent.settings.embedding_dim)]
    events = [
        ("sr-ann", "m-1", "Ann keeps her notes in Obsidian", None),
        ("sr-ann", "m-2", "Ann moved to Porto", codec.pack_embedding(embedding)),
        ("sr-bo", "m-3", "Bo prefers green tea", None),
    ]
    context = SerializationContext(confluent.settings.events_topic, MessageField.VALUE)
    for n, (user, memory_id, content, packed) in enumerate(events):
        datum = {
            "event_id": str(uuid.uuid4()),
            "user_id": user,
            "occurred_at": T0 + n,
            "source": "a-plain-producer",
            "payload": (
                "memstream.v1.MemoryWritten",
                {
                    "memory": {
                        "memory_id": memory_id,
                        "user_id": user,
                        "content": content,
                        "embedding": packed,
                    }
                },
            ),
        }
        producer.produce(
            confluent.settings.events_topic, key=user.encode(), value=serializer(datum, context)
        )
    producer.flush(30)

    decoded, records = read_ledger_with_the_standard_deserializer(confluent, url, len(events))
    shown = tail_documents(confluent)

    assert all(r.value()[:1] == b"\x00" for r in records)  # the Confluent wire format
    assert len(decoded) == len(shown) >= len(events)
    for datum in map(as_tail_writes_it, decoded):
        assert datum == without_derived_fields(shown[datum["event_id"]])
    contents = {d["payload"]["memory"]["content"] for d in decoded if "memory" in d["payload"]}
    assert {d["payload"].get("memory", {}).get("embedding") is not None for d in decoded} == {True}
    assert contents == {content for _, _, content, _ in events}
    stored = {d["payload"]["memory"]["memory_id"]: d for d in decoded if "memory" in d["payload"]}
    assert stored["m-2"]["payload"]["memory"]["embedding"] == codec.pack_embedding(embedding)


def test_a_java_consumer_with_apicurio_s_standard_deserializer_reads_the_ledger(
    confluent, schema_registry, tmp_path
):
    """Given a ledger in the Confluent format, when a Java program using only Kafka's client
    and Apicurio's standard Avro deserializer (from Maven Central) reads it through the
    registry, then it sees every record `memstream tail` shows: ids, types, users, contents
    and 1,536-byte embeddings."""
    state = schema_registry.running()
    confluent.start("worker")
    for event in writes("java-ann", ["Ann reads Kafka from Java", "Ann likes Flink"]):
        confluent.publisher.publish(event)
    confluent.publisher.flush()
    ledger = confluent.read_topic(confluent.settings.ledger_topic, expected=2)
    shown = tail_documents(confluent)

    build = tmp_path / "ledger-reader-build"
    maven = subprocess.run(
        [
            "mvn",
            "-q",
            "-B",
            f"-Dbuild.dir={build}",
            "compile",
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
        ],
        cwd=JAVA_PROJECT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert maven.returncode == 0, maven.stdout + maven.stderr
    classpath = f"{build / 'classes'}{os.pathsep}{build / 'dependency'}/*"
    base = state.url.removesuffix("/apis/ccompat/v7")
    java = subprocess.run(
        [
            "java",
            "-cp",
            classpath,
            "io.memstream.tests.LedgerReader",
            confluent.settings.kafka_bootstrap,
            confluent.settings.ledger_topic,
            base,
            str(len(ledger)),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )

    assert java.returncode == 0, java.stdout + java.stderr
    read = {tuple(line.split("\t")) for line in java.stdout.splitlines()}
    expected = set()
    for document in shown.values():
        memory = document["payload"].get("memory")
        expected.add(
            (
                document["event_id"],
                document["event_type"],
                document["user_id"],
                memory["content"] if memory else "-",
                str(len(base64.b64decode(memory["embedding"]))) if memory else "-",
            )
        )
    assert read == expected
    assert {row[4] for row in read if row[1] == "MemoryStored"} == {"1536"}


def test_a_migration_reads_both_formats_and_dead_letters_an_unknown_id(confluent, schema_registry):
    """Given a worker writing single-object records, replaced midway by one writing the
    Confluent format, and producers of both formats on the input topic,
    when a record naming a schema id the registry does not have arrives among them,
    then every good event is consolidated and projected as the oracle says, `tail` reads the
    mixed ledger without an undecodable record, and the odd record is a dead letter with the
    reason `unknown_schema` and its original bytes."""
    settings = confluent.settings
    confluent.start("worker", wire_format="SINGLE-OBJECT")
    confluent.start("projector")
    before = writes("mix-ann", ["Ann uses Vim", "Ann lives in Oslo"]) + [
        an_event(9, "mix-ann", MemoryAccessed("mix-ann-m0"))
    ]
    with MemoryPublisher(settings, source="tests", wire_format="single-object") as old:
        for event in before:
            old.publish(event)
    confluent.read_topic(settings.ledger_topic, expected=3)
    confluent.processes.pop("worker").stop()

    confluent.start("worker")  # the Confluent format from here on
    after = writes("mix-bo", ["Bo runs a bakery", "Bo speaks Danish"], first=20)
    unknown = (
        codec.confluent_frame(2_000_000_000) + codec.encode_event(after[0])[codec.HEADER_SIZE :]
    )
    with MemoryPublisher(settings, source="tests", wire_format="confluent") as new:
        new.publish(after[0])
        new.publish_raw(b"mix-bo", unknown, "MemoryWritten", "unknown id")
        new.publish(after[1])
    with MemoryPublisher(settings, source="tests", wire_format="single-object") as old:
        old.publish(an_event(30, "mix-ann", MemoryAccessed("mix-ann-m1")))
    events = [*before, *after, an_event(30, "mix-ann", MemoryAccessed("mix-ann-m1"))]
    oracle = confluent.oracle(events)
    confluent.wait_for_log_count(len(oracle.decisions))

    letters = confluent.read_topic(settings.deadletter_topic, expected=1)
    ledger = confluent.read_topic(settings.ledger_topic, expected=len(oracle.decisions))
    shown = tail_documents(confluent)

    assert [dict(m.headers())["reason"] for m in letters] == [b"unknown_schema"]
    assert letters[0].value() == unknown
    assert {m.value()[:1] for m in ledger} == {b"\xc3", b"\x00"}  # both formats in the ledger
    assert set(shown) == {d.event_id for d in oracle.decisions}
    assert confluent.memory_rows() == expected_rows(oracle)


def test_a_registry_outage_mid_run_loses_nothing_and_a_restart_recovers(confluent, schema_registry):
    """Given a Confluent-format pipeline running with its ids cached,
    when the registry stops and more events are published (by a publisher that cached its
    id too),
    then the worker and the projector go on: the read models equal the batch oracle's for all
    the events; and once the registry is back, a new `memstream tail` resolves the ledger's
    ids again (the registry keeps them across restarts)."""
    confluent.start_all()
    first = writes("outage-ann", ["Ann plays chess", "Ann reads sci-fi"])
    publisher = MemoryPublisher(confluent.settings, source="tests")
    for event in first:
        publisher.publish(event)
    publisher.flush()
    confluent.wait_for_log_count(len(confluent.oracle(first).decisions))

    schema_registry.down(progress=lambda _m: None)
    try:
        second = writes("outage-ann", ["Ann learns Korean"], first=10) + writes(
            "outage-bo", ["Bo hikes on weekends", "Bo owns a cat"], first=10
        )
        for event in second:
            publisher.publish(event)
        publisher.flush()
        oracle = confluent.oracle(first + second)
        confluent.wait_for_log_count(len(oracle.decisions))
        rows_during_outage = confluent.memory_rows()
        workers_alive = all(p.alive() for p in confluent.processes.values())
    finally:
        schema_registry.up(progress=lambda _m: None)

    assert workers_alive, confluent.logs()
    assert rows_during_outage == expected_rows(oracle)
    assert set(tail_documents(confluent)) == {d.event_id for d in oracle.decisions}
