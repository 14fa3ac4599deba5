"""Seed 002's Insight Extractor: recent narratives clustered into learning patterns.

Narratives of the last ``insights.window_seconds`` (7 days), read from the user's narrative
index (``streams.engine.narrative_index``) rather than a walk of their history, are compared
with one matrix product and joined into clusters (connected at ``insights.min_similarity``);
a cluster of at least ``insights.min_cluster_size`` (3) becomes a ``learning_pattern``
memory (``PatternDetected``) with the narratives as evidence, a confidence from support and
consistency, and a category. Runs after a cycle that wrote narratives, and in maintenance.
"""

from __future__ import annotations

import re

import numpy as np

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.model import Memory
from streams.engine.rules.observations import CREATORS
from streams.engine.similarity import mean_embedding, vector_of
from streams.engine.text.budget import listed_tail
from streams.engine.text.observation import content_words
from streams.engine.text.profile import RECURRING

CATEGORY_CUES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "relational",
        (
            "sister",
            "brother",
            "friend",
            "partner",
            "team",
            "colleague",
            "family",
            "mother",
            "father",
            "wife",
            "husband",
            "manager",
            "kids",
            "son",
            "daughter",
        ),
    ),
    (
        "capability",
        (
            "learned",
            "learn",
            "built",
            "fixed",
            "can",
            "skill",
            "ship",
            "deploy",
            "finished",
            "solved",
        ),
    ),
    ("ontological", ("am", "believe", "value", "identity", "feel", "prefer", "like", "love")),
)


def extract_insights(ctx: CycleContext) -> None:
    rule = ctx.policy.insights
    wrote_narratives = any(isinstance(d.payload, ledger.SessionConsolidated) for d in ctx.decisions)
    if not rule.enabled or not (wrote_narratives or ctx.request.maintenance):
        return
    since = ctx.request.now - rule.window_seconds * 1000
    narratives = [ctx.records[i].memory for i in ctx.narratives.narratives_since(since)]
    if len(narratives) < rule.min_cluster_size:
        return
    vectors = np.stack([vector_of(m, ctx.dim) for m in narratives])
    similarity = vectors @ vectors.T
    for cluster in _clusters(similarity >= rule.min_similarity):
        if len(cluster) < rule.min_cluster_size:
            continue
        # an insight lists its evidence: the newest narratives of a cluster that fit
        cluster = list(listed_tail(cluster, lambda i: narratives[i].memory_id))
        members = [narratives[i] for i in cluster]
        _emit_pattern(ctx, members, similarity[np.ix_(cluster, cluster)])


def _clusters(adjacent: np.ndarray) -> list[list[int]]:
    """Connected components of the similarity graph, each sorted, in order of first member."""
    unseen = set(range(len(adjacent)))
    clusters = []
    for start in range(len(adjacent)):
        if start not in unseen:
            continue
        component, frontier = {start}, [start]
        unseen.discard(start)
        while frontier:
            node = frontier.pop()
            for other in np.flatnonzero(adjacent[node]):
                if int(other) in unseen:
                    unseen.discard(int(other))
                    component.add(int(other))
                    frontier.append(int(other))
        clusters.append(sorted(component))
    return clusters


def _emit_pattern(ctx: CycleContext, members: list[Memory], similarity: np.ndarray) -> None:
    evidence = tuple(m.memory_id for m in members)
    pattern_id = ctx.new_id("learning_pattern", *evidence)
    if pattern_id in ctx.records:
        return
    size = len(members)
    consistency = float(similarity[np.triu_indices(size, k=1)].mean()) if size > 1 else 1.0
    support = min(1.0, size / (size + 2))
    confidence = round(max(0.0, min(1.0, 0.5 * support + 0.5 * consistency)), 6)
    shared = _shared_terms(members)
    if not shared and ctx.pattern_writer is None:
        # narratives alike in direction that share no topic: an insight would name none
        # (RealMem, issue 38: "Recurring across 7 sessions (ontological): a theme.")
        return
    category = _category(members)
    statement = (
        ctx.pattern_writer([m.content for m in members])
        if ctx.pattern_writer is not None
        else f"{RECURRING} {size} sessions ({category}): {', '.join(shared)}."
    )
    pattern = ctx.new_memory(
        pattern_id,
        statement,
        "semantic",
        "learning_pattern",
        subtype=category,
        tags=("insight",),
        importance=max(m.importance for m in members),
        confidence=confidence,
        embedding=mean_embedding(members, ctx.dim),  # among the narratives it recurs in
        metadata={"evidence": ",".join(evidence), "category": category},
    )
    ctx.emit(
        "insight",
        pattern_id,
        ledger.PatternDetected(
            pattern, 1, evidence, confidence, size, round(consistency, 6), category
        ),
    )
    ctx.count("patterns")
    ctx.count("insights")
    ctx.count("links", size)


def _shared_terms(members: list[Memory]) -> list[str]:
    """The topics the narratives share: content words said in at least two of them, most
    shared first. Never a header's or an arc's numbers, an interjection, or a name alone."""
    counts: dict[str, int] = {}
    for memory in members:
        for word in _topic_words(memory):
            counts[word] = counts.get(word, 0) + 1
    recurring = [t for t, n in counts.items() if n >= 2]
    return sorted(recurring, key=lambda t: (-counts[t], t))[:8]


_FRAME_LINES = ("Session of ", "Emotional arc", "Unresolved: ")


def _topic_words(memory: Memory) -> set[str]:
    """A narrative's topics: the ones its writer listed, else the content words of its lines
    (not the header, arc or open-question lines that frame every narrative), lower-case words
    only (a word only ever capitalised is a name)."""
    listed = memory.metadata.get("topics")
    if listed:
        return set(listed.split(","))
    lines = [line for line in memory.content.splitlines() if not line.startswith(_FRAME_LINES)]
    text = " ".join(line.split(": ", 1)[-1] for line in lines)
    lower = {w for w in re.findall(r"[a-z][a-z'-]+", text)}
    return {
        w
        for w in content_words(text)
        if w in lower and len(w) > 2 and w.isalpha() and w not in _PARTIES
    }


_PARTIES = frozenset(creator.split()[-1] for creator in CREATORS.values())
"""What the writers call the conversation's parties ("the user", "the agent"): in every
session by construction, so never a topic that recurs (RealMem, issue 38: "Recurring across 7
sessions (behavioural): agent, chest.")."""


def _category(members: list[Memory]) -> str:
    words = " ".join(m.content.casefold() for m in members).split()
    scores = {name: sum(words.count(cue) for cue in cues) for name, cues in CATEGORY_CUES}
    best = max(scores.items(), key=lambda item: (item[1], item[0]))
    return best[0] if best[1] > 0 else "behavioural"
