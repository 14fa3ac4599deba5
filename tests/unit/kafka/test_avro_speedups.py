"""The generated Avro writer (``streams.kafka.avro_speedups``) writes what cavro writes, byte for
byte, or declines the value so that cavro writes it (or refuses it) instead."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streams.engine import ledger
from streams.engine.model import Memory, MemoryEvent, MemoryWritten
from streams.kafka import codec
from streams.kafka.avro_speedups import NotWritable, record_writer, varint
from tests.unit.kafka.test_codec import (
    INPUT_PAYLOADS,
    LEDGER_PAYLOADS,
    T0,
    a_ledger_event,
    a_memory,
    an_event,
    event_id,
    memories,
)

REGISTRY = codec.default_registry()
LEDGER = REGISTRY.current["ConsolidationEvent"]
INPUT = REGISTRY.current["MemoryEvent"]


def generated(schema: codec.WriterSchema, value: object) -> bytes:
    assert schema.write is not None, "the repository's schemas get a generated writer"
    return schema.write(value)


@pytest.mark.parametrize("payload", LEDGER_PAYLOADS.values(), ids=LEDGER_PAYLOADS.keys())
def test_every_ledger_payload_is_written_as_cavro_writes_it(payload: object) -> None:
    event = a_ledger_event(payload)

    assert generated(LEDGER, event) == codec.frame_with_cavro(LEDGER, codec.ledger_datum(event))


@pytest.mark.parametrize("payload", INPUT_PAYLOADS.values(), ids=INPUT_PAYLOADS.keys())
def test_every_input_payload_is_written_as_cavro_writes_it(payload: object) -> None:
    event = an_event(payload)

    assert generated(INPUT, event) == codec.frame_with_cavro(INPUT, codec.event_datum(event))


def test_long_strings_arrays_and_maps_take_multi_byte_lengths_as_cavro_writes_them() -> None:
    memory = a_memory(
        content="é" * 5_000,
        tags=tuple(f"tag-{n}" for n in range(200)),
        metadata={f"key-{n}": "v" * n for n in range(150)},
        embedding=bytes(range(256)) * 6,
        access_count=2**31 - 1,
        created_at=-(2**63),
        last_accessed=2**63 - 1,
        valid_at=-1,
        invalid_at=63,
    )
    event = a_ledger_event(ledger.MemoryStored(memory, 2**40, previous_layer=None))

    assert generated(LEDGER, event) == codec.frame_with_cavro(LEDGER, codec.ledger_datum(event))


@pytest.mark.parametrize("speaker", ["Caroline", None, "Ñ" * 256])
def test_a_speaker_or_its_absence_is_written_as_cavro_writes_it(speaker: str | None) -> None:
    memory = a_memory(speaker=speaker)
    stored = a_ledger_event(ledger.MemoryStored(memory, 7))
    written = an_event(MemoryWritten(memory))

    assert generated(LEDGER, stored) == codec.frame_with_cavro(LEDGER, codec.ledger_datum(stored))
    assert generated(INPUT, written) == codec.frame_with_cavro(INPUT, codec.event_datum(written))


ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True)


@given(
    memory=memories,
    importance=ANY_FLOAT,
    success=st.none() | ANY_FLOAT,
    version=st.integers(min_value=-(2**70), max_value=2**70),
)
def test_any_memory_is_written_as_cavro_writes_it_or_declined(
    memory: Memory, importance: float, success: float | None, version: int
) -> None:
    """Versions beyond a long, NaN, infinities and -0.0 included: the writer's bytes are
    cavro's, or it declines and the codec's answer is cavro's (bytes or the same error)."""
    memory = dataclasses.replace(memory, importance=importance, success=success)
    event = a_ledger_event(ledger.MemoryStored(memory, version))
    try:
        reference: bytes | str = codec.frame_with_cavro(LEDGER, codec.ledger_datum(event))
    except ValueError as refused:
        reference = str(refused)
    try:
        written = generated(LEDGER, event)
    except NotWritable:
        pass
    else:
        assert written == reference
    try:
        encoded: bytes | str = codec.encode_ledger(event)
    except ValueError as refused:
        encoded = str(refused)
    assert encoded == reference
    in_range = -(2**63) <= version < 2**63
    if in_range and not math.isnan(importance):
        assert isinstance(encoded, bytes)


DECLINED: dict[str, dict[str, Any]] = {
    "an int for a double": {"importance": 1},
    "a bool for a double": {"confidence": True},
    "a bool for an int": {"access_count": True},
    "an int past the int range": {"access_count": 2**31},
    "a float for a long": {"created_at": 1.5e12},
    "an unknown enum symbol": {"layer": "core"},
    "a list for an array": {"tags": ["a", "b"]},
    "a str subclass": {"content": type("Text", (str,), {})("hello")},
    "a lone surrogate": {"content": "broken \ud800 text"},
    "bytearray for bytes": {"embedding": bytearray(b"\x00\x01")},
    "a number for a string": {"kind": 7},
    "an int for a boolean": {"pinned": 1},
    "a number for a nullable string": {"speaker": 7},
}


@pytest.mark.parametrize("changes", DECLINED.values(), ids=DECLINED.keys())
def test_a_value_not_of_its_exact_type_is_left_to_cavro(changes: dict[str, Any]) -> None:
    memory = dataclasses.replace(a_memory(), **changes)
    event = MemoryEvent(event_id(3), memory.user_id, T0, MemoryWritten(memory))
    try:
        reference: bytes | str = codec.frame_with_cavro(INPUT, codec.event_datum(event))
    except ValueError as refused:
        reference = str(refused)

    if "tags" not in changes:  # a list is an array the writer writes itself
        with pytest.raises(NotWritable):
            generated(INPUT, event)
    try:
        encoded: bytes | str = codec.encode_event(event)
    except ValueError as refused:
        encoded = str(refused)
    assert encoded == reference


def test_a_payload_class_outside_the_contract_is_left_to_cavro_which_refuses_it() -> None:
    @dataclasses.dataclass(frozen=True)
    class Unknown:
        memory_id: str

    event = a_ledger_event(Unknown("m-1"))

    with pytest.raises(NotWritable):
        generated(LEDGER, event)
    with pytest.raises((ValueError, KeyError)):
        codec.encode_ledger(event)


@pytest.mark.parametrize(
    "field_type",
    ["float", {"type": "fixed", "name": "Four", "size": 4}, ["null", "string", "long"]],
    ids=["float", "fixed", "a three-branch union"],
)
def test_a_schema_the_writer_cannot_write_is_refused_when_generating(field_type: Any) -> None:
    schema = {"type": "record", "name": "Box", "fields": [{"name": "value", "type": field_type}]}

    with pytest.raises(ValueError, match="Box.value|support"):
        record_writer(schema, {"Box": object})


def test_a_record_type_without_a_class_is_refused_when_generating() -> None:
    schema = {"type": "record", "name": "Box", "namespace": "x", "fields": []}

    with pytest.raises(ValueError, match="no class given for the record type x.Box"):
        record_writer(schema, {})


def test_the_frame_header_comes_first() -> None:
    @dataclasses.dataclass(frozen=True)
    class Box:
        value: int

    schema = {"type": "record", "name": "Box", "fields": [{"name": "value", "type": "long"}]}

    assert record_writer(schema, {"Box": Box}, prefix=b"HDR")(Box(-3)) == b"HDR\x05"


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_varint_is_the_zigzag_base_128_encoding_of_the_avro_spec(number: int) -> None:
    zigzag = (number << 1) ^ (number >> 63)
    groups = varint(number)

    assert all(byte & 0x80 for byte in groups[:-1]) and not groups[-1] & 0x80
    assert sum((byte & 0x7F) << (7 * i) for i, byte in enumerate(groups)) == zigzag
