"""Event-type occurrences: the windowed table procedural learning reads (SPEC §1, §5 rule 5).

An occurrence is a live episodic memory with an outcome (``success``): one time its event
type (``kind``) happened, and how well. Procedural learning asks, each cycle, how often each
event type occurred in the last 30 days and how well on average. Walking every live episodic
memory for that made the rule's cost grow with the user's history (and a cap on that walk
would have skipped what a user with many memories did). This table holds the occurrences by
event type, oldest first, so the rule reads the window of each type by bisection.

It is derived from the memory table, which the state changelog carries: the fold keeps it in
step with every record it changes, and a restored or reloaded user rebuilds it from its
memories when first asked, so it is restored exactly as the memories are. Window boundaries
are applied when read, never by deleting entries as time passes: a replay, a restore and the
live worker therefore always read the same table, whatever the order in which their cycles
saw event time.

A cycle works on a copy: the copy shares each event type's list with the original until one
side changes it, so starting a cycle costs the number of event types, not of occurrences.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streams.engine.state import MemoryRecord

Occurrence = tuple[int, str]  # the memory's Memory.age_order: the order within an event type


def occurrence_of(record: MemoryRecord | None) -> tuple[str, Occurrence] | None:
    """(event type, occurrence) when ``record`` is one, else None."""
    if record is None or not record.is_live:
        return None
    memory = record.memory
    if memory.layer != "episodic" or memory.success is None:
        return None
    return memory.kind, memory.age_order


class Occurrences:
    """Per event type, the occurrences oldest first."""

    def __init__(self, by_type: dict[str, list[Occurrence]] | None = None) -> None:
        self._by_type: dict[str, list[Occurrence]] = by_type if by_type is not None else {}
        self._shared: set[str] = set()  # event types whose list another copy also holds

    @classmethod
    def of(cls, records: Iterable[MemoryRecord]) -> Occurrences:
        by_type: dict[str, list[Occurrence]] = {}
        for record in records:
            found = occurrence_of(record)
            if found is not None:
                by_type.setdefault(found[0], []).append(found[1])
        for occurrences in by_type.values():
            occurrences.sort()
        return cls(by_type)

    def copy(self) -> Occurrences:
        """A copy that shares the lists until either side changes one (copy on write)."""
        other = Occurrences(dict(self._by_type))
        other._shared = set(self._by_type)
        self._shared = set(self._by_type)
        return other

    def move(self, previous: MemoryRecord | None, current: MemoryRecord | None) -> None:
        """A record changed from ``previous`` to ``current`` (either may be None)."""
        before, after = occurrence_of(previous), occurrence_of(current)
        if before == after:
            return  # not an occurrence, or one that did not change (new tags, a marker)
        if before is not None:
            occurrences = self._writable(before[0])
            at = bisect.bisect_left(occurrences, before[1])
            if at < len(occurrences) and occurrences[at] == before[1]:
                del occurrences[at]
            if not occurrences:
                del self._by_type[before[0]]
        if after is not None:
            bisect.insort(self._writable(after[0]), after[1])

    def event_types(self) -> list[str]:
        return sorted(self._by_type)

    def since(self, event_type: str, at: int) -> list[str]:
        """Memory ids of ``event_type`` 's occurrences at or after ``at``, oldest first."""
        occurrences = self._by_type.get(event_type, [])
        first = bisect.bisect_left(occurrences, (at, ""))
        return [memory_id for _, memory_id in occurrences[first:]]

    def _writable(self, event_type: str) -> list[Occurrence]:
        if event_type in self._shared:
            self._by_type[event_type] = list(self._by_type.get(event_type, ()))
            self._shared.discard(event_type)
        return self._by_type.setdefault(event_type, [])
