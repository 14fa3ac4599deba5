"""Contradictions: similar facts the judge finds contradictory; the latest wins by
invalidating the older, never deleting it (docs/consolidation.md, "contradictions"; seeds 001,
003).

A memory the engine wrote often states several facts (a person's whole turn, a reply with the
answer it replies to). When a later fact contradicts one of them, the others are still true:
the older memory is then corrected, a new version without the sentences the judge found
contradicted, instead of invalidated whole (on RealMem, with the judge's rules for real
chat, the user's needed points lost went from 20 to 2)."""

from __future__ import annotations

import numpy as np

from streams.engine import ledger
from streams.engine.context import CycleContext, Judge
from streams.engine.judge import Judgement
from streams.engine.judge.claims import (
    Claim,
    may_contradict,
    owners,
    same_owner,
    tells_a_change,
)
from streams.engine.judge.judgement import no_contradiction
from streams.engine.model import CLAIM, Memory, claim_of
from streams.engine.similarity import similarity_rows
from streams.engine.text.changes import states_a_change
from streams.engine.text.prose import content_words
from streams.engine.user_state import pair_key

UPDATE_MIN_SIMILARITY = 0.4


def detect_contradictions(cycle: CycleContext) -> None:
    """What is new since the user's last cycle, against every fact still taken as true,
    judged where similarity is in (0.7, 0.95), and, where the policy says so, where the two
    name the same entity or claim the same attribute of the same subject.

    Resolution (seed 003): critical → preserve both; written at the same time (no order to
    tell which is latest) → keep both for review; otherwise the latest wins by invalidating
    the older (never deleting it).

    The facts taken as true are the live semantic memories and the memories a narrative or
    summary carries (archived, their facts held elsewhere, not invalidated): a correction in
    a later session must still invalidate what an earlier session's narrative carries. One
    matrix product compares the new ones with all of them."""
    rule = cycle.policy.contradictions
    if not rule.enabled:
        return
    fact_ids = cycle.facts.ordered_ids()
    facts = [cycle.records[memory_id].memory for memory_id in fact_ids]
    changed = cycle.facets.changed_ids
    at = [j for j, m in enumerate(facts) if m.memory_id in changed]
    if not at:
        return
    new = [facts[j] for j in at]
    paired = _paired_on_keys(cycle, new, fact_ids) if rule.entity_candidates else {}
    for _, first, similarity_row in similarity_rows(new, facts, cycle.dim, at):
        band = np.flatnonzero(
            (similarity_row > rule.min_similarity) & (similarity_row < rule.max_similarity)
        )
        candidates = {int(j) for j in band}
        candidates.update(
            j for j in paired.get(first.memory_id, ()) if similarity_row[j] < rule.max_similarity
        )
        if first.speaker is not None and states_a_change(claim_of(first)):
            # "the launch slipped to April 24th" says less like "our launch is set for March
            # 31st" than the band asks: an update the speaker states is also judged against
            # what the same speaker said that is loosely alike
            loose = (similarity_row > UPDATE_MIN_SIMILARITY) & (
                similarity_row < rule.max_similarity
            )
            candidates.update(
                int(j) for j in np.flatnonzero(loose) if facts[int(j)].speaker == first.speaker
            )
        for j in sorted(candidates):
            second = facts[j]
            if second.memory_id == first.memory_id:
                continue
            pair = pair_key(first.memory_id, second.memory_id)
            if pair in cycle.flagged_pairs:
                continue
            if any(
                cycle.records[m.memory_id].memory.invalid_at is not None for m in (first, second)
            ):
                continue  # invalidated earlier in this cycle by another contradiction
            verdict, denied_first, denied_second = judged_claims(
                cycle.judge,
                cycle.facts.claims_of(first.memory_id, claim_of(first)),
                cycle.facts.claims_of(second.memory_id, claim_of(second)),
                rule.min_confidence,
                _whose(first.speaker, second.speaker),
            )
            if not verdict.contradicts or verdict.confidence <= rule.min_confidence:
                continue
            denied = {first.memory_id: denied_first, second.memory_id: denied_second}
            _resolve(cycle, first, second, verdict, denied)
            cycle.flagged_pairs.add(pair)


MAX_BLOCK = 32
"""A blocking key carried by more facts than this names something too common to pair on
(the user's own name, a word read as a name): like a stop word in entity resolution, it is
dropped, so a cycle's judge calls stay bounded by the new memories, not the user's history."""


def _paired_on_keys(
    cycle: CycleContext, new: list[Memory], fact_ids: list[str]
) -> dict[str, list[int]]:
    """Each new fact → the positions (in ``fact_ids``) of the facts sharing a blocking key
    with it: candidate pairs that similarity of the whole sentence misses ("I work at
    Umbrella Labs now" / "I work at Hooli as an analyst"); the judge decides whether they
    really contradict. Read before any pair is judged: the check's own decisions change the
    index (an invalidated fact leaves it), and must not change which pairs it considers."""
    position = {memory_id: j for j, memory_id in enumerate(fact_ids)}
    paired: dict[str, list[int]] = {}
    for memory in new:
        found = paired.setdefault(memory.memory_id, [])
        for key in cycle.facts.keys_of(memory.memory_id):
            carriers = cycle.facts.carrying(key)
            if len(carriers) <= MAX_BLOCK:  # a more common key pairs on nothing (MAX_BLOCK)
                found.extend(position[memory_id] for memory_id in carriers)
    return paired


def judged_claims(
    judge: Judge,
    first: tuple[Claim, ...],
    second: tuple[Claim, ...],
    min_confidence: float,
    speakers: tuple[str, str] | None = None,
) -> tuple[Judgement, frozenset[str], frozenset[str]]:
    """Whether two facts contradict, judged claim by claim (streams/engine/judge/claims.py):
    only the claims that could contradict are compared, so the judge's cost is bounded by
    the claims (at most ``MAX_CLAIMS`` each), not by the square of the texts' length. The
    verdict is the first most confident contradiction, else the most confident "none"; with
    it, the sentences of each side found contradicted with more than ``min_confidence``:
    what a correction takes out of the older memory. ``speakers``: who said each side, when
    two different people did; then a claim is compared only with one about the same owner's
    thing (:func:`~streams.engine.judge.claims.owners`)."""
    best: Judgement | None = None
    denied: tuple[set[str], set[str]] = (set(), set())
    mine, theirs = _owners_of(first, speakers, 0), _owners_of(second, speakers, 1)
    for claim, owner in zip(first, mine, strict=True):
        for other, other_owner in zip(second, theirs, strict=True):
            if not may_contradict(claim, other) or not same_owner(owner, other_owner):
                continue
            verdict = judge(claim.text, other.text)
            if verdict.contradicts and verdict.confidence > min_confidence:
                denied[0].add(claim.text)
                denied[1].add(other.text)
            if best is None or (verdict.contradicts, verdict.confidence) > (
                best.contradicts,
                best.confidence,
            ):
                best = verdict
    verdict = best if best is not None else NO_SHARED_CLAIM
    return verdict, frozenset(denied[0]), frozenset(denied[1])


NO_SHARED_CLAIM = no_contradiction(0.0, "no claims about one subject and attribute")


UNKNOWN_OWNER: frozenset[str | None] = frozenset({None})


def _owners_of(
    claims: tuple[Claim, ...], speakers: tuple[str, str] | None, side: int
) -> list[frozenset[str | None]]:
    """Each claim's :func:`~streams.engine.judge.claims.owners` as said by ``speakers[side]``,
    read once per claim rather than once per pair; unknown (``{None}``, which meets any
    owner) when one person said both sides."""
    if speakers is None:
        return [UNKNOWN_OWNER] * len(claims)
    names = frozenset(speakers)
    return [owners(claim, speakers[side], names) for claim in claims]


def _whose(first: str | None, second: str | None) -> tuple[str, str] | None:
    """The two speakers as the judge's words name them (a first name, lower-case), when two
    different people said the two facts; None when one person did, or who is not known."""
    if first is None or second is None:
        return None
    names = (_first_name(first), _first_name(second))
    return names if names[0] != names[1] else None


def _first_name(speaker: str) -> str:
    words = speaker.split()
    return words[0].casefold() if words else ""


def _resolve(
    cycle: CycleContext,
    first: Memory,
    second: Memory,
    verdict: Judgement,
    denied: dict[str, frozenset[str]],
) -> None:
    def valid_from(m: Memory) -> int:
        return _first_known(m.valid_at, m.created_at, 0)

    older, newer = sorted((first, second), key=lambda m: (valid_from(m), m.memory_id))
    older_record = cycle.records[older.memory_id]
    invalidated: tuple[str | None, int | None, int | None] = (None, None, None)
    corrected: Memory | None = None
    if "critical" in (older.priority, newer.priority):
        resolution: ledger.Resolution = "preserve_critical"
    elif valid_from(older) == valid_from(newer):
        resolution = "keep_both_review"
    else:
        resolution = "latest_wins"
        # what the older memory told happened stays true ("moved to Boston last month"):
        # the later change ends the state it began, not the event (docs/consolidation.md)
        states = frozenset(s for s in denied[older.memory_id] if not tells_a_change(s))
        if states:
            corrected = corrected_memory(older_record.memory, states)
            if corrected is None:
                invalid_at = valid_from(newer)
                invalidated = (older.memory_id, older_record.version + 1, invalid_at)
    cycle.emit(
        "contradiction",
        "\x1f".join(pair_key(older.memory_id, newer.memory_id)),
        ledger.ContradictionDetected(
            memory_id=newer.memory_id,
            other_memory_id=older.memory_id,
            confidence=verdict.confidence,
            cue=verdict.cue,
            explanation=verdict.explanation,
            resolution=resolution,
            invalidated_memory_id=invalidated[0],
            invalidated_version=invalidated[1],
            invalid_at=invalidated[2],
            invalidated_layer=(
                None if invalidated[0] is None or older.layer == "semantic" else older.layer
            ),
        ),
    )
    cycle.count("contradictions")
    cycle.count("links")
    if corrected is not None:
        corrected = corrected.evolve(
            embedding=cycle.embed([corrected.content])[0],
            metadata={**corrected.metadata, CORRECTED_BY: newer.memory_id},
        )
        version = cycle.records[older.memory_id].version + 1
        cycle.emit(  # the version in the subject: one cycle may correct a memory twice
            "corrected",
            f"{older.memory_id}\x1f{version}",
            ledger.MemoryStored(corrected, version),
        )
        cycle.count("corrected")


CORRECTED_BY = "corrected_by"
"""Metadata of a corrected memory: the memory whose statement took some of its sentences out."""


def corrected_memory(memory: Memory, denied: frozenset[str]) -> Memory | None:
    """``memory`` without the ``denied`` sentences, when what is left still states something
    and the engine wrote it (a client's memory stays as the client wrote it); None: the
    older memory is invalidated whole, as a single fact is.

    The sentences come from the memory's claim (:func:`~streams.engine.model.claim_of`), which
    is its content without the day and speaker prefix; each must be found verbatim in both."""
    if memory.created_by != "system" or not denied:
        return None
    content, claim = memory.content, claim_of(memory)
    for sentence in sorted(denied, key=len, reverse=True):
        if sentence not in content or sentence not in claim:
            return None
        content, claim = _cut(content, sentence), _cut(claim, sentence)
    if not content_words(claim):
        return None
    metadata = {**memory.metadata, CLAIM: claim} if CLAIM in memory.metadata else memory.metadata
    return memory.evolve(content=content, metadata=metadata)


def _cut(text: str, sentence: str) -> str:
    """``text`` without the first occurrence of ``sentence``, spaces closed up."""
    before, _, after = text.partition(sentence)
    return f"{before.rstrip()} {after.lstrip()}".strip()


def _first_known(*values: int | None) -> int:
    return next(v for v in values if v is not None)
