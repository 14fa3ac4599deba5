"""Avro single-object encoding of the contract (docs/analytics.md, 'The contract'): every payload
round-trips, the frame is ``C3 01`` + CRC-64-AVRO fingerprint + body, and bad bytes fail with a
machine-readable reason that the dead-letter topic carries."""

from __future__ import annotations

import dataclasses
import struct
import uuid
from collections.abc import Callable

import numpy as np
import pytest
from fastavro.schema import fingerprint as fastavro_fingerprint
from fastavro.schema import load_schema, to_parsing_canonical_form
from hypothesis import given
from hypothesis import strategies as st

from streams.engine import ledger
from streams.engine.model import (
    LAYERS,
    ConsolidationRequested,
    ForgetRequested,
    InputPayload,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryPinned,
    MemoryUnpinned,
    MemoryWritten,
    SessionEnded,
    UserForgotten,
)
from streams.kafka import codec

USER = "user-7"
T0 = 1_717_000_000_000  # 2024-05-29, epoch millis


def event_id(n: int = 1) -> str:
    return str(uuid.UUID(int=n, version=4))


def a_memory(memory_id: str = "m-1", **changes: object) -> Memory:
    """A memory with most optional fields filled, as a busy producer would send it."""
    base = Memory(
        memory_id=memory_id,
        user_id=USER,
        content="User prefers dark roast coffee in the morning ☕",
        layer="episodic",
        kind="preference",
        subtype="beverage",
        tags=("coffee", "morning"),
        importance=0.8,
        confidence=0.65,
        emotional_salience=0.3,
        valence=-0.25,
        priority="critical",
        scope="team",
        scope_id="team-42",
        created_by="user",
        consent=True,
        speaker="Caroline",
        pinned=True,
        conversation_id="conv-1",
        session_id="sess-1",
        success=0.9,
        trigger_conditions=("asked about drinks",),
        embedding=codec.pack_embedding([0.25, -1.5, 3.0]),
        metadata={"source": "chat", "lang": "en"},
        created_at=T0,
        last_accessed=T0 + 5_000,
        access_count=4,
        valid_at=T0,
        invalid_at=T0 + 60_000,
    )
    return base.evolve(**changes)


def an_event(payload: InputPayload, n: int = 1) -> MemoryEvent:
    return MemoryEvent(
        event_id=event_id(n), user_id=USER, occurred_at=T0, payload=payload, source="chat-api"
    )


def a_ledger_event(payload: object) -> ledger.ConsolidationEvent:
    return ledger.ConsolidationEvent(
        event_id=event_id(100),
        user_id=USER,
        occurred_at=T0 + 1,
        causation_id=event_id(1),
        payload=payload,  # type: ignore[arg-type]
        trigger="session_end",
        cycle_id="cycle-3",
    )


INPUT_PAYLOADS = {
    "MemoryWritten/full": MemoryWritten(a_memory()),
    "MemoryWritten/defaults": MemoryWritten(Memory("m-2", USER, "just the content")),
    "MemoryAccessed": MemoryAccessed("m-1", accessed_at=T0 + 10),
    "MemoryAccessed/no-time": MemoryAccessed("m-1"),
    "MemoryForgotten": ForgetRequested("m-1", reason="gdpr"),
    "MemoryPinned": MemoryPinned("m-1", reason="belief"),
    "MemoryUnpinned": MemoryUnpinned("m-1"),
    "SessionEnded": SessionEnded("sess-1", conversation_id="conv-1"),
    "ConsolidationRequested": ConsolidationRequested("conv-1", force=True, profile="astra"),
    "ConsolidationRequested/defaults": ConsolidationRequested(),
    "UserForgotten": UserForgotten("gdpr"),
}

LEDGER_PAYLOADS = {
    "MemoryStored": ledger.MemoryStored(a_memory(), 3, previous_layer="working"),
    "MemoryAccessRecorded": ledger.MemoryAccessRecorded("m-1", "semantic", 4, T0 + 9, 5),
    "MemoryPromoted": ledger.MemoryPromoted(
        "m-1", "working", 2, True, a_memory("m-1-sem", layer="semantic"), 1, "importance"
    ),
    "PatternDetected": ledger.PatternDetected(
        a_memory("p-1", layer="semantic", kind="pattern"),
        1,
        ("m-1", "m-2", "m-3"),
        0.82,
        3,
        0.9,
        "preference",
    ),
    "ContradictionDetected": ledger.ContradictionDetected(
        "m-1",
        "m-2",
        0.88,
        "conflicting_value",
        "tea vs coffee",
        "latest_wins",
        invalidated_memory_id="m-1",
        invalidated_version=6,
        invalid_at=T0 + 100,
    ),
    "MemoryMerged": ledger.MemoryMerged(a_memory(), 7, "m-9", "semantic", 2, 0.97),
    "SalienceDecayed": ledger.SalienceDecayed("m-1", "episodic", 8, 0.6, 0.45),
    "MemoryArchived": ledger.MemoryArchived(
        "m-1", "episodic", 9, "low_salience", salience=0.05, cold_storage=True
    ),
    "MemoryDeleted": ledger.MemoryDeleted("m-1", "working", 10, "pruned"),
    "MemoryForgotten": ledger.MemoryForgotten("m-1", "semantic", 11, "gdpr"),
    "SessionConsolidated": ledger.SessionConsolidated(
        "sess-1",
        a_memory("n-1", layer="episodic", kind="narrative"),
        1,
        ("m-1", "m-2"),
        12.5,
        emotional_arc=(-0.5, 0.0, 0.75),
        unresolved_threads=("pick a roaster",),
    ),
    "EpisodesSummarized": ledger.EpisodesSummarized(
        a_memory("s-1", layer="semantic"), 1, ("n-1", "n-2")
    ),
    "ProceduralSynthesized": ledger.ProceduralSynthesized(
        a_memory("prof-2", layer="procedural"), 1, 14, replaced_memory_id="prof-1"
    ),
    "ScopePromoted": ledger.ScopePromoted(
        "m-1", a_memory("m-1-team", layer="procedural", scope="team"), 1, "agent", "team"
    ),
    "IdentityDriftMeasured": ledger.IdentityDriftMeasured(
        codec.pack_embedding([0.1, 0.2, 0.3]), 0.25, "warning"
    ),
    "ConsolidationCompleted": ledger.ConsolidationCompleted(
        "default", 40, 2, 3, 1, 1, 6, 125_000, warnings=("judge timed out",)
    ),
    "SessionClosed": ledger.SessionClosed(
        "s-1", "c-1", T0, T0 + 600_000, 12, "inactivity", consolidated=True
    ),
    "UserErased": ledger.UserErased("gdpr", 12),
}


# --- round trips -----------------------------------------------------------------------------


@pytest.mark.parametrize("payload", INPUT_PAYLOADS.values(), ids=INPUT_PAYLOADS.keys())
def test_every_input_payload_round_trips_through_encode_and_decode(payload: InputPayload) -> None:
    event = an_event(payload)

    decoded = codec.decode_event(codec.encode_event(event))

    assert decoded == event
    assert type(decoded.payload) is type(payload)


def test_the_ledger_fixture_covers_all_eighteen_payload_types() -> None:
    covered = {type(p) for p in LEDGER_PAYLOADS.values()}
    assert covered == set(ledger.LEDGER_PAYLOAD_TYPES)
    assert len(covered) == 18


@pytest.mark.parametrize("payload", LEDGER_PAYLOADS.values(), ids=LEDGER_PAYLOADS.keys())
def test_every_ledger_payload_round_trips_through_encode_and_decode(payload: object) -> None:
    event = a_ledger_event(payload)

    decoded = codec.decode_ledger(codec.encode_ledger(event))

    assert decoded == event
    assert type(decoded.payload) is type(payload)


def test_a_decoded_memory_gets_tuples_where_the_datum_has_lists() -> None:
    """Decoding builds frozen dataclasses by setting their slots
    (``streams.engine.dataclass_speedups``,
    whose tests refuse a class whose ``__init__`` does more); the arrays a reader gives as
    lists become the tuples the dataclass holds."""
    datum = codec.memory_to_datum(Memory("m", USER, "x"))
    datum["tags"] = ["a"]  # fastavro reads arrays as lists
    memory = codec.memory_from_datum(datum)
    assert memory == Memory("m", USER, "x", tags=("a",))
    assert isinstance(memory.tags, tuple)


def test_a_ledger_event_with_ingest_defaults_round_trips() -> None:
    event = ledger.ConsolidationEvent(
        event_id=event_id(5),
        user_id=USER,
        occurred_at=T0,
        causation_id=event_id(1),
        payload=ledger.MemoryStored(Memory("m-1", USER, "x"), 1),
    )

    decoded = codec.decode_ledger(codec.encode_ledger(event))

    assert decoded.trigger == "ingest"
    assert decoded.cycle_id is None
    assert decoded == event


# --- the frame -------------------------------------------------------------------------------


def expected_fingerprint(envelope: str) -> bytes:
    """The fingerprint computed independently by fastavro (its hex is the little-endian form)."""
    path = codec.schemas_dir() / f"memstream.v1.{envelope}.avsc"
    canonical = to_parsing_canonical_form(load_schema(str(path), _write_hint=False))
    return bytes.fromhex(fastavro_fingerprint(canonical, "CRC-64-AVRO"))


def test_an_encoded_input_event_starts_with_magic_and_its_schema_fingerprint() -> None:
    data = codec.encode_event(an_event(MemoryUnpinned("m-1")))

    assert data[:2] == b"\xc3\x01"
    assert data[2:10] == expected_fingerprint("MemoryEvent")
    assert codec.peek_fingerprint(data) == data[2:10]
    assert len(data) > codec.HEADER_SIZE


def test_an_encoded_ledger_event_carries_the_consolidation_event_fingerprint() -> None:
    data = codec.encode_ledger(a_ledger_event(LEDGER_PAYLOADS["MemoryDeleted"]))

    assert data[:2] == b"\xc3\x01"
    assert data[2:10] == expected_fingerprint("ConsolidationEvent")


def test_crc64_avro_matches_the_avro_specification_vector_for_null() -> None:
    assert codec.crc64_avro(b'"null"') == 7195948357588979594


def test_fingerprint_is_the_little_endian_crc64_of_the_canonical_form() -> None:
    assert codec.fingerprint("null") == (7195948357588979594).to_bytes(8, "little")


def test_encoding_is_deterministic_for_the_same_event() -> None:
    event = an_event(MemoryWritten(a_memory()))
    ledger_event = a_ledger_event(LEDGER_PAYLOADS["SessionConsolidated"])

    assert codec.encode_event(event) == codec.encode_event(event)
    assert codec.encode_ledger(ledger_event) == codec.encode_ledger(ledger_event)


def test_equal_events_built_separately_encode_to_identical_bytes() -> None:
    first = an_event(MemoryWritten(a_memory()))
    second = an_event(MemoryWritten(a_memory()))

    assert first is not second
    assert codec.encode_event(first) == codec.encode_event(second)


# --- decode errors ---------------------------------------------------------------------------


def decode_error(
    data: bytes, decode: Callable[[bytes], object] = codec.decode_event
) -> codec.DecodeError:
    with pytest.raises(codec.DecodeError) as caught:
        decode(data)
    return caught.value


@pytest.mark.parametrize(
    "data",
    [b"", b"hello, this is not avro", b"\xc3", b"\x00\x01" + b"\x00" * 20],
    ids=["empty", "text", "half-magic", "wrong-magic"],
)
def test_bytes_without_the_magic_header_are_undecodable(data: bytes) -> None:
    error = decode_error(data)

    assert error.reason == "undecodable"
    assert error.detail


def test_a_truncated_body_is_undecodable() -> None:
    data = codec.encode_event(an_event(MemoryWritten(a_memory())))

    assert decode_error(data[:-7]).reason == "undecodable"


@given(cut=st.integers(min_value=0, max_value=10_000))
def test_every_strict_prefix_of_an_event_fails_to_decode(cut: int) -> None:
    data = codec.encode_event(an_event(MemoryWritten(a_memory())))
    prefix = data[: cut % len(data)]

    with pytest.raises(codec.DecodeError):
        codec.decode_event(prefix)


def test_trailing_garbage_after_the_record_is_undecodable() -> None:
    data = codec.encode_event(an_event(MemoryAccessed("m-1")))

    error = decode_error(data + b"\x00garbage")

    assert error.reason == "undecodable"


def test_an_unregistered_fingerprint_is_an_unknown_schema() -> None:
    body = codec.encode_event(an_event(MemoryAccessed("m-1")))[codec.HEADER_SIZE :]
    forged = b"\xc3\x01" + struct.pack("<Q", 0x0123456789ABCDEF) + body

    error = decode_error(forged)

    assert error.reason == "unknown_schema"
    assert struct.pack("<Q", 0x0123456789ABCDEF).hex() in error.detail


def test_a_ledger_record_decoded_as_an_input_event_is_the_wrong_schema() -> None:
    data = codec.encode_ledger(a_ledger_event(LEDGER_PAYLOADS["MemoryDeleted"]))

    error = decode_error(data, codec.decode_event)

    assert error.reason == "wrong_schema"


def test_an_input_event_decoded_as_a_ledger_record_is_the_wrong_schema() -> None:
    data = codec.encode_event(an_event(MemoryUnpinned("m-1")))

    assert decode_error(data, codec.decode_ledger).reason == "wrong_schema"


def test_decode_error_is_a_value_error_whose_message_starts_with_the_reason() -> None:
    error = decode_error(b"nope")

    assert isinstance(error, ValueError)
    assert str(error).startswith("undecodable: ")


# --- embeddings ------------------------------------------------------------------------------


def test_pack_embedding_writes_little_endian_float32() -> None:
    packed = codec.pack_embedding([1.0, -2.5, 0.125])

    assert packed == struct.pack("<3f", 1.0, -2.5, 0.125)


def test_unpack_embedding_reads_little_endian_float32() -> None:
    values = codec.unpack_embedding(struct.pack("<2f", 3.5, -0.75))

    assert values.dtype == np.dtype("<f4")
    assert values.tolist() == [3.5, -0.75]


@given(
    st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=0, max_size=64)
)
def test_embeddings_round_trip_through_pack_and_unpack(values: list[float]) -> None:
    packed = codec.pack_embedding(values)

    assert len(packed) == 4 * len(values)
    assert codec.unpack_embedding(packed).tolist() == values


def test_a_384_dimension_embedding_is_1536_bytes() -> None:
    assert len(codec.pack_embedding(np.linspace(-1, 1, 384))) == 1536


# --- property: arbitrary memories round-trip -------------------------------------------------

TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)
UNIT = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
MILLIS = st.one_of(st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1))

memories = st.builds(
    Memory,
    memory_id=TEXT,
    user_id=TEXT,
    content=TEXT,
    layer=st.sampled_from(LAYERS),
    kind=TEXT,
    subtype=st.none() | TEXT,
    tags=st.lists(TEXT, max_size=5).map(tuple),
    importance=UNIT,
    confidence=UNIT,
    emotional_salience=UNIT,
    valence=st.floats(min_value=-1.0, max_value=1.0, allow_nan=False),
    priority=st.sampled_from(["normal", "critical"]),
    scope=st.sampled_from(["agent", "team", "global"]),
    scope_id=st.none() | TEXT,
    created_by=st.sampled_from(["user", "agent", "system"]),
    consent=st.booleans(),
    speaker=st.none() | TEXT,
    pinned=st.booleans(),
    conversation_id=st.none() | TEXT,
    session_id=st.none() | TEXT,
    success=st.none() | UNIT,
    trigger_conditions=st.lists(TEXT, max_size=3).map(tuple),
    embedding=st.none() | st.binary(max_size=64),
    metadata=st.dictionaries(TEXT, TEXT, max_size=5),
    created_at=MILLIS,
    last_accessed=MILLIS,
    access_count=st.integers(min_value=0, max_value=2**31 - 1),
    valid_at=MILLIS,
    invalid_at=MILLIS,
)


@given(memory=memories)
def test_any_memory_round_trips_inside_a_written_event(memory: Memory) -> None:
    event = MemoryEvent(event_id(9), memory.user_id, T0, MemoryWritten(memory))

    assert codec.decode_event(codec.encode_event(event)) == event


@given(memory=memories, version=st.integers(min_value=1, max_value=2**63 - 1))
def test_any_memory_round_trips_inside_a_ledger_event(memory: Memory, version: int) -> None:
    event = a_ledger_event(ledger.MemoryStored(memory, version))

    assert codec.decode_ledger(codec.encode_ledger(event)) == event


def baseline_writer(envelope: str) -> codec.WriterSchema:
    registry = codec.default_registry()
    older = [
        w
        for w in registry.by_fingerprint.values()
        if w.envelope == envelope and w is not registry.current[envelope]
    ]
    assert older, f"schemas/baseline/ holds no older {envelope} schema"
    return older[0]


def test_an_event_written_with_the_baseline_schema_is_read_into_the_current_one() -> None:
    """An older producer's bytes resolve into the current schema: the fields it did not have
    (``salience``, ``speaker``) take their defaults, everything it sent is kept."""
    writer = baseline_writer("MemoryEvent")
    memory = a_memory(content="written by a 1.0.0 producer", salience=0.9)
    datum = codec.memory_to_datum(memory)
    del datum["salience"], datum["speaker"]  # not in the 1.0.0 schema
    old_bytes = (
        codec.MAGIC
        + writer.fingerprint
        + writer.schema.binary_encode(
            {
                "event_id": event_id(),
                "user_id": "u-1",
                "occurred_at": 1_700_000_000_000,
                "source": "old-service",
                "payload": (f"{codec.NAMESPACE}.MemoryWritten", {"memory": datum}),
            }
        )
    )

    decoded = codec.decode_event(old_bytes)

    assert old_bytes[2:10] != codec.default_registry().current["MemoryEvent"].fingerprint
    assert isinstance(decoded.payload, MemoryWritten)
    assert decoded.payload.memory == dataclasses.replace(memory, salience=None, speaker=None)
    assert decoded.source == "old-service"


def test_a_ledger_record_written_with_the_baseline_schema_has_no_speaker() -> None:
    """A ledger written before ``speaker`` existed replays: its memories come back with
    ``speaker`` None (``created_by`` says who), the rest as written."""
    writer = baseline_writer("ConsolidationEvent")
    memory = a_memory(content="stored by a 1.0.0 worker")
    event = a_ledger_event(ledger.MemoryStored(memory, 2))
    datum = codec.ledger_datum(event)
    stored = datum["payload"][1]["memory"]
    del stored["speaker"], stored["salience"]
    old_bytes = codec.MAGIC + writer.fingerprint + writer.schema.binary_encode(datum)

    decoded = codec.decode_ledger(old_bytes)

    assert isinstance(decoded.payload, ledger.MemoryStored)
    assert decoded.payload.memory == dataclasses.replace(memory, speaker=None, salience=None)
    assert decoded.payload.memory.created_by == "user"


@pytest.mark.parametrize("speaker", ["Caroline", None, "Zoë O'Brien-Müller 🎻", ""])
def test_a_memory_s_speaker_round_trips_through_input_and_ledger_records(
    speaker: str | None,
) -> None:
    memory = a_memory(speaker=speaker)

    written = codec.decode_event(codec.encode_event(an_event(MemoryWritten(memory))))
    stored = codec.decode_ledger(
        codec.encode_ledger(a_ledger_event(ledger.MemoryStored(memory, 1)))
    )

    assert isinstance(written.payload, MemoryWritten)
    assert isinstance(stored.payload, ledger.MemoryStored)
    assert written.payload.memory.speaker == speaker
    assert stored.payload.memory.speaker == speaker


def test_the_speaker_is_part_of_the_memory_s_bytes() -> None:
    """Two memories that differ only in who said them encode differently: the name travels
    (it is not dropped for a field the writer does not know)."""
    caroline = codec.encode_event(an_event(MemoryWritten(a_memory(speaker="Caroline"))))
    melanie = codec.encode_event(an_event(MemoryWritten(a_memory(speaker="Melanie"))))
    nobody = codec.encode_event(an_event(MemoryWritten(a_memory(speaker=None))))

    assert len({caroline, melanie, nobody}) == 3
    assert b"Caroline" in caroline and b"Caroline" not in nobody


def test_a_value_that_does_not_fit_the_contract_is_refused_naming_the_field() -> None:
    """The codec's error names the field, in a line (the encoder alone would name the whole
    payload, embedding and all): `memstream publish` prints it for the line it rejects."""
    memory = dataclasses.replace(
        a_memory(embedding=codec.pack_embedding([0.5] * 384)),
        importance="high",  # type: ignore[arg-type]
    )

    with pytest.raises(ValueError) as refused:
        codec.encode_event(an_event(MemoryWritten(memory)))

    assert "memstream.v1.Memory.importance" in str(refused.value)
    assert "expected double" in str(refused.value)
    assert len(str(refused.value)) < 200
