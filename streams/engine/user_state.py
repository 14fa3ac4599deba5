"""What the engine knows about one user, and the fold that defines it.

The worker's state is, by definition, the fold of the user's ledger events through
:meth:`InMemoryUserState.fold`: the live worker folds each decision as it emits it, a
restarted worker folds the ledger it reads back, and the batch oracle folds what the engine
returns in a plain loop. One function, three drivers, no way for them to disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import TYPE_CHECKING, Literal, Protocol, overload

from streams.engine import ledger
from streams.engine.dataclass_speedups import slot_copier
from streams.engine.lineage import LineageIndex
from streams.engine.live_index import LiveIndex
from streams.engine.model import Memory
from streams.engine.narrative_index import NarrativeIndex
from streams.engine.occurrences import Occurrences
from streams.engine.passing_index import PassingIndex

if TYPE_CHECKING:
    from streams.engine.fact_index import FactIndex

LIVE_STATUS = "active"
SUMMARIZED_INTO = "summarized_into"  # metadata: the narrative/summary that carries a memory
OBSERVED = "observed"  # metadata: a turn an observation states (its fact is the observation's)
OBSERVED_REASON = "observed"  # the archive reason of such a turn
# Memories a cycle writes to hold others (docs/consolidation.md, "sessions and observations",
# "summaries", "the procedural profile"; 002's insights): they
# are never judged as facts against single statements, pruned or archived as stale.
CONSOLIDATED_KINDS = ("narrative", "summary", "learning_pattern", "behavioural_profile")


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

    def lineage_index(self) -> LineageIndex: ...


SessionStatus = Literal["active", "ended", "consolidated"]


class Members(Sequence[str]):
    """A session's member ids in arrival order: an immutable sequence whose :meth:`plus`
    costs the same however long the session is.

    A tuple would be copied whole to add one member, so every input of a week-long session
    of 10,000 messages paid ~32 µs for it. Here the versions of one session share a list
    that only ever grows at its end; each version sees its first ``count`` items. Adding to
    the newest version appends in place; adding to an older one (a copy went its own way)
    copies its items first. Equal to a ``Members`` or a tuple of the same ids. Not for
    threads to share: a user's state is changed by one thread at a time."""

    __slots__ = ("_items", "_count")

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._items: list[str] = list(ids)
        self._count = len(self._items)

    def plus(self, memory_id: str) -> Members:
        items = self._items
        if len(items) != self._count:  # another version appended here: go our own way
            items = items[: self._count]
        items.append(memory_id)
        grown = Members.__new__(Members)
        grown._items, grown._count = items, self._count + 1
        return grown

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self._items[: self._count][index])
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("member index out of range")
        return self._items[index]

    def __iter__(self) -> Iterator[str]:
        return islice(self._items, self._count)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Members | tuple):
            return len(other) == self._count and all(
                a == b for a, b in zip(self, other, strict=True)
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"Members({tuple(self)!r})"


@dataclass(frozen=True, slots=True)
class SessionWindow:
    """An event-time session of one user (seed 002): ACTIVE while memories arrive, ENDED by
    ``SessionEnded`` or inactivity, CONSOLIDATED once its narrative is written. Members are
    the memories written into it, in arrival order; they are dropped once it is
    consolidated (the narrative's lineage keeps them)."""

    session_id: str
    conversation_id: str | None
    started_at: int
    last_event_at: int
    member_ids: Members = field(default_factory=Members)
    status: SessionStatus = "active"
    ended_at: int | None = None
    narrative_id: str | None = None

    def with_member(self, memory_id: str, at: int) -> SessionWindow:
        # every written memory joins its session: copied slot by slot (``engine.slots``),
        # not by ``dataclasses.replace``, which checks each field by name first
        return _copy_window(
            self,
            {
                "member_ids": self.member_ids.plus(memory_id),
                "started_at": min(self.started_at, at),
                "last_event_at": max(self.last_event_at, at),
            },
        )


_copy_window = slot_copier(SessionWindow)


@dataclass(frozen=True, slots=True)
class IdentityAnchor:
    """Seed 002's temporal anchor: where the user's narratives started (``origin``, reset
    only by an operator) and where they are now (``live``), packed float32 embeddings."""

    origin: bytes
    live: bytes


@dataclass
class UserFacets:
    """What a user's ledger says besides memories: sessions, the identity anchor, the
    procedural profile and the last maintenance pass. Folded by the same :meth:`apply` in
    the worker's state and in a cycle's working copy."""

    sessions: dict[str, SessionWindow] = field(default_factory=dict)
    identity: IdentityAnchor | None = None
    profile_memory_id: str | None = None
    last_maintenance_at: int | None = None
    # memories written or rewritten since the user's last cycle: what a cycle compares
    # against everything else (cost ∝ new × live, never all pairs)
    changed_ids: set[str] = field(default_factory=set)
    # how many cycles have taken the changed ids: the worker's changelog marks each changed
    # memory with it (streams.state_changelog), so a cycle need not unmark them one by one
    change_epoch: int = field(default=0, compare=False)
    # ids of the active sessions, derived from ``sessions`` (None: not indexed yet). Every
    # input asks which sessions are active; ``sessions`` keeps every session the user ever
    # had (a consolidated one keeps its narrative id), so a walk of it grows with history.
    _active: set[str] | None = field(default=None, compare=False, repr=False)

    def copy(self) -> UserFacets:
        return UserFacets(
            dict(self.sessions),
            self.identity,
            self.profile_memory_id,
            self.last_maintenance_at,
            set(self.changed_ids),
            self.change_epoch,
            None if self._active is None else set(self._active),
        )

    def active_sessions(self) -> list[SessionWindow]:
        """The sessions still active, by session id (an order that does not depend on the
        process: the engine's output must be the same wherever it is replayed)."""
        if self._active is None:
            self._active = {s for s, w in self.sessions.items() if w.status == "active"}
        return [self.sessions[s] for s in sorted(self._active)]

    def put_session(self, window: SessionWindow) -> None:
        self.sessions[window.session_id] = window
        if self._active is not None:
            if window.status == "active":
                self._active.add(window.session_id)
            else:
                self._active.discard(window.session_id)

    def drop_session(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)
        if self._active is not None:
            self._active.discard(session_id)

    def apply(self, decision: ledger.ConsolidationEvent) -> None:
        payload = decision.payload
        self.changed_ids.update(_created_or_rewritten(payload))
        if isinstance(payload, ledger.MemoryStored):
            memory = payload.memory
            if payload.version == 1 and memory.session_id and decision.trigger == "ingest":
                at = memory.created_at if memory.created_at is not None else decision.occurred_at
                window = self.sessions.get(memory.session_id) or SessionWindow(
                    memory.session_id, memory.conversation_id, at, at
                )
                if window.status == "active":
                    self.put_session(window.with_member(memory.memory_id, at))
        elif isinstance(payload, ledger.SessionClosed):
            window = self.sessions.get(payload.session_id) or SessionWindow(
                payload.session_id, payload.conversation_id, payload.started_at, payload.ended_at
            )
            self.put_session(replace(window, status="ended", ended_at=payload.ended_at))
        elif isinstance(payload, ledger.SessionConsolidated):
            consolidated = self.sessions.get(payload.session_id)
            if consolidated is not None:
                self.put_session(
                    replace(
                        consolidated,
                        status="consolidated",
                        narrative_id=payload.narrative.memory_id,
                        member_ids=Members(),
                    )
                )
        elif isinstance(payload, ledger.IdentityDriftMeasured):
            origin = (
                payload.anchor
                if self.identity is None or payload.origin_reset
                else self.identity.origin
            )
            self.identity = IdentityAnchor(origin, payload.anchor)
        elif isinstance(payload, ledger.ProceduralSynthesized):
            self.profile_memory_id = payload.profile.memory_id
        elif isinstance(payload, ledger.ConsolidationCompleted):
            self.changed_ids.clear()
            self.change_epoch += 1
            if decision.trigger == "maintenance":
                self.last_maintenance_at = decision.occurred_at


def _created_or_rewritten(payload: ledger.LedgerPayload) -> tuple[str, ...]:
    if isinstance(payload, ledger.MemoryStored):
        return (payload.memory.memory_id,)
    if isinstance(payload, ledger.MemoryPromoted):
        return (payload.promoted.memory_id,)
    if isinstance(payload, ledger.PatternDetected):
        return (payload.pattern.memory_id,)
    if isinstance(payload, ledger.MemoryMerged):
        return (payload.survivor.memory_id,)
    if isinstance(payload, ledger.SessionConsolidated):
        return (payload.narrative.memory_id,)
    if isinstance(payload, ledger.EpisodesSummarized):
        return (payload.summary.memory_id,)
    if isinstance(payload, ledger.MemoryArchived) and payload.carried_by is not None:
        return (payload.memory_id,)  # now a fact a narrative or summary carries
    return ()


@dataclass
class InMemoryUserState:
    """One user's state: memories, seen input ids, and the counters the triggers need."""

    user_id: str
    memories: dict[str, MemoryRecord] = field(default_factory=dict)
    # input ids already applied, with their event time, oldest first (deduplication)
    seen_event_ids: dict[str, int] = field(default_factory=dict)
    # messages per conversation since the user's last consolidation cycle (seed 000 trigger)
    conversation_messages: dict[str, int] = field(default_factory=dict)
    # contradiction pairs already reported, so a cycle does not report them again
    flagged_pairs: set[tuple[str, str]] = field(default_factory=set)
    facets: UserFacets = field(default_factory=UserFacets)
    # live working memories, kept by the fold so the on-write trigger costs O(1) per write;
    # None: not counted yet (after a restore), counted on first use
    _working_live: int | None = field(default=None, compare=False, repr=False)
    # the event-type occurrences procedural learning reads, derived from ``memories`` like
    # the count above: kept by the fold, rebuilt on first use after a restore
    _occurrences: Occurrences | None = field(default=None, compare=False, repr=False)
    # the facts a contradiction check compares against, with their blocking keys: derived
    # and kept like the above (``streams.engine.fact_index``)
    _facts: FactIndex | None = field(default=None, compare=False, repr=False)
    # the live memories, oldest first, all and per layer: derived and kept like the above
    # (``streams.engine.live_index``)
    _live: LiveIndex | None = field(default=None, compare=False, repr=False)
    # the narratives, oldest first, archived ones included (``streams.engine.narrative_index``)
    _narratives: NarrativeIndex | None = field(default=None, compare=False, repr=False)
    # the live passing-state observations, oldest first (``streams.engine.passing_index``)
    _passing: PassingIndex | None = field(default=None, compare=False, repr=False)
    # source id → the memories made from it (``streams.engine.lineage``): what a forget
    # walks, kept like the above
    _lineage: LineageIndex | None = field(default=None, compare=False, repr=False)

    def memory(self, memory_id: str) -> MemoryRecord | None:
        return self.memories.get(memory_id)

    def has_seen(self, event_id: str) -> bool:
        return event_id in self.seen_event_ids

    def records(self) -> Iterable[MemoryRecord]:
        return self.memories.values()

    def live_memories(self) -> Iterator[MemoryRecord]:
        return (r for r in self.memories.values() if r.is_live)

    def working_count(self) -> int:
        if self._working_live is None:
            self._working_live = self.live_count("working")
        return self._working_live

    def occurrences(self) -> Occurrences:
        if self._occurrences is None:
            self._occurrences = Occurrences.of(self.memories.values())
        return self._occurrences

    def fact_index(self, with_keys: bool) -> FactIndex:
        if self._facts is None or self._facts.with_keys != with_keys:
            from streams.engine.fact_index import FactIndex  # it reads records: import cycle

            self._facts = FactIndex.of(self.memories.values(), with_keys)
        return self._facts

    def live_index(self) -> LiveIndex:
        if self._live is None:
            self._live = LiveIndex.of(self.memories.values())
        return self._live

    def narrative_index(self) -> NarrativeIndex:
        if self._narratives is None:
            self._narratives = NarrativeIndex.of(self.memories.values())
        return self._narratives

    def passing_index(self) -> PassingIndex:
        if self._passing is None:
            self._passing = PassingIndex.of(self.memories.values())
        return self._passing

    def lineage_index(self) -> LineageIndex:
        if self._lineage is None:
            self._lineage = LineageIndex.of(self.memories.values())
        return self._lineage

    def forget_derived(self) -> None:
        """Memories were replaced wholesale (a restore): recount and re-index when next
        asked."""
        self._working_live = None
        self._occurrences = None
        self._facts = None
        self._live = None
        self._narratives = None
        self._passing = None
        self._lineage = None

    def live_count(self, layer: str) -> int:
        return sum(1 for r in self.live_memories() if r.memory.layer == layer)

    def mark_seen(self, event_id: str, at: int) -> None:
        self.seen_event_ids.setdefault(event_id, at)

    def expire_seen(self, before: int) -> list[str]:
        """Forget input ids seen before ``before`` (event time), oldest first; returns them.
        A duplicate delivered later than that is processed again; its output has the same
        deterministic ids, so consumers that deduplicate by id see nothing twice."""
        expired = []
        for event_id, at in self.seen_event_ids.items():
            if at >= before:
                break
            expired.append(event_id)
        for event_id in expired:
            del self.seen_event_ids[event_id]
        return expired

    def erase(self) -> None:
        """Drop everything of the user (``UserErased``): as new, but for its id."""
        self.memories = {}
        self.seen_event_ids = {}
        self.conversation_messages = {}
        self.flagged_pairs = set()
        self.facets = UserFacets()
        self.forget_derived()

    def fold(self, decision: ledger.ConsolidationEvent) -> None:
        """Apply one ledger event."""
        if isinstance(decision.payload, ledger.UserErased):
            self.erase()
        self.seen_event_ids.setdefault(decision.causation_id, decision.occurred_at)
        self.facets.apply(decision)
        payload = decision.payload
        if isinstance(payload, ledger.ConsolidationCompleted):
            # a new dict rather than clear(): a changelog reader holding the old one (taken
            # before the input) learns which counters the cycle dropped
            self.conversation_messages = {}
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
            memory_id = record.memory.memory_id
            previous = self.memories.get(memory_id)
            if self._working_live is not None:
                self._working_live += _live_working(record) - _live_working(previous)
            if self._occurrences is not None:
                self._occurrences.move(previous, record)
            if self._facts is not None:
                self._facts.move(previous, record)
            if self._live is not None:
                self._live.move(previous, record)
            if self._narratives is not None:
                self._narratives.move(previous, record)
            if self._passing is not None:
                self._passing.move(previous, record)
            if self._lineage is not None:
                self._lineage.move(previous, record)
            self.memories[memory_id] = record


def _live_working(record: MemoryRecord | None) -> int:
    return int(record is not None and record.is_live and record.memory.layer == "working")


def apply_outcome(
    state: InMemoryUserState,
    event_id: str,
    at: int,
    decisions: Iterable[ledger.ConsolidationEvent],
) -> None:
    """Mark an accepted input (of event time ``at``) seen and fold its decisions."""
    state.mark_seen(event_id, at)
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
        if payload.carried_by is not None:
            carried = {SUMMARIZED_INTO: payload.carried_by}
            if payload.reason == OBSERVED_REASON:
                carried[OBSERVED] = "1"
            changes["metadata_update"] = carried
        return _evolved(lookup, payload.memory_id, payload.version, changes)
    if isinstance(payload, ledger.SessionConsolidated):
        return [MemoryRecord(payload.narrative, payload.version)]
    if isinstance(payload, ledger.EpisodesSummarized):
        return [MemoryRecord(payload.summary, payload.version)]
    if isinstance(payload, ledger.ProceduralSynthesized):
        return [MemoryRecord(payload.profile, payload.version)]
    if isinstance(payload, ledger.ScopePromoted):
        return [MemoryRecord(payload.copy, payload.version)]
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
    metadata_update = changes.pop("metadata_update", None)
    if metadata_update:
        changes["metadata"] = {**current.memory.metadata, **metadata_update}  # type: ignore[dict-item]
    at_least = changes.pop("last_accessed_at_least", None)
    if at_least is not None:
        last = current.memory.last_accessed
        changes["last_accessed"] = at_least if last is None else max(last, at_least)  # type: ignore[call-overload]
    return [MemoryRecord(current.memory.evolve(**changes), version, current.forgotten)]
