"""Memory ids grouped by a key, each group oldest first, read by time: the shape of the
derived tables a rule reads a time window of (``streams.engine.occurrences``,
``streams.engine.narrative_index``).

A subclass says which records belong and under which key (:meth:`AgeIndex.entry_of`). The
fold keeps the table in step with every record it changes, a restored or reloaded user
builds it from its memories when first asked, and a window is read by bisection, never by
deleting entries as time passes: a replay, a restore and the live worker read the same
table whatever the order in which they saw event time.

A cycle works on a copy that shares each group's list with the original until one side
changes it, so starting a cycle costs the number of keys, not of entries.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from streams.engine.user_state import MemoryRecord

AgeOrder = tuple[int, str]  # the memory's Memory.age_order: the order within a group


class AgeIndex:
    """Per key, the entries' age orders, oldest first."""

    @staticmethod
    def entry_of(record: MemoryRecord | None) -> tuple[str, AgeOrder] | None:
        """(key, age order) when ``record`` belongs to the table, else None."""
        raise NotImplementedError

    def __init__(self, by_key: dict[str, list[AgeOrder]] | None = None) -> None:
        self._by_key: dict[str, list[AgeOrder]] = by_key if by_key is not None else {}
        self._shared: set[str] = set()  # keys whose list another copy also holds

    @classmethod
    def of(cls, records: Iterable[MemoryRecord]) -> Self:
        by_key: dict[str, list[AgeOrder]] = {}
        for record in records:
            found = cls.entry_of(record)
            if found is not None:
                by_key.setdefault(found[0], []).append(found[1])
        for orders in by_key.values():
            orders.sort()
        return cls(by_key)

    def copy(self) -> Self:
        """A copy that shares the lists until either side changes one (copy on write)."""
        other = type(self)(dict(self._by_key))
        other._shared = set(self._by_key)
        self._shared = set(self._by_key)
        return other

    def move(self, previous: MemoryRecord | None, current: MemoryRecord | None) -> None:
        """A record changed from ``previous`` to ``current`` (either may be None)."""
        before, after = self.entry_of(previous), self.entry_of(current)
        if before == after:
            return  # not an entry, or one that did not change (new tags, a marker)
        if before is not None:
            orders = self._writable(before[0])
            at = bisect.bisect_left(orders, before[1])
            if at < len(orders) and orders[at] == before[1]:
                del orders[at]
            if not orders:
                del self._by_key[before[0]]
        if after is not None:
            bisect.insort(self._writable(after[0]), after[1])

    def keys(self) -> list[str]:
        return sorted(self._by_key)

    def since(self, key: str, at: int) -> list[str]:
        """Memory ids under ``key`` created at or after ``at``, oldest first."""
        orders = self._by_key.get(key, [])
        first = bisect.bisect_left(orders, (at, ""))
        return [memory_id for _, memory_id in orders[first:]]

    def before(self, key: str, at: int) -> list[str]:
        """Memory ids under ``key`` created before ``at``, oldest first."""
        orders = self._by_key.get(key, [])
        last = bisect.bisect_left(orders, (at, ""))
        return [memory_id for _, memory_id in orders[:last]]

    def first(self, key: str) -> int | None:
        """When the oldest entry under ``key`` was created, or None when there is none."""
        orders = self._by_key.get(key)
        return orders[0][0] if orders else None

    def _writable(self, key: str) -> list[AgeOrder]:
        if key in self._shared:
            self._by_key[key] = list(self._by_key.get(key, ()))
            self._shared.discard(key)
        return self._by_key.setdefault(key, [])
