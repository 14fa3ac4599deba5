"""Duplicates: near-identical memories merge into a survivor that supersedes the other
(docs/consolidation.md, "duplicates"; seed 001, and seed 003's variant by policy).

Observations are statements of people: two people's alike statements never merge (each
said it), and one person saying the same words again ("work has been crazy busy", weeks
apart) is one statement, restated: the newest survives, dated by its last saying, though
its day in the header keeps the two a little apart for the embedder (hence a lower
similarity, :data:`RESTATED_MIN_SIMILARITY`, with the words themselves equal).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.lineage import sources_of
from streams.engine.model import LAYERS, Memory, claim_of
from streams.engine.rules.observations import OBSERVATION
from streams.engine.salience import current_salience
from streams.engine.similarity import similarity_rows
from streams.engine.text.budget import UNION_BYTES, listed_bytes
from streams.engine.user_state import MemoryRecord, pair_key

RESTATED_MIN_SIMILARITY = 0.8
"""Observations of one speaker with equal words merge from this similarity (their days
differ, so their vectors do a little)."""
_LABEL = re.compile(r" \([^)]*\)")


def merge_duplicates(cycle: CycleContext) -> None:
    """Similarity ≥ threshold (and the profile's extra conditions) → the survivor supersedes
    the other, keeping the union of tags (while it fits ``UNION_BYTES``: a survivor merged
    with thousands of alike memories stops gathering theirs)."""
    rule = cycle.policy.duplicates
    if not rule.enabled:
        return
    changed = cycle.facets.changed_ids
    for layer in LAYERS:
        memories = [r.memory for r in cycle.all_live(layer)]
        new = [m for m in memories if m.memory_id in changed][
            -cycle.policy.max_memories_per_cycle :
        ]
        if not new:
            continue
        # What is new since the last cycle against everything live: matrix products. The
        # memories merged away leave the rows' candidates by a mask, not one by one: among
        # 800 alike facts each row walked past the hundreds merged before it (322k pairs).
        position = {m.memory_id: i for i, m in enumerate(memories)}
        live = np.ones(len(memories), dtype=bool)
        compared: set[tuple[str, str]] = set()
        new_at = [position[m.memory_id] for m in new]
        for _, first, row in similarity_rows(new, memories, cycle.dim, new_at):
            at = position[first.memory_id]
            row = np.round(row, 6)
            floor = rule.threshold
            if first.kind == OBSERVATION:
                floor = min(floor, RESTATED_MIN_SIMILARITY)
            for j in np.flatnonzero((row >= floor) & live):
                if not live[at]:
                    break  # merged away: its other pairs can merge nothing
                second = memories[int(j)]
                pair = pair_key(first.memory_id, second.memory_id)
                if second.memory_id == first.memory_id or pair in compared or not live[j]:
                    continue
                compared.add(pair)
                a, b = cycle.records[first.memory_id], cycle.records[second.memory_id]
                if not (a.is_live and b.is_live):
                    continue
                similarity = float(row[j])
                restated = _restated(first, second)
                if similarity < rule.threshold and not restated:
                    continue
                if _said_by_two(first, second):
                    continue  # each said it: two statements, not one
                if not _duplicate_rules_allow(cycle, a, b):
                    continue
                if _derived_one_from_the_other(first, second):
                    continue  # a pattern quotes its evidence: that is not a duplicate
                if restated:
                    survivor, merged = (
                        (a, b) if a.memory.age_order >= b.memory.age_order else (b, a)
                    )
                else:
                    survivor, merged = _choose_survivor(cycle, a, b)
                tags = tuple(sorted(set(survivor.memory.tags) | set(merged.memory.tags)))
                if listed_bytes(tags) > UNION_BYTES:  # merged again and again: stop growing
                    tags = survivor.memory.tags
                kept = survivor.memory.evolve(
                    tags=tags,
                    metadata={**survivor.memory.metadata, "supersedes": merged.memory.memory_id},
                )
                cycle.emit(
                    "merged",
                    merged.memory.memory_id,
                    ledger.MemoryMerged(
                        kept,
                        survivor.version + 1,
                        merged.memory.memory_id,
                        merged.memory.layer,
                        merged.version + 1,
                        similarity,
                    ),
                )
                live[position[merged.memory.memory_id]] = False
                cycle.count("duplicates")
                cycle.count("links")


def _said_by_two(a: Memory, b: Memory) -> bool:
    return a.kind == b.kind == OBSERVATION and a.speaker != b.speaker


def _restated(a: Memory, b: Memory) -> bool:
    """Observations of one speaker in the same words, their dates aside."""
    if not (a.kind == b.kind == OBSERVATION and a.speaker == b.speaker):
        return False
    return _words(a) == _words(b)


def _words(memory: Memory) -> str:
    return _LABEL.sub("", claim_of(memory)).casefold().strip(" .!")


def _derived_one_from_the_other(a: Memory, b: Memory) -> bool:
    return a.memory_id in sources_of(b) or b.memory_id in sources_of(a)


def _duplicate_rules_allow(cycle: CycleContext, a: MemoryRecord, b: MemoryRecord) -> bool:
    rule = cycle.policy.duplicates
    if rule.require_same_kind and (a.memory.kind, a.memory.subtype) != (
        b.memory.kind,
        b.memory.subtype,
    ):
        return False
    if rule.min_tag_overlap > 0:
        tags_a, tags_b = set(a.memory.tags), set(b.memory.tags)
        union = tags_a | tags_b
        overlap = len(tags_a & tags_b) / len(union) if union else 0.0
        if overlap <= rule.min_tag_overlap:
            return False
    return True


def _choose_survivor(
    cycle: CycleContext, a: MemoryRecord, b: MemoryRecord
) -> tuple[MemoryRecord, MemoryRecord]:
    decay = cycle.policy.decay
    now = cycle.request.now

    def newest(r: MemoryRecord) -> tuple[int, str]:
        return r.memory.age_order

    def salient(r: MemoryRecord) -> tuple[float, int, str]:
        s = current_salience(r.memory, now, decay.half_life_seconds, decay.access_reinforcement)
        return (s, *newest(r))

    key: Callable[[MemoryRecord], tuple[object, ...]] = (
        newest if cycle.policy.duplicates.keep == "newest" else salient
    )
    return (a, b) if key(a) >= key(b) else (b, a)
