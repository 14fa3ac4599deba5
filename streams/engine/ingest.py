"""The ingest step: one input event against one user's state -> records to write + ledger events.

This is the pure core of the ``ingest`` agent and of the batch oracle. It decides whether an
event is new, valid and applicable; it turns accepted writes, accesses, pins and forgets into
versioned ledger events whose ids derive from the input event id. It never performs I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from streams.engine import ledger
from streams.engine.model import (
    ConsolidationRequested,
    ForgetRequested,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryPinned,
    MemoryUnpinned,
    MemoryWritten,
    SessionEnded,
)
from streams.engine.state import MemoryRecord, UserView, records_after
from streams.engine.validation import Limits, Rejection, validate_event


@dataclass(frozen=True, slots=True)
class Accepted:
    """The event applies: write ``records`` to state, append ``decisions`` to the ledger."""

    records: tuple[MemoryRecord, ...]
    decisions: tuple[ledger.ConsolidationEvent, ...]


@dataclass(frozen=True, slots=True)
class Duplicate:
    """The event id was seen before: nothing to do (at-least-once delivery, producer retries)."""

    event_id: str


IngestOutcome = Accepted | Duplicate | Rejection


def ingest(
    view: UserView, event: MemoryEvent, limits: Limits, key: str | None = None
) -> IngestOutcome:
    """Decide what ``event`` does to the user whose state ``view`` shows."""
    rejection = validate_event(event, limits, key)
    if rejection is not None:
        return rejection
    if view.has_seen(event.event_id):
        return Duplicate(event.event_id)
    payload = event.payload
    if isinstance(payload, MemoryWritten):
        return _store(event, payload.memory, view.memory(payload.memory.memory_id))
    if isinstance(payload, SessionEnded | ConsolidationRequested):
        # Accepted and deduplicated here; the consolidation cycles act on them.
        return Accepted((), ())
    current = view.memory(payload.memory_id)
    if current is None or current.forgotten:
        return Rejection(
            "unknown_memory",
            f"memory {payload.memory_id[:64]!r} does not exist for this user (or was forgotten)",
        )
    if isinstance(payload, MemoryAccessed):
        accessed_at = event.occurred_at if payload.accessed_at is None else payload.accessed_at
        return _record_access(event, current, accessed_at)
    if isinstance(payload, ForgetRequested):
        return _forget(event, current, payload.reason)
    if isinstance(payload, MemoryPinned | MemoryUnpinned):
        pinned = isinstance(payload, MemoryPinned)
        return _store(event, current.memory.evolve(pinned=pinned), current)
    raise TypeError(f"unhandled input payload {type(payload).__name__}")  # pragma: no cover


def _decision(
    event: MemoryEvent, action: str, subject: str, payload: ledger.LedgerPayload
) -> ledger.ConsolidationEvent:
    return ledger.ConsolidationEvent(
        event_id=ledger.derived_event_id(event.user_id, event.event_id, action, subject),
        user_id=event.user_id,
        occurred_at=event.occurred_at,
        causation_id=event.event_id,
        payload=payload,
    )


def _store(event: MemoryEvent, written: Memory, current: MemoryRecord | None) -> Accepted:
    if current is None or current.forgotten:
        created_at = written.created_at if written.created_at is not None else event.occurred_at
        valid_at = created_at if written.valid_at is None else written.valid_at
        memory = written.evolve(created_at=created_at, valid_at=valid_at)
        previous_layer = None
    else:
        # An update keeps what only the pipeline knows (when it was created, how it was used).
        old = current.memory
        kept_created_at = old.created_at if written.created_at is None else written.created_at
        memory = written.evolve(
            created_at=kept_created_at,
            valid_at=_first_known(written.valid_at, old.valid_at, kept_created_at),
            access_count=max(old.access_count, written.access_count),
            last_accessed=_latest(old.last_accessed, written.last_accessed),
        )
        previous_layer = old.layer if old.layer != memory.layer else None
    version = (current.version if current else 0) + 1
    stored = ledger.MemoryStored(memory, version, previous_layer)
    return _accepted(current, _decision(event, "stored", memory.memory_id, stored))


def _record_access(event: MemoryEvent, current: MemoryRecord, accessed_at: int) -> Accepted:
    memory = current.memory
    version = current.version + 1
    recorded = ledger.MemoryAccessRecorded(
        memory.memory_id, memory.layer, version, accessed_at, memory.access_count + 1
    )
    return _accepted(current, _decision(event, "accessed", memory.memory_id, recorded))


def _forget(event: MemoryEvent, current: MemoryRecord, reason: str) -> Accepted:
    memory = current.memory
    tombstone = ledger.MemoryForgotten(memory.memory_id, memory.layer, current.version + 1, reason)
    return _accepted(current, _decision(event, "forgotten", memory.memory_id, tombstone))


def _accepted(current: MemoryRecord | None, decision: ledger.ConsolidationEvent) -> Accepted:
    """The decision plus the record it leaves, computed by the same fold a restarted worker
    uses on the ledger, so live state and rebuilt state cannot differ."""
    records = records_after(lambda _memory_id: current, decision.payload)
    assert records, "every ingest decision changes its memory"
    return Accepted(tuple(records), (decision,))


def _latest(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _first_known(*values: int | None) -> int | None:
    return next((v for v in values if v is not None), None)
