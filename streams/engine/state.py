"""What the engine knows about one user, and the fold that defines it.

The worker's state is, by definition, the fold of the user's ledger events through
:meth:`InMemoryUserState.fold`: the live worker folds each decision as it emits it, a
restarted worker folds the ledger it reads back, and the batch oracle folds what the engine
returns in a plain loop. One function, three drivers, no way for them to disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from streams.engine import ledger
from streams.engine.model import Memory

LIVE_STATUS = "active"


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """A memory as the engine keeps it: the current value, its version, and whether it is a
    tombstone (forgotten: content erased, version kept so ids are never reused silently)."""

    memory: Memory
    version: int
    forgotten: bool = False

    @property
    def is_live(self) -> bool:
        """Takes part in consolidation: not forgotten, archived, superseded or promoted away."""
        return not self.forgotten and self.memory.status == LIVE_STATUS


class UserView(Protocol):
    """Read access to one user's state, as much as the ingest step needs."""

    def memory(self, memory_id: str) -> MemoryRecord | None: ...

    def has_seen(self, event_id: str) -> bool: ...

    def records(self) -> Iterable[MemoryRecord]: ...


@dataclass
class InMemoryUserState:
    """One user's state: memories, seen input ids, and the counters the triggers need."""

    user_id: str
    memories: dict[str, MemoryRecord] = field(default_factory=dict)
    seen_event_ids: set[str] = field(default_factory=set)
    # messages per conversation since the user's last consolidation cycle (seed 000 trigger)
    conversation_messages: dict[str, int] = field(default_factory=dict)
    # contradiction pairs already reported, so a cycle does not report them again
    flagged_pairs: set[tuple[str, str]] = field(default_factory=set)

    def memory(self, memory_id: str) -> MemoryRecord | None:
        return self.memories.get(memory_id)

    def has_seen(self, event_id: str) -> bool:
        return event_id in self.seen_event_ids

    def records(self) -> Iterable[MemoryRecord]:
        return self.memories.values()

    def live_memories(self) -> Iterator[MemoryRecord]:
        return (r for r in self.memories.values() if r.is_live)

    def working_count(self) -> int:
        return sum(1 for r in self.live_memories() if r.memory.layer == "working")

    def mark_seen(self, event_id: str) -> None:
        self.seen_event_ids.add(event_id)

    def fold(self, decision: ledger.ConsolidationEvent) -> None:
        """Apply one ledger event."""
        self.seen_event_ids.add(decision.causation_id)
        payload = decision.payload
        if isinstance(payload, ledger.ConsolidationCompleted):
            self.conversation_messages.clear()
            return
        if isinstance(payload, ledger.ContradictionDetected):
            self.flagged_pairs.add(pair_key(payload.memory_id, payload.other_memory_id))
        if isinstance(payload, ledger.MemoryStored) and payload.version == 1:
            conversation = payload.memory.conversation_id
            if conversation is not None and decision.trigger == "ingest":
                self.conversation_messages[conversation] = (
                    self.conversation_messages.get(conversation, 0) + 1
                )
        for record in records_after(self.memories.get, payload):
            self.memories[record.memory.memory_id] = record


def apply_outcome(
    state: InMemoryUserState, event_id: str, decisions: Iterable[ledger.ConsolidationEvent]
) -> None:
    """Mark an accepted input seen and fold the decisions it caused into ``state``."""
    state.mark_seen(event_id)
    for decision in decisions:
        state.fold(decision)


def pair_key(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def records_after(lookup: LookupFn, payload: ledger.LedgerPayload) -> list[MemoryRecord]:
    """Every memory record a ledger decision leaves behind.

    This is the only definition of how decisions change memories: the ingest step, the
    cycle's working copy and the rebuild from the ledger all go through it.
    """
    if isinstance(payload, ledger.MemoryStored):
        return [MemoryRecord(payload.memory, payload.version)]
    if isinstance(payload, ledger.MemoryAccessRecorded):
        return _evolved(lookup, payload.memory_id, payload.version, _access(payload))
    if isinstance(payload, ledger.MemoryForgotten):
        current = lookup(payload.memory_id)
        if current is None:
            return []
        old = current.memory
        erased = Memory(
            memory_id=old.memory_id,
            user_id=old.user_id,
            content="",
            layer=old.layer,
            created_at=old.created_at,
        )
        return [MemoryRecord(erased, payload.version, forgotten=True)]
    if isinstance(payload, ledger.MemoryPromoted):
        promoted = [MemoryRecord(payload.promoted, payload.promoted_version)]
        source = lookup(payload.source_memory_id)
        if payload.source_removed and source is not None:
            metadata = {**source.memory.metadata, "promoted_to": payload.promoted.memory_id}
            moved = source.memory.evolve(status="promoted", metadata=metadata)
            promoted.append(MemoryRecord(moved, payload.source_version, source.forgotten))
        return promoted
    if isinstance(payload, ledger.PatternDetected):
        return [MemoryRecord(payload.pattern, payload.version)]
    if isinstance(payload, ledger.MemoryMerged):
        return [
            MemoryRecord(payload.survivor, payload.survivor_version),
            *_evolved(
                lookup, payload.merged_memory_id, payload.merged_version, {"status": "superseded"}
            ),
        ]
    if isinstance(payload, ledger.ContradictionDetected):
        if payload.invalidated_memory_id is None or payload.invalidated_version is None:
            return []
        return _evolved(
            lookup,
            payload.invalidated_memory_id,
            payload.invalidated_version,
            {"invalid_at": payload.invalid_at},
        )
    if isinstance(payload, ledger.SalienceDecayed):
        return _evolved(
            lookup, payload.memory_id, payload.version, {"salience": payload.salience_after}
        )
    if isinstance(payload, ledger.MemoryArchived):
        changes: dict[str, object] = {"status": "archived"}
        if payload.salience is not None:
            changes["salience"] = payload.salience
        return _evolved(lookup, payload.memory_id, payload.version, changes)
    if isinstance(payload, ledger.MemoryDeleted):
        return _evolved(lookup, payload.memory_id, payload.version, {"status": "deleted"})
    return []


class LookupFn(Protocol):
    def __call__(self, memory_id: str, /) -> MemoryRecord | None: ...


def _access(payload: ledger.MemoryAccessRecorded) -> dict[str, object]:
    return {"access_count": payload.access_count, "last_accessed_at_least": payload.accessed_at}


def _evolved(
    lookup: LookupFn, memory_id: str, version: int, changes: dict[str, object]
) -> list[MemoryRecord]:
    current = lookup(memory_id)
    if current is None:
        return []
    changes = dict(changes)
    at_least = changes.pop("last_accessed_at_least", None)
    if at_least is not None:
        last = current.memory.last_accessed
        changes["last_accessed"] = at_least if last is None else max(last, at_least)  # type: ignore[call-overload]
    return [MemoryRecord(current.memory.evolve(**changes), version, current.forgotten)]
