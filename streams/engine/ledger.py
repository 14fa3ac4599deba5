"""The ledger's vocabulary: every decision the engine can emit on ``memory.consolidation``.

Each payload mirrors a record of ``schemas/memstream.v1.ConsolidationEvent.avsc`` (namespace
``memstream.v1.ledger``). Event ids are derived from the causing event and the decision, never
random, so re-processing an input yields byte-identical ledger events and consumers can
deduplicate by id.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Literal

from streams.engine.ids import uuid5_text
from streams.engine.model import Layer, Memory, Scope, Trigger

Resolution = Literal["latest_wins", "keep_both_review", "preserve_critical"]
DriftLevel = Literal["ok", "warning", "critical"]

# A fixed namespace for uuid5: the ids below depend only on their inputs.
LEDGER_NAMESPACE = uuid.UUID("5b0d6a5e-8f9c-4f0e-9c7e-6d656d737472")


def derived_event_id(user_id: str, causation_id: str, action: str, subject: str) -> str:
    """The id of the ledger event that ``causation_id`` produced for ``action`` on ``subject``.

    The user is part of the key: input ids are only unique per user (they are the producer's
    idempotency keys), and two users' decisions must never share an id."""
    key = f"{user_id}\x1f{causation_id}\x1f{action}\x1f{subject}"
    return uuid5_text(LEDGER_NAMESPACE, key)


@dataclass(frozen=True, slots=True)
class MemoryStored:
    memory: Memory
    version: int
    previous_layer: Layer | None = None


@dataclass(frozen=True, slots=True)
class MemoryAccessRecorded:
    memory_id: str
    layer: Layer
    version: int
    accessed_at: int
    access_count: int


@dataclass(frozen=True, slots=True)
class MemoryPromoted:
    source_memory_id: str
    source_layer: Layer
    source_version: int
    source_removed: bool
    promoted: Memory
    promoted_version: int
    rule: str


@dataclass(frozen=True, slots=True)
class PatternDetected:
    pattern: Memory
    version: int
    evidence_ids: tuple[str, ...]
    confidence: float
    support: int
    consistency: float
    category: str


@dataclass(frozen=True, slots=True)
class ContradictionDetected:
    memory_id: str
    other_memory_id: str
    confidence: float
    cue: str
    explanation: str
    resolution: Resolution
    invalidated_memory_id: str | None = None
    invalidated_version: int | None = None
    invalid_at: int | None = None
    invalidated_layer: Layer | None = None  # None: semantic


@dataclass(frozen=True, slots=True)
class MemoryMerged:
    survivor: Memory
    survivor_version: int
    merged_memory_id: str
    merged_layer: Layer
    merged_version: int
    similarity: float


@dataclass(frozen=True, slots=True)
class SalienceDecayed:
    memory_id: str
    layer: Layer
    version: int
    salience_before: float
    salience_after: float


@dataclass(frozen=True, slots=True)
class MemoryArchived:
    memory_id: str
    layer: Layer
    version: int
    reason: str
    salience: float | None = None
    cold_storage: bool = False
    carried_by: str | None = None  # the narrative/summary that now holds its facts


@dataclass(frozen=True, slots=True)
class MemoryDeleted:
    memory_id: str
    layer: Layer
    version: int
    reason: str


@dataclass(frozen=True, slots=True)
class MemoryForgotten:
    """Tombstone: the memory's content must disappear from every read model."""

    memory_id: str
    layer: Layer
    version: int
    reason: str


@dataclass(frozen=True, slots=True)
class SessionConsolidated:
    session_id: str
    narrative: Memory
    version: int
    source_ids: tuple[str, ...]
    compression_ratio: float
    emotional_arc: tuple[float, ...] = ()
    unresolved_threads: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EpisodesSummarized:
    summary: Memory
    version: int
    episode_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ProceduralSynthesized:
    profile: Memory
    version: int
    source_count: int
    replaced_memory_id: str | None = None


@dataclass(frozen=True, slots=True)
class ScopePromoted:
    source_memory_id: str
    copy: Memory
    version: int
    from_scope: Scope
    to_scope: Scope


@dataclass(frozen=True, slots=True)
class IdentityDriftMeasured:
    anchor: bytes
    drift: float
    level: DriftLevel
    origin_reset: bool = False  # an operator reset the origin to this anchor


@dataclass(frozen=True, slots=True)
class SessionClosed:
    """An event-time session ended; ``consolidated``: a narrative follows in the same cycle."""

    session_id: str
    conversation_id: str | None
    started_at: int
    ended_at: int
    memory_count: int
    reason: str
    consolidated: bool = False


@dataclass(frozen=True, slots=True)
class ConsolidationCompleted:
    profile: str
    processed: int
    patterns: int
    archived: int
    contradictions: int
    duplicates_merged: int
    links_created: int
    duration_ms: int
    warnings: tuple[str, ...] = ()
    decayed: int = 0  # seed 001's DecayedCount: salience is derived, not written per memory


@dataclass(frozen=True, slots=True)
class UserErased:
    """The user is forgotten: state and every read model drop the user, and the user's data
    key is destroyed, so sealed copies of the user's records never open again."""

    reason: str
    memories: int = 0  # the user's memories not forgotten before (a count, nothing of them)


LedgerPayload = (
    MemoryStored
    | MemoryAccessRecorded
    | MemoryPromoted
    | PatternDetected
    | ContradictionDetected
    | MemoryMerged
    | SalienceDecayed
    | MemoryArchived
    | MemoryDeleted
    | MemoryForgotten
    | SessionConsolidated
    | EpisodesSummarized
    | ProceduralSynthesized
    | ScopePromoted
    | IdentityDriftMeasured
    | ConsolidationCompleted
    | SessionClosed
    | UserErased
)

LEDGER_PAYLOAD_TYPES: tuple[type, ...] = (
    MemoryStored,
    MemoryAccessRecorded,
    MemoryPromoted,
    PatternDetected,
    ContradictionDetected,
    MemoryMerged,
    SalienceDecayed,
    MemoryArchived,
    MemoryDeleted,
    MemoryForgotten,
    SessionConsolidated,
    EpisodesSummarized,
    ProceduralSynthesized,
    ScopePromoted,
    IdentityDriftMeasured,
    ConsolidationCompleted,
    SessionClosed,
    UserErased,
)


@dataclass(frozen=True, slots=True)
class ConsolidationEvent:
    """One ledger entry, keyed by ``user_id`` on ``memory.consolidation``."""

    event_id: str
    user_id: str
    occurred_at: int
    causation_id: str
    payload: LedgerPayload
    trigger: Trigger = "ingest"
    cycle_id: str | None = None
    # Where this event stands in everything its input produced (see ``emissions``): an
    # input's output is complete only when all ``emission_size`` events are present.
    emission_index: int = 0
    emission_size: int = 1

    @property
    def event_type(self) -> str:
        return type(self.payload).__name__

    @property
    def closes_emission(self) -> bool:
        """The last event its input produced."""
        return self.emission_index == self.emission_size - 1
