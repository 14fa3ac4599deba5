"""A memory's claims: bounded, short, and paired only where the judge could find a conflict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streams.engine.judge import judge_contradiction
from streams.engine.judge.claims import (
    MAX_CLAIM_CHARS,
    MAX_CLAIMS,
    claims,
    may_contradict,
    sentences,
    tells_a_change,
)
from streams.engine.rules.contradictions import judged_claims

JUDGE_DATA = Path(__file__).parents[4] / "bench" / "judge_data"


def test_a_text_is_split_into_sentences_but_not_after_an_abbreviation_or_initial() -> None:
    text = "Dr. Okafor moved to Leeds. J. Smith works at Acme!\nIs that right? Yes."
    assert sentences(text) == [
        "Dr. Okafor moved to Leeds.",
        "J. Smith works at Acme!",
        "Is that right?",
        "Yes.",
    ]


def test_a_question_and_a_sentence_about_nothing_are_no_claims() -> None:
    found = claims("Where do you live? It is raining. Ana lives in Oslo.")
    assert [claim.text for claim in found] == ["Ana lives in Oslo."]


def test_a_long_text_keeps_a_bounded_number_of_claims_attributes_first() -> None:
    filler = " ".join(f"Ana reads book number {i} slowly." for i in range(20))
    text = f"{filler} Ana's phone number is 555-0101."
    found = claims(text)
    assert len(found) <= MAX_CLAIMS
    assert "Ana's phone number is 555-0101." not in [c.text for c in found]  # past the read
    short = claims("Ana reads slowly. Ana likes tea. Ana's phone number is 555-0101.")
    assert short[-1].text == "Ana's phone number is 555-0101."


def test_a_sentence_longer_than_a_claim_is_no_claim() -> None:
    long_sentence = "Ana lives in " + ", ".join(["Oslo"] * (MAX_CLAIM_CHARS // 5)) + "."
    assert claims(long_sentence) == ()


def test_claims_about_different_subjects_are_not_paired() -> None:
    (ana,) = claims("Ana lives in Oslo.")
    (ben,) = claims("Ben lives in Bergen.")
    (ana_again,) = claims("Ana lives in Paris.")
    assert not may_contradict(ana, ben)
    assert may_contradict(ana, ana_again)


def test_a_change_reaches_a_statement_about_what_its_subject_owns() -> None:
    (change,) = claims("I switched to GCP.")
    (owned,) = claims("My cloud provider is AWS.")
    assert may_contradict(change, owned)


def test_a_long_answer_contradicts_through_its_one_conflicting_claim() -> None:
    answer = (
        "Here is the plan for the week. You asked about the trip. "
        "The offsite is in Lisbon. The agenda has four sessions."
    )
    verdict, denied, _ = judged_claims(
        judge_contradiction, claims(answer), claims("The offsite is in Porto."), 0.7
    )
    assert verdict.contradicts and denied == {"The offsite is in Lisbon."}
    assert "lisbon" in verdict.explanation and "porto" in verdict.explanation


def test_unrelated_sentences_of_two_long_texts_raise_no_alarm() -> None:
    first = "The rate is affected by several factors. Kenta does not have the energy for anything."
    second = "The report is due on Friday. Kenta has the list now."
    verdict, denied, _ = judged_claims(judge_contradiction, claims(first), claims(second), 0.7)
    assert not verdict.contradicts and not denied


@pytest.mark.parametrize("split", ["dev", "heldout", "heldout_updates"])
def test_every_pair_the_judge_finds_contradictory_is_paired_by_claims(split: str) -> None:
    """On the judge's labelled sets, claims pair every contradiction the judge finds: judging
    claims loses none of them."""
    missed = []
    for line in (JUDGE_DATA / f"{split}.jsonl").read_text().splitlines():
        pair = json.loads(line)
        if not judge_contradiction(pair["first"], pair["second"]).contradicts:
            continue
        first, second = claims(pair["first"]), claims(pair["second"])
        if not any(may_contradict(a, b) for a in first for b in second):
            missed.append((pair["first"], pair["second"]))
    assert missed == []


@pytest.mark.parametrize("reply", ["No, I haven't.", "Yes, we have.", "I haven't!"])
def test_an_elliptical_have_is_no_claim_and_denies_nothing(reply: str) -> None:
    """ "No, I haven't." leaves its verb out ("checked the hotel"): read as possession it
    denied every "I have …" of the user (RealMem: "I still have more", "I have the list")."""
    assert claims(reply) == ()
    assert not judge_contradiction(reply, "I still have more.").contradicts
    assert judge_contradiction("I don't have a car.", "I have a car.").contradicts


@pytest.mark.parametrize(
    "fragment", ["be a developer.", "Show me the plan.", "Please, just show me the full draft now."]
)
def test_a_clause_without_a_subject_is_no_claim(fragment: str) -> None:
    """A fragment or a request says nothing about anyone: read as a claim, "be a developer."
    (a to-do item's tail) was the user's occupation and took "I'm really glad we added Mount
    Cook in there." out of an observation (RealMem, Lin_Wanyu)."""
    assert claims(fragment) == ()
    assert claims("Moved to Berlin last week.")  # a subject left out is still the speaker


@pytest.mark.parametrize(
    "sentence",
    [
        "I moved to Boston last month.",
        "Caroline moved to Boston last month (April 2023), finally out of her parents' place.",
        "My sister moved to Tokyo in 2021.",
        "We relocated to Leeds.",
    ],
)
def test_a_move_to_a_new_place_is_an_event(sentence: str) -> None:
    assert tells_a_change(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "I live in Boston.",
        "I'm in Chicago now.",
        "My son is 6 now.",
        "Standup moved to 9:15.",  # a thing's new time: the next move replaces it
        "We switched to Zed.",  # what is used: the next switch corrects it
        "The launch slipped to April 24th.",
        "Book club moved to Fridays.",
        "I didn't move to Boston after all.",
        "I'm moving to Chicago next month.",  # a plan
    ],
)
def test_a_state_a_new_time_a_denial_or_a_plan_is_no_event(sentence: str) -> None:
    assert not tells_a_change(sentence)
