"""Every kind of bad input lands in memory.deadletter with its reason; good events still flow."""

from __future__ import annotations

import math

import pytest

from memstream.publisher import MemoryPublisher
from memstream.waiting import wait_until
from streams.engine.model import Memory, MemoryAccessed, MemoryEvent, MemoryWritten
from streams.kafka import codec
from tests.workloads import BASE_TIME

pytestmark = pytest.mark.integration

USER = "user-bad"
NEXT_ID = iter(range(1, 10_000))


def _id() -> str:
    return f"00000000-0000-4000-8000-{next(NEXT_ID):012d}"


def _write(**memory_fields) -> MemoryEvent:
    fields = {"memory_id": f"m-{_id()[-6:]}", "user_id": USER, "content": "fine", **memory_fields}
    return MemoryEvent(_id(), USER, BASE_TIME, MemoryWritten(Memory(**fields)))


def _bad_records() -> dict[str, tuple[bytes, bytes]]:
    """reason -> (key, value) of one record that must be rejected for that reason."""
    key = USER.encode()
    good = codec.encode_event(_write())
    return {
        "undecodable": (key, b"this is not avro"),
        "unknown_schema": (key, codec.MAGIC + b"\x01" * 8 + good[codec.HEADER_SIZE :]),
        "missing_field": (key, codec.encode_event(_write(content=""))),
        "invalid_event_id": (
            key,
            codec.encode_event(MemoryEvent("not-a-uuid", USER, BASE_TIME, _write().payload)),
        ),
        "key_mismatch": (b"someone-else", codec.encode_event(_write())),
        "user_mismatch": (key, codec.encode_event(_write(user_id="intruder"))),
        "not_a_number": (key, codec.encode_event(_write(importance=math.nan))),
        "out_of_range": (key, codec.encode_event(_write(valence=-3.0))),
        "content_too_large": (key, codec.encode_event(_write(content="x" * 65537))),
        "embedding_dimension": (
            key,
            codec.encode_event(_write(embedding=codec.pack_embedding([0.5] * 383))),
        ),
        "unknown_memory": (
            key,
            codec.encode_event(
                MemoryEvent(_id(), USER, BASE_TIME, MemoryAccessed("never-written"))
            ),
        ),
    }


def test_each_bad_input_is_dead_lettered_with_its_reason_and_good_events_flow(pipeline):
    """Given good events around one record of every bad kind,
    when they are published,
    then each bad record is in memory.deadletter with its reason and original bytes,
    the rejection counters say the same, and both good events reach the read model."""
    bad = _bad_records()
    before, after = _write(content="before the bad ones"), _write(content="after the bad ones")
    pipeline.start_all()

    pipeline.publisher.publish(before)
    for reason, (key, value) in bad.items():
        pipeline.publisher.publish_raw(key, value, event_type=f"bad-{reason}")
    pipeline.publisher.publish(after)
    pipeline.publisher.flush()

    letters = pipeline.read_topic(pipeline.settings.deadletter_topic, expected=len(bad))
    by_reason = {dict(m.headers())["reason"].decode(): m for m in letters}
    assert set(by_reason) == set(bad)
    for reason, message in by_reason.items():
        headers = dict(message.headers())
        assert message.value() == bad[reason][1], reason
        assert headers["detail"], reason
        assert headers["source.topic"].decode() == pipeline.settings.events_topic

    pipeline.wait_for_log_count(2)
    contents = {row[0] for row in pipeline.query("SELECT content FROM working_memories")}
    assert contents == {"before the bad ones", "after the bad ones"}
    wait_until(
        lambda: pipeline.metric_sum("worker", "memstream_events_rejected_total") == len(bad),
        timeout=30,
        what="the rejection counters to add up",
    )
    rejected = {
        dict(labels)["reason"]: value
        for (name, labels), value in pipeline.metrics("worker").items()
        if name == "memstream_events_rejected_total"
    }
    assert rejected == {reason: 1.0 for reason in bad}


def test_a_record_too_large_for_its_ledger_record_is_dead_lettered_and_its_partition_flows(
    pipeline,
):
    """Given a 2 MB write (its metadata compressible, published with a raised client limit
    and lz4, which the broker takes) and a good write after it on the same partition,
    then the large one is dead-lettered as event_too_large without its value and the good one
    reaches the read model. Accepted, the large write's ledger record was over Kafka's 1 MB
    record limit: the worker stopped on it, without committing, at every restart."""
    large = _write(content="a note with a large attachment", metadata={"blob": "x" * 2_000_000})
    after = _write(content="after the large one")
    value = codec.encode_event(large)
    pipeline.start_all()

    raised = {"message.max.bytes": 5_000_000, "compression.type": "lz4"}
    with MemoryPublisher(pipeline.settings, source="test", producer_config=raised) as publisher:
        publisher.publish_raw(USER.encode(), value, event_type="MemoryWritten")
        publisher.publish(after)
        publisher.flush()

    [letter] = pipeline.read_topic(pipeline.settings.deadletter_topic, expected=1)
    headers = dict(letter.headers())
    assert headers["reason"] == b"event_too_large"
    assert headers["source.bytes"] == str(len(value)).encode()
    assert not letter.value()
    pipeline.wait_for_log_count(1)
    contents = {row[0] for row in pipeline.query("SELECT content FROM working_memories")}
    assert contents == {"after the large one"}
