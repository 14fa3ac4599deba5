"""Checks an input event against the contract's rules before the engine acts on it.

Avro already guarantees the shape; this guards the values (ids, ranges, NaN, sizes,
embedding dimension). Each failure carries a machine-readable ``reason`` — the label of
``memstream_events_rejected_total`` and the dead-letter header — and a sentence for humans.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass

import numpy as np

from streams.engine.model import Memory, MemoryEvent, MemoryWritten

REJECTION_REASONS = (
    "undecodable",
    "unknown_schema",
    "wrong_schema",
    "missing_field",
    "invalid_event_id",
    "key_mismatch",
    "user_mismatch",
    "not_a_number",
    "out_of_range",
    "content_too_large",
    "embedding_dimension",
    "unknown_memory",
    "invalid_text",
    "reserved_field",
    "unknown_profile",
    "wrong_partition",
    "event_too_large",
    "user_erased",  # sealed with a user's data key that is erased (streams/erasure/)
)

# Times must fit every consumer of the ledger: PostgreSQL timestamptz and Python datetime
# both end at 9999-12-31.
MAX_TIME_MS = 253_402_300_799_999
MAX_INT32 = 2**31 - 1
MAX_EVENT_BYTES = 900_000
"""The largest input record the worker takes. Its ledger record and state entry are a little
larger (an envelope, the embedding the worker computes), its dead letter carries headers, and
each must fit the worker's producer's ``max_request_size`` (Faust's 1,000,000), or the worker
could commit neither it nor anything after it on its partition. memstream's publisher refuses
a larger event before sending it; other producers, or compression with a raised client
limit, can send one. It is also the most a written memory's state entry may take
(``streams.ingest``: the changelog's JSON may grow text sixfold)."""
DEFAULT_MAX_CONTENT_BYTES = 65536
"""A memory's content, as a service writes it and as consolidation writes it
(``streams.engine.text.budget``)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The contract's limits (docs/analytics.md, "The contract"); the worker builds this from its
    settings."""

    embedding_dim: int = 384
    max_content_bytes: int = DEFAULT_MAX_CONTENT_BYTES


@dataclass(frozen=True, slots=True)
class Rejection:
    reason: str
    detail: str


_UNIT_FIELDS = ("importance", "confidence", "emotional_salience")


REQUEST_TRIGGERS = ("periodic", "procedural", "identity_reset")
"""``ConsolidationRequested.trigger``: a worker tick, a procedural-profile synthesis (seed 004,
``memstream procedural``), an identity-origin reset (seed 002, ``memstream identity reset``);
empty for a manual cycle."""


def validate_event(event: MemoryEvent, limits: Limits, key: str | None = None) -> Rejection | None:
    """The first rule ``event`` breaks, or None. ``key`` is the Kafka record key, if any."""
    if not event.event_id:
        return Rejection("missing_field", "event_id is empty")
    try:
        uuid.UUID(event.event_id)
    except ValueError:
        return Rejection("invalid_event_id", f"event_id {event.event_id[:64]!r} is not a UUID")
    if not event.user_id:
        return Rejection("missing_field", "user_id is empty")
    if key is not None and key != event.user_id:
        return Rejection(
            "key_mismatch",
            "the Kafka key must be the user_id (it decides the partition that owns the user)",
        )
    if (problem := _check_time("occurred_at", event.occurred_at)) is not None:
        return problem
    if (problem := _check_texts(_payload_texts(event))) is not None:
        return problem
    memory_id = getattr(event.payload, "memory_id", None)
    if memory_id is not None and not memory_id:
        return Rejection("missing_field", "memory_id is empty")
    accessed_at = getattr(event.payload, "accessed_at", None)
    if (problem := _check_time("accessed_at", accessed_at)) is not None:
        return problem
    if isinstance(event.payload, MemoryWritten):
        return validate_memory(event.payload.memory, event.user_id, limits)
    trigger = getattr(event.payload, "trigger", None)
    if trigger is not None and trigger not in REQUEST_TRIGGERS:
        return Rejection(
            "out_of_range",
            f"trigger {trigger[:64]!r} is not one of {', '.join(REQUEST_TRIGGERS)} "
            "(leave it empty for a manual cycle)",
        )
    return None


def _payload_texts(event: MemoryEvent) -> list[tuple[str, str]]:
    texts = [("event_id", event.event_id), ("user_id", event.user_id), ("source", event.source)]
    payload = event.payload
    for name in ("memory_id", "reason", "session_id", "conversation_id", "profile", "trigger"):
        value = getattr(payload, name, None)
        if isinstance(value, str):
            texts.append((name, value))
    return texts


def _memory_texts(memory: Memory) -> list[tuple[str, str]]:
    texts = [
        (f"memory.{name}", value)
        for name in (
            "memory_id",
            "content",
            "kind",
            "subtype",
            "scope_id",
            "conversation_id",
            "session_id",
            "speaker",
        )
        if isinstance(value := getattr(memory, name), str)
    ]
    texts += [("memory.tags", tag) for tag in memory.tags]
    texts += [("memory.trigger_conditions", c) for c in memory.trigger_conditions]
    texts += [("memory.metadata", text) for item in memory.metadata.items() for text in item]
    return texts


_ID_FIELDS = frozenset(
    {
        "user_id",
        "memory_id",
        "session_id",
        "conversation_id",
        "memory.memory_id",
        "memory.scope_id",
        "memory.conversation_id",
        "memory.session_id",
    }
)
KEY_SEPARATOR = "\x1f"  # joins the ids in the worker's state keys (streams.state_changelog)
MAX_ID_CHARS = 256
"""The longest id (user, memory, session, conversation, scope) a written memory may carry
(only writes are held to it: a user or memory stored with a longer id before the limit can
still be accessed and forgotten). A consolidated memory lists the ids of its sources in one
record (``streams.engine.text.budget`` bounds the list in bytes), and the procedural profile
lists up to 200 of them: unbounded ids would make those lists, not the number of sources,
decide whether a record fits."""
_BOUNDED_FIELDS = _ID_FIELDS | {"memory.speaker"}
"""Held to ``MAX_ID_CHARS``: the ids, and the speaker's name, which the writers repeat in
what they make of the memory (an observation may open with it: "2023-05-08, Caroline: …"), so an
unbounded name could crowd the fact out of what the embedder reads. A name is no state key:
U+001F does no harm in it, and is kept."""


def _check_texts(texts: list[tuple[str, str]]) -> Rejection | None:
    """PostgreSQL text cannot hold NUL: refuse it at the door rather than in the projector.
    An id cannot hold U+001F: the worker's state keys join ids with it, so a user id holding
    one could name another user's entries ("victim\x1fm" reads as user "victim")."""
    for name, value in texts:
        if "\x00" in value:
            return Rejection("invalid_text", f"{name} contains a NUL character")
        if KEY_SEPARATOR in value and name in _ID_FIELDS:
            return Rejection(
                "invalid_text",
                f"{name} contains U+001F (unit separator), which ids may not hold",
            )
    return None


def _check_time(name: str, value: int | None) -> Rejection | None:
    if value is not None and not 0 <= value <= MAX_TIME_MS:
        return Rejection("out_of_range", f"{name}={value} is outside 1970..9999 (epoch millis)")
    return None


def validate_memory(memory: Memory, user_id: str, limits: Limits) -> Rejection | None:
    if not memory.memory_id:
        return Rejection("missing_field", "memory.memory_id is empty")
    if memory.user_id != user_id:
        return Rejection("user_mismatch", "memory.user_id differs from the event's user_id")
    texts = _memory_texts(memory)
    for name, value in (("user_id", user_id), *texts):
        if name in _BOUNDED_FIELDS and len(value) > MAX_ID_CHARS:
            what = "a speaker's name" if name == "memory.speaker" else "ids"
            return Rejection(
                "out_of_range",
                f"{name} is {len(value)} characters long; {what} may hold at most {MAX_ID_CHARS}",
            )
    if memory.speaker is not None and not memory.speaker.strip():
        return Rejection(
            "invalid_text",
            "memory.speaker is blank: give who said it by name, or leave it null "
            "(created_by then says who)",
        )
    if not memory.content:
        return Rejection("missing_field", "memory.content is empty")
    size = len(memory.content.encode("utf-8"))
    if size > limits.max_content_bytes:
        return Rejection(
            "content_too_large",
            f"content is {size} bytes; the limit is {limits.max_content_bytes}",
        )
    for name in _UNIT_FIELDS:
        if (problem := _check_range(name, getattr(memory, name), 0.0, 1.0)) is not None:
            return problem
    if (problem := _check_range("valence", memory.valence, -1.0, 1.0)) is not None:
        return problem
    if (
        memory.success is not None
        and (problem := _check_range("success", memory.success, 0.0, 1.0)) is not None
    ):
        return problem
    if not 0 <= memory.access_count <= MAX_INT32:
        return Rejection("out_of_range", f"access_count={memory.access_count} is not a count")
    for name in ("created_at", "last_accessed", "valid_at", "invalid_at"):
        if (problem := _check_time(f"memory.{name}", getattr(memory, name))) is not None:
            return problem
    if memory.status != "active" or memory.salience is not None:
        return Rejection(
            "reserved_field",
            "memory.status and memory.salience are set by consolidation; leave them unset",
        )
    if (problem := _check_texts(texts)) is not None:
        return problem
    if memory.embedding is not None:
        return _check_embedding(memory.embedding, limits.embedding_dim)
    return None


def _check_range(name: str, value: float, low: float, high: float) -> Rejection | None:
    if math.isnan(value) or math.isinf(value):
        return Rejection("not_a_number", f"{name} is {value}")
    if not low <= value <= high:
        return Rejection("out_of_range", f"{name}={value} is outside [{low}, {high}]")
    return None


def _check_embedding(packed: bytes, dim: int) -> Rejection | None:
    if len(packed) != 4 * dim:
        got = f"{len(packed) / 4:g}"
        return Rejection(
            "embedding_dimension", f"embedding has {got} float32 values; expected {dim}"
        )
    if not np.isfinite(np.frombuffer(packed, dtype="<f4")).all():
        return Rejection("not_a_number", "embedding contains NaN or infinity")
    return None
