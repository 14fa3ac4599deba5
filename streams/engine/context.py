"""The state interface every consolidation rule works against: one cycle's working copy.

A rule is a pure function ``rule(ctx: CycleContext) -> None``. It reads the user's memories
and facets (sessions, identity anchor, procedural profile) from the context, and emits ledger
decisions through :meth:`CycleContext.emit`, which folds each decision into the working copy
at once with the same fold as the worker, so later rules see earlier ones (a promoted working
memory takes part in pattern detection as the semantic fact it became). Rules never hold a
concrete state class, so the worker's state store can change under them.

Ids of new memories and of decisions derive from the cause, the rule and the subjects, so
the same cycle over the same state always yields the same events.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from streams.engine import ledger
from streams.engine.embedder import hashing_embedding
from streams.engine.fact_index import FactIndex
from streams.engine.ids import uuid5_text
from streams.engine.judge import Judgement
from streams.engine.live_index import LiveIndex
from streams.engine.model import Layer, Memory, Trigger
from streams.engine.narrative_index import NarrativeIndex
from streams.engine.occurrences import Occurrences
from streams.engine.passing_index import PassingIndex
from streams.engine.policy import Policy
from streams.engine.user_state import MemoryRecord, UserFacets, records_after
from streams.engine.validation import DEFAULT_MAX_CONTENT_BYTES

MEMORY_NAMESPACE = uuid.UUID("8a3c2f1e-4b5d-4e6f-9a7b-6d656d6f7279")
Judge = Callable[[str, str], Judgement]
PatternWriter = Callable[[list[str]], str]  # group contents, most central first → statement
Embed = Callable[[Sequence[str]], list[bytes]]  # texts → packed float32 embeddings, in order
CycleMode = Literal["full", "procedural", "identity_reset"]


def cycle_id_of(user_id: str, cause_id: str) -> str:
    """The id of the cycle ``cause_id`` (a request or tick event id) starts for a user: tools
    that publish a request can find its report by it."""
    return uuid5_text(MEMORY_NAMESPACE, f"{user_id}\x1f{cause_id}")


@dataclass(frozen=True, slots=True)
class SessionEnd:
    """A session the cycle closes, and why (``session_ended`` or ``inactivity``)."""

    session_id: str
    reason: str
    at: int


@dataclass(frozen=True, slots=True)
class CycleRequest:
    """Why and when a cycle runs: the cause (input event id or tick id) and its event time;
    the sessions it closes; whether it is a maintenance pass; and its mode (a full cycle, or
    one operation an operator asked for)."""

    cause_id: str
    trigger: Trigger
    now: int
    conversation_id: str | None = None
    session_ends: tuple[SessionEnd, ...] = ()
    maintenance: bool = False
    mode: CycleMode = "full"


@dataclass
class CycleContext:
    user_id: str
    request: CycleRequest
    policy: Policy
    dim: int
    records: dict[str, MemoryRecord]
    flagged_pairs: set[tuple[str, str]]
    facets: UserFacets
    judge: Judge
    pattern_writer: PatternWriter | None
    occurrences: Occurrences
    """Event-type occurrences (procedural learning's window table), kept in step by emit."""
    facts: FactIndex
    """The facts contradiction checks compare against, an overlay kept in step by emit."""
    live_index: LiveIndex
    """The live memories, oldest first: the cycle's own copy, kept in step by emit."""
    narratives: NarrativeIndex
    """The narratives, oldest first: the cycle's own copy, kept in step by emit."""
    passing: PassingIndex
    """The live passing-state observations, oldest first: the cycle's copy, kept by emit."""
    max_content_bytes: int = DEFAULT_MAX_CONTENT_BYTES
    """The most a consolidated memory's content may hold (``streams.engine.text.budget``)."""
    embedder: Embed | None = None
    """Embeds what the cycle writes (None: the built-in hashing embedder)."""
    decisions: list[ledger.ConsolidationEvent] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def cycle_id(self) -> str:
        return cycle_id_of(self.user_id, self.request.cause_id)

    def live(self, layer: Layer | None = None) -> list[MemoryRecord]:
        """The live memories a step processes: the newest ``max_memories_per_cycle`` (seed
        001's bound on the work of one cycle)."""
        return self.all_live(layer)[-self.policy.max_memories_per_cycle :]

    def all_live(self, layer: Layer | None = None) -> list[MemoryRecord]:
        """Every live memory, oldest first: what new memories are compared against, so no
        memory is left out of comparison because the user has many.

        Read from :attr:`live_index`, which :meth:`emit` keeps in step by moving only the
        records a decision changed: a cycle's steps ask a dozen times, and a walk and sort
        of the user's records per ask would make the cycle grow with history."""
        return self.live_index.records(layer)

    def record(self, memory_id: str) -> MemoryRecord | None:
        return self.records.get(memory_id)

    def new_id(self, rule: str, *subjects: str) -> str:
        key = "\x1f".join((self.user_id, rule, *subjects))
        return uuid5_text(MEMORY_NAMESPACE, key)

    def emit(self, action: str, subject: str, payload: ledger.LedgerPayload) -> None:
        decision = ledger.ConsolidationEvent(
            event_id=ledger.derived_event_id(self.user_id, self.request.cause_id, action, subject),
            user_id=self.user_id,
            occurred_at=self.request.now,
            causation_id=self.request.cause_id,
            payload=payload,
            trigger=self.request.trigger,
            cycle_id=self.cycle_id,
        )
        self.take(decision)

    def take(self, decision: ledger.ConsolidationEvent) -> None:
        """Append ``decision`` and keep the cycle's working copies in step with it: what
        :meth:`emit` does with the decision it makes, and what a cycle replays to rebuild
        its context without a rule that failed (``streams.engine.cycle``)."""
        self.decisions.append(decision)
        self.facets.apply(decision)
        for record in records_after(self.records.get, decision.payload):
            previous = self.records.get(record.memory.memory_id)
            self.records[record.memory.memory_id] = record
            self.occurrences.move(previous, record)
            self.facts.move(previous, record)
            self.live_index.move(previous, record)
            self.narratives.move(previous, record)
            self.passing.move(previous, record)

    def archive(
        self,
        record: MemoryRecord,
        reason: str,
        *,
        carried_by: str | None = None,
        cold_storage: bool = False,
        salience: float | None = None,
    ) -> None:
        """Archive ``record`` (it stays searchable, ranked below active memories)."""
        memory = record.memory
        current = self.records[memory.memory_id]
        self.emit(
            "archived",
            memory.memory_id,
            ledger.MemoryArchived(
                memory.memory_id,
                memory.layer,
                current.version + 1,
                reason,
                salience,
                cold_storage,
                carried_by,
            ),
        )
        self.count("archived")
        if carried_by is not None:
            self.count("links")

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """Embeddings of ``texts``, in one call: every memory a cycle writes carries one, so
        recall finds it and the ledger holds it (a replay recomputes nothing)."""
        if not texts:
            return []
        if self.embedder is None:
            return [hashing_embedding(text, self.dim) for text in texts]
        vectors = self.embedder(texts)
        if len(vectors) != len(texts):
            raise ValueError(f"the embedder returned {len(vectors)} vectors for {len(texts)}")
        return vectors

    def new_memory(
        self, memory_id: str, content: str, layer: Layer, kind: str, **fields: object
    ) -> Memory:
        """A memory the cycle creates, at the cycle's event time, embedded unless ``fields``
        give its embedding."""
        if "embedding" not in fields:
            fields["embedding"] = self.embed([content])[0]
        now = self.request.now
        return Memory(
            memory_id=memory_id,
            user_id=self.user_id,
            content=content,
            layer=layer,
            kind=kind,
            created_by="system",
            created_at=now,
            valid_at=now,
        ).evolve(**fields)

    def count(self, name: str, by: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + by
