"""Verbose old episodes summarized in place (docs/consolidation.md, "verbose episodes"; seed 003's
"Summarize
Verbose Episodic").

An episodic memory older than 30 days with more than 5000 characters is rewritten as a
summary of itself: the first and last 3 timeline entries (lines) kept verbatim, the middle
summarized by the fact-keeping writer (every entity, number and date stays), tagged
``summarized``. It is a new version of the same memory, so its id, links and lineage hold.
"""

from __future__ import annotations

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.text.summary import write_summary


def summarize_verbose_episodes(ctx: CycleContext) -> None:
    rule = ctx.policy.verbose
    if not rule.enabled:
        return
    now = ctx.request.now
    for record in ctx.live("episodic"):
        memory = record.memory
        age_seconds = (now - (memory.created_at or now)) / 1000
        if (
            "summarized" in memory.tags
            or age_seconds <= rule.min_age_seconds
            or len(memory.content) <= rule.min_chars
        ):
            continue
        content = shortened(memory.content, rule.timeline_entries)
        if len(content) >= len(memory.content):
            continue
        rewritten = memory.evolve(
            content=content,
            embedding=ctx.embed([content])[0],
            tags=tuple(sorted({*memory.tags, "summarized"})),
            metadata={**memory.metadata, "original_chars": str(len(memory.content))},
        )
        ctx.emit(
            "verbose_summarized",
            memory.memory_id,
            ledger.MemoryStored(rewritten, record.version + 1),
        )
        ctx.count("verbose_summarized")


def shortened(content: str, keep: int) -> str:
    """First and last ``keep`` timeline entries (non-empty lines) verbatim, the middle as one
    fact-keeping summary."""
    entries = [line for line in content.splitlines() if line.strip()]
    if len(entries) <= 2 * keep:
        return write_summary(entries or [content])
    middle = write_summary(entries[keep:-keep])
    return "\n".join([*entries[:keep], f"[summary] {middle}", *entries[-keep:]])
