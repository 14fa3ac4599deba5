"""``memstream tail``: the ledger (``memory.consolidation``) as JSON lines, for jq and scripts.

The ledger is Avro, single-object encoded or in the Confluent wire format (both are read;
Confluent ids through ``MEMSTREAM_SCHEMA_REGISTRY_URL``). This command prints each ledger
event as one JSON object per line on stdout and nothing else there
(counts and warnings go to stderr), so ``memstream tail … | jq …`` just works.

What it reads, and how:

- Committed records only (``isolation.level=read_committed``): an aborted transaction of the
  worker never shows up, exactly as for the projector.
- Partitions are assigned directly, never subscribed, and nothing is committed: a tail joins
  no consumer group, takes no partition from anyone, and leaves no offsets behind.
- Filters run on the record's key (the user id) and its ``event_type`` header before its
  value is decoded; a skipped record is counted, never decoded. A record without the header
  (none of the worker's lack it) is decoded and filtered on its decoded type, so nothing is
  missed.

The JSON form of an event (``event_json``): every field of
:class:`streams.engine.ledger.ConsolidationEvent` in declaration order, its ``event_type``,
and ``payload`` with every field of the payload (memories as objects, tuples as lists).
Times stay epoch-millisecond ints under their own names, and an ISO-8601 UTC string is added
beside each one as ``<name>_iso`` (``null`` when the time is). Bytes fields
(``Memory.embedding``, ``IdentityDriftMeasured.anchor``) are left out by default, set or not,
being 1.5 KB of noise per memory for most analyses; ``--embeddings base64`` includes them as
standard base64 of the packed little-endian float32 values (``null`` when unset). ``kafka``
holds the record's coordinates (topic, partition, offset, key, timestamp).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import os
import time
import typing
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, Literal, Protocol, TextIO

from fastavro.schema import load_schema

from streams.config.settings import Settings
from streams.engine import ledger
from streams.erasure.cipher import Unreadable
from streams.kafka.codec import DecodeError, decode_ledger, schemas_dir

EmbeddingMode = Literal["omit", "base64"]
EVENT_TYPE_HEADER = "event_type"
LEDGER_EVENT_TYPES: tuple[str, ...] = tuple(cls.__name__ for cls in ledger.LEDGER_PAYLOAD_TYPES)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

HeaderValue = str | bytes | None
Headers = dict[str, HeaderValue] | list[tuple[str, HeaderValue]]


class TailError(RuntimeError):
    """The tail cannot start or go on; the message says what to do."""


class Record(Protocol):
    """The part of a consumed Kafka record a tail uses (``confluent_kafka.Message``)."""

    def key(self) -> bytes | None: ...

    def value(self) -> bytes | None: ...

    def headers(self) -> Headers | None: ...

    def topic(self) -> str | None: ...

    def partition(self) -> int | None: ...

    def offset(self) -> int | None: ...

    def timestamp(self) -> tuple[int, int]: ...


# --- filter ----------------------------------------------------------------------------------


def header(record: Record, name: str) -> str | None:
    """The first header called ``name``, as text; ``None`` when there is none."""
    found = record.headers() or ()
    pairs = found.items() if isinstance(found, dict) else found
    for key, value in pairs:
        if key == name and value is not None:
            return value if isinstance(value, str) else value.decode("utf-8", errors="replace")
    return None


@dataclass(frozen=True)
class TailFilter:
    """Which ledger events to print: any of ``event_types`` (empty: all) of ``user`` (None:
    all users)."""

    event_types: frozenset[str] = frozenset()
    user: str | None = None

    def __post_init__(self) -> None:
        unknown = sorted(self.event_types - set(LEDGER_EVENT_TYPES))
        if unknown:
            raise ValueError(
                f"unknown ledger event type(s) {', '.join(unknown)}: choose from "
                f"{', '.join(LEDGER_EVENT_TYPES)}"
            )

    def skips(self, record: Record) -> bool:
        """Whether the record's key and headers alone rule it out (its value is not read)."""
        if self.user is not None and record.key() != self.user.encode():
            return True
        if not self.event_types:
            return False
        event_type = header(record, EVENT_TYPE_HEADER)
        return event_type is not None and event_type not in self.event_types

    def accepts(self, event: ledger.ConsolidationEvent) -> bool:
        """The check on a decoded event (for a record that had no ``event_type`` header)."""
        if self.user is not None and event.user_id != self.user:
            return False
        return not self.event_types or event.event_type in self.event_types


# --- decode ----------------------------------------------------------------------------------


def iso_millis(millis: int | None) -> str | None:
    """Epoch milliseconds as ISO-8601 UTC with milliseconds, e.g. 2024-05-29T04:26:40.000Z."""
    if millis is None:
        return None
    try:
        moment = _EPOCH + timedelta(milliseconds=millis)
    except OverflowError:  # outside datetime's range: the int alone says it
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@cache
def time_fields() -> frozenset[str]:
    """Names of the ledger schema's ``timestamp-millis`` fields (read from the contract, so a
    new time field gets its ``_iso`` twin without a change here)."""
    path = schemas_dir() / "memstream.v1.ConsolidationEvent.avsc"
    names: set[str] = set()

    def is_time(kind: Any) -> bool:
        if isinstance(kind, list):
            return any(is_time(branch) for branch in kind)
        return isinstance(kind, dict) and kind.get("logicalType") == "timestamp-millis"

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for branch in node:
                walk(branch)
        elif isinstance(node, dict):
            for item in node.get("fields", ()):
                if is_time(item["type"]):
                    names.add(item["name"])
                walk(item["type"])
            for nested in ("items", "values"):
                if nested in node:
                    walk(node[nested])

    walk(load_schema(str(path), _write_hint=False))
    return frozenset(names)


@cache
def bytes_fields(cls: type) -> frozenset[str]:
    """Fields declared as bytes (or optional bytes): left out entirely with ``omit``, whether
    set or not, so a key's presence never depends on the value."""
    hints = typing.get_type_hints(cls)
    return frozenset(
        item.name
        for item in dataclasses.fields(cls)
        if hints[item.name] is bytes or bytes in typing.get_args(hints[item.name])
    )


def to_json(value: Any, embeddings: EmbeddingMode = "omit") -> Any:
    """A decoded ledger value as JSON-ready data (see the module docstring for the form)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        times = time_fields()
        out: dict[str, Any] = {}
        binary = bytes_fields(type(value))
        for item in dataclasses.fields(value):
            name, raw = item.name, getattr(value, item.name)
            if name in binary:
                if embeddings == "base64":
                    out[name] = None if raw is None else base64.b64encode(raw).decode("ascii")
                continue
            out[name] = to_json(raw, embeddings)
            if name in times and (raw is None or isinstance(raw, int)):
                out[f"{name}_iso"] = iso_millis(raw)
        return out
    if isinstance(value, tuple | list):
        return [to_json(v, embeddings) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v, embeddings) for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN/Infinity
    return value


def event_json(
    event: ledger.ConsolidationEvent, embeddings: EmbeddingMode = "omit"
) -> dict[str, Any]:
    """Every field of the event, ``event_type`` right after ``event_id``, and the payload."""
    body = to_json(event, embeddings)
    return {"event_id": body.pop("event_id"), "event_type": event.event_type, **body}


# --- render ----------------------------------------------------------------------------------


def kafka_json(record: Record) -> dict[str, Any]:
    """Where the record was: topic, partition, offset, key and the broker's timestamp."""
    key = record.key()
    _, stamp = record.timestamp()
    millis = stamp if stamp >= 0 else None  # -1: no timestamp
    return {
        "topic": record.topic(),
        "partition": record.partition(),
        "offset": record.offset(),
        "key": key.decode("utf-8", errors="replace") if key is not None else None,
        "timestamp": millis,
        "timestamp_iso": iso_millis(millis),
    }


def render(
    event: ledger.ConsolidationEvent,
    record: Record,
    embeddings: EmbeddingMode = "omit",
    erased: bool = False,
) -> str:
    """One JSON line (no newline): the event's fields, then its Kafka coordinates.
    ``erased``: its user's data key is erased; its personal fields are shown as they are
    stored (sealed, ``ms1:`` text), and ``"erased": true`` says they will never open."""
    document = {**event_json(event, embeddings), "kafka": kafka_json(record)}
    if erased:
        document["erased"] = True
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# --- the loop --------------------------------------------------------------------------------


@dataclass
class TailStats:
    printed: int = 0
    skipped: int = 0  # ruled out by key/header, never decoded
    filtered_after_decode: int = 0  # had no event_type header and did not match
    undecodable: int = 0
    erased: int = 0  # sealed with an erased user's key: printed as tombstones
    records: int = 0

    def summary(self) -> str:
        parts = [f"{self.printed} event(s) printed", f"{self.skipped} skipped without decoding"]
        if self.filtered_after_decode:
            parts.append(f"{self.filtered_after_decode} without an event_type header filtered")
        if self.undecodable:
            parts.append(f"{self.undecodable} undecodable")
        if self.erased:
            parts.append(f"{self.erased} of erased users")
        return "memstream tail: " + ", ".join(parts)


@dataclass
class Tail:
    """Turns consumed records into JSON lines on ``out``; knows nothing of the consumer."""

    filter: TailFilter
    out: TextIO
    err: TextIO
    max_events: int | None = None
    embeddings: EmbeddingMode = "omit"
    decode: Callable[[bytes], ledger.ConsolidationEvent] = decode_ledger
    # opens sealed fields (a master key is configured); raises Unreadable when erased
    open: Callable[[ledger.ConsolidationEvent], ledger.ConsolidationEvent] | None = None
    stats: TailStats = field(default_factory=TailStats)

    @property
    def done(self) -> bool:
        return self.max_events is not None and self.stats.printed >= self.max_events

    def feed(self, records: Iterable[Record]) -> None:
        """Print what passes the filter, up to ``max_events``, and flush once per batch so a
        reader downstream of a pipe sees lines as they come."""
        for record in records:
            if self.done:
                break
            self._one(record)
        self.out.flush()

    def _one(self, record: Record) -> None:
        self.stats.records += 1
        if self.filter.skips(record):
            self.stats.skipped += 1
            return
        try:
            event = self.decode(record.value() or b"")
        except DecodeError as exc:
            self.stats.undecodable += 1
            where = f"{record.topic()}[{record.partition()}]@{record.offset()}"
            print(f"memstream tail: skipping {where}: {exc}", file=self.err)
            return
        if not self.filter.accepts(event):
            self.stats.filtered_after_decode += 1
            return
        erased = False
        if self.open is not None:
            try:
                event = self.open(event)
            except Unreadable:
                erased = True
                self.stats.erased += 1
        self.out.write(render(event, record, self.embeddings, erased) + "\n")
        self.stats.printed += 1


def ledger_decoder(settings: Settings) -> Callable[[bytes], ledger.ConsolidationEvent]:
    """How this tail decodes a ledger record: both wire formats, the Schema Registry's ids
    resolved once each. A registry that is down when an id is first met is waited for up to
    ``MEMSTREAM_SCHEMA_REGISTRY_WAIT_SECONDS``; then the tail stops and says so."""
    from streams.kafka.schema_registry import RegistryUnavailable, contract_registry, with_retries

    try:
        registry = contract_registry(settings)
    except RegistryUnavailable as exc:
        raise TailError(str(exc)) from None

    def decode(value: bytes) -> ledger.ConsolidationEvent:
        try:
            return decode_ledger(value, registry)
        except RegistryUnavailable:
            try:
                return with_retries(
                    lambda: decode_ledger(value, registry),
                    settings.schema_registry_wait_seconds,
                    "memstream tail: resolving a ledger schema id",
                )
            except RegistryUnavailable as exc:
                raise TailError(str(exc)) from None

    return decode


def ledger_opener(
    settings: Settings,
) -> Callable[[ledger.ConsolidationEvent], ledger.ConsolidationEvent] | None:
    """Opens the ledger's sealed fields with the users' data keys when a master key is
    configured (None otherwise: sealed fields print as stored)."""
    from streams.erasure.sealing import sealing_of

    sealing = sealing_of(settings)
    return sealing.open_ledger if sealing is not None else None


def run_tail(
    settings: Settings,
    tail: Tail,
    *,
    from_beginning: bool,
    timeout: float | None,
    poll_seconds: float = 0.5,
) -> TailStats:
    """Read the ledger of ``settings`` into ``tail`` until ``max_events`` are printed, until
    ``timeout`` seconds pass without any record (so ``--from-beginning --timeout 5`` dumps the
    ledger and stops once caught up), or until Ctrl-C, which ends it like the others."""
    from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaError, TopicPartition

    consumer = Consumer(
        {
            **_kafka_config(settings),
            # assign() joins no group and nothing is committed; librdkafka still wants an id.
            "group.id": f"memstream-tail-{uuid.uuid4().hex[:12]}",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "isolation.level": "read_committed",
        }
    )
    try:
        topic = settings.ledger_topic
        partitions = _partitions(consumer, topic, settings.kafka_bootstrap)
        start = OFFSET_BEGINNING if from_beginning else OFFSET_END
        consumer.assign([TopicPartition(topic, p, start) for p in partitions])
        idle_since = time.monotonic()
        while not tail.done:
            if timeout is not None and time.monotonic() - idle_since >= timeout:
                break
            records = []
            for message in consumer.consume(num_messages=500, timeout=poll_seconds):
                error = message.error()
                if error is None:
                    records.append(message)
                elif error.fatal():
                    raise TailError(f"Kafka stopped the tail: {error.str()}")
                elif error.code() != KafkaError._PARTITION_EOF:
                    print(f"memstream tail: {error.str()}", file=tail.err)
            if records:
                idle_since = time.monotonic()
                tail.feed(records)
    except KeyboardInterrupt:
        pass  # Ctrl-C is how a tail usually ends: close, count, no traceback
    finally:
        consumer.close()
    return tail.stats


def _kafka_config(settings: Settings) -> dict[str, Any]:
    """The shared client configuration (bootstrap + security) every memstream client uses."""
    from streams.config.kafka_security import confluent_config

    return confluent_config(settings)


def _partitions(consumer: Any, topic: str, bootstrap: str) -> Sequence[int]:
    from confluent_kafka import KafkaException

    try:
        metadata = consumer.list_topics(topic, timeout=15)
    except KafkaException as exc:
        raise TailError(
            f"cannot reach Kafka at {bootstrap} ({exc.args[0].str()}): start it (`memstream "
            f"up` locally) or set MEMSTREAM_KAFKA_BOOTSTRAP"
        ) from None
    found = metadata.topics.get(topic)
    if found is None or found.error is not None or not found.partitions:
        raise TailError(
            f"the ledger topic {topic!r} does not exist on {bootstrap}: check "
            f"MEMSTREAM_TOPIC_PREFIX, or run `memstream up` to create the topics"
        )
    return sorted(found.partitions)


def write_safely(stream: TextIO) -> None:
    """After a closed pipe (``memstream tail | head``): point stdout at /dev/null so Python's
    flush at exit does not print a traceback for output nobody reads any more."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)


__all__ = [
    "EmbeddingMode",
    "LEDGER_EVENT_TYPES",
    "Record",
    "Tail",
    "TailError",
    "TailFilter",
    "TailStats",
    "event_json",
    "iso_millis",
    "ledger_decoder",
    "render",
    "run_tail",
    "write_safely",
]
