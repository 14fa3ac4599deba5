"""The ingest step: one input event against one user's state -> records to write + ledger events.

This is the pure core of the ``ingest`` agent and of the batch oracle. It decides whether an
event is new, valid and applicable; it turns accepted writes, accesses, pins and forgets into
versioned ledger events whose ids derive from the input event id. It never performs I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from streams.engine import ledger
from streams.engine.forgetting import Rewriting, forget_with_lineage
from streams.engine.lineage import descendants, sources_of
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
    UserForgotten,
)
from streams.engine.user_state import MemoryRecord, UserView
from streams.engine.validation import MAX_INT32, Limits, Rejection, validate_event


@dataclass(frozen=True, slots=True)
class Accepted:
    """The event applies: append ``decisions`` to the ledger (and fold them into state)."""

    decisions: tuple[ledger.ConsolidationEvent, ...]


@dataclass(frozen=True, slots=True)
class Duplicate:
    """The event id was seen before: nothing to do (at-least-once delivery, producer retries)."""

    event_id: str


IngestOutcome = Accepted | Duplicate | Rejection


def ingest(
    view: UserView,
    event: MemoryEvent,
    limits: Limits,
    key: str | None = None,
    rewriting: Rewriting | None = None,
) -> IngestOutcome:
    """Decide what ``event`` does to the user whose state ``view`` shows. ``rewriting``: the
    policy and embedder a forget writes derived memories again with (None: the default
    policy, the hashing embedder at the contract's width)."""
    rejection = validate_event(event, limits, key)
    if rejection is not None:
        return rejection
    if view.has_seen(event.event_id):
        return Duplicate(event.event_id)
    payload = event.payload
    if isinstance(payload, MemoryWritten):
        return _store(event, payload.memory, view, view.memory(payload.memory.memory_id))
    if isinstance(payload, SessionEnded | ConsolidationRequested):
        # Accepted and deduplicated here; the consolidation cycles act on them.
        return Accepted(())
    if isinstance(payload, UserForgotten):
        live = sum(1 for record in view.records() if not record.forgotten)
        erased = ledger.UserErased(payload.reason, live)
        return Accepted((_decision(event, "erased", event.user_id, erased),))
    current = view.memory(payload.memory_id)
    if current is None or current.forgotten:
        return _unknown(payload.memory_id)
    if isinstance(payload, ForgetRequested):
        if rewriting is None:
            rewriting = Rewriting(
                dim=limits.embedding_dim, max_content_bytes=limits.max_content_bytes
            )
        return _forget(event, view, current, payload.reason, rewriting)
    # A working memory promoted away lives on as its copy: uses of the old id follow it.
    current = _follow_promotions(view, current)
    if current is None:
        return _unknown(payload.memory_id)
    if isinstance(payload, MemoryAccessed):
        accessed_at = event.occurred_at if payload.accessed_at is None else payload.accessed_at
        return _record_access(event, current, accessed_at)
    if isinstance(payload, MemoryPinned | MemoryUnpinned):
        pinned = isinstance(payload, MemoryPinned)
        version = current.version + 1
        stored = ledger.MemoryStored(current.memory.evolve(pinned=pinned), version)
        return Accepted((_decision(event, "stored", current.memory.memory_id, stored),))
    raise TypeError(f"unhandled input payload {type(payload).__name__}")  # pragma: no cover


def _unknown(memory_id: str) -> Rejection:
    return Rejection(
        "unknown_memory",
        f"memory {memory_id[:64]!r} does not exist for this user (or was forgotten)",
    )


def _follow_promotions(view: UserView, record: MemoryRecord) -> MemoryRecord | None:
    seen: set[str] = set()
    while record.memory.status == "promoted" and "promoted_to" in record.memory.metadata:
        target_id = record.memory.metadata["promoted_to"]
        if target_id in seen:
            return None
        seen.add(target_id)
        target = view.memory(target_id)
        if target is None or target.forgotten:
            return None
        record = target
    return record


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


def _store(
    event: MemoryEvent, written: Memory, view: UserView, current: MemoryRecord | None
) -> Accepted:
    if current is None or current.forgotten:
        created_at = written.created_at if written.created_at is not None else event.occurred_at
        valid_at = created_at if written.valid_at is None else written.valid_at
        memory = written.evolve(created_at=created_at, valid_at=valid_at)
        previous_layer = None
    else:
        memory = _updated(current.memory, written, event.occurred_at)
        previous_layer = current.memory.layer if current.memory.layer != memory.layer else None
    version = (current.version if current else 0) + 1
    stored = ledger.MemoryStored(memory, version, previous_layer)
    return Accepted((_decision(event, "stored", memory.memory_id, stored),))


def _updated(old: Memory, written: Memory, now: int) -> Memory:
    """An update (same memory_id) takes the producer's fields but keeps what only the
    pipeline knows: when it was created, how it was used, whether it is pinned, its
    salience and consolidation markers. New content is a new fact: valid from now (or the
    producer's valid_at), no longer invalidated. A rewrite reactivates an archived, merged
    or promoted memory: the producer says it matters again."""
    created_at = old.created_at if written.created_at is None else written.created_at
    valid_at: int | None
    if written.content != old.content:
        valid_at = now if written.valid_at is None else written.valid_at
        invalid_at = written.invalid_at
    else:
        valid_at = _first_known(written.valid_at, old.valid_at, created_at)
        invalid_at = _first_known(written.invalid_at, old.invalid_at)
    return written.evolve(
        created_at=created_at,
        valid_at=valid_at,
        invalid_at=invalid_at,
        access_count=max(old.access_count, written.access_count),
        last_accessed=_latest(old.last_accessed, written.last_accessed),
        pinned=old.pinned or written.pinned,
        salience=old.salience,
        metadata={**old.metadata, **written.metadata},
    )


def _record_access(event: MemoryEvent, current: MemoryRecord, accessed_at: int) -> Accepted:
    memory = current.memory
    version = current.version + 1
    # The contract's count is a 32-bit int: at its largest it stays there, so that an access
    # to a memory written with that count is still recorded (its ledger record could not hold
    # one more, and every later access would be refused).
    count = min(memory.access_count + 1, MAX_INT32)
    recorded = ledger.MemoryAccessRecorded(
        memory.memory_id, memory.layer, version, accessed_at, count
    )
    return Accepted((_decision(event, "accessed", memory.memory_id, recorded),))


def _forget(
    event: MemoryEvent, view: UserView, current: MemoryRecord, reason: str, rewriting: Rewriting
) -> Accepted:
    """Forget the memory and take it out of everything made from it (``forgetting``): copies
    and statements about it are forgotten, what a writer made of it and others is written
    again from the others, transitively."""
    outcomes = forget_with_lineage(view, current, reason, rewriting)
    return Accepted(tuple(_decision(event, o.action, o.subject, o.payload) for o in outcomes))


def derived_records(view: UserView, memory_id: str) -> list[MemoryRecord]:
    """Records made, directly or not, from ``memory_id``, each after its sources (the walk of
    ``streams.engine.lineage``, on the view's kept index)."""
    index = view.lineage_index()
    found = []
    for derived_id in descendants(
        [memory_id], index.derived, lambda m: sources_of(_held(view, m).memory)
    ):
        record = _held(view, derived_id)
        if not record.forgotten:
            found.append(record)
    return found


def _held(view: UserView, memory_id: str) -> MemoryRecord:
    record = view.memory(memory_id)
    assert record is not None, f"the lineage index lists {memory_id}, which the state lacks"
    return record


def _latest(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _first_known(*values: int | None) -> int | None:
    return next((v for v in values if v is not None), None)
