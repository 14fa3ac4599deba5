"""Patterns: groups of similar facts within a window become one pattern memory
(docs/consolidation.md, "patterns"; seeds 000 op 2, 001, 002)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.model import Memory
from streams.engine.similarity import matrix_of, row_totals, similarity_rows
from streams.engine.text.budget import LISTED_IDS_BYTES, bounded_union, json_bytes


def detect_patterns(cycle: CycleContext) -> None:
    """≥ N similar memories (pairwise similarity > t) within the window → one pattern.

    Only a group with something new since the user's last cycle can be a new pattern, so the
    new memories are compared with the window's memories in one matrix product, and each new
    memory grows a group (a clique) among its neighbours only."""
    rule = cycle.policy.patterns
    if not rule.enabled:
        return
    since = cycle.request.now - rule.window_seconds * 1000
    candidates = [
        r.memory
        for r in cycle.all_live(rule.source_layer)
        if (r.memory.created_at or 0) >= since and "pattern_of" not in r.memory.metadata
    ]
    changed = cycle.facets.changed_ids
    at = [i for i, m in enumerate(candidates) if m.memory_id in changed]
    at = at[-cycle.policy.max_memories_per_cycle :]
    if not at:
        return
    new = [candidates[i] for i in at]
    vectors = matrix_of(candidates, cycle.dim)
    neighbours = [
        np.flatnonzero(row > rule.min_similarity)
        for _, _, row in similarity_rows(new, candidates, cycle.dim, at, vectors)
    ]
    for group in _groups_around_new(new, candidates, neighbours, vectors, rule.min_similarity):
        if len(group) < rule.min_support:
            continue
        evidence = sorted(m.memory_id for m in group)
        pattern_id = cycle.new_id("pattern", *evidence)
        if pattern_id in cycle.records:
            continue
        totals = row_totals(group, cycle.dim)
        size = len(group)  # consistency: the mean of the pairs (one member: like itself)
        consistency = float(totals.sum() / (size * (size - 1))) if size > 1 else 1.0
        ranked = _by_centrality(group, totals)
        statement = ranked[0]
        content = (
            cycle.pattern_writer([m.content for m in ranked])
            if cycle.pattern_writer
            else statement.content
        )
        category = _common_kind(group)
        kind = f"{category}_pattern_detected" if rule.target_layer == "episodic" else "pattern"
        support = len(group)
        confidence = round(min(1.0, consistency * (1 - 1 / (support + 1))), 6)
        pattern = Memory(
            memory_id=pattern_id,
            user_id=cycle.user_id,
            content=content,
            layer=rule.target_layer,
            kind=kind,
            subtype=category,
            tags=bounded_union(m.tags for m in group),
            importance=max(m.importance for m in group),
            confidence=confidence,
            embedding=statement.embedding,
            metadata={"pattern_of": ",".join(evidence), "support": str(support)},
            created_at=cycle.request.now,
        )
        cycle.emit(
            "pattern",
            pattern_id,
            ledger.PatternDetected(
                pattern, 1, tuple(evidence), confidence, support, round(consistency, 6), category
            ),
        )
        cycle.count("patterns")
        cycle.count("links", support)


def _groups_around_new(
    new: list[Memory],
    candidates: list[Memory],
    neighbours: list[np.ndarray],
    candidate_vectors: np.ndarray,
    threshold: float,
) -> list[list[Memory]]:
    """For each new memory not yet grouped: the greedy clique it forms with its neighbours
    (in window order), each member similar to every other. The clique keeps a mask of the
    neighbours similar to all its members: one product of the neighbours with each member
    added. It takes at most what its pattern can list (``LISTED_IDS_BYTES``, the seed
    always); the neighbours left out stay ungrouped, for the next new memory's clique."""
    grouped: set[str] = set()
    groups: list[list[Memory]] = []
    for row, seed in enumerate(new):
        if seed.memory_id in grouped:
            continue
        near_at = [int(c) for c in neighbours[row] if candidates[int(c)].memory_id not in grouped]
        near = [candidates[c] for c in near_at]
        vectors = candidate_vectors[near_at]  # their rows of the candidates' matrix
        open_to = np.ones(len(near), dtype=bool)  # similar to every member so far
        group: list[Memory] = []
        room = LISTED_IDS_BYTES - json_bytes(seed.memory_id)  # the seed always fits
        for position, memory in enumerate(near):
            if not open_to[position]:
                continue
            if memory.memory_id != seed.memory_id:
                room -= json_bytes(memory.memory_id) + 1  # and its comma
                if room < 0:  # the pattern lists what it groups: the rest waits for another
                    continue
            group.append(memory)
            open_to &= np.round(vectors @ vectors[position], 6) > threshold
        if seed not in group:
            continue
        grouped.update(m.memory_id for m in group)
        groups.append(group)
    return groups


def _by_centrality(group: list[Memory], totals: np.ndarray) -> list[Memory]:
    """Members, most similar to the others first (``totals``: each one's similarities to the
    others, summed): the first is the extractive statement."""
    order = sorted(range(len(group)), key=lambda i: (float(totals[i]), group[i].memory_id))
    return [group[i] for i in reversed(order)]


def _common_kind(group: Iterable[Memory]) -> str:
    kinds = sorted(m.kind for m in group)
    return max(set(kinds), key=lambda k: (kinds.count(k), k))
