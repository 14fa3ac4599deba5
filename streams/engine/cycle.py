"""One consolidation cycle for one user: the rules of SPEC §5 as a pure function.

``run_cycle(state, request, policy, dim) -> decisions``. Each step reads a working copy of
the user's memories, emits ledger decisions, and folds them into the copy at once (with the
same fold as the worker), so later steps see earlier ones: a promoted working memory takes
part in pattern detection as the semantic fact it became. A step that fails becomes a
warning in the cycle report and the cycle goes on (seed 001).

Ids of new memories and of decisions derive from the cause, the rule and the subjects, so
the same cycle over the same state always yields the same events.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from statistics import fmean

from streams.engine import ledger
from streams.engine.ingest import derived_from
from streams.engine.judge import Judgement, judge_contradiction
from streams.engine.model import LAYERS, Layer, Memory, Trigger
from streams.engine.policy import Policy
from streams.engine.salience import current_salience, last_touched
from streams.engine.similarity import SimilarityIndex
from streams.engine.state import (
    InMemoryUserState,
    MemoryRecord,
    pair_key,
    records_after,
)

MEMORY_NAMESPACE = uuid.UUID("8a3c2f1e-4b5d-4e6f-9a7b-6d656d6f7279")
Judge = Callable[[str, str], Judgement]
PatternWriter = Callable[[list[str]], str]  # group contents, most central first → statement


def cycle_id_of(user_id: str, cause_id: str) -> str:
    """The id of the cycle ``cause_id`` (a request or tick event id) starts for a user: tools
    that publish a request can find its report by it."""
    return str(uuid.uuid5(MEMORY_NAMESPACE, f"{user_id}\x1f{cause_id}"))


@dataclass(frozen=True, slots=True)
class CycleRequest:
    """Why and when a cycle runs: the cause (input event id or tick id) and its event time."""

    cause_id: str
    trigger: Trigger
    now: int
    conversation_id: str | None = None


@dataclass
class _Cycle:
    user_id: str
    request: CycleRequest
    policy: Policy
    dim: int
    records: dict[str, MemoryRecord]
    flagged_pairs: set[tuple[str, str]]
    judge: Judge
    pattern_writer: PatternWriter | None
    decisions: list[ledger.ConsolidationEvent] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def cycle_id(self) -> str:
        return cycle_id_of(self.user_id, self.request.cause_id)

    def live(self, layer: Layer | None = None) -> list[MemoryRecord]:
        records = (r for r in self.records.values() if r.is_live)
        chosen = [r for r in records if layer is None or r.memory.layer == layer]
        chosen.sort(key=lambda r: (r.memory.created_at or 0, r.memory.memory_id))
        return chosen[-self.policy.max_memories_per_cycle :]  # the newest, when capped

    def new_id(self, rule: str, *subjects: str) -> str:
        key = "\x1f".join((self.user_id, rule, *subjects))
        return str(uuid.uuid5(MEMORY_NAMESPACE, key))

    def emit(self, action: str, subject: str, payload: ledger.LedgerPayload) -> None:
        decision = ledger.ConsolidationEvent(
            event_id=ledger.derived_event_id(self.user_id, self.request.cause_id, action, subject),
            user_id=self.user_id,
            occurred_at=self.request.now,
            causation_id=self.request.cause_id,
            payload=payload,
            trigger=self.request.trigger,
            cycle_id=self.cycle_id,
        )
        self.decisions.append(decision)
        for record in records_after(self.records.get, payload):
            self.records[record.memory.memory_id] = record

    def count(self, name: str, by: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + by


def run_cycle(
    state: InMemoryUserState,
    request: CycleRequest,
    policy: Policy,
    dim: int,
    judge: Judge = judge_contradiction,
    pattern_writer: PatternWriter | None = None,
) -> list[ledger.ConsolidationEvent]:
    """The decisions of one cycle, ending with its ``ConsolidationCompleted`` report.

    ``state`` is read, not changed: the caller folds the decisions."""
    cycle = _Cycle(
        state.user_id,
        request,
        policy,
        dim,
        dict(state.memories),
        set(state.flagged_pairs),
        judge,
        pattern_writer,
    )
    processed = len(cycle.live())
    for step in STEPS:
        try:
            step(cycle)
        except Exception as exc:  # noqa: BLE001 - seed 001: a failing step is a warning
            cycle.warnings.append(f"{step.__name__}: {type(exc).__name__}: {exc}")
    report = ledger.ConsolidationCompleted(
        profile=policy.name,
        processed=processed,
        patterns=cycle.counts.get("patterns", 0),
        archived=cycle.counts.get("archived", 0),
        contradictions=cycle.counts.get("contradictions", 0),
        duplicates_merged=cycle.counts.get("duplicates", 0),
        links_created=cycle.counts.get("links", 0),
        duration_ms=0,  # the cycle is instantaneous in event time; wall time is a metric
        warnings=tuple(cycle.warnings),
    )
    cycle.emit("completed", cycle.cycle_id, report)
    return cycle.decisions


# --- seed 000: the hierarchy ---------------------------------------------------------------


def promote_working_memories(cycle: _Cycle) -> None:
    """Working → semantic: importance > 0.7 or accessed ≥ 3 times or older than 15 min."""
    rule = cycle.policy.promotion
    if not rule.enabled:
        return
    now = cycle.request.now
    for record in cycle.live("working"):
        memory = record.memory
        if (
            cycle.request.conversation_id
            and memory.conversation_id != cycle.request.conversation_id
        ):
            continue
        age_seconds = (now - (memory.created_at or now)) / 1000
        if not (
            memory.importance > rule.min_importance
            or memory.access_count >= rule.min_access_count
            or age_seconds > rule.max_age_seconds
        ):
            continue
        promoted = memory.evolve(
            memory_id=cycle.new_id("promoted", memory.memory_id),
            layer="semantic",
            kind=rule.fact_type,
            confidence=min(1.0, memory.importance + rule.confidence_boost),
            metadata={
                **memory.metadata,
                "source": "working_memory",
                "original_importance": repr(memory.importance),
                "access_count": str(memory.access_count),
                "promoted_at": str(now),
                "promoted_from": memory.memory_id,
            },
            created_at=now,
            valid_at=memory.valid_at,
        )
        _promote(cycle, record, promoted, "working_to_semantic", rule.remove_source)


def age_semantic_facts(cycle: _Cycle) -> None:
    """Semantic → episodic (memorykit): confident facts older than 2 h become events; the
    fact keeps a soft-delete marker."""
    rule = cycle.policy.aging
    if not rule.enabled:
        return
    now = cycle.request.now
    for record in cycle.live("semantic"):
        memory = record.memory
        if "promoted_to_episodic" in memory.metadata:
            continue
        age_seconds = (now - (memory.created_at or now)) / 1000
        if not (memory.confidence > rule.min_confidence and age_seconds > rule.min_age_seconds):
            continue
        event = memory.evolve(
            memory_id=cycle.new_id("aged", memory.memory_id),
            layer="episodic",
            kind=f"{memory.kind}_pattern_detected",
            metadata={
                "source": "semantic_promotion",
                "confidence": repr(memory.confidence),
                "promoted_from_id": memory.memory_id,
                "promoted_at": str(now),
            },
            created_at=now,
        )
        _promote(cycle, record, event, "semantic_to_episodic", source_removed=False)
        marked = cycle.records[memory.memory_id]
        soft_deleted = marked.memory.evolve(
            metadata={**marked.memory.metadata, "promoted_to_episodic": str(now)}
        )
        cycle.emit(
            "soft_deleted",
            memory.memory_id,
            ledger.MemoryStored(soft_deleted, marked.version + 1),
        )


def _promote(
    cycle: _Cycle, source: MemoryRecord, promoted: Memory, rule: str, source_removed: bool
) -> None:
    # The copy's id derives from the source, so a source promoted again (it was rewritten
    # and reactivated) updates its earlier copy: continue that copy's version.
    earlier = cycle.records.get(promoted.memory_id)
    cycle.emit(
        f"promoted:{rule}",
        source.memory.memory_id,
        ledger.MemoryPromoted(
            source_memory_id=source.memory.memory_id,
            source_layer=source.memory.layer,
            source_version=source.version + 1,
            source_removed=source_removed,
            promoted=promoted,
            promoted_version=earlier.version + 1 if earlier else 1,
            rule=rule,
        ),
    )
    cycle.count("promotions")
    cycle.count("links", 2)  # promoted_to + derived_from


def detect_patterns(cycle: _Cycle) -> None:
    """≥ N similar memories (pairwise similarity > t) within the window → one pattern."""
    rule = cycle.policy.patterns
    if not rule.enabled:
        return
    since = cycle.request.now - rule.window_seconds * 1000
    candidates = [
        r.memory
        for r in cycle.live(rule.source_layer)
        if (r.memory.created_at or 0) >= since and "pattern_of" not in r.memory.metadata
    ]
    index = SimilarityIndex(candidates, cycle.dim)
    for group in _similar_groups(candidates, index, rule.min_similarity):
        if len(group) < rule.min_support:
            continue
        evidence = sorted(m.memory_id for m in group)
        pattern_id = cycle.new_id("pattern", *evidence)
        if pattern_id in cycle.records:
            continue
        consistency = fmean(
            index.similarity(a.memory_id, b.memory_id)
            for i, a in enumerate(group)
            for b in group[i + 1 :]
        )
        ranked = _by_centrality(group, index)
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
            tags=tuple(sorted({t for m in group for t in m.tags})),
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


def _similar_groups(
    memories: list[Memory], index: SimilarityIndex, threshold: float
) -> list[list[Memory]]:
    """Greedy cliques: each memory joins the first group it is similar to in every member."""
    groups: list[list[Memory]] = []
    for memory in memories:
        for group in groups:
            if all(index.similarity(memory.memory_id, g.memory_id) > threshold for g in group):
                group.append(memory)
                break
        else:
            groups.append([memory])
    return groups


def _by_centrality(group: list[Memory], index: SimilarityIndex) -> list[Memory]:
    """Members, most similar to the others first: the first is the extractive statement."""

    def closeness(m: Memory) -> tuple[float, str]:
        total = sum(index.similarity(m.memory_id, o.memory_id) for o in group if o is not m)
        return (total, m.memory_id)

    return sorted(group, key=closeness, reverse=True)


def _common_kind(group: Iterable[Memory]) -> str:
    kinds = sorted(m.kind for m in group)
    return max(set(kinds), key=lambda k: (kinds.count(k), k))


def learn_procedures(cycle: _Cycle) -> None:
    """Episodic → procedural: an event type seen ≥ 3 times in 30 days with average success
    > 0.6 becomes ``<event_type>_learned_pattern``."""
    rule = cycle.policy.procedural
    if not rule.enabled:
        return
    since = cycle.request.now - rule.window_seconds * 1000
    by_type: dict[str, list[MemoryRecord]] = {}
    for record in cycle.live("episodic"):
        memory = record.memory
        if (memory.created_at or 0) >= since and memory.success is not None:
            by_type.setdefault(memory.kind, []).append(record)
    for event_type, records in sorted(by_type.items()):
        count = len(records)
        average = fmean(r.memory.success or 0.0 for r in records)
        if count < rule.min_occurrences or average <= rule.min_success:
            continue
        latest = max(records, key=lambda r: (r.memory.created_at or 0, r.memory.memory_id))
        pattern_id = cycle.new_id("procedure", event_type)
        existing = cycle.records.get(pattern_id)
        if existing is not None and existing.memory.metadata.get("occurrence_count") == str(count):
            continue
        procedure = Memory(
            memory_id=pattern_id,
            user_id=cycle.user_id,
            content=latest.memory.content,
            layer="procedural",
            kind=f"{event_type}_learned_pattern",
            trigger_conditions=tuple(
                sorted({c for r in records for c in r.memory.trigger_conditions})
            ),
            importance=max(r.memory.importance for r in records),
            confidence=round(average, 6),
            success=round(average, 6),
            metadata={
                "source": "episodic_promotion",
                "occurrence_count": str(count),
                "avg_success_rate": repr(round(average, 6)),
                "success_count": str(_round_half_up(count * average)),
                "failure_count": str(_round_half_up(count * (1 - average))),
                "evidence": ",".join(sorted(r.memory.memory_id for r in records)),
            },
            created_at=cycle.request.now,
        )
        version = existing.version + 1 if existing else 1
        cycle.emit("procedure", pattern_id, ledger.MemoryStored(procedure, version))
        cycle.count("links", count)
        for record in records:
            if "consolidated_to_procedural" in record.memory.metadata:
                continue
            current = cycle.records[record.memory.memory_id]
            marked = current.memory.evolve(
                metadata={
                    **current.memory.metadata,
                    "consolidated_to_procedural": str(cycle.request.now),
                }
            )
            cycle.emit(
                "consolidated_to_procedural",
                record.memory.memory_id,
                ledger.MemoryStored(marked, current.version + 1),
            )


def _first_known(*values: int | None) -> int:
    return next(v for v in values if v is not None)


def _round_half_up(value: float) -> int:
    """SQL ROUND (seed 000 computes the counts in SQL), not Python's banker's rounding."""
    return math.floor(round(value, 9) + 0.5)  # round(…, 9): 3 * (1 - 5/6) is 0.4999…


# --- seed 001: organisation ----------------------------------------------------------------


def decay_salience(cycle: _Cycle) -> None:
    """Salience decays with event time since last access; recorded when it moved ≥ 0.05."""
    rule = cycle.policy.decay
    if not rule.enabled:
        return
    for record in cycle.live():
        memory = record.memory
        after = current_salience(
            memory, cycle.request.now, rule.half_life_seconds, rule.access_reinforcement
        )
        before = memory.salience if memory.salience is not None else min(1.0, memory.importance)
        if memory.salience is not None and abs(after - before) < 0.05:
            continue
        cycle.emit(
            "decayed",
            memory.memory_id,
            ledger.SalienceDecayed(
                memory.memory_id, memory.layer, record.version + 1, before, after
            ),
        )


def merge_duplicates(cycle: _Cycle) -> None:
    """Similarity ≥ threshold (and the profile's extra conditions) → the survivor supersedes
    the other, keeping the union of tags."""
    rule = cycle.policy.duplicates
    if not rule.enabled:
        return
    for layer in LAYERS:
        memories = [r.memory for r in cycle.live(layer)]
        index = SimilarityIndex(memories, cycle.dim)
        for i, first in enumerate(memories):
            for second in memories[i + 1 :]:
                a, b = cycle.records[first.memory_id], cycle.records[second.memory_id]
                if not (a.is_live and b.is_live):
                    continue
                similarity = index.similarity(first.memory_id, second.memory_id)
                if similarity < rule.threshold or not _duplicate_rules_allow(cycle, a, b):
                    continue
                if _derived_one_from_the_other(first, second):
                    continue  # a pattern quotes its evidence: that is not a duplicate
                survivor, merged = _choose_survivor(cycle, a, b)
                tags = tuple(sorted(set(survivor.memory.tags) | set(merged.memory.tags)))
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
                cycle.count("duplicates")
                cycle.count("links")


def _derived_one_from_the_other(a: Memory, b: Memory) -> bool:
    return a.memory_id in derived_from(b) or b.memory_id in derived_from(a)


def _duplicate_rules_allow(cycle: _Cycle, a: MemoryRecord, b: MemoryRecord) -> bool:
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
    cycle: _Cycle, a: MemoryRecord, b: MemoryRecord
) -> tuple[MemoryRecord, MemoryRecord]:
    decay = cycle.policy.decay
    now = cycle.request.now

    def newest(r: MemoryRecord) -> tuple[int, str]:
        return (r.memory.created_at or 0, r.memory.memory_id)

    def salient(r: MemoryRecord) -> tuple[float, int, str]:
        s = current_salience(r.memory, now, decay.half_life_seconds, decay.access_reinforcement)
        return (s, *newest(r))

    key: Callable[[MemoryRecord], tuple[object, ...]] = (
        newest if cycle.policy.duplicates.keep == "newest" else salient
    )
    return (a, b) if key(a) >= key(b) else (b, a)


def detect_contradictions(cycle: _Cycle) -> None:
    """Semantic pairs with similarity in (0.7, 0.95) that the judge finds contradictory.
    Resolution (seed 003): critical → preserve both; written at the same time (no order to
    tell which is latest) → keep both for review; otherwise the latest wins by invalidating
    the older (never deleting it)."""
    rule = cycle.policy.contradictions
    if not rule.enabled:
        return
    memories = [r.memory for r in cycle.live("semantic") if r.memory.invalid_at is None]
    index = SimilarityIndex(memories, cycle.dim)
    for i, first in enumerate(memories):
        for second in memories[i + 1 :]:
            pair = pair_key(first.memory_id, second.memory_id)
            if pair in cycle.flagged_pairs:
                continue
            if any(
                cycle.records[m.memory_id].memory.invalid_at is not None for m in (first, second)
            ):
                continue  # invalidated earlier in this cycle by another contradiction
            similarity = index.similarity(first.memory_id, second.memory_id)
            if not rule.min_similarity < similarity < rule.max_similarity:
                continue
            verdict = cycle.judge(first.content, second.content)
            if not verdict.contradicts or verdict.confidence <= rule.min_confidence:
                continue
            _resolve(cycle, first, second, verdict.confidence, verdict.cue, verdict.explanation)
            cycle.flagged_pairs.add(pair)


def _resolve(
    cycle: _Cycle, first: Memory, second: Memory, confidence: float, cue: str, explanation: str
) -> None:
    def valid_from(m: Memory) -> int:
        return _first_known(m.valid_at, m.created_at, 0)

    older, newer = sorted((first, second), key=lambda m: (valid_from(m), m.memory_id))
    older_record = cycle.records[older.memory_id]
    invalidated: tuple[str | None, int | None, int | None] = (None, None, None)
    if "critical" in (older.priority, newer.priority):
        resolution: ledger.Resolution = "preserve_critical"
    elif valid_from(older) == valid_from(newer):
        resolution = "keep_both_review"
    else:
        resolution = "latest_wins"
        invalid_at = valid_from(newer)
        invalidated = (older.memory_id, older_record.version + 1, invalid_at)
    cycle.emit(
        "contradiction",
        "\x1f".join(pair_key(older.memory_id, newer.memory_id)),
        ledger.ContradictionDetected(
            memory_id=newer.memory_id,
            other_memory_id=older.memory_id,
            confidence=confidence,
            cue=cue,
            explanation=explanation,
            resolution=resolution,
            invalidated_memory_id=invalidated[0],
            invalidated_version=invalidated[1],
            invalid_at=invalidated[2],
        ),
    )
    cycle.count("contradictions")
    cycle.count("links")


def archive_stale_memories(cycle: _Cycle) -> None:
    """Salience below the threshold and not accessed within max age → archived. Pinned and
    critical memories are never archived."""
    rule = cycle.policy.archive
    decay = cycle.policy.decay
    if not rule.enabled:
        return
    now = cycle.request.now
    for record in cycle.live():
        memory = record.memory
        if memory.pinned or memory.priority == "critical":
            continue
        salience = current_salience(
            memory, now, decay.half_life_seconds, decay.access_reinforcement
        )
        if salience >= rule.salience_threshold:
            continue
        if (
            rule.max_age_seconds is not None
            and (now - last_touched(memory)) / 1000 < rule.max_age_seconds
        ):
            continue
        cycle.emit(
            "archived",
            memory.memory_id,
            ledger.MemoryArchived(
                memory.memory_id,
                memory.layer,
                cycle.records[memory.memory_id].version + 1,
                "low_salience",
                salience,
            ),
        )
        cycle.count("archived")


STEPS: tuple[Callable[[_Cycle], None], ...] = (
    promote_working_memories,
    age_semantic_facts,
    detect_patterns,
    learn_procedures,
    decay_salience,
    merge_duplicates,
    detect_contradictions,
    archive_stale_memories,
)
