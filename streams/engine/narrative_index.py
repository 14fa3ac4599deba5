"""The user's narratives, oldest first: what the insight rule reads a week of.

Seed 002's insight extractor clusters the narratives of the last seven days, archived ones
included (a summary that carries a narrative does not end it as evidence). Finding them
walked all of the user's records at every cycle that wrote a narrative, so a session's end
cost the user's whole history. This index holds every narrative not forgotten, in
:attr:`Memory.age_order`, and the rule reads its window by bisection. It is derived, kept
and copied for a cycle as every such table is (``streams.engine.age_index``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streams.engine.age_index import AgeIndex, AgeOrder

if TYPE_CHECKING:
    from streams.engine.user_state import MemoryRecord

NARRATIVE = "narrative"


def _narrative_entry(record: MemoryRecord | None) -> tuple[str, AgeOrder] | None:
    if record is None or record.forgotten or record.memory.kind != NARRATIVE:
        return None
    return NARRATIVE, record.memory.age_order


class NarrativeIndex(AgeIndex):
    """The narratives not forgotten, oldest first."""

    entry_of = staticmethod(_narrative_entry)

    def narratives_since(self, at: int) -> list[str]:
        """Ids of the narratives created at or after ``at``, oldest first."""
        return self.since(NARRATIVE, at)
