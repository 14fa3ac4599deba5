"""What was made from what: the one definition of a memory's sources, and the walk over them.

Every rule that writes a memory out of others records their ids in the new memory's metadata,
under a key that says how it was made (:data:`SOURCE_KEYS`). This module is the only reader of
those keys. The forget cascade (``streams.engine.forgetting``), the duplicates rule's guard
against merging a memory into what it was made from, and the lineage the read models keep all
ask it, so none of them can miss a kind of derivation another one knows: a forget that did not
follow ``derived_from`` once left every observation of a forgotten turn quoting it.

``tests/unit/engine/test_lineage.py`` runs every rule of every built-in profile and fails when
a memory a rule wrote names another memory under a metadata key this module does not list:
a new rule cannot add a link the walk does not know.

Pure: no I/O; the walk's order depends only on the ids, so every replay walks alike.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from streams.engine.model import Memory

if TYPE_CHECKING:
    from streams.engine.user_state import MemoryRecord

Derivation = Literal["copy", "evidence", "rewrite", "link"]
"""How a memory depends on a source it lists, which is what a forget of that source does to it:

* ``copy``: the same content moved or copied (promotion, memorykit's aging, scope promotion);
  it goes with its source, and follows its source's content when that is rewritten.
* ``evidence``: a statement about a group (pattern, insight, procedure, a fact extracted on
  write); it quotes its members, and is forgotten when one of them is forgotten or rewritten.
* ``rewrite``: written from its sources by a deterministic writer (observation, narrative or
  digest, summary, behavioural profile); it is written again from the sources that remain.
* ``link``: a memory of its own that records one it replaced (a merge survivor's
  ``supersedes``) or one that corrected it (``corrected_by``); it loses the link, never its
  content.
"""

SOURCE_KEYS: dict[str, Derivation] = {
    "promoted_from": "copy",  # rules.promotion (working → semantic), rules.scope (copies)
    "promoted_from_id": "copy",  # rules.promotion.age_semantic_facts (memorykit)
    "pattern_of": "evidence",  # rules.patterns
    "evidence": "evidence",  # rules.insights, rules.procedures, rules.extraction
    "extracted_from": "evidence",  # rules.extraction (beside ``evidence``, the same id)
    "derived_from": "rewrite",  # rules.observations: the turns an observation states
    "parents": "rewrite",  # rules.narratives: a session's narrative or digest
    "source_episode_ids": "rewrite",  # rules.summaries
    "source_semantic_ids": "rewrite",  # rules.synthesis: the behavioural profile
    "supersedes": "link",  # rules.duplicates: the merge survivor
    "corrected_by": "link",  # rules.contradictions: what took sentences out of a memory
}
"""Metadata key → how the memory that holds it was made from the ids it lists (comma-joined)."""

FORWARD_KEYS = ("promoted_to", "summarized_into")
"""Keys a source holds naming what it became: the other direction of a lineage link, never a
source. (``summarized_into`` is written by the fold of ``MemoryArchived.carried_by``.)"""


def listed(memory: Memory, key: str) -> tuple[str, ...]:
    """The ids ``memory`` lists under ``key``, in the order it lists them."""
    value = memory.metadata.get(key)
    if not value:
        return ()
    return tuple(part for part in value.split(",") if part)


def sources_of(memory: Memory) -> tuple[str, ...]:
    """Every id ``memory`` was made from, whichever key records it, each once, in key order."""
    found: dict[str, None] = {}
    for key in SOURCE_KEYS:
        for source in listed(memory, key):
            if source != memory.memory_id:
                found.setdefault(source)
    return tuple(found)


def derivations_of(memory: Memory, source_id: str) -> set[Derivation]:
    """How ``memory`` depends on ``source_id`` (empty: it does not)."""
    return {kind for key, kind in SOURCE_KEYS.items() if source_id in listed(memory, key)}


def without_sources(memory: Memory, gone: set[str]) -> dict[str, str]:
    """``memory``'s metadata with the ids in ``gone`` taken out of every source list (a list
    left empty is dropped with its key)."""
    metadata = dict(memory.metadata)
    for key in SOURCE_KEYS:
        ids = listed(memory, key)
        if not ids or not gone.intersection(ids):
            continue
        kept = [i for i in ids if i not in gone]
        if kept:
            metadata[key] = ",".join(kept)
        else:
            del metadata[key]
    return metadata


@dataclass
class LineageIndex:
    """Source id → the ids of the memories made from it: the reverse of :func:`sources_of`
    over a user's memories, so a walk reads each memory it reaches once instead of every
    record at every step. Derived and kept by the fold like the state's other tables; a
    forgotten memory (its metadata erased) lists nothing."""

    made_from: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, records: Iterable[MemoryRecord]) -> LineageIndex:
        index = cls()
        for record in records:
            index.move(None, record)
        return index

    def move(self, previous: MemoryRecord | None, record: MemoryRecord | None) -> None:
        """``previous`` became ``record`` (either may be None): update the edges."""
        before = () if previous is None else sources_of(previous.memory)
        after = () if record is None else sources_of(record.memory)
        if before == after:
            return
        memory_id = (record or previous).memory.memory_id  # type: ignore[union-attr]
        for source in set(before) - set(after):
            derived = self.made_from.get(source)
            if derived is not None:
                derived.discard(memory_id)
                if not derived:
                    del self.made_from[source]
        for source in set(after) - set(before):
            self.made_from.setdefault(source, set()).add(memory_id)

    def derived(self, memory_id: str) -> set[str]:
        """The memories that list ``memory_id`` as a source (directly)."""
        return self.made_from.get(memory_id, set())


def descendants(
    roots: Iterable[str],
    derived: Callable[[str], Iterable[str]],
    sources: Callable[[str], Iterable[str]],
) -> list[str]:
    """Every memory made, directly or not, from one of ``roots`` (roots excluded), each after
    all of its sources that are also in the walk: the order a cascade must rewrite them in, a
    summary after the narrative it was made from. Ties (and memories in a cycle of links) go
    by id, so the order is the same wherever it is replayed.

    ``derived(id)``: the ids listing ``id`` as a source; ``sources(id)``: the ids ``id`` lists.
    """
    start = set(roots)
    reached: set[str] = set()
    frontier = sorted(start)
    while frontier:
        step: set[str] = set()
        for memory_id in frontier:
            for child in derived(memory_id):
                if child not in start and child not in reached:
                    reached.add(child)
                    step.add(child)
        frontier = sorted(step)
    waiting = {m: {s for s in sources(m) if s in reached and s != m} for m in reached}
    unblocks: dict[str, list[str]] = {}
    for memory_id, blockers in waiting.items():
        for blocker in blockers:
            unblocks.setdefault(blocker, []).append(memory_id)
    ready = [m for m, blockers in waiting.items() if not blockers]
    heapq.heapify(ready)
    order: list[str] = []
    done: set[str] = set()
    while len(order) < len(reached):
        if not ready:  # a cycle of links: take its smallest id and go on
            heapq.heappush(ready, min(m for m in reached if m not in done))
        memory_id = heapq.heappop(ready)
        if memory_id in done:
            continue
        done.add(memory_id)
        order.append(memory_id)
        for follower in unblocks.get(memory_id, ()):
            blockers = waiting[follower]
            blockers.discard(memory_id)
            if not blockers and follower not in done:
                heapq.heappush(ready, follower)
    return order


def walk_records(
    records: dict[str, MemoryRecord] | Iterable[MemoryRecord], memory_id: str
) -> Iterator[MemoryRecord]:
    """The records made from ``memory_id``, directly or not, in :func:`descendants` order,
    for a caller without a kept index (one pass over ``records`` builds it)."""
    by_id = records if isinstance(records, dict) else {r.memory.memory_id: r for r in records}
    index = LineageIndex.of(by_id.values())
    for found in descendants([memory_id], index.derived, lambda m: sources_of(by_id[m].memory)):
        yield by_id[found]
