"""Event-type occurrences: the windowed table procedural learning reads (README "Architecture";
docs/consolidation.md, "procedures").

An occurrence is a live episodic memory with an outcome (``success``): one time its event
type (``kind``) happened, and how well. Procedural learning asks, each cycle, how often each
event type occurred in the last 30 days and how well on average. Walking every live episodic
memory for that made the rule's cost grow with the user's history (and a cap on that walk
would have skipped what a user with many memories did). This table holds the occurrences by
event type, oldest first, so the rule reads the window of each type by bisection.

It is derived from the memory table, which the state changelog carries, and kept, restored
and copied for a cycle as every such table is (``streams.engine.age_index``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streams.engine.age_index import AgeIndex, AgeOrder

if TYPE_CHECKING:
    from streams.engine.user_state import MemoryRecord

Occurrence = AgeOrder  # the memory's Memory.age_order: the order within an event type


def occurrence_of(record: MemoryRecord | None) -> tuple[str, Occurrence] | None:
    """(event type, occurrence) when ``record`` is one, else None."""
    if record is None or not record.is_live:
        return None
    memory = record.memory
    if memory.layer != "episodic" or memory.success is None:
        return None
    return memory.kind, memory.age_order


class Occurrences(AgeIndex):
    """Per event type, the occurrences oldest first."""

    entry_of = staticmethod(occurrence_of)

    def event_types(self) -> list[str]:
        return self.keys()
