"""The ingest agent's body without Kafka (docs/failure-semantics.md): bytes in, ledger records or a
dead letter out, state in plain dicts standing in for the Faust tables."""

from __future__ import annotations

import math
import uuid

from streams.engine import ledger
from streams.engine.model import (
    ForgetRequested,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryPinned,
    MemoryWritten,
)
from streams.engine.oracle import replay
from streams.engine.validation import MAX_EVENT_BYTES, Limits
from streams.ingest_processor import Emission, IngestProcessor, partition_for
from streams.kafka import codec
from streams.state.hot_users import UserStates

LIMITS = Limits()
USER = "u-42"
T0 = 1_717_000_000_000
SOURCE = [
    ("source.topic", b"memory.events"),
    ("source.partition", b"3"),
    ("source.offset", b"1207"),
]


def eid(n: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"processor-test/{n}"))


def a_write(n: int = 1, user: str = USER, memory_id: str = "m-1", **fields: object) -> MemoryEvent:
    memory = Memory(memory_id, user, f"content {n}").evolve(**fields)
    return MemoryEvent(eid(n), user, T0 + n, MemoryWritten(memory), source="chat")


def an_event(n: int, payload: object, user: str = USER) -> MemoryEvent:
    return MemoryEvent(eid(n), user, T0 + n, payload, source="chat")  # type: ignore[arg-type]


def fresh() -> IngestProcessor:
    return IngestProcessor(LIMITS)


def feed(processor: IngestProcessor, event: MemoryEvent) -> Emission:
    return processor.process(event.user_id.encode(), codec.encode_event(event), SOURCE)


# --- accepted input --------------------------------------------------------------------------


def test_a_valid_write_produces_one_ledger_record_keyed_by_the_user() -> None:
    processor = fresh()
    event = a_write()

    emission = feed(processor, event)

    assert emission.deadletter is None
    assert emission.rejection is None
    assert emission.duplicate is False
    assert emission.event_type == "MemoryWritten"
    [record] = emission.ledger
    assert record.key == USER.encode()
    assert record.headers == [("event_type", b"MemoryStored")]


def test_the_ledger_record_value_decodes_to_the_decision() -> None:
    emission = feed(fresh(), a_write())

    [record] = emission.ledger
    [decision] = emission.ledger_events
    decoded = codec.decode_ledger(record.value)
    assert decoded == decision
    assert isinstance(decoded.payload, ledger.MemoryStored)
    assert decoded.payload.version == 1
    assert decoded.payload.memory.content == "content 1"
    assert decoded.causation_id == eid(1)


def test_an_accepted_write_is_kept_in_the_user_state_and_marked_seen() -> None:
    states = UserStates()
    processor = IngestProcessor(LIMITS, states)

    feed(processor, a_write())

    state = states.user(USER, 0)
    record = state.memories["m-1"]
    assert record.version == 1
    assert record.memory.content == "content 1"
    assert state.has_seen(eid(1))


def test_an_access_after_a_write_continues_the_version_from_the_table() -> None:
    processor = fresh()
    feed(processor, a_write())

    emission = feed(processor, an_event(2, MemoryAccessed("m-1")))

    [record] = emission.ledger
    assert record.headers == [("event_type", b"MemoryAccessRecorded")]
    decoded = codec.decode_ledger(record.value)
    assert decoded.payload.version == 2
    assert decoded.payload.access_count == 1


# --- dead letters ----------------------------------------------------------------------------


def test_garbage_bytes_become_an_undecodable_dead_letter_carrying_the_original_bytes() -> None:
    garbage = b"\x00\xffnot an avro record"

    emission = fresh().process(b"some-key", garbage, SOURCE)

    assert emission.ledger == []
    letter = emission.deadletter
    assert letter is not None
    assert letter.value == garbage
    assert letter.key == b"some-key"
    headers = dict(letter.headers)
    assert headers["reason"] == b"undecodable"
    assert headers["detail"]
    assert "event_type" not in headers
    for name, value in SOURCE:
        assert (name, value) in letter.headers
    assert emission.rejection is not None
    assert emission.rejection.reason == "undecodable"


def test_a_record_without_a_value_is_an_undecodable_dead_letter() -> None:
    emission = fresh().process(b"k", None, SOURCE)

    assert emission.deadletter is not None
    assert dict(emission.deadletter.headers)["reason"] == b"undecodable"
    assert emission.deadletter.value == b""


def test_a_record_too_large_for_its_ledger_record_is_dead_lettered_without_its_value() -> None:
    """Accepted, its ledger record would be over the producer's request limit: the worker
    could commit nothing more on its partition. Nor could a dead letter hold it: it names
    where it is."""
    processor = fresh()
    event = a_write(1, metadata={"blob": "x" * MAX_EVENT_BYTES})
    value = codec.encode_event(event)

    emission = processor.process(USER.encode(), value, SOURCE)

    assert emission.ledger == [] and emission.state == []
    letter = emission.deadletter
    assert letter is not None and letter.value == b"" and letter.key == USER.encode()
    headers = dict(letter.headers)
    assert headers["reason"] == b"event_too_large"
    assert headers["source.bytes"] == str(len(value)).encode()
    assert f"{MAX_EVENT_BYTES:,}".encode() in headers["detail"]
    for name, header in SOURCE:
        assert (name, header) in letter.headers
    assert feed(processor, a_write(2, memory_id="m-2")).ledger  # the next input flows


def test_a_memory_whose_state_entry_would_be_too_large_is_dead_lettered_whole() -> None:
    """200 KB of control characters in metadata: the input is small, but the state
    changelog stores the memory as JSON, where each becomes six bytes (1.2 MB)."""
    processor = fresh()
    value = codec.encode_event(a_write(1, metadata={"raw": "\x01" * 200_000}))
    assert len(value) < MAX_EVENT_BYTES

    emission = processor.process(USER.encode(), value, SOURCE)

    assert emission.rejection is not None and emission.rejection.reason == "event_too_large"
    assert "JSON" in emission.rejection.detail
    assert emission.deadletter is not None and emission.deadletter.value == value
    assert emission.ledger == [] and emission.state == []
    fitting = feed(processor, a_write(2, memory_id="m-2", metadata={"raw": "\x01" * 100_000}))
    assert fitting.ledger and max(len(e.value or b"") for e in fitting.state) <= MAX_EVENT_BYTES


def test_a_ledger_record_sent_to_the_input_topic_is_a_wrong_schema_dead_letter() -> None:
    ledger_bytes = feed(fresh(), a_write()).ledger[0].value

    emission = fresh().process(USER.encode(), ledger_bytes, SOURCE)

    assert emission.deadletter is not None
    assert dict(emission.deadletter.headers)["reason"] == b"wrong_schema"
    assert emission.deadletter.value == ledger_bytes


def test_a_rejected_valid_avro_event_is_dead_lettered_with_reason_and_event_type() -> None:
    event = a_write(importance=math.nan)
    value = codec.encode_event(event)

    emission = fresh().process(USER.encode(), value, SOURCE)

    assert emission.ledger == []
    letter = emission.deadletter
    assert letter is not None
    assert letter.value == value
    assert letter.key == USER.encode()
    headers = dict(letter.headers)
    assert headers["reason"] == b"not_a_number"
    assert headers["event_type"] == b"MemoryWritten"
    assert b"importance" in headers["detail"]
    assert emission.event_type == "MemoryWritten"


def test_a_key_other_than_the_user_id_is_dead_lettered_as_key_mismatch() -> None:
    emission = fresh().process(b"another-user", codec.encode_event(a_write()), SOURCE)

    assert emission.deadletter is not None
    assert dict(emission.deadletter.headers)["reason"] == b"key_mismatch"


def test_an_access_to_an_unknown_memory_is_dead_lettered_and_changes_no_state() -> None:
    states = UserStates()
    processor = IngestProcessor(LIMITS, states)

    emission = feed(processor, an_event(1, MemoryAccessed("ghost")))

    assert emission.deadletter is not None
    headers = dict(emission.deadletter.headers)
    assert headers["reason"] == b"unknown_memory"
    assert headers["event_type"] == b"MemoryAccessed"
    assert states.user(USER, 0).memories == {}
    assert states.user(USER, 0).seen_event_ids == {}


# --- duplicates and determinism --------------------------------------------------------------


def test_reprocessing_the_same_input_bytes_is_a_duplicate_with_no_output() -> None:
    processor = fresh()
    value = codec.encode_event(a_write())
    feed_key = USER.encode()
    processor.process(feed_key, value, SOURCE)

    again = processor.process(feed_key, value, SOURCE)

    assert again.duplicate is True
    assert again.ledger == []
    assert again.ledger_events == []
    assert again.deadletter is None
    assert again.event_type == "MemoryWritten"


def test_a_duplicate_does_not_change_the_stored_memory() -> None:
    states = UserStates()
    processor = IngestProcessor(LIMITS, states)
    value = codec.encode_event(a_write())
    processor.process(USER.encode(), value, SOURCE)
    before = dict(states.user(USER, 0).memories)

    processor.process(USER.encode(), value, SOURCE)

    assert states.user(USER, 0).memories == before


def history() -> list[MemoryEvent]:
    return [
        a_write(1),
        an_event(2, MemoryAccessed("m-1")),
        an_event(3, MemoryPinned("m-1")),
        a_write(4, memory_id="m-2", layer="semantic"),
        a_write(5, layer="episodic"),
        an_event(6, ForgetRequested("m-1", "gdpr")),
    ]


def test_the_same_input_into_two_fresh_processors_gives_byte_identical_ledger_records() -> None:
    first, second = fresh(), fresh()

    for event in history():
        value = codec.encode_event(event)
        out_a = first.process(USER.encode(), value, SOURCE).ledger
        out_b = second.process(USER.encode(), value, SOURCE).ledger
        assert out_a
        assert out_a == out_b


def test_the_processor_reaches_the_same_decisions_as_the_batch_oracle() -> None:
    """README, 'Architecture': the streaming path and the plain loop over the pure engine agree."""
    processor = fresh()
    events = [*history(), an_event(7, MemoryAccessed("m-1"))]  # rejected: forgotten

    streamed = [d for e in events for d in feed(processor, e).ledger_events]

    assert streamed == replay(events, LIMITS).decisions


def test_a_reused_event_id_of_another_user_does_not_suppress_this_user_s_event() -> None:
    """docs/failure-semantics.md, 'Restarts and isolation': one user's events never change another
    user's state. Here bob's write carries the event id alice already used; the oracle (per-user
    state) accepts both writes, and the streaming processor must reach the same decisions."""
    processor = fresh()
    alice = a_write(1, user="alice", memory_id="a-1")
    bob = MemoryEvent(alice.event_id, "bob", T0 + 5, MemoryWritten(Memory("b-1", "bob", "hi")))

    feed(processor, alice)
    emission = feed(processor, bob)

    assert emission.duplicate is False
    assert [d.user_id for d in emission.ledger_events] == ["bob"]
    assert emission.ledger_events == replay([alice, bob], LIMITS).decisions_for("bob")


def test_state_rebuilt_from_the_ledger_equals_the_live_state() -> None:
    """Given a processor that handled a history, when a fresh worker folds the ledger events
    that history produced, then its user state is the live state (the ledger is the
    worker's changelog)."""
    live = UserStates()
    processor = IngestProcessor(LIMITS, live)
    ledger_events = [d for e in history() for d in feed(processor, e).ledger_events]

    rebuilt = UserStates()
    rebuilt.rebuild_partition(0, ledger_events)

    for user in live.users_in(0):
        assert rebuilt.user(user, 0).memories == live.user(user, 0).memories
        assert (
            rebuilt.user(user, 0).seen_event_ids.keys() <= live.user(user, 0).seen_event_ids.keys()
        )


def test_kafkas_default_partitioner_places_keys_as_the_java_client_does() -> None:
    """Kafka's own murmur2 test vectors (UtilsTest), as the partition for 1000 partitions."""
    vectors = {b"21": -973932308, b"foobar": -790332482, b"abc": 479470107}
    for key, java_hash in vectors.items():
        assert partition_for(key, 1000) == (java_hash & 0x7FFFFFFF) % 1000


def test_a_record_on_the_wrong_partition_for_its_key_is_dead_lettered() -> None:
    """Given 4 partitions, when a user's event arrives on a partition its key does not hash
    to (a fixed-partition producer), then it is rejected: its state lives elsewhere."""
    processor = IngestProcessor(LIMITS, partitions=4)
    value = codec.encode_event(a_write())
    right = partition_for(USER.encode(), 4)

    wrong = processor.process(USER.encode(), value, SOURCE, partition=(right + 1) % 4)
    accepted = processor.process(USER.encode(), value, SOURCE, partition=right)

    assert wrong.deadletter is not None
    assert dict(wrong.deadletter.headers)["reason"] == b"wrong_partition"
    assert accepted.ledger_events


def test_a_record_without_a_key_is_dead_lettered() -> None:
    emission = fresh().process(None, codec.encode_event(a_write()), SOURCE)

    assert emission.deadletter is not None
    assert dict(emission.deadletter.headers)["reason"] == b"key_mismatch"


def test_a_memory_written_without_an_embedding_gets_one_recorded_in_the_ledger() -> None:
    """Given the worker's embedder, when a memory arrives without an embedding, then the
    ledger records the embedder's vector (so nothing downstream recomputes it), and a memory
    that brings its own keeps it."""
    from streams.embedders.factory import embedder_for
    from streams.engine.embedder import hashing_embedding

    processor = IngestProcessor(LIMITS, embedder=embedder_for("hashing"))
    own = codec.pack_embedding([1.0] + [0.0] * 383)

    plain = feed(processor, a_write(1, memory_id="plain"))
    given = feed(processor, a_write(2, memory_id="given", embedding=own))

    stored = [e.payload.memory for e in plain.ledger_events + given.ledger_events]
    assert stored[0].embedding == hashing_embedding("content 1", 384)
    assert stored[1].embedding == own


def test_a_batch_embeds_its_plain_memories_in_one_call() -> None:
    """Given a batch of five inputs (three plain-text writes, one with its own embedding, one
    undecodable), when processed as a batch, then the embedder is called once with the three
    texts, each plain memory's ledger event records its own vector, and the bad input is
    dead-lettered in its place."""
    from streams.embedders.factory import embedder_for
    from streams.engine.embedder import hashing_embedding
    from streams.ingest_processor import Input

    hashing = embedder_for("hashing")
    calls: list[list[str]] = []

    class Counting:
        dim = hashing.dim

        def embed(self, texts: list[str]) -> list[bytes]:
            calls.append(list(texts))
            return hashing.embed(texts)

    processor = IngestProcessor(LIMITS, embedder=Counting())  # type: ignore[arg-type]
    own = codec.pack_embedding([1.0] + [0.0] * 383)
    events = [
        a_write(1, memory_id="a"),
        a_write(2, memory_id="b", embedding=own),
        a_write(3, memory_id="c"),
        a_write(4, memory_id="d"),
    ]
    inputs = [Input(USER.encode(), codec.encode_event(e), SOURCE) for e in events]
    inputs.insert(2, Input(USER.encode(), b"\x00garbage", SOURCE))

    emissions = processor.process_batch(inputs)

    assert calls == [["content 1", "content 3", "content 4"]]
    assert [e.deadletter is not None for e in emissions] == [False, False, True, False, False]
    stored = {
        d.payload.memory.memory_id: d.payload.memory.embedding
        for e in emissions
        for d in e.ledger_events
    }
    assert stored == {
        "a": hashing_embedding("content 1", 384),
        "b": own,
        "c": hashing_embedding("content 3", 384),
        "d": hashing_embedding("content 4", 384),
    }
