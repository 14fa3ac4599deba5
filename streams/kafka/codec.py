"""Avro framing of the contract in ``schemas/``: read with cavro, written by code generated
from the schema.

Two wire formats, both read always (a topic may hold both while it migrates):

- single-object (Avro spec, "Single-object encoding"): ``C3 01`` + the 8-byte little-endian
  CRC-64-AVRO fingerprint of the writer schema's parsing canonical form + the Avro binary body.
  A reader resolves the fingerprint to the writer schema (current or any checked-in baseline).
- Confluent: ``00`` + the 4-byte big-endian id a Schema Registry gave the writer schema + the
  body: what Kafka Connect, ksqlDB, Flink, Spark and ClickHouse read. An id is resolved once
  through :attr:`SchemaRegistry.resolver` (``streams.kafka.schema_registry``) and cached; a
  fetched schema whose fingerprint is one of ours is that schema, any other is read through
  Avro schema resolution.

Either way the body is read into the current schema, so older producers keep working.

The bytes are read by cavro, whose decoder is a tree of compiled type objects, and written
by a writer generated from the schema (:mod:`streams.kafka.avro_speedups`: a third of cavro's time
per ledger record), held to cavro's bytes; a value it is not sure of is written by cavro.
On a 27k-record bench ledger the datums are equal to fastavro's and the encodings
byte-identical; ``decode_ledger`` (dataclass build included) takes ~12 µs per 1.9 KB record
against 22-26 µs with fastavro. cavro is stricter when encoding (no float for a ``long``, no
bool for a ``double``) and names a bad value inside a union by the whole branch, so an
encoding error is explained by fastavro's validator, which names the field. fastavro also
loads the schema files and gives the parsing canonical form the fingerprints hash.

The codec runs on a copy of each schema with ``logicalType`` removed. That copy is wire-
identical (logical types do not change the bytes nor the fingerprint) and keeps times as int
epoch millis, which is what the engine uses, instead of building ``datetime`` objects per field.
"""

from __future__ import annotations

import json
import os
import typing
from dataclasses import dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

import cavro
import fastavro
import numpy as np
from fastavro.schema import load_schema, to_parsing_canonical_form
from fastavro.validation import ValidationError, validate

from schemas import SCHEMAS_DIR
from streams.engine import ledger
from streams.engine.dataclass_speedups import Convert, field_reader, slot_builder
from streams.engine.model import (
    INPUT_TYPE_NAMES,
    Memory,
    MemoryEvent,
)
from streams.kafka.avro_speedups import Writer, record_writer

MAGIC = b"\xc3\x01"
HEADER_SIZE = 10
CONFLUENT_MAGIC = 0  # the Confluent wire format's first byte
CONFLUENT_HEADER_SIZE = 5
SINGLE_OBJECT = "SINGLE-OBJECT"
CONFLUENT = "CONFLUENT"
NAMESPACE = "memstream.v1"
LEDGER_NAMESPACE = "memstream.v1.ledger"
ENVELOPES = ("MemoryEvent", "ConsolidationEvent")


class DecodeError(ValueError):
    """Bytes that cannot be read as the expected envelope. ``reason`` is machine-readable."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def schemas_dir() -> Path:
    """Where the contract lives: ``$MEMSTREAM_SCHEMAS_DIR`` or the repository's ``schemas/``."""
    configured = os.environ.get("MEMSTREAM_SCHEMAS_DIR")
    path = Path(configured) if configured else SCHEMAS_DIR
    if not (path / "memstream.v1.MemoryEvent.avsc").exists():
        raise FileNotFoundError(
            f"Avro schemas not found in {path}: set MEMSTREAM_SCHEMAS_DIR to the schemas/ "
            f"folder of the memstream source tree"
        )
    return path


# --- CRC-64-AVRO -----------------------------------------------------------------------------

_EMPTY64 = 0xC15D213AA4D7A795


def _crc64_table() -> list[int]:
    table = []
    for i in range(256):
        fp = i
        for _ in range(8):
            fp = (fp >> 1) ^ (_EMPTY64 & -(fp & 1))
        table.append(fp)
    return table


_TABLE = _crc64_table()


def crc64_avro(data: bytes) -> int:
    """The Rabin fingerprint the Avro spec names CRC-64-AVRO."""
    fp = _EMPTY64
    for byte in data:
        fp = (fp >> 8) ^ _TABLE[(fp ^ byte) & 0xFF]
    return fp


def fingerprint(schema: dict[str, Any] | str) -> bytes:
    """8-byte little-endian CRC-64-AVRO of the schema's parsing canonical form."""
    canonical = to_parsing_canonical_form(schema)
    return crc64_avro(canonical.encode()).to_bytes(8, "little")


# --- schema registry -------------------------------------------------------------------------


def strip_logical_types(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: strip_logical_types(v) for k, v in node.items() if k != "logicalType"}
    if isinstance(node, list):
        return [strip_logical_types(v) for v in node]
    return node


# Records decode to dicts, a union of several records to ``(full name, dict)`` (the form
# ``_payload_from_datum`` reads), and the same tuple names the branch when encoding.
_CAVRO_OPTIONS = cavro.Options(
    record_decodes_to_dict=True,
    union_decodes_to=cavro.UnionDecodeOption.TYPE_TUPLE_IF_RECORD_AMBIGUOUS,
    allow_tuple_notation=True,
)
_MAX_REASON = 300  # characters of an encoding error that names no field
# Read after a record: it finds a byte only if the record did not end where the data does.
_ONE_BYTE = cavro.Schema({"type": "fixed", "name": "TrailingByte", "size": 1})


@dataclass(frozen=True)
class WriterSchema:
    envelope: str
    fingerprint: bytes
    schema: cavro.Schema  # logical types stripped
    write: Writer | None = None
    """The generated writer of the whole frame (:mod:`streams.kafka.avro_speedups`), for the current
    schemas; None when the schema's records are not the engine's dataclasses."""
    frame: bytes = b""
    """What precedes the body when this schema writes: ``C3 01`` + fingerprint, or ``00`` + a
    registry id (:meth:`SchemaRegistry.write_with_ids`)."""


SchemaResolver = typing.Callable[[int], "str | None"]
"""A registry id → that schema's JSON text, or None when the registry has no such id. May
raise :class:`RegistryUnavailable` (``streams.kafka.schema_registry``)."""


class SchemaRegistry:
    """Every schema this process can read (current + baselines), indexed by fingerprint."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or schemas_dir()
        self.current: dict[str, WriterSchema] = {}
        self.by_fingerprint: dict[bytes, WriterSchema] = {}
        self.by_id: dict[int, WriterSchema] = {}  # Confluent wire format: registry id → schema
        self.resolver: SchemaResolver | None = None
        self.wire_format = SINGLE_OBJECT
        self._readers: dict[bytes, Any] = {}
        for envelope in ENVELOPES:
            self.current[envelope] = self._register(envelope, self.directory, writer=True)
        baseline_root = self.directory / "baseline"
        for version_dir in sorted(p for p in baseline_root.glob("*") if p.is_dir()):
            for envelope in ENVELOPES:
                if (version_dir / f"{NAMESPACE}.{envelope}.avsc").exists():
                    self._register(envelope, version_dir)

    def _register(self, envelope: str, directory: Path, writer: bool = False) -> WriterSchema:
        path = directory / f"{NAMESPACE}.{envelope}.avsc"
        expanded = load_schema(str(path), _write_hint=False)
        schema = cavro.Schema(strip_logical_types(expanded), options=_CAVRO_OPTIONS)
        print_ = fingerprint(expanded)  # type: ignore[arg-type]
        write = _generated_writer(expanded, MAGIC + print_) if writer else None
        entry = WriterSchema(envelope, print_, schema, write, MAGIC + print_)
        self.by_fingerprint.setdefault(entry.fingerprint, entry)
        return entry

    def write_with_ids(self, ids: dict[str, int]) -> None:
        """Write the Confluent wire format from now on: envelope → the id the registry gave
        its current schema. Reading is unchanged (both formats, always)."""
        for envelope, schema_id in ids.items():
            current = self.current[envelope]
            frame = confluent_frame(schema_id)
            expanded = json.loads(self.expanded_json(envelope))
            entry = replace(current, write=_generated_writer(expanded, frame), frame=frame)
            self.current[envelope] = entry
            self.by_fingerprint[entry.fingerprint] = entry
            self.by_id[schema_id] = entry
        self.wire_format = CONFLUENT

    def learn_id(self, schema_id: int, schema_text: str) -> WriterSchema:
        """Remember what a registry id stands for. A schema with one of our fingerprints is
        that schema; another (a producer's own, compatible one) is read by Avro resolution.
        Raises :class:`DecodeError` (``wrong_schema``) for one that is neither."""
        try:
            parsed = json.loads(schema_text)
            print_ = fingerprint(parsed)
        except Exception as exc:  # noqa: BLE001 - whatever the registry served
            raise DecodeError(
                "wrong_schema", f"schema id {schema_id} is not an Avro schema ({exc})"
            ) from None
        entry = self.by_fingerprint.get(print_)
        if entry is None:
            entry = self._foreign(schema_id, parsed, print_)
        self.by_id[schema_id] = entry
        return entry

    def _foreign(self, schema_id: int, parsed: Any, print_: bytes) -> WriterSchema:
        name = parsed.get("name", "") if isinstance(parsed, dict) else ""
        namespace = parsed.get("namespace", "") if isinstance(parsed, dict) else ""
        full = name if "." in name else f"{namespace}.{name}".strip(".")
        envelope = full.removeprefix(f"{NAMESPACE}.")
        try:
            schema = cavro.Schema(strip_logical_types(parsed), options=_CAVRO_OPTIONS)
        except Exception as exc:  # noqa: BLE001 - a schema cavro cannot build
            raise DecodeError(
                "wrong_schema", f"schema id {schema_id} cannot be read: {exc}"
            ) from None
        entry = WriterSchema(envelope, print_, schema)
        if envelope in self.current:
            try:
                self.reader_for(entry)
            except Exception as exc:  # noqa: BLE001 - not resolvable into ours
                raise DecodeError(
                    "wrong_schema",
                    f"schema id {schema_id} ({full}) cannot be read as the current {envelope}: "
                    f"{exc}",
                ) from None
        self.by_fingerprint.setdefault(print_, entry)
        return entry

    def writer_of_id(self, schema_id: int) -> WriterSchema:
        """The schema a Confluent-framed record names, asking the registry once per id."""
        entry = self.by_id.get(schema_id)
        if entry is not None:
            return entry
        if self.resolver is None:  # as before the Confluent format: bytes nobody can read
            raise DecodeError(
                "undecodable",
                f"not Avro single-object encoding; if it is the Confluent wire format (schema "
                f"id {schema_id}), set MEMSTREAM_SCHEMA_REGISTRY_URL to read it",
            )
        text = self.resolver(schema_id)
        if text is None:
            raise DecodeError(
                "unknown_schema", f"schema id {schema_id} is not in the Schema Registry"
            )
        return self.learn_id(schema_id, text)

    def reader_for(self, writer: WriterSchema) -> Any:
        """What reads ``writer``'s bytes into the current schema (itself when they are one)."""
        reader = self._readers.get(writer.fingerprint)
        if reader is None:
            current = self.current[writer.envelope]
            if writer is current:
                reader = current.schema
            else:
                reader = current.schema.reader_for_writer(writer.schema)
            self._readers[writer.fingerprint] = reader
        return reader

    def expanded_json(self, envelope: str, directory: Path | None = None) -> str:
        """The schema with every named type inlined, for tools such as avro.compatibility."""
        path = (directory or self.directory) / f"{NAMESPACE}.{envelope}.avsc"
        return json.dumps(load_schema(str(path), _write_hint=False))


@cache
def default_registry() -> SchemaRegistry:
    return SchemaRegistry()


# --- dataclass <-> Avro datum ----------------------------------------------------------------

Datum = dict[str, Any]


memory_to_datum: typing.Callable[[Memory], Datum] = field_reader(Memory)


memory_from_datum = slot_builder(Memory, {"tags": tuple, "trigger_conditions": tuple})


@dataclass(frozen=True)
class _Shape:
    """How to convert one payload dataclass: which fields hold a Memory, which a tuple, and
    the builder that applies both."""

    cls: type
    avro_name: str
    field_names: tuple[str, ...]
    memory_fields: frozenset[str]
    from_datum: typing.Callable[[Datum], Any]


def _shape(cls: type, avro_name: str) -> _Shape:
    hints = typing.get_type_hints(cls)
    names = tuple(f.name for f in fields(cls))
    convert: dict[str, Convert] = {}
    for name in names:
        if hints[name] is Memory:
            convert[name] = memory_from_datum
        elif typing.get_origin(hints[name]) is tuple:
            convert[name] = tuple
    memory_fields = frozenset(n for n in names if hints[n] is Memory)
    return _Shape(cls, avro_name, names, memory_fields, slot_builder(cls, convert))


_INPUT_SHAPES = {cls: _shape(cls, f"{NAMESPACE}.{name}") for cls, name in INPUT_TYPE_NAMES.items()}
_LEDGER_SHAPES = {
    cls: _shape(cls, f"{LEDGER_NAMESPACE}.{cls.__name__}") for cls in ledger.LEDGER_PAYLOAD_TYPES
}
_BY_AVRO_NAME = {s.avro_name: s for s in (*_INPUT_SHAPES.values(), *_LEDGER_SHAPES.values())}


def _payload_to_datum(payload: Any, shapes: dict[type, _Shape]) -> tuple[str, Datum]:
    shape = shapes[type(payload)]
    datum: Datum = {}
    for name in shape.field_names:
        value = getattr(payload, name)
        datum[name] = memory_to_datum(value) if name in shape.memory_fields else value
    return shape.avro_name, datum


def _payload_from_datum(named: tuple[str, Datum]) -> Any:
    avro_name, datum = named
    return _BY_AVRO_NAME[avro_name].from_datum(datum)


_event_from_datum = slot_builder(MemoryEvent, {"payload": _payload_from_datum})
_ledger_from_datum = slot_builder(ledger.ConsolidationEvent, {"payload": _payload_from_datum})
_RECORD_CLASSES: dict[str, type] = {
    f"{NAMESPACE}.Memory": Memory,
    f"{NAMESPACE}.MemoryEvent": MemoryEvent,
    f"{NAMESPACE}.ConsolidationEvent": ledger.ConsolidationEvent,
    **{shape.avro_name: shape.cls for shape in _BY_AVRO_NAME.values()},
}
"""Avro full name → the dataclass each record type is written from."""


# --- embeddings ------------------------------------------------------------------------------


def pack_embedding(values: Any) -> bytes:
    """Floats -> packed little-endian float32 (the wire form of ``Memory.embedding``)."""
    return np.asarray(values, dtype="<f4").tobytes()


def unpack_embedding(packed: bytes) -> np.ndarray:
    return np.frombuffer(packed, dtype="<f4")


# --- framing ---------------------------------------------------------------------------------


def _generated_writer(schema: Any, header: bytes) -> Writer | None:
    """The frame's writer, or None (cavro alone) when the schema names a record type that is
    not one of the engine's dataclasses (``MEMSTREAM_SCHEMAS_DIR`` pointing elsewhere)."""
    try:
        return record_writer(schema, _RECORD_CLASSES, prefix=header)
    except ValueError:
        return None


def _encode(schema: WriterSchema, value: Any, to_datum: typing.Callable[[Any], Datum]) -> bytes:
    """The framed record: written by the generated writer, or, for a value it declines, by
    cavro from the value's datum (which writes it the same or explains why it cannot)."""
    if schema.write is not None:
        try:
            return schema.write(value)
        except (ValueError, AttributeError):  # NotWritable; an unset slot
            pass
    return frame_with_cavro(schema, to_datum(value))


def frame_with_cavro(schema: WriterSchema, datum: dict[str, Any]) -> bytes:
    """The framed record as cavro writes ``datum``: the reference the generated writer is
    held to, and what explains a value that does not fit the contract."""
    try:
        body = schema.schema.binary_encode(datum)
    except ValueError as exc:  # cavro's InvalidValue, or a missing field
        raise ValueError(_why_it_does_not_fit(schema, datum, exc)) from None
    return (schema.frame or MAGIC + schema.fingerprint) + body


def confluent_frame(schema_id: int) -> bytes:
    """The Confluent wire format's header: magic byte 0 and the big-endian schema id."""
    return bytes([CONFLUENT_MAGIC]) + schema_id.to_bytes(4, "big")


def _why_it_does_not_fit(schema: WriterSchema, datum: dict[str, Any], exc: ValueError) -> str:
    """A short reason naming the field. cavro reports a bad value inside a union by the
    whole branch (the entire payload, embedding included); fastavro's validator names the
    field. Only on this error path, so the schema is parsed for it here."""
    parsed = fastavro.parse_schema(schema.schema.source)  # the dict cavro was built from
    try:
        validate(datum, parsed, raise_errors=True)
    except ValidationError as invalid:
        return "; ".join(str(reason) for reason in invalid.errors)
    return str(exc)[:_MAX_REASON]


def _writer_of(data: bytes, registry: SchemaRegistry) -> tuple[WriterSchema, int]:
    """The writer schema of a framed record, and where its body starts."""
    if len(data) >= HEADER_SIZE and data[:2] == MAGIC:
        fp = bytes(data[2:HEADER_SIZE])
        writer = registry.by_fingerprint.get(fp)
        if writer is None:
            raise DecodeError(
                "unknown_schema",
                f"schema fingerprint {fp.hex()} is not in schemas/ or schemas/baseline/",
            )
        return writer, HEADER_SIZE
    if len(data) > CONFLUENT_HEADER_SIZE and data[0] == CONFLUENT_MAGIC:
        schema_id = int.from_bytes(data[1:CONFLUENT_HEADER_SIZE], "big")
        return registry.writer_of_id(schema_id), CONFLUENT_HEADER_SIZE
    raise DecodeError(
        "undecodable",
        "neither Avro single-object encoding (C3 01 + fingerprint) nor the Confluent wire "
        "format (00 + schema id)",
    )


def _unframe(data: bytes, envelope: str, registry: SchemaRegistry) -> dict[str, Any]:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise DecodeError("undecodable", "the record has no value bytes")
    writer, start = _writer_of(data, registry)
    if writer.envelope != envelope:
        raise DecodeError("wrong_schema", f"expected {envelope}, got {writer.envelope}")
    try:
        body = cavro.MemoryReader(memoryview(data)[start:])
        datum = registry.reader_for(writer).binary_read(body)
        if _has_another_byte(body):
            raise ValueError("trailing bytes after the record")
    except DecodeError:
        raise
    except Exception as exc:  # cavro raises EOFError, ValueError, ... on corrupt input
        raise DecodeError("undecodable", f"Avro body does not match its schema: {exc}") from None
    if not isinstance(datum, dict):
        raise DecodeError("undecodable", f"expected a record, got {type(datum).__name__}")
    return datum


def _has_another_byte(body: cavro.MemoryReader) -> bool:
    try:
        _ONE_BYTE.binary_read(body)
    except EOFError:
        return False
    return True


# --- public API ------------------------------------------------------------------------------


def encode_event(event: MemoryEvent, registry: SchemaRegistry | None = None) -> bytes:
    reg = registry or default_registry()
    return _encode(reg.current["MemoryEvent"], event, event_datum)


def event_datum(event: MemoryEvent) -> Datum:
    """The event as the dicts cavro writes (:func:`frame_with_cavro`)."""
    return {
        "event_id": event.event_id,
        "user_id": event.user_id,
        "occurred_at": event.occurred_at,
        "source": event.source,
        "payload": _payload_to_datum(event.payload, _INPUT_SHAPES),
    }


def decode_event(data: bytes, registry: SchemaRegistry | None = None) -> MemoryEvent:
    return _event_from_datum(_unframe(data, "MemoryEvent", registry or default_registry()))


def encode_ledger(
    event: ledger.ConsolidationEvent, registry: SchemaRegistry | None = None
) -> bytes:
    reg = registry or default_registry()
    return _encode(reg.current["ConsolidationEvent"], event, ledger_datum)


def ledger_datum(event: ledger.ConsolidationEvent) -> Datum:
    """The ledger event as the dicts cavro writes (:func:`frame_with_cavro`)."""
    return {
        "event_id": event.event_id,
        "user_id": event.user_id,
        "occurred_at": event.occurred_at,
        "causation_id": event.causation_id,
        "cycle_id": event.cycle_id,
        "trigger": event.trigger,
        "payload": _payload_to_datum(event.payload, _LEDGER_SHAPES),
        "emission_index": event.emission_index,
        "emission_size": event.emission_size,
    }


def decode_ledger(data: bytes, registry: SchemaRegistry | None = None) -> ledger.ConsolidationEvent:
    return _ledger_from_datum(_unframe(data, "ConsolidationEvent", registry or default_registry()))


def peek_fingerprint(data: bytes) -> bytes | None:
    """The writer fingerprint of a single-object record (for a Confluent one, its 5-byte
    header: magic byte and schema id), without decoding it."""
    if len(data) >= HEADER_SIZE and data[:2] == MAGIC:
        return bytes(data[2:HEADER_SIZE])
    if len(data) > CONFLUENT_HEADER_SIZE and data[0] == CONFLUENT_MAGIC:
        return bytes(data[:CONFLUENT_HEADER_SIZE])
    return None


def peek_schema_id(data: bytes | None) -> int | None:
    """The registry id of a Confluent-framed record, without decoding it."""
    if data is not None and len(data) > CONFLUENT_HEADER_SIZE and data[0] == CONFLUENT_MAGIC:
        return int.from_bytes(data[1:CONFLUENT_HEADER_SIZE], "big")
    return None
