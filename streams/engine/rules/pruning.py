"""Seed 002's Memory Pruner, in maintenance passes.

PRUNE_IF decay_factor < 0.1 AND emotional_salience < 0.3 AND no access for 30 days AND not
referenced by a belief (pinned) AND not part of an active narrative (a session still open).
Safety rules: emotional salience > 0.5 always keeps a memory; the minimum emotional set
(valence > 0.7) is never pruned. A pruned memory that a narrative carries goes to cold
storage (archived); any other is deleted. Consolidated memories (narratives, summaries,
patterns, profiles) are what pruning keeps, so they are not candidates.
"""

from __future__ import annotations

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.salience import current_salience, last_touched
from streams.engine.user_state import CONSOLIDATED_KINDS, SUMMARIZED_INTO, MemoryRecord


def prune_decayed_memories(ctx: CycleContext) -> None:
    rule = ctx.policy.pruning
    if not (rule.enabled and ctx.request.maintenance):
        return
    open_sessions = {w.session_id for w in ctx.facets.active_sessions()}
    for record in ctx.live():
        if not _prunable(ctx, record, open_sessions):
            continue
        memory = record.memory
        if SUMMARIZED_INTO in memory.metadata:
            ctx.archive(record, "pruned_to_cold_storage", cold_storage=True)
        else:
            ctx.emit(
                "deleted",
                memory.memory_id,
                ledger.MemoryDeleted(memory.memory_id, memory.layer, record.version + 1, "pruned"),
            )
            ctx.count("deleted")


def _prunable(ctx: CycleContext, record: MemoryRecord, open_sessions: set[str]) -> bool:
    rule = ctx.policy.pruning
    decay = ctx.policy.decay
    memory = record.memory
    now = ctx.request.now
    if memory.pinned or memory.kind in CONSOLIDATED_KINDS or memory.priority == "critical":
        return False
    if memory.emotional_salience > rule.keep_emotional_above:
        return False
    if memory.valence > rule.preserve_valence_above:
        return False
    if memory.session_id is not None and memory.session_id in open_sessions:
        return False  # part of a narrative still being written
    salience = current_salience(memory, now, decay.half_life_seconds, decay.access_reinforcement)
    return (
        salience < rule.decay_threshold
        and memory.emotional_salience < rule.max_emotional_salience
        and (now - last_touched(memory)) / 1000 >= rule.idle_seconds
    )
