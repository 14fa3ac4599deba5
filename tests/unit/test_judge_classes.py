"""The contradiction judge on the classes of issue 9: how people write updates and corrections,
and the guards that keep it from raising false alarms. One behaviour per test."""

from __future__ import annotations

import pytest

from streams.engine.judge import judge_contradiction

# --- corrections ----------------------------------------------------------------------------


def test_given_a_correction_when_judged_against_the_replaced_value_then_it_contradicts() -> None:
    """Given "Correction: X, not Y" and a statement of Y, when judged, then they contradict:
    the trailing "not Y" names the value that was replaced."""
    verdict = judge_contradiction(
        "Correction: the offsite is in Lisbon, not Porto.", "The offsite is in Porto."
    )

    assert verdict.contradicts
    assert verdict.cue == "negation"
    assert "porto" in verdict.explanation


def test_given_a_correction_when_judged_against_the_new_value_then_it_agrees() -> None:
    """Given "Correction: X, not Y" and a statement of X, when judged, then there is no
    contradiction: "not Y" does not negate the whole clause."""
    verdict = judge_contradiction(
        "Correction: the offsite is in Lisbon, not Porto.", "The offsite is in Lisbon."
    )

    assert not verdict.contradicts


# --- update wording -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "update"),
    [
        ("The demo is on Tuesday.", "The demo was moved to Thursday."),
        ("The review is at 2pm.", "The review was rescheduled to 4pm."),
        ("The mobile app is owned by Team Kestrel.", "The mobile app is now owned by Team Heron."),
        ("We use Slack for chat.", "We switched from Slack to Teams."),
        ("The team lead is Sarah.", "The team lead changed to Diego."),
        ("I eat meat.", "I no longer eat meat."),
    ],
)
def test_given_an_update_when_judged_against_the_earlier_value_then_it_contradicts(
    before: str, update: str
) -> None:
    """Given a statement and an update written as a change ("was moved to", "now", "switched
    from A to B", "no longer"), when judged, then they contradict: the update is a present
    claim about the same attribute, not a past fact."""
    verdict = judge_contradiction(before, update)

    assert verdict.contradicts, verdict.explanation


def test_given_an_update_when_judged_against_the_new_value_then_it_agrees() -> None:
    """Given "was moved to Thursday" and "is on Thursday", when judged, then they agree."""
    verdict = judge_contradiction("The demo was moved to Thursday.", "The demo is on Thursday.")

    assert not verdict.contradicts


# --- preference verbs -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("liked", "disliked"),
    [
        ("I love jazz.", "I can't stand jazz."),
        ("I'm a big fan of horror films.", "I dislike horror films."),
        ("Meera enjoys board games.", "Meera hates board games."),
        ("I prefer tea.", "I don't like tea."),
    ],
)
def test_given_two_preference_verbs_of_opposite_polarity_when_judged_then_they_contradict(
    liked: str, disliked: str
) -> None:
    """Given like, love, enjoy, prefer or "be a fan of" against dislike, hate or "can't
    stand" for one thing, when judged, then they contradict: one preference relation."""
    verdict = judge_contradiction(liked, disliked)

    assert verdict.contradicts, verdict.explanation


def test_given_two_positive_preference_verbs_when_judged_then_they_agree() -> None:
    """Given "I adore opera" and "I enjoy opera", when judged, then they say the same."""
    verdict = judge_contradiction("I adore opera.", "I enjoy opera.")

    assert not verdict.contradicts


# --- auxiliaries ----------------------------------------------------------------------------


def test_given_a_perfect_with_never_when_judged_against_the_habit_then_it_contradicts() -> None:
    """Given "I've never used Terraform" and "I use Terraform daily", when judged, then they
    contradict: the relation is "use" ("have" is the auxiliary), and "never" covers now."""
    verdict = judge_contradiction("I've never used Terraform.", "I use Terraform daily.")

    assert verdict.contradicts
    assert verdict.cue == "negation"
    assert "never" in verdict.explanation


def test_given_a_perfect_with_never_when_judged_against_another_value_then_it_agrees() -> None:
    """Given "I've never used Terraform" and "I've used Pulumi", when judged, then they agree."""
    verdict = judge_contradiction("I've never used Terraform.", "I've used Pulumi.")

    assert not verdict.contradicts


# --- single-valued attributes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Jamal is a software engineer.", "Jamal works as a data scientist."),  # job
        ("My role is head of sales.", "My role is marketing director."),  # role
        ("I'm working on the Orion project.", "My current project is Helios."),  # project
        ("The gala is at the Ritz.", "The gala is at the Savoy."),  # venue
        ("The retro is scheduled for Wednesday.", "The retro is scheduled for Friday."),  # when
        ("This package uses the MIT license.", "This package is BSD-licensed."),  # licence
        ("Our email vendor is Mailchimp.", "Our email vendor is SendGrid."),  # vendor
        ("Our cloud provider is AWS.", "Our cloud provider is Azure."),  # provider
        ("Tomas is married.", "Tomas is divorced."),  # relationship status
        ("Elif works remotely.", "Elif works on-site."),  # work arrangement
        ("Grace is vegan.", "Grace is keto."),  # diet
    ],
)
def test_given_a_single_valued_attribute_when_two_values_are_stated_then_they_conflict(
    first: str, second: str
) -> None:
    """Given two values of an attribute that holds one value at a time (job, role, current
    project, venue, schedule, licence, vendor, provider, relationship status, work
    arrangement, diet), when judged, then they contradict."""
    verdict = judge_contradiction(first, second)

    assert verdict.contradicts, verdict.explanation
    assert verdict.cue == "conflicting_value"


def test_given_a_single_valued_attribute_when_one_value_refines_the_other_then_it_agrees() -> None:
    """Given "Grace is vegan" and "Grace is vegetarian", when judged, then they agree: a vegan
    diet is a vegetarian one."""
    verdict = judge_contradiction("Grace is vegan.", "Grace is vegetarian.")

    assert not verdict.contradicts


# --- exclusive adjectives and verb antonyms -------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Wei is a full-time student.", "Wei is a part-time student."),
        ("The manager approved my leave request.", "The manager rejected my leave request."),
        ("The Slack channel is public.", "The Slack channel is private."),
        ("Ivan is vegetarian.", "Ivan eats meat."),
        ("The pool is heated.", "The pool is unheated."),
    ],
)
def test_given_exclusive_adjectives_or_opposite_verbs_when_judged_then_they_contradict(
    first: str, second: str
) -> None:
    """Given full-time / part-time, approves / rejects, public / private, vegetarian / eats
    meat, heated / unheated said of one subject, when judged, then they contradict."""
    verdict = judge_contradiction(first, second)

    assert verdict.contradicts, verdict.explanation


def test_given_a_diet_and_a_food_it_allows_when_judged_then_they_agree() -> None:
    """Given "Ivan is vegetarian" and "Ivan eats cheese", when judged, then they agree."""
    verdict = judge_contradiction("Ivan is vegetarian.", "Ivan eats cheese.")

    assert not verdict.contradicts


# --- quantified negation over a category ----------------------------------------------------


@pytest.mark.parametrize(
    ("denial", "member"),
    [
        ("The user has no children.", "The user's son starts school in May."),
        ("I don't have any siblings.", "My sister is a lawyer."),
        ("We don't use any databases.", "We use PostgreSQL."),
        ("I don't drink alcohol.", "I drink wine with dinner."),
        ("I don't own any pets.", "I walk my dog every morning."),
    ],
)
def test_given_a_denied_category_when_a_member_is_stated_then_they_contradict(
    denial: str, member: str
) -> None:
    """Given a negated category ("has no children", "doesn't use any databases") and a member
    of it (a son, PostgreSQL), when judged, then they contradict: the category covers it."""
    verdict = judge_contradiction(denial, member)

    assert verdict.contradicts, verdict.explanation
    assert verdict.cue == "negation"


def test_given_a_denied_category_when_someone_elses_member_is_stated_then_it_agrees() -> None:
    """Given "The user has no children" and "The user's nephew starts school", when judged,
    then they agree: a nephew is not a child of the user."""
    verdict = judge_contradiction(
        "The user has no children.", "The user's nephew starts school in May."
    )

    assert not verdict.contradicts


# --- several slots changing together --------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Ingrid lives in Oslo and works at Equinor.", "Ingrid lives in Bergen and works at DNB."),
        ("The offsite is in Porto in June.", "The offsite is in Madrid in July."),
        ("The concert is on Friday at 8pm.", "The concert is on Saturday at 9pm."),
    ],
)
def test_given_several_slots_changed_together_when_judged_then_they_contradict(
    first: str, second: str
) -> None:
    """Given two statements whose slots all change ("lives in Oslo and works at Equinor" /
    "lives in Bergen and works at DNB"), when judged, then they contradict."""
    verdict = judge_contradiction(first, second)

    assert verdict.contradicts, verdict.explanation


def test_given_one_slot_kept_and_one_added_when_judged_then_it_agrees() -> None:
    """Given "lives in Oslo and works at Equinor" and "lives in Oslo and plays tennis", when
    judged, then they agree."""
    verdict = judge_contradiction(
        "Ingrid lives in Oslo and works at Equinor.", "Ingrid lives in Oslo and plays tennis."
    )

    assert not verdict.contradicts


# --- quantities, durations and dates --------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The budget is 2 million.", "The budget is 500 thousand."),
        ("We meet every 2 weeks.", "We meet every 10 days."),
        ("The launch is on the 5th of June.", "The launch is on July 9."),
        ("The contract runs for 18 months.", "The contract runs for two years."),
        ("The bag weighs 2 kg.", "The bag weighs 5 lbs."),
    ],
)
def test_given_different_amounts_in_different_units_when_judged_then_they_contradict(
    first: str, second: str
) -> None:
    """Given two amounts, periods or dates written in different units or forms that differ,
    when judged, then they contradict."""
    verdict = judge_contradiction(first, second)

    assert verdict.contradicts, verdict.explanation
    assert verdict.cue == "conflicting_value"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The contract runs for 18 months.", "The contract runs for a year and a half."),
        ("The budget is 2 million.", "The budget is 2,000,000."),
        ("We meet every 2 weeks.", "We meet every 14 days."),
        ("The launch is on the 5th of June.", "The launch is on June 5."),
        ("The salary is $85k.", "The salary is $85,000."),
    ],
)
def test_given_one_amount_in_two_units_when_judged_then_it_agrees(first: str, second: str) -> None:
    """Given one amount, period or date written in two units or forms, when judged, then
    there is no contradiction."""
    verdict = judge_contradiction(first, second)

    assert not verdict.contradicts, verdict.explanation


# --- guards ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "why"),
    [
        ("I read thrillers.", "I read thrillers and poetry.", "refinement"),
        ("Sven is a lawyer.", "Sven is a lawyer specialising in tax.", "elaboration"),
        ("Ayesha lives in Lahore.", "Ayesha lives in Pakistan.", "part of"),
        ("I speak German.", "I speak Japanese.", "multi-valued"),
        ("Anna lives in Riga.", "Marta lives in Tallinn.", "different subject"),
        ("I lived in Toronto in 2015.", "I live in Vancouver.", "different time"),
        ("I prefer tea in the evening.", "I prefer coffee in the morning.", "different context"),
        ("The store opens at 9am.", "The store opens at 11am on Sundays.", "a narrower context"),
    ],
)
def test_given_a_compatible_pair_of_a_guarded_kind_when_judged_then_it_does_not_contradict(
    first: str, second: str, why: str
) -> None:
    """Given an elaboration, a refinement, a part, a multi-valued attribute, another subject,
    another time or another context, when judged, then there is no false alarm."""
    verdict = judge_contradiction(first, second)

    assert not verdict.contradicts, f"{why}: {verdict.explanation}"
    assert verdict.confidence <= 0.7
