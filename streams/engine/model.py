"""The engine's vocabulary: the memory and the input envelope, as plain frozen values.

Field names match the Avro contract in ``schemas/`` one to one (the codec relies on it).
Times are UTC epoch milliseconds; embeddings stay packed little-endian float32 bytes exactly
as they travel, so the hot path never unpacks a vector it does not compare.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from streams.engine.dataclass_speedups import slot_copier

Layer = Literal["working", "episodic", "semantic", "procedural"]
Priority = Literal["normal", "critical"]
Scope = Literal["agent", "team", "global"]
CreatedBy = Literal["user", "agent", "system"]
Trigger = Literal[
    "ingest",
    "on_write",
    "index_overflow",
    "periodic",
    "session_end",
    "inactivity",
    "maintenance",
    "manual",
]

LAYERS: tuple[Layer, ...] = ("working", "episodic", "semantic", "procedural")


@dataclass(frozen=True, slots=True)
class Memory:
    """One memory (docs/analytics.md, "The contract"). Defaults are the contract's documented
    defaults."""

    memory_id: str
    user_id: str
    content: str
    layer: Layer = "working"
    kind: str = "note"
    subtype: str | None = None
    tags: tuple[str, ...] = ()
    importance: float = 0.5
    confidence: float = 0.5
    emotional_salience: float = 0.0
    valence: float = 0.0
    priority: Priority = "normal"
    scope: Scope = "agent"
    scope_id: str | None = None
    created_by: CreatedBy = "agent"
    consent: bool = False
    speaker: str | None = None
    """Who said it, by name (a person, or an agent's name); absent: ``created_by`` says who."""
    pinned: bool = False
    conversation_id: str | None = None
    session_id: str | None = None
    success: float | None = None
    trigger_conditions: tuple[str, ...] = ()
    embedding: bytes | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    created_at: int | None = None
    last_accessed: int | None = None
    access_count: int = 0
    valid_at: int | None = None
    invalid_at: int | None = None
    salience: float | None = None
    status: str = "active"

    def evolve(self, **changes: object) -> Memory:
        """A copy with ``changes``: ``dataclasses.replace`` without its per-field checks,
        the copy's slots set directly (:mod:`streams.engine.dataclass_speedups`: 2.6 µs against 6.6
        through ``__init__``; rules and the fold evolve two memories per input)."""
        return _copy_memory(self, changes)

    @property
    def age_order(self) -> tuple[int, str]:
        """(created at, id): oldest first, ties broken by id, the one order every rule and
        index sorts a user's memories in (an unknown creation time counts as oldest)."""
        return (self.created_at or 0, self.memory_id)


_copy_memory = slot_copier(Memory)

CLAIM = "claim"
"""Metadata key of what a memory claims, when its content says more (an observation's
content starts with its date and speaker; contradiction checks compare the claims)."""


def claim_of(memory: Memory) -> str:
    """The statement a contradiction check judges: the memory's claim, else its content."""
    return memory.metadata.get(CLAIM, memory.content)


# --- input payloads (memory.events) -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemoryWritten:
    memory: Memory


@dataclass(frozen=True, slots=True)
class MemoryAccessed:
    memory_id: str
    accessed_at: int | None = None


@dataclass(frozen=True, slots=True)
class ForgetRequested:
    """Input ``MemoryForgotten``: named apart from the ledger's tombstone of the same name."""

    memory_id: str
    reason: str = "user_request"


@dataclass(frozen=True, slots=True)
class MemoryPinned:
    memory_id: str
    reason: str = "permanent"


@dataclass(frozen=True, slots=True)
class MemoryUnpinned:
    memory_id: str


@dataclass(frozen=True, slots=True)
class SessionEnded:
    session_id: str
    conversation_id: str | None = None


@dataclass(frozen=True, slots=True)
class ConsolidationRequested:
    conversation_id: str | None = None
    force: bool = False
    profile: str | None = None
    trigger: str | None = None  # None = manual; "periodic" for the worker's ticks


@dataclass(frozen=True, slots=True)
class UserForgotten:
    """Forget the user: every memory, session and profile, and (with sealing) the data key
    that opens every copy of them (streams/erasure/)."""

    reason: str = "user_request"


InputPayload = (
    MemoryWritten
    | MemoryAccessed
    | ForgetRequested
    | MemoryPinned
    | MemoryUnpinned
    | SessionEnded
    | ConsolidationRequested
    | UserForgotten
)


@dataclass(frozen=True, slots=True)
class MemoryEvent:
    """An input event as published on ``memory.events``."""

    event_id: str
    user_id: str
    occurred_at: int
    payload: InputPayload
    source: str = "unknown"

    def with_written(self, memory: Memory) -> MemoryEvent:
        """This event writing ``memory`` instead (the engine completes what a service sent:
        a session id, an embedding)."""
        return replace(self, payload=MemoryWritten(memory))

    @property
    def event_type(self) -> str:
        return INPUT_TYPE_NAMES[type(self.payload)]


INPUT_TYPE_NAMES: dict[type, str] = {
    MemoryWritten: "MemoryWritten",
    MemoryAccessed: "MemoryAccessed",
    ForgetRequested: "MemoryForgotten",
    MemoryPinned: "MemoryPinned",
    MemoryUnpinned: "MemoryUnpinned",
    SessionEnded: "SessionEnded",
    ConsolidationRequested: "ConsolidationRequested",
    UserForgotten: "UserForgotten",
}
