"""Session → ONE narrative (docs/consolidation.md, "sessions and observations"; seed 002's Session
Consolidator).

At a session's end its memories, prioritised by kind, become one episodic narrative: summary,
key interactions, emotional arc (from valence) and unresolved threads, with the sources as
its parents and, as its embedding, the mean direction of theirs. The sources are archived,
carried by the narrative (``summarized_into``): they stay searchable, and the narrative keeps
every named entity, number, date and time of them (the built-in writer's guarantee,
``streams.engine.text.narrative``).

A session that is too short (002's ``min_session_duration_seconds``) or has too few memories
is closed without a narrative and its memories stay as they are: nothing is compressed that
would not be. A narrative holds at most the content limit: of a session too large for it, the
members first by priority are narrated and the rest stay live (``streams.engine.text.budget``).
A member promoted meanwhile (working → semantic) is taken as the fact it became.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from streams.engine import ledger
from streams.engine.context import CycleContext, SessionEnd
from streams.engine.rules.observations import observe_session, turn_of
from streams.engine.similarity import mean_embedding
from streams.engine.text.budget import largest_fitting
from streams.engine.text.facts import fact_terms
from streams.engine.text.narrative import (
    Narrative,
    NarrativeSource,
    emotional_arc,
    write_narrative,
)
from streams.engine.text.observation import write_digest
from streams.engine.user_state import MemoryRecord, SessionWindow

SPEAKERS = ("user", "agent", "system")


def consolidate_ended_sessions(ctx: CycleContext) -> None:
    """Close each session the cycle ends; write its narrative when it qualifies."""
    for end in ctx.request.session_ends:
        window = ctx.facets.sessions.get(end.session_id)
        if window is None or window.status != "active":
            continue
        members, before = _current_members(ctx, window)
        narrate = _qualifies(ctx, window, members)
        ctx.emit(
            "session_closed",
            window.session_id,
            ledger.SessionClosed(
                window.session_id,
                window.conversation_id,
                window.started_at,
                end.at,
                len(window.member_ids),
                end.reason,
                consolidated=narrate,
            ),
        )
        ctx.count("sessions_closed")
        if ctx.policy.observations.enabled:
            observed = observe_session(ctx, window, members, before)
            if narrate:
                _write_digest(ctx, window, end, members, observed)
        elif narrate:
            _write_narrative(ctx, window, end, members)


def _current_members(
    ctx: CycleContext, window: SessionWindow
) -> tuple[list[MemoryRecord], dict[str, str | None]]:
    """The session's memories as they are now: following promotions to the copy, and only
    those still live (a forgotten, merged or archived member is not narrated again); and, of
    each, the one it came after (None when that one is no longer live: an assistant's "Good
    to know!" archived between two of the user's turns, which are no burst of messages)."""
    members: dict[str, MemoryRecord] = {}
    before: dict[str, str | None] = {}
    previous: str | None = None
    for memory_id in window.member_ids:
        record = ctx.record(memory_id)
        hops = 0
        while (
            record is not None
            and record.memory.status == "promoted"
            and "promoted_to" in record.memory.metadata
            and hops < 8
        ):
            record = ctx.record(record.memory.metadata["promoted_to"])
            hops += 1
        if record is None or not record.is_live:
            previous = None
            continue
        before.setdefault(record.memory.memory_id, previous)
        members.setdefault(record.memory.memory_id, record)
        previous = record.memory.memory_id
    return list(members.values()), before


def _qualifies(ctx: CycleContext, window: SessionWindow, members: list[MemoryRecord]) -> bool:
    rule = ctx.policy.sessions
    duration_seconds = (window.last_event_at - window.started_at) / 1000
    return (
        rule.narratives
        and len(members) >= rule.min_memories
        and duration_seconds >= rule.min_duration_seconds
    )


def _write_narrative(
    ctx: CycleContext, window: SessionWindow, end: SessionEnd, members: list[MemoryRecord]
) -> None:
    rule = ctx.policy.sessions
    by_priority = _by_priority(members, rule.priority_kinds)[: rule.max_per_narrative]
    written: dict[int, tuple[list[MemoryRecord], list[NarrativeSource], Narrative]] = {}

    def narrate(count: int) -> str:
        """The narrative of the ``count`` first members by priority (in time order)."""
        chosen = sorted(by_priority[:count], key=lambda r: r.memory.age_order)
        sources = [_source(r) for r in chosen]
        written[count] = chosen, sources, write_narrative(sources, rule.priority_kinds)
        return written[count][2].content

    # a session too large for one memory narrates its first members by priority; the others
    # stay live, as those past max_per_narrative do
    count, _ = largest_fitting(
        len(by_priority),
        narrate,
        ctx.max_content_bytes,
        [r.memory.memory_id for r in by_priority],
    )
    chosen, sources, narrative = written[count]
    _emit_narrative(
        ctx,
        window,
        end,
        chosen,
        narrative.content,
        narrative.emotional_arc,
        narrative.unresolved_threads,
        narrative_details(narrative.content, sources),
        embedding=mean_embedding([r.memory for r in chosen], ctx.dim),
    )


def narrate(
    chosen: Sequence[MemoryRecord], priority_kinds: Sequence[str]
) -> tuple[Narrative, dict[str, str]]:
    """The full narrative of ``chosen`` (in time order) with its metadata details: what a
    session's end writes, and what a forget writes again from the members that remain."""
    sources = [_source(r) for r in chosen]
    narrative = write_narrative(sources, priority_kinds)
    return narrative, narrative_details(narrative.content, sources)


def narrative_details(content: str, sources: Sequence[NarrativeSource]) -> dict[str, str]:
    source_chars = sum(len(s.content) for s in sources)
    return {
        "char_ratio": f"{len(content) / max(1, source_chars):.4f}",
        "fact_terms": str(len(fact_terms(content))),
    }


def _write_digest(
    ctx: CycleContext,
    window: SessionWindow,
    end: SessionEnd,
    members: list[MemoryRecord],
    observed: dict[str, str],
) -> None:
    """The session's narrative when observations carry its facts: when, who, what about, what
    was left open. Its parents are all the session's turns; those no observation carries
    (greetings, thanks, open questions) are archived, carried by it."""
    chosen = sorted(members, key=lambda r: r.memory.age_order)[
        : ctx.policy.sessions.max_per_narrative
    ]
    digest = digest_of(chosen, ctx.policy.max_memory_chars)
    _emit_narrative(
        ctx,
        window,
        end,
        chosen,
        digest.content,
        digest.arc,
        digest.unresolved_threads,
        {"observations": str(len(set(observed.values()))), "topics": ",".join(digest.topics)},
        carried_elsewhere=frozenset(observed),
    )


@dataclass(frozen=True, slots=True)
class SessionDigest:
    """A digest's text, with its emotional arc line when valence was given."""

    content: str
    arc: tuple[float, ...]
    unresolved_threads: tuple[str, ...]
    topics: tuple[str, ...]


def digest_of(chosen: Sequence[MemoryRecord], max_chars: int) -> SessionDigest:
    """The digest of ``chosen`` (in time order): what a session's end writes when observations
    carry its facts, and what a forget writes again from the turns that remain."""
    digest = write_digest([turn_of(r.memory) for r in chosen], max_chars)
    valences = [max(-1.0, min(1.0, r.memory.valence)) for r in chosen]
    arc = emotional_arc(valences) if any(valences) else ()
    content = digest.content
    if arc:
        line = "\nEmotional arc: " + " → ".join(f"{value:.2f}" for value in arc) + "."
        if len(content) + len(line) <= max_chars:
            content += line
    return SessionDigest(content, arc, digest.unresolved_threads, digest.topics)


def _emit_narrative(
    ctx: CycleContext,
    window: SessionWindow,
    end: SessionEnd,
    chosen: list[MemoryRecord],
    content: str,
    arc: tuple[float, ...],
    threads: tuple[str, ...],
    details: dict[str, str],
    *,
    embedding: bytes | None = None,
    carried_elsewhere: frozenset[str] = frozenset(),
) -> None:
    """The session's ONE narrative of ``chosen`` (in time order), which it archives and
    carries, but for the pinned and those ``carried_elsewhere`` (by observations).
    ``embedding``: None embeds ``content`` (a digest); a full narrative is placed at the mean
    of its sources."""
    narrative_id = ctx.new_id("narrative", window.session_id)
    valences = [max(-1.0, min(1.0, r.memory.valence)) for r in chosen]
    fields: dict[str, object] = {} if embedding is None else {"embedding": embedding}
    memory = ctx.new_memory(
        narrative_id,
        content,
        "episodic",
        "narrative",
        subtype="session",
        tags=("narrative",),
        importance=max(r.memory.importance for r in chosen),
        confidence=1.0,
        emotional_salience=max(r.memory.emotional_salience for r in chosen),
        valence=round(sum(valences) / len(valences), 6),
        conversation_id=window.conversation_id,
        session_id=window.session_id,
        metadata={
            "parents": ",".join(r.memory.memory_id for r in chosen),
            "session_started_at": str(window.started_at),
            "session_ended_at": str(end.at),
            "source_count": str(len(chosen)),
            **details,
        },
        **fields,
    )
    ctx.emit(
        "narrative",
        window.session_id,
        ledger.SessionConsolidated(
            window.session_id,
            memory,
            1,
            tuple(r.memory.memory_id for r in chosen),
            compression_ratio=float(len(chosen)),
            emotional_arc=arc,
            unresolved_threads=threads,
        ),
    )
    ctx.count("narratives")
    ctx.count("links", len(chosen))
    for record in chosen:
        if record.memory.memory_id in carried_elsewhere or record.memory.pinned:
            continue  # pinned: narrated, but never leaves active memory
        ctx.archive(record, "summarized_into_narrative", carried_by=narrative_id, cold_storage=True)


def _source(record: MemoryRecord) -> NarrativeSource:
    memory = record.memory
    return NarrativeSource(
        memory_id=memory.memory_id,
        content=memory.content,
        kind=memory.kind,
        speaker=memory.created_by if memory.created_by in SPEAKERS else "system",
        valence=max(-1.0, min(1.0, memory.valence)),
        at=memory.created_at or 0,
    )


def _by_priority(members: list[MemoryRecord], kinds: tuple[str, ...]) -> list[MemoryRecord]:
    rank = {kind: i for i, kind in enumerate(kinds)}
    return sorted(
        members,
        key=lambda r: (
            rank.get(r.memory.kind, len(kinds)),
            r.memory.created_at or 0,
            r.memory.memory_id,
        ),
    )
