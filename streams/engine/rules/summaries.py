"""Episodes → ONE semantic summary (docs/consolidation.md, "summaries"; seed 004's
``run_consolidation``).

All unsummarized episodes (live episodic memories, narratives included) become one semantic
memory, map-reduced in chunks when there are many; each episode is archived, carried by the
summary (``summarized_into``). The built-in writer keeps every fact term of the episodes but
a session digest's header, whose facts the session's observations carry.
Automatic cycles summarize once ``summaries.min_episodes`` are waiting, or at every session end
(``summaries.on_session_end``; 004: "auto triggers on session end or configurable threshold");
a manual cycle summarizes whatever is waiting. Episodes whose summary would exceed the content
limit, or than what the embedder reads (``max_memory_chars``), are summarized in consecutive
groups, one summary each (``streams.engine.text.budget``): a summary is recalled by its
embedding, and an embedder reads only its first ~1,000 characters.
"""

from __future__ import annotations

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.text.budget import fitting_groups
from streams.engine.text.summary import write_summary
from streams.engine.user_state import MemoryRecord


def summarize_episodes(ctx: CycleContext) -> None:
    rule = ctx.policy.summaries
    if not rule.enabled:
        return
    episodes = [r for r in ctx.live("episodic") if not r.memory.pinned]
    session_ended = any(isinstance(d.payload, ledger.SessionClosed) for d in ctx.decisions)
    asked = ctx.request.trigger == "manual" or (rule.on_session_end and session_ended)
    threshold = 1 if asked else rule.min_episodes
    if len(episodes) < max(1, threshold):
        return
    chunk_size = max(2, rule.chunk_size)
    groups = fitting_groups(
        episodes,
        lambda group: write_summary([r.memory.content for r in group], chunk_size),
        min(ctx.max_content_bytes, ctx.policy.max_memory_chars),
        lambda group: (r.memory.memory_id for r in group),
    )
    for group, content in groups:
        _summarize(ctx, list(group), content)


def _summarize(ctx: CycleContext, episodes: list[MemoryRecord], content: str) -> None:
    """ONE summary of ``episodes``: they are archived, carried by it."""
    summary_id = ctx.new_id("summary", *(r.memory.memory_id for r in episodes))
    summary = ctx.new_memory(
        summary_id,
        content,
        "semantic",
        "summary",
        subtype="episodes",
        tags=("summary",),
        importance=max(r.memory.importance for r in episodes),
        confidence=1.0,
        metadata={
            "source_episode_ids": ",".join(r.memory.memory_id for r in episodes),
            "episode_count": str(len(episodes)),
        },
    )
    ctx.emit(
        "summary",
        summary_id,
        ledger.EpisodesSummarized(summary, 1, tuple(r.memory.memory_id for r in episodes)),
    )
    ctx.count("summaries")
    ctx.count("links", len(episodes))
    for record in episodes:
        ctx.archive(record, "summarized_into_summary", carried_by=summary_id, cold_storage=True)
