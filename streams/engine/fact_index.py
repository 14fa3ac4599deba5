"""The facts a contradiction check compares new memories against, and their blocking keys.

A fact is a memory still taken as true: a live semantic memory, or one a narrative or
summary carries (archived, its fact held elsewhere), that is neither invalidated, forgotten
nor itself a consolidation of many statements. A new fact is judged against the facts that
are similar to it or that share a blocking key with it: a named entity, or a claim on the
same attribute of the same subject ("user|employer"), as the judge reads them.

Each cycle used to walk all of the user's records for the facts and read every fact's keys
again. Reading keys means parsing the text; a memo keyed by text kept that cheap only while
every user's facts fitted in it, so with many users each cycle would re-parse its user's
whole history. This index is kept with the user's state instead: the fold adds and removes
facts as their records change, a fact's keys are read once, when it becomes a fact, and a
user loaded from the store rebuilds it on first use (the keys are a function of the text,
so the rebuild gives the same index).

A cycle works on an overlay: reads fall through to the state's index, and what the cycle's
decisions change is written to the overlay only, so starting a cycle costs nothing. The
state's index is changed only by the fold, which runs after the cycle's overlay is dropped.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Iterable, Set
from typing import TYPE_CHECKING

from streams.engine.judge.claims import Claim, claims
from streams.engine.judge.claims import blocking_keys as claimed_keys
from streams.engine.model import claim_of
from streams.engine.text.facts import find_terms
from streams.engine.user_state import CONSOLIDATED_KINDS, OBSERVED, SUMMARIZED_INTO

if TYPE_CHECKING:
    from streams.engine.user_state import MemoryRecord

FactOrder = tuple[int, str]  # a fact's Memory.age_order: the order facts are compared in


def is_current_fact(record: MemoryRecord | None) -> bool:
    if record is None or record.forgotten:
        return False
    memory = record.memory
    if memory.invalid_at is not None or memory.kind in CONSOLIDATED_KINDS:
        return False  # invalidated, or many statements rather than one claim
    if record.is_live:
        return memory.layer == "semantic"
    # a turn an observation states is not a second copy of its fact: in the speaker's own
    # first person ("driving me mad") it would contradict its observation ("driving Natalie
    # mad"), and the observation is the fact that later statements are judged against
    return (
        memory.status == "archived"
        and SUMMARIZED_INTO in memory.metadata
        and OBSERVED not in memory.metadata
    )


@functools.lru_cache(maxsize=16384)
def blocking_keys(content: str) -> tuple[str, ...]:
    """The blocking keys of a fact: the named entities it mentions and the (subject,
    single-valued attribute) keys its claims state, as the judge reads them. Memoised for the
    facts a cycle creates and the fold then adds: the same text, read once."""
    names = (f"entity:{t.term}" for t in find_terms(content) if t.kind == "entity")
    stated = (f"claim:{key}" for key in claimed_keys(claims(content)))
    return tuple(sorted({*names, *stated}))


class FactIndex:
    """A user's current facts, oldest first, and (when asked for) who carries each key."""

    def __init__(self, with_keys: bool, base: FactIndex | None = None) -> None:
        self.with_keys = with_keys
        self._base = base
        # own entries; with a base, only what differs from it (None: removed)
        self._order: list[FactOrder] | None = None if base is not None else []
        self._keys_of: dict[str, tuple[str, ...] | None] = {}
        self._claims_of: dict[str, tuple[Claim, ...] | None] = {}
        self._carrying: dict[str, set[str]] = {}

    @classmethod
    def of(cls, records: Iterable[MemoryRecord], with_keys: bool) -> FactIndex:
        index = cls(with_keys)
        for record in records:
            index.move(None, record)
        return index

    def overlay(self) -> FactIndex:
        """A view for one cycle: reads fall through to this index, writes stay in the view."""
        return FactIndex(self.with_keys, base=self)

    def ordered_ids(self) -> list[str]:
        return [memory_id for _, memory_id in self._orders()]

    def keys_of(self, memory_id: str) -> tuple[str, ...]:
        if memory_id in self._keys_of:
            return self._keys_of[memory_id] or ()
        return self._base.keys_of(memory_id) if self._base is not None else ()

    def claims_of(self, memory_id: str, claim: str) -> tuple[Claim, ...]:
        """The claims of the fact ``memory_id`` (whose claim text is ``claim``), kept when it
        became a fact; read from the text (memoised by it) when this index keeps no keys."""
        if memory_id in self._claims_of:
            kept = self._claims_of[memory_id]
            if kept is not None:
                return kept
        elif self._base is not None:
            return self._base.claims_of(memory_id, claim)
        return claims(claim)

    def carrying(self, key: str) -> Set[str]:
        """Ids of the facts that carry ``key`` (read only)."""
        if key in self._carrying:
            return self._carrying[key]
        return self._base.carrying(key) if self._base is not None else frozenset()

    def move(self, previous: MemoryRecord | None, current: MemoryRecord | None) -> None:
        """A record changed from ``previous`` to ``current`` (either may be None)."""
        was, now = is_current_fact(previous), is_current_fact(current)
        if not (was or now):
            return
        if was and now and _same_fact(previous, current):
            return
        if was and previous is not None:
            self._remove(previous)
        if now and current is not None:
            self._add(current)

    def _orders(self) -> list[FactOrder]:
        if self._order is None:  # an overlay that has not changed the order: the base's
            assert self._base is not None
            return self._base._orders()
        return self._order

    def _writable_order(self) -> list[FactOrder]:
        if self._order is None:
            self._order = list(self._orders())
        return self._order

    def _add(self, record: MemoryRecord) -> None:
        memory = record.memory
        bisect.insort(self._writable_order(), record.memory.age_order)
        if not self.with_keys:
            return
        claim = claim_of(memory)
        keys = blocking_keys(claim)
        self._keys_of[memory.memory_id] = keys
        self._claims_of[memory.memory_id] = claims(claim)
        for key in keys:
            self._writable_carrying(key).add(memory.memory_id)

    def _remove(self, record: MemoryRecord) -> None:
        order = self._writable_order()
        at = bisect.bisect_left(order, record.memory.age_order)
        if at < len(order) and order[at] == record.memory.age_order:
            del order[at]
        if not self.with_keys:
            return
        memory_id = record.memory.memory_id
        for key in self.keys_of(memory_id):
            carriers = self._writable_carrying(key)
            carriers.discard(memory_id)
            if not carriers and self._base is None:
                del self._carrying[key]
        if self._base is None:
            self._keys_of.pop(memory_id, None)
            self._claims_of.pop(memory_id, None)
        else:
            self._keys_of[memory_id] = None  # removed here, still in the base
            self._claims_of[memory_id] = None

    def _writable_carrying(self, key: str) -> set[str]:
        """This index's own set for ``key``: an overlay copies the base's on first write."""
        own = self._carrying.get(key)
        if own is None:
            own = self._carrying[key] = set(self.carrying(key))
        return own


def _same_fact(previous: MemoryRecord | None, current: MemoryRecord | None) -> bool:
    """Still the same fact in the same place (new tags, an access, a marker)."""
    assert previous is not None and current is not None
    return (
        previous.memory.age_order == current.memory.age_order
        and previous.memory.content == current.memory.content
    )
