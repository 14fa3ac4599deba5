"""Seed 003's "Archive Stale", with its Consolidation Exclusions.

Archive when never accessed, or last accessed more than 90 days ago; never a memory that is
critical, tagged permanent or protected, created by the user without consent, a semantic
decision, younger than 7 days, or pinned. At most 50 per run (003's performance guideline),
the least recently used first. Archived memories keep their full content and stay
searchable.
"""

from __future__ import annotations

from streams.engine.context import CycleContext
from streams.engine.salience import last_touched
from streams.engine.user_state import CONSOLIDATED_KINDS, MemoryRecord


def archive_unused_memories(ctx: CycleContext) -> None:
    rule = ctx.policy.stale
    if not rule.enabled:
        return
    candidates = [
        r for r in ctx.live() if r.memory.kind not in CONSOLIDATED_KINDS and _stale(ctx, r)
    ]
    candidates.sort(key=lambda r: (last_touched(r.memory), r.memory.memory_id))
    for record in candidates[: rule.max_per_run]:
        ctx.archive(record, "stale")


def excluded(ctx: CycleContext, record: MemoryRecord) -> str | None:
    """The 003 exclusion that protects ``record``, if any (also used in reports and tests)."""
    memory = record.memory
    rule = ctx.policy.stale
    if memory.priority == "critical":
        return "critical"
    if set(memory.tags) & set(rule.protected_tags):
        return "protected_tag"
    if memory.created_by == "user" and not memory.consent:
        return "user_created_without_consent"
    if memory.layer == "semantic" and memory.subtype == "decision":
        return "semantic_decision"
    if (ctx.request.now - (memory.created_at or ctx.request.now)) / 1000 < rule.min_age_seconds:
        return "younger_than_min_age"
    if memory.pinned:
        return "pinned"
    return None


def _stale(ctx: CycleContext, record: MemoryRecord) -> bool:
    if excluded(ctx, record) is not None:
        return False
    memory = record.memory
    idle_seconds = (ctx.request.now - last_touched(memory)) / 1000
    return memory.access_count == 0 or idle_seconds > ctx.policy.stale.idle_seconds
