"""The user's narratives, oldest first: what the insight rule reads a week of.

Seed 002's insight extractor clusters the narratives of the last seven days, archived ones
included (a summary that carries a narrative does not end it as evidence). Finding them
walked all of the user's records at every cycle that wrote a narrative, so a session's end
cost the user's whole history. This index holds every narrative not forgotten, in
:attr:`Memory.age_order`, and the rule reads its window by bisection.

Derived from the memories like the occurrences (``streams.engine.occurrences``): the fold
keeps it in step, a restored or reloaded user builds it on first use, and a cycle works on a
copy that shares the list until either side changes it, so starting a cycle costs nothing.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streams.engine.state import MemoryRecord

NARRATIVE = "narrative"
AgeOrder = tuple[int, str]


def _narrative_order(record: MemoryRecord | None) -> AgeOrder | None:
    if record is None or record.forgotten or record.memory.kind != NARRATIVE:
        return None
    return record.memory.age_order


class NarrativeIndex:
    """The narratives' :attr:`Memory.age_order`, oldest first."""

    def __init__(self, orders: list[AgeOrder] | None = None) -> None:
        self._orders: list[AgeOrder] = orders if orders is not None else []
        self._shared = False  # another copy holds the same list

    @classmethod
    def of(cls, records: Iterable[MemoryRecord]) -> NarrativeIndex:
        orders = [order for order in map(_narrative_order, records) if order is not None]
        orders.sort()
        return cls(orders)

    def copy(self) -> NarrativeIndex:
        """A copy that shares the list until either side changes it (copy on write)."""
        other = NarrativeIndex(self._orders)
        other._shared = self._shared = True
        return other

    def move(self, previous: MemoryRecord | None, current: MemoryRecord | None) -> None:
        """A record changed from ``previous`` to ``current`` (either may be None)."""
        before, after = _narrative_order(previous), _narrative_order(current)
        if before == after:
            return
        if self._shared:
            self._orders = list(self._orders)
            self._shared = False
        if before is not None:
            at = bisect.bisect_left(self._orders, before)
            if at < len(self._orders) and self._orders[at] == before:
                del self._orders[at]
        if after is not None:
            bisect.insort(self._orders, after)

    def since(self, at: int) -> list[str]:
        """Ids of the narratives created at or after ``at``, oldest first."""
        first = bisect.bisect_left(self._orders, (at, ""))
        return [memory_id for _, memory_id in self._orders[first:]]
