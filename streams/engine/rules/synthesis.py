"""ONE procedural behavioural profile per user (docs/consolidation.md, "the procedural profile";
seed 004's
``create_procedural_memory``).

The profile is synthesised from the user's active semantic memories (the summaries among them
carry the facts of what they replaced), and a new synthesis replaces the old
one: the profile has one id per user and each synthesis is a new version of it, so a user
never has two. It runs when asked (``memstream procedural``), and automatically at a session
end (``synthesis.on_session_end``) or once ``synthesis.min_new_semantic`` semantic memories
were written since the last one. A profile holds at most the content limit: when all the
sources' statements do not fit, it is written from the newest sources whose statements do
(``streams.engine.text.budget``); the older ones stay live, their facts with them.
"""

from __future__ import annotations

from collections import OrderedDict

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.similarity import mean_embedding
from streams.engine.text.budget import largest_fitting, listed_tail
from streams.engine.text.profile import SupersessionMemo, write_profile
from streams.engine.user_state import MemoryRecord

SYNTHESIZED_AT = "synthesized_at"
MEMO_USERS = 4096
"""Users whose last synthesis is remembered (:class:`SupersessionMemo`), least recently
synthesised forgotten first: a memo only saves work, a user without one is judged afresh."""
_memos: OrderedDict[str, SupersessionMemo] = OrderedDict()


def _memo(user_id: str) -> SupersessionMemo:
    memo = _memos.pop(user_id, None) or SupersessionMemo()
    _memos[user_id] = memo
    while len(_memos) > MEMO_USERS:
        _memos.popitem(last=False)
    return memo


def synthesize_profile(ctx: CycleContext) -> None:
    rule = ctx.policy.synthesis
    asked = ctx.request.mode == "procedural"
    if not (asked or rule.enabled):
        return
    sources = _semantic_sources(ctx)
    if not sources:
        if asked:
            ctx.warnings.append("synthesize_profile: no semantic memories to synthesize")
        return
    profile_id = ctx.new_id("procedural_profile")
    current = ctx.record(profile_id)
    if not (asked or _due(ctx, current, sources)):
        return
    memo = _memo(ctx.user_id)
    limit = min(ctx.max_content_bytes, ctx.policy.max_memory_chars)
    # a profile too large for one memory is written from the newest sources that fit; no
    # profile holds more than the limit, so sources past a few times it are never read
    # (a user's observations would otherwise make every profile read all of them)
    sources = sources[-_newest_within([r.memory.content for r in sources], SOURCE_SLACK * limit) :]
    # written only from sources it can list (``streams.engine.lineage``): a forget of one it
    # quoted must find the profile through its list
    sources = list(listed_tail(sources[-MAX_LISTED_SOURCES:], _memory_id))
    texts = [r.memory.content for r in sources]
    count, content = largest_fitting(len(texts), lambda n: write_profile(texts[-n:], memo), limit)
    sources = sources[-count:]
    profile = ctx.new_memory(
        profile_id,
        content,
        "procedural",
        "behavioural_profile",
        tags=("profile",),
        importance=1.0,
        confidence=1.0,
        # placed among what it was written from, as a narrative is: a model's embedding of
        # a profile cost the worker a model call per profile (a fifth of its throughput)
        embedding=mean_embedding([r.memory for r in sources], ctx.dim),
        metadata={
            "source_semantic_ids": ",".join(r.memory.memory_id for r in sources),
            "source_count": str(len(sources)),
            SYNTHESIZED_AT: str(ctx.request.now),
        },
    )
    if current is not None:
        profile = profile.evolve(created_at=current.memory.created_at)
    version = 1 if current is None else current.version + 1
    ctx.emit(
        "procedural_profile",
        profile_id,
        ledger.ProceduralSynthesized(profile, version, len(sources), replaced_memory_id=None),
    )
    ctx.count("profiles")


def _semantic_sources(ctx: CycleContext) -> list[MemoryRecord]:
    """The semantic memories the profile is made of: the active ones (summaries carry what
    they replaced, so active memory holds every fact still true), not invalidated, the
    newest ``max_memories_per_cycle`` of them, so a synthesis costs what active memory
    holds, not the user's whole history."""
    return [r for r in ctx.live("semantic") if r.memory.invalid_at is None]


def _due(ctx: CycleContext, current: MemoryRecord | None, sources: list[MemoryRecord]) -> bool:
    if ctx.policy.synthesis.on_session_end and any(
        isinstance(d.payload, ledger.SessionClosed) for d in ctx.decisions
    ):
        return True
    since = int(current.memory.metadata.get(SYNTHESIZED_AT, "0")) if current else -1
    written = sum(1 for r in sources if (r.memory.created_at or 0) > since)
    return written >= ctx.policy.synthesis.min_new_semantic


def _memory_id(record: MemoryRecord) -> str:
    return record.memory.memory_id


MAX_LISTED_SOURCES = 200
"""The most sources a profile is written from, and lists."""

SOURCE_SLACK = 3
"""How many times the profile's limit of source text is offered to the writer: it drops
repeated and superseded statements and reports the rest, so what fits comes from a few times
the limit, never from all of a user's semantic memories."""


def _newest_within(texts: list[str], budget: int) -> int:
    """How many of the newest ``texts`` (at least one) hold at most ``budget`` characters."""
    total = 0
    for count, text in enumerate(reversed(texts), start=1):
        total += len(text)
        if total > budget:
            return max(1, count - 1)
    return len(texts)
