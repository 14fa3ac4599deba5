"""A user's live memories, oldest first: all of them, and each layer's.

Every cycle walks the live memories in age order and compares what is new with them. The
cycle used to build these lists when it started, from all of the user's records: a walk of
the whole history (archived and forgotten memories included) and a sort of the live ones,
for every cycle. They are kept with the user's state instead, like the fact index
(``streams.engine.fact_index``): the fold moves the records a decision changes, a user
loaded from the store builds them on first use, and a cycle works on a copy of the lists
(references, copied at C speed), which its own decisions keep in step.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import TYPE_CHECKING

from streams.engine.age_index import AgeOrder

if TYPE_CHECKING:
    from streams.engine.model import Layer
    from streams.engine.user_state import MemoryRecord


class LiveIndex:
    """The live records sorted by :attr:`Memory.age_order`, under ``None`` all of them and
    under each layer's name that layer's. Beside each list of records, the list of their
    age orders, so a move finds its place by a bisection in C rather than one that calls
    back into Python for every comparison."""

    def __init__(self, lists: dict[Layer | None, list[MemoryRecord]] | None = None) -> None:
        self._records: dict[Layer | None, list[MemoryRecord]] = lists if lists else {None: []}
        self._orders: dict[Layer | None, list[AgeOrder]] = {
            key: [record.memory.age_order for record in records]
            for key, records in self._records.items()
        }

    @classmethod
    def of(cls, records: Iterable[MemoryRecord]) -> LiveIndex:
        everything = sorted((r for r in records if r.is_live), key=_age_order)
        lists: dict[Layer | None, list[MemoryRecord]] = {None: everything}
        for record in everything:
            lists.setdefault(record.memory.layer, []).append(record)
        return cls(lists)

    def copy(self) -> LiveIndex:
        """An index of its own for a cycle: the lists copied, the records shared."""
        other = LiveIndex.__new__(LiveIndex)
        other._records = {key: list(records) for key, records in self._records.items()}
        other._orders = {key: list(orders) for key, orders in self._orders.items()}
        return other

    def records(self, layer: Layer | None = None) -> list[MemoryRecord]:
        """The live records of ``layer`` (None: of every layer), oldest first, as a list
        the caller may change."""
        return list(self._records.get(layer, ()))

    def move(self, previous: MemoryRecord | None, current: MemoryRecord | None) -> None:
        """Replace ``previous`` by ``current`` (either may be None): out of the lists it was
        in, into the ones it now belongs to (a promotion changes the layer, an archive ends
        it)."""
        if previous is not None and previous.is_live:
            order = previous.memory.age_order
            for key in (None, previous.memory.layer):
                orders = self._orders.get(key, [])
                at = bisect.bisect_left(orders, order)
                if at < len(orders) and orders[at] == order:
                    del orders[at]
                    del self._records[key][at]
        if current is not None and current.is_live:
            order = current.memory.age_order
            for key in (None, current.memory.layer):
                orders = self._orders.setdefault(key, [])
                at = bisect.bisect_right(orders, order)
                orders.insert(at, order)
                self._records.setdefault(key, []).insert(at, current)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LiveIndex):
            return NotImplemented
        return self._keyed() == other._keyed()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def _keyed(self) -> dict[Layer | None, list[str]]:
        """The ids in each non-empty list: what two indexes must agree on."""
        return {
            key: [r.memory.memory_id for r in records]
            for key, records in self._records.items()
            if records
        }


def _age_order(record: MemoryRecord) -> tuple[int, str]:
    return record.memory.age_order
