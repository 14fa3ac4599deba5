"""Two people in one conversation each speak of their own things (pure): "we're in Lisbon now"
and, from someone else, "we're in Glasgow now" are two homes, not a correction. What one says
of the other, by name, still meets what the other says of themselves."""

from __future__ import annotations

import pytest

from streams.engine import ledger
from streams.engine.judge.claims import claims, owners, same_owner
from streams.engine.oracle import replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from tests.scenarios import DATABASE_TOPIC, DAY, NOW, Scenario, with_similarity

NAMES = frozenset({"priyanka", "samuel"})


def _owners(text: str, speaker: str) -> frozenset[str | None]:
    [claim] = claims(text)
    return owners(claim, speaker, NAMES)


@pytest.mark.parametrize(
    ("text", "speaker", "expected"),
    [
        ("We're in Lisbon now.", "priyanka", {"priyanka"}),  # the first person: the speaker
        ("Our book club meets on Mondays.", "priyanka", {"priyanka"}),
        ("Book club is on Thursdays now.", "samuel", {"samuel"}),  # no owner named: hers
        ("Priyanka is a social worker now.", "samuel", {"priyanka"}),  # a speaker, by name
        ("Priyanka's book club is on Fridays.", "samuel", {"priyanka"}),
        ("The launch moved to Tuesday for Dev's team.", "samuel", {"samuel"}),
        ("She lives in Rome.", "samuel", {None}),  # someone the sentence does not name
    ],
)
def test_whose_a_claim_is(text: str, speaker: str, expected: set[str | None]) -> None:
    assert _owners(text, speaker) == expected


def test_claims_are_compared_when_their_owners_may_be_the_same() -> None:
    assert not same_owner(frozenset({"priyanka"}), frozenset({"samuel"}))
    assert same_owner(frozenset({"priyanka"}), frozenset({"priyanka", "samuel"}))
    assert same_owner(frozenset({None}), frozenset({"samuel"}))


def _conversation(older: tuple[str, str], newer: tuple[str, str]) -> list[object]:
    """``older`` and, a day later, ``newer`` ((speaker, what they said)), similar (0.85), then
    one cycle: the decisions."""
    s = Scenario("chat")
    for memory_id, (speaker, text), similarity, at in (
        ("old", older, 1.0, NOW - 2 * DAY),
        ("new", newer, 0.85, NOW - DAY),
    ):
        s.write(
            memory_id,
            text,
            layer="semantic",
            speaker=speaker,
            embedding=with_similarity(DATABASE_TOPIC, similarity, 1 if memory_id == "old" else 2),
            at=at,
        )
    s.consolidate()
    run = replay(s.events, EngineConfig(policy=builtin_profile("default")))
    return [d.payload for d in run.decisions]


def _contradictions(decisions: list[object]) -> list[ledger.ContradictionDetected]:
    return [d for d in decisions if isinstance(d, ledger.ContradictionDetected)]


def test_two_people_each_saying_where_they_live_now_is_no_contradiction() -> None:
    """Given Priyanka's "We're in Lisbon now." and, later, Samuel's "We're in Glasgow now.",
    when a cycle runs, then nothing is contradicted: both homes stay."""
    decisions = _conversation(
        ("Priyanka", "We're in Lisbon now."), ("Samuel", "We're in Glasgow now.")
    )
    assert _contradictions(decisions) == []


def test_one_person_moving_again_is_still_a_contradiction() -> None:
    decisions = _conversation(
        ("Priyanka", "We're in Lisbon now."), ("Priyanka", "We're in Glasgow now.")
    )
    [found] = _contradictions(decisions)
    assert (found.memory_id, found.other_memory_id) == ("new", "old")


def test_what_one_says_of_the_other_by_name_still_meets_what_the_other_says() -> None:
    """Given Samuel's "Priyanka lives in Utrecht." and, later, Priyanka's "Priyanka lives in
    Lisbon now." (how an observation writes her own "I live in Lisbon now"), then the later
    contradicts the earlier: both are about Priyanka."""
    decisions = _conversation(
        ("Samuel", "Priyanka lives in Utrecht."), ("Priyanka", "Priyanka lives in Lisbon now.")
    )
    [found] = _contradictions(decisions)
    assert (found.memory_id, found.other_memory_id) == ("new", "old")
