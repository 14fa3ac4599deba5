"""What the engine knows about one user, and the narrow view it reads that knowledge through.

The engine never owns storage. It reads through :class:`UserView` and returns the records to
write; the streaming driver backs the view with Faust tables (one key per memory, so a write
costs one memory, not the user's whole state), the batch oracle with :class:`InMemoryUserState`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from streams.engine.model import Memory


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """A memory as the engine keeps it: the current value, its version, and whether it is a
    tombstone (forgotten: content erased, version kept so ids are never reused silently)."""

    memory: Memory
    version: int
    forgotten: bool = False

    @property
    def is_live(self) -> bool:
        return not self.forgotten


class UserView(Protocol):
    """Read access to one user's state, as much as the ingest step needs."""

    def memory(self, memory_id: str) -> MemoryRecord | None: ...

    def has_seen(self, event_id: str) -> bool: ...


@dataclass
class InMemoryUserState:
    """A user's state in plain dicts: the batch oracle's store and the unit tests' fixture."""

    user_id: str
    memories: dict[str, MemoryRecord] = field(default_factory=dict)
    seen_event_ids: set[str] = field(default_factory=set)

    def memory(self, memory_id: str) -> MemoryRecord | None:
        return self.memories.get(memory_id)

    def has_seen(self, event_id: str) -> bool:
        return event_id in self.seen_event_ids

    def apply(self, event_id: str, writes: Iterable[MemoryRecord]) -> None:
        self.seen_event_ids.add(event_id)
        for record in writes:
            self.memories[record.memory.memory_id] = record

    def live_memories(self) -> Iterator[MemoryRecord]:
        return (r for r in self.memories.values() if r.is_live)
