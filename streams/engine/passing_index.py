"""The live observations of passing states, oldest first: what expires as time goes on.

"The traffic has been a nightmare this week" is true when said and not known to be true once
the period it speaks of is over (:func:`streams.engine.text.observation.is_passing_state`).
The observation rule archives such observations once they are older than the policy's
``observations.passing_state_seconds``; finding them by a walk of every record would make
every cycle cost the user's whole history, so this table holds only them, in
:attr:`Memory.age_order`, and the rule reads the expired ones by bisection. It is derived,
kept and copied for a cycle as every such table is (``streams.engine.age_index``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streams.engine.age_index import AgeIndex, AgeOrder

if TYPE_CHECKING:
    from streams.engine.user_state import MemoryRecord

PASSING = "passing"
"""The metadata key (value ``"1"``) of an observation that states only a passing state."""


def _passing_entry(record: MemoryRecord | None) -> tuple[str, AgeOrder] | None:
    """A live, unpinned passing state: a pinned one never expires, so it is no entry (else
    its expiry, always past, would make the user due at every tick)."""
    if record is None or not record.is_live or record.memory.pinned:
        return None
    if record.memory.metadata.get(PASSING) != "1":
        return None
    return PASSING, record.memory.age_order


class PassingIndex(AgeIndex):
    """The live, unpinned passing-state observations, oldest first."""

    entry_of = staticmethod(_passing_entry)

    def created_before(self, at: int) -> list[str]:
        """Ids of those created before ``at``, oldest first."""
        return self.before(PASSING, at)

    def oldest_at(self) -> int | None:
        """When the oldest was created, or None when there is none."""
        return self.first(PASSING)
