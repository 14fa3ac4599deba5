"""Procedural scope promotion (docs/consolidation.md, "scope promotion"; seed 003's "Promote
Patterns").

A procedural memory used often enough is copied to a wider scope: agent → team at 5
accesses, team → global at 10. The copy is tagged ``promoted`` and linked from the original
(``promoted_to``); the original is kept where it is. Each memory is promoted once per scope.
"""

from __future__ import annotations

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.model import Scope

NEXT_SCOPE: dict[str, tuple[Scope, str]] = {
    "agent": ("team", "team_min_accesses"),
    "team": ("global", "global_min_accesses"),
}


def promote_scopes(ctx: CycleContext) -> None:
    rule = ctx.policy.scope
    if not rule.enabled:
        return
    for record in ctx.live("procedural"):
        memory = record.memory
        if memory.scope not in NEXT_SCOPE or memory.kind == "behavioural_profile":
            continue
        target, threshold_name = NEXT_SCOPE[memory.scope]
        if memory.access_count < getattr(rule, threshold_name):
            continue
        copy_id = ctx.new_id("scope", memory.memory_id, target)
        if copy_id in ctx.records:
            continue
        copy = memory.evolve(
            memory_id=copy_id,
            scope=target,
            scope_id=None if target == "global" else (memory.scope_id or rule.team_id),
            tags=tuple(sorted({*memory.tags, "promoted"})),
            access_count=0,
            last_accessed=None,
            created_at=ctx.request.now,
            metadata={**memory.metadata, "promoted_from": memory.memory_id},
        )
        ctx.emit(
            "scope_promoted",
            copy_id,
            ledger.ScopePromoted(memory.memory_id, copy, 1, memory.scope, target),
        )
        ctx.count("scope_promotions")
        ctx.count("links")
