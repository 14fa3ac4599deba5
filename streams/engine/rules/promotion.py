"""Seed 000's hierarchy: working → semantic promotion, and semantic → episodic aging
(docs/consolidation.md, "promotion"; memorykit's aging)."""

from __future__ import annotations

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.model import Memory
from streams.engine.user_state import MemoryRecord


def promote_working_memories(cycle: CycleContext) -> None:
    """Working → semantic: importance > 0.7 or accessed ≥ 3 times or older than 15 min."""
    rule = cycle.policy.promotion
    if not rule.enabled:
        return
    now = cycle.request.now
    observing = cycle.policy.observations.enabled
    for record in cycle.live("working"):
        memory = record.memory
        if (
            cycle.request.conversation_id
            and memory.conversation_id != cycle.request.conversation_id
        ):
            continue
        age_seconds = (now - (memory.created_at or now)) / 1000
        # a turn of a conversation still going on is not promoted for its age alone: it
        # waits for its session's end, where it becomes an observation that says who said
        # it and when (promoted now, "i'm a paramedic these days" is a fact of nobody)
        aged = age_seconds > rule.max_age_seconds and not (
            observing and _in_open_conversation(cycle, memory)
        )
        if not (
            memory.importance > rule.min_importance
            or memory.access_count >= rule.min_access_count
            or aged
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


def _in_open_conversation(cycle: CycleContext, memory: Memory) -> bool:
    if memory.session_id is None or memory.conversation_id is None:
        return False
    window = cycle.facets.sessions.get(memory.session_id)
    return window is not None and window.status == "active"


def age_semantic_facts(cycle: CycleContext) -> None:
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
    cycle: CycleContext, source: MemoryRecord, promoted: Memory, rule: str, source_removed: bool
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
