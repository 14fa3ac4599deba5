"""Session → observations (docs/consolidation.md, "sessions and observations"): the facts a closed
session stated, one
attributed, dated memory per turn, in the semantic layer.

Recall answers from these: each is short enough for the embedder to read whole, says who said
it (the turn's ``speaker``, a "Name: " prefix of its content, or who created it) and when (the
turn's day, and the dates its relative expressions name), and links to its source turns
(``derived_from``, the ``EpisodesSummarized`` lineage a summary has: an observation is a
summary of its turns). A turn an observation states is archived, carried by it; phatic turns
state nothing and are left to the session's narrative.

An observation that only says how something has been for the present period ("the gym has
been a mess lately") is marked ``passing`` and archived once older than
``observations.passing_state_seconds`` (:func:`expire_passing_states`): what was true that
week is not known to be true later, and recall should not offer it as current.
"""

from __future__ import annotations

from streams.engine import ledger
from streams.engine.context import CycleContext
from streams.engine.model import CLAIM, Memory
from streams.engine.passing_index import PASSING
from streams.engine.text.observation import (
    AGENT,
    Turn,
    name_prefix,
    stated_part,
    write_observations,
)
from streams.engine.user_state import OBSERVED_REASON, MemoryRecord, SessionWindow

PASSED_REASON = "passed"  # the archive reason of a passing state whose period is over
OBSERVATION = "observation"  # an observation's kind (the duplicates rule reads it)

CREATORS = {"user": "the user", "agent": AGENT, "system": "the system"}


def observe_session(
    ctx: CycleContext,
    window: SessionWindow,
    members: list[MemoryRecord],
    before: dict[str, str | None] | None = None,
) -> dict[str, str]:
    """Write the observations of a closed session's live ``members``; archive the turns they
    state. Returns turn id → the observation carrying it. ``before``: of each member, the
    member it came after, when known; a turn after another than the one written before it
    is joined in no burst (:func:`~streams.engine.text.observation.bursts`)."""
    chosen = sorted(members, key=lambda r: r.memory.age_order)
    turns = [
        turn_of(
            r.memory,
            after_gap=before is not None
            and i > 0
            and before.get(r.memory.memory_id) != chosen[i - 1].memory.memory_id,
        )
        for i, r in enumerate(chosen)
    ]
    observations = write_observations(turns, ctx.policy.max_memory_chars)
    if not observations:
        return {}
    vectors = ctx.embed([o.content for o in observations])
    by_id = {r.memory.memory_id: r.memory for r in chosen}
    carried: dict[str, str] = {}
    for index, (observation, vector) in enumerate(zip(observations, vectors, strict=True)):
        sources = [by_id[s] for s in observation.source_ids]
        stated = sources[-1]
        observation_id = ctx.new_id("observation", window.session_id, str(index))
        claim = stated_part(observation.content)
        memory = ctx.new_memory(
            observation_id,
            observation.content,
            "semantic",
            OBSERVATION,
            subtype="statement",
            tags=("observation",),
            importance=max(m.importance for m in sources),
            confidence=max(m.confidence for m in sources),
            emotional_salience=stated.emotional_salience,
            valence=stated.valence,
            speaker=stated.speaker or named_speaker(observation.speaker),
            conversation_id=window.conversation_id,
            session_id=window.session_id,
            embedding=vector,
            valid_at=stated.created_at,
            metadata={
                "derived_from": ",".join(observation.source_ids),
                "stated_at": str(stated.created_at or 0),
                CLAIM: claim,
                **({PASSING: "1"} if observation.passing else {}),
            },
        )
        ctx.emit(
            "observation",
            observation_id,
            ledger.EpisodesSummarized(memory, 1, observation.source_ids),
        )
        ctx.count("observations")
        ctx.count("links", len(observation.source_ids))
        for source in observation.source_ids:
            carried.setdefault(source, observation_id)
    for record in chosen:
        carrier = carried.get(record.memory.memory_id)
        if carrier is not None and not record.memory.pinned:
            ctx.archive(record, OBSERVED_REASON, carried_by=carrier)
    return carried


def expire_passing_states(ctx: CycleContext) -> None:
    """Archive the passing-state observations older than the policy allows (read from the
    passing index by bisection: the cost is what expires, not the user's history)."""
    rule = ctx.policy.observations
    if not rule.enabled or rule.passing_state_seconds is None:
        return
    for memory_id in ctx.passing.created_before(
        ctx.request.now - rule.passing_state_seconds * 1000
    ):
        ctx.archive(ctx.records[memory_id], PASSED_REASON)  # the index holds live, unpinned
        ctx.count("passed")


def turn_of(memory: Memory, *, after_gap: bool = False) -> Turn:
    """A session member as a turn: its speaker by name when known (the ``speaker`` field,
    else a "Name: " prefix of a person's content, else who created it). An agent's memory is
    the agent's whatever its first words: an assistant opens with a label as often as a
    transcript line opens with a name ("Noted: **no embarrassing the bride**", "Title: …",
    "Subject: …"; 36 of RealMem's 3,639 answers, about half of them a role the assistant
    plays, "Interviewer: …", "Emma Goldman: …", the agent all the same), and the label had
    become the speaker ("Replying to Noted: Option 1: Garden High Tea", blind conversation
    31)."""
    named, text = name_prefix(memory.content)
    if memory.speaker:
        speaker = memory.speaker
        text = text if named == memory.speaker else memory.content
    elif named is not None and memory.created_by != "agent":
        speaker = named
    else:
        speaker, text = CREATORS.get(memory.created_by, "the user"), memory.content
    agent = memory.created_by == "agent"
    return Turn(memory.memory_id, text, speaker, memory.created_at or 0, agent, after_gap=after_gap)


def named_speaker(speaker: str) -> str | None:
    """A speaker's name for the ``speaker`` field (None for "the user" and the like)."""
    return None if speaker in CREATORS.values() else speaker
