"""A batch of inputs becomes, per input partition, the ledger records in input order, the
state entries coalesced to the last value of each key, and the dead letters."""

from __future__ import annotations

from streams.config.settings import Settings
from streams.ingest_processor import Emission, OutRecord
from streams.kafka.output_batch import OutputBatch
from streams.state.changelog import Entry
from streams.state.restore import state_topic

SETTINGS = Settings(topic_prefix="t.")


def _emission(ledger: list[bytes], state: list[tuple[bytes, bytes | None]]) -> Emission:
    return Emission(
        event_type="MemoryWritten",
        ledger=[OutRecord(b"u", value, []) for value in ledger],
        state=[Entry(key, value) for key, value in state],
    )


def test_given_inputs_of_two_partitions_when_batched_then_each_keeps_its_ledger_order() -> None:
    """Given inputs of partitions 3 and 5 interleaved, when batched, then each partition's
    ledger records are its inputs' records in input order, on the input's partition."""
    # Given
    batch = OutputBatch()
    batch.add(3, _emission([b"a1", b"a2"], []), offset=10)
    batch.add(5, _emission([b"b1"], []), offset=7)
    batch.add(3, _emission([b"a3"], []), offset=11)

    # When
    parts = {part.partition: part for part in batch}

    # Then
    assert [r.value for r in parts[3].records(SETTINGS)] == [b"a1", b"a2", b"a3"]
    assert {r.partition for r in parts[3].records(SETTINGS)} == {3}
    assert [r.value for r in parts[5].records(SETTINGS)] == [b"b1"]
    assert (parts[3].last_offset, parts[5].last_offset) == (11, 7)


def test_given_a_key_changed_by_several_inputs_when_batched_then_only_its_last_value_is_sent() -> (
    None
):
    """Given a user's meta entry rewritten by three inputs and a snapshot owed by a rebuild,
    when batched, then the changelog gets each key once, with its last value (a tombstone
    included), after every ledger record."""
    # Given
    batch = OutputBatch()
    snapshot = [Entry(b"u\x1fm\x1fx", b"old"), Entry(b"u\x1fmeta\x1f", b"v0")]
    batch.add(0, _emission([b"l1"], [(b"u\x1fmeta\x1f", b"v1")]), 1, snapshot)
    batch.add(0, _emission([b"l2"], [(b"u\x1fmeta\x1f", b"v2"), (b"u\x1fm\x1fx", None)]), 2)
    batch.add(0, _emission([b"l3"], [(b"u\x1fmeta\x1f", b"v3")]), 3)

    # When
    [part] = list(batch)
    records = part.records(SETTINGS)

    # Then
    changelog = [(r.key, r.value) for r in records if r.topic == state_topic(SETTINGS)]
    assert changelog == [(b"u\x1fm\x1fx", None), (b"u\x1fmeta\x1f", b"v3")]
    ledger = [r.value for r in records if r.topic == SETTINGS.ledger_topic]
    assert ledger == [r.value for r in records[:3]] == [b"l1", b"l2", b"l3"]
    assert part.state_entries == [Entry(k, v) for k, v in changelog]


def test_given_a_rejected_input_when_batched_then_its_dead_letter_goes_by_key() -> None:
    """Given a rejected input, when batched, then its dead letter is sent to the dead-letter
    topic with no fixed partition (the producer partitions it by key)."""
    # Given
    batch = OutputBatch()
    letter = OutRecord(b"k", b"raw", [("reason", b"bad")])
    batch.add(4, Emission(deadletter=letter), offset=0)

    # When
    [record] = next(iter(batch)).records(SETTINGS)

    # Then
    assert (record.topic, record.key, record.partition) == (SETTINGS.deadletter_topic, b"k", None)
