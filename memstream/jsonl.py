"""Reads memory events from JSON Lines, one event per line, with errors that name the line.

Line format (times are epoch millis or ISO-8601; ids default to fresh UUIDs):

    {"type": "MemoryWritten", "user_id": "u1", "memory": {"content": "…", "importance": 0.8}}
    {"type": "MemoryWritten", "user_id": "u1", "memory": {"content": "…", "speaker": "Caroline"}}
    {"type": "MemoryAccessed", "user_id": "u1", "memory_id": "m1"}
    {"type": "MemoryForgotten", "user_id": "u1", "memory_id": "m1", "reason": "gdpr"}
    {"type": "SessionEnded", "user_id": "u1", "session_id": "s1"}
    {"type": "ConsolidationRequested", "user_id": "u1", "force": true}

Structure and types are checked here; value rules (ranges, sizes, dimension) are the worker's,
so a line that parses is published and, if it breaks a rule, lands in the dead-letter topic.
"""

from __future__ import annotations

import json
import typing
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from streams.engine.model import (
    INPUT_TYPE_NAMES,
    Memory,
    MemoryEvent,
    MemoryWritten,
)
from streams.engine.validation import MAX_INT32, MAX_TIME_MS
from streams.kafka import codec

PAYLOAD_CLASSES = {name: cls for cls, name in INPUT_TYPE_NAMES.items()}
ENVELOPE_KEYS = {"type", "user_id", "event_id", "occurred_at", "source"}
_TIME_FIELDS = {"created_at", "last_accessed", "valid_at", "invalid_at", "accessed_at"}
_MEMORY_FIELDS = {f.name: f for f in fields(Memory)}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class EventFormatError(ValueError):
    """A JSON line that is not a memory event; the message says which field and why."""


@dataclass(frozen=True)
class ParsedLine:
    number: int
    event: MemoryEvent | None
    error: str | None


def read_events(path: Path, now_ms: int) -> Iterator[ParsedLine]:
    """Every non-blank line of ``path``, parsed or with the reason it could not be."""
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield ParsedLine(number, event_from_json(json.loads(line), now_ms), None)
            except json.JSONDecodeError as exc:
                yield ParsedLine(number, None, f"not JSON: {exc.msg} at column {exc.colno}")
            except EventFormatError as exc:
                yield ParsedLine(number, None, str(exc))


def event_from_json(obj: Any, now_ms: int) -> MemoryEvent:
    if not isinstance(obj, dict):
        raise EventFormatError("a line must be a JSON object")
    type_name = obj.get("type")
    if type_name not in PAYLOAD_CLASSES:
        raise EventFormatError(
            f"'type' must be one of {', '.join(PAYLOAD_CLASSES)}; got {type_name!r}"
        )
    user_id = _require_str(obj, "user_id")
    cls = PAYLOAD_CLASSES[type_name]
    body = {k: v for k, v in obj.items() if k not in ENVELOPE_KEYS}
    if cls is MemoryWritten:
        memory_obj = body.pop("memory", None)
        if not isinstance(memory_obj, dict):
            raise EventFormatError("MemoryWritten needs a 'memory' object")
        _reject_unknown(body, set(), "MemoryWritten")
        payload: Any = MemoryWritten(_memory_from_json(memory_obj, user_id))
    else:
        allowed = {f.name for f in fields(cls)}
        _reject_unknown(body, allowed, type_name)
        for name in allowed & _TIME_FIELDS:
            if body.get(name) is not None:
                body[name] = parse_time(body[name], name)
        _check_payload_types(cls, body, type_name)
        try:
            payload = cls(**body)
        except TypeError as exc:
            raise EventFormatError(f"{type_name}: {exc}") from None
    occurred_at = parse_time(obj["occurred_at"], "occurred_at") if "occurred_at" in obj else now_ms
    return MemoryEvent(
        event_id=str(obj.get("event_id") or uuid.uuid4()),
        user_id=user_id,
        occurred_at=occurred_at,
        payload=payload,
        source=str(obj.get("source", "jsonl")),
    )


def _memory_from_json(obj: dict[str, Any], user_id: str) -> Memory:
    _reject_unknown(obj, set(_MEMORY_FIELDS), "memory")
    values = dict(obj)
    values.setdefault("user_id", user_id)
    values.setdefault("memory_id", str(uuid.uuid4()))
    if "content" not in values:
        raise EventFormatError("memory.content is required")
    for name in ("tags", "trigger_conditions"):
        if name in values:
            if not isinstance(values[name], list):
                raise EventFormatError(f"memory.{name} must be a list of strings")
            values[name] = tuple(str(v) for v in values[name])
    if values.get("embedding") is not None:
        vector = values["embedding"]
        if not isinstance(vector, list) or not all(isinstance(v, int | float) for v in vector):
            raise EventFormatError("memory.embedding must be a list of numbers")
        values["embedding"] = codec.pack_embedding(vector)
    for name in _TIME_FIELDS & set(values):
        if values[name] is not None:
            values[name] = parse_time(values[name], f"memory.{name}")
    for name, value in values.items():
        _check_type(name, value)
    return Memory(**values)


_NUMBER_FIELDS = {
    "importance",
    "confidence",
    "emotional_salience",
    "valence",
    "success",
    "salience",
}
_STR_FIELDS = {
    "memory_id",
    "user_id",
    "content",
    "layer",
    "kind",
    "subtype",
    "priority",
    "scope",
    "scope_id",
    "created_by",
    "conversation_id",
    "session_id",
    "speaker",
    "status",
}
_ENUMS = {
    "layer": ("working", "episodic", "semantic", "procedural"),
    "priority": ("normal", "critical"),
    "scope": ("agent", "team", "global"),
    "created_by": ("user", "agent", "system"),
}


def _check_type(name: str, value: Any) -> None:
    field = _MEMORY_FIELDS[name]
    if value is None:
        if field.default is not None:  # only fields whose default is null may be null
            raise EventFormatError(f"memory.{name} cannot be null")
        return
    if name in _NUMBER_FIELDS and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise EventFormatError(f"memory.{name} must be a number")
    if name in _STR_FIELDS and not isinstance(value, str):
        raise EventFormatError(f"memory.{name} must be a string")
    if name in _ENUMS and value not in _ENUMS[name]:
        raise EventFormatError(f"memory.{name} must be one of {', '.join(_ENUMS[name])}")
    if name in ("consent", "pinned") and not isinstance(value, bool):
        raise EventFormatError(f"memory.{name} must be true or false")
    if name == "access_count" and (
        isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INT32
    ):
        raise EventFormatError("memory.access_count must be a count (0 to 2^31-1)")
    if name == "metadata" and not (
        isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    ):
        raise EventFormatError("memory.metadata must be an object of strings")


def _check_payload_types(cls: type, body: dict[str, Any], where: str) -> None:
    """Every field of the small payloads is text, a flag or a time (already parsed)."""
    hints = typing.get_type_hints(cls)
    for name, value in body.items():
        hint = hints[name]
        nullable = type(None) in typing.get_args(hint)
        if value is None:
            if not nullable:
                raise EventFormatError(f"{where}.{name} cannot be null")
        elif (str in (hint, *typing.get_args(hint))) and not isinstance(value, str):
            raise EventFormatError(f"{where}.{name} must be a string")
        elif hint is bool and not isinstance(value, bool):
            raise EventFormatError(f"{where}.{name} must be true or false")


def _reject_unknown(obj: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise EventFormatError(f"{where}: unknown field(s) {', '.join(unknown)}")


def _require_str(obj: dict[str, Any], name: str) -> str:
    value = obj.get(name)
    if not isinstance(value, str) or not value:
        raise EventFormatError(f"'{name}' must be a non-empty string")
    return value


def parse_time(value: Any, name: str) -> int:
    """Epoch millis (int) or ISO-8601 text -> epoch millis."""
    if isinstance(value, bool):
        raise EventFormatError(f"{name} must be epoch millis or ISO-8601 text")
    if isinstance(value, int):
        if not 0 <= value <= MAX_TIME_MS:
            raise EventFormatError(f"{name}={value} is outside 1970..9999 (epoch millis)")
        return value
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise EventFormatError(f"{name}: {value!r} is not ISO-8601") from None
        if parsed.tzinfo is None:
            raise EventFormatError(f"{name}: {value!r} needs a timezone (e.g. Z)")
        millis = (parsed - _EPOCH) // timedelta(milliseconds=1)  # exact, unlike float seconds
        if millis < 0:
            raise EventFormatError(f"{name}: {value!r} is before 1970")
        return millis
    raise EventFormatError(f"{name} must be epoch millis or ISO-8601 text")
