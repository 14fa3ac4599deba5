"""The built-in contradiction judge (docs/consolidation.md, 'The contradiction judge'; seeds 001 and
003): the cues it must catch, the false alarms it must refuse, and the properties every judgement
keeps."""

from __future__ import annotations

import ast
import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streams.engine import judge as judge_module
from streams.engine.judge import Judgement, judge_contradiction

# --- required contradictions ----------------------------------------------------------------


def test_given_two_databases_for_a_project_when_judged_then_the_values_conflict() -> None:
    # Given / When (seed 001's scenario "Detect contradictions")
    verdict = judge_contradiction("Project uses PostgreSQL", "Project uses MySQL")

    # Then
    assert verdict.contradicts
    assert verdict.cue == "conflicting_value"
    assert verdict.confidence > 0.7
    assert "'project uses'" in verdict.explanation
    assert "postgresql" in verdict.explanation and "mysql" in verdict.explanation


def test_given_a_preference_and_its_negation_when_judged_then_the_cue_is_negation() -> None:
    # Given / When
    verdict = judge_contradiction("I like spicy food", "I don't like spicy food")

    # Then
    assert verdict.contradicts
    assert verdict.cue == "negation"
    assert verdict.confidence > 0.7
    assert "'not'" in verdict.explanation


def test_given_one_meeting_at_two_times_when_judged_then_the_times_conflict() -> None:
    # Given / When
    verdict = judge_contradiction("standup is at 9am", "standup is at 10am")

    # Then
    assert verdict.contradicts
    assert verdict.cue == "conflicting_value"
    assert "09:00" in verdict.explanation and "10:00" in verdict.explanation


def test_given_enabled_and_disabled_when_judged_then_the_cue_is_antonym() -> None:
    # Given / When
    verdict = judge_contradiction("The API is enabled", "The API is disabled")

    # Then
    assert verdict.contradicts
    assert verdict.cue == "antonym"
    assert "'enabled' vs 'disabled'" in verdict.explanation


def test_given_one_birthday_on_two_days_when_judged_then_the_dates_conflict() -> None:
    # Given / When
    verdict = judge_contradiction("User's birthday is on March 3", "User's birthday is on March 5")

    # Then
    assert verdict.contradicts
    assert verdict.cue == "conflicting_value"
    assert "'march 3' vs 'march 5'" in verdict.explanation


def test_given_a_habit_and_never_when_judged_then_the_cue_is_negation() -> None:
    # Given / When
    verdict = judge_contradiction(
        "The team deploys on Fridays", "The team never deploys on Fridays"
    )

    # Then
    assert verdict.contradicts
    assert verdict.cue == "negation"
    assert "'never'" in verdict.explanation


# --- required non-contradictions ------------------------------------------------------------


def test_given_a_city_and_its_country_when_judged_then_part_of_is_no_contradiction() -> None:
    # Given / When
    verdict = judge_contradiction("User lives in Berlin", "User lives in Germany")

    # Then
    assert not verdict.contradicts
    assert verdict.cue == "none"
    assert "'berlin' is part of 'germany'" in verdict.explanation


def test_given_unrelated_facts_when_judged_then_confidence_is_low() -> None:
    # Given / When
    verdict = judge_contradiction("User likes tea", "Project uses MySQL")

    # Then
    assert not verdict.contradicts
    assert verdict.cue == "none"
    assert verdict.confidence <= 0.1


def test_given_identical_statements_when_judged_then_they_do_not_contradict() -> None:
    # Given / When
    verdict = judge_contradiction("Project uses PostgreSQL", "Project uses PostgreSQL")

    # Then
    assert not verdict.contradicts
    assert verdict.cue == "none"
    assert verdict.confidence == 0.0


def test_given_synonymous_values_when_judged_then_they_do_not_contradict() -> None:
    # Given / When
    verdict = judge_contradiction("Project uses Postgres", "Project uses PostgreSQL")

    # Then
    assert not verdict.contradicts
    assert verdict.cue == "none"


def test_given_two_liked_drinks_when_judged_then_a_multi_valued_preference_holds_both() -> None:
    # Given / When
    verdict = judge_contradiction("I like tea", "I like coffee")

    # Then
    assert not verdict.contradicts
    assert verdict.cue == "none"
    assert "can hold both" in verdict.explanation


def test_given_rest_and_restful_when_judged_then_the_paraphrase_does_not_contradict() -> None:
    # Given / When (seed 001's duplicate pair "API uses REST" / "The API is RESTful")
    verdict = judge_contradiction("The API uses REST", "The API is RESTful")

    # Then
    assert not verdict.contradicts
    assert verdict.cue == "none"


# --- more cases on both sides ---------------------------------------------------------------

CONTRADICTIONS = [
    # (first, second, cue)
    # a comma before a name and its verb starts a clause of its own
    (
        "Rebecca drives a Mini Cooper",
        "Rebecca sold the Mini Cooper, Rebecca drives a Ford Fiesta now",
        "conflicting_value",
    ),
    (
        "Samuel works as a software developer now",
        "big change, Samuel switched careers, Samuel is a paramedic these days",
        "conflicting_value",
    ),
    ("User lives in Berlin", "User lives in Paris", "conflicting_value"),
    ("Project is written in Java", "Project is written in JavaScript", "conflicting_value"),
    ("User's favorite editor is Vim", "User's favourite editor is Emacs", "conflicting_value"),
    ("The service runs on port 8080", "The service runs on port 8081", "conflicting_value"),
    ("User has 2 cats", "User has three cats", "conflicting_value"),
    ("The meeting is at 3pm", "The meeting is at 15:30", "conflicting_value"),
    ("Project uses Python 3.11", "Project uses Python 3.12", "conflicting_value"),
    ("Project is hosted on AWS", "Project is hosted on Google Cloud", "conflicting_value"),
    ("User works at Google", "User works at Microsoft", "conflicting_value"),
    ("User's manager is Alice", "User's manager is Bob", "conflicting_value"),
    ("User's favorite food is pizza", "User's favorite food is sushi", "conflicting_value"),
    # naming a person or thing of one value: a name, a determiner or a role
    ("My husband is John.", "My husband is Mark.", "conflicting_value"),
    ("My job is a nurse.", "My job is a teacher.", "conflicting_value"),
    ("My role is head of sales.", "My role is marketing director.", "conflicting_value"),
    ("Priya is my manager.", "My manager is Daniel now, after the reorg.", "conflicting_value"),
    ("The release is due on 2024-03-01", "The release is due on 2024-04-01", "conflicting_value"),
    ("Standup is on Monday", "Standup is on Tuesday", "conflicting_value"),
    # a group that meets on a day is on that day: one schedule, said two ways
    ("Our book club meets on Mondays", "Book club is on Fridays now", "conflicting_value"),
    ("Project uses PostgreSQL 16", "Project uses MySQL 8", "conflicting_value"),
    ("User prefers tabs", "User prefers spaces", "conflicting_value"),
    ("User is using PostgreSQL", "User uses MySQL", "conflicting_value"),
    ("My birthday is on the 3rd of March", "User's birthday is on March 5th", "conflicting_value"),
    ("I live in Berlin", "User lives in Paris", "conflicting_value"),
    ("User likes spicy food", "User dislikes spicy food", "antonym"),
    ("Dark mode is on", "Dark mode is off", "antonym"),
    ("The team always deploys on Fridays", "The team never deploys on Fridays", "antonym"),
    ("User prefers dark mode", "User prefers light mode", "antonym"),
    ("Tests pass", "Tests fail", "antonym"),
    ("User runs tests before committing", "User runs tests after committing", "antonym"),
    ("Project uses Postgres", "Project does not use PostgreSQL", "negation"),
    ("User lives in Berlin", "User doesn't live in Germany", "negation"),
    ("I can't swim", "I can swim", "negation"),
    ("User has no pets", "User has pets", "negation"),
    ("The API isn't enabled anymore", "The API is enabled", "negation"),
    # the rules for real chat below leave these standing
    ("I don't understand the plan", "I understand the plan", "negation"),  # the same thought
    ("We have two cars now", "We have three cars", "conflicting_value"),  # counts still do
    ("Now I work at Umbrella", "I work at Hooli", "conflicting_value"),
    # what a user asks an assistant to keep is a statement after its request
    ("Please note that I am vegetarian.", "I am not vegetarian anymore.", "negation"),
    ("Please remember my son is 7.", "My son is 8.", "conflicting_value"),
    (
        "Keep in mind that my budget is 500 dollars.",
        "My budget is 800 dollars.",
        "conflicting_value",
    ),
]

NON_CONTRADICTIONS = [
    # what a person or thing of one value is like, not which it is (an adjective, a participle)
    ("My husband is supportive.", "My husband is busy.", "described"),
    ("My job is boring.", "My job is stressful.", "described"),
    ("My coach is tough.", "My coach is patient.", "described"),
    ("The deadline is tight.", "The deadline is Friday.", "described, then named"),
    ("My hometown is small.", "My hometown is Austin.", "described, then named"),
    ("This urgent project is really draining me.", "This urgent project is demanding.", "-ing"),
    # (first, second, why)
    ("I met Ana at the party", "I met Ana, Ben and Carl at the party", "a list of names"),
    ("I meet Sarah on Tuesdays", "I meet Tom on Fridays", "meeting people is no schedule"),
    (
        "Evan is an architect these days",
        "Evan loved it, so that's where Evan's head is at",
        "a clause as the value: no value of the subject",
    ),
    ("User lives in Munich", "User lives in Bavaria", "part of a region"),
    ("User uses Ubuntu", "User uses Linux", "a Linux distribution is Linux"),
    ("Project uses K8s", "Project uses Kubernetes", "synonyms"),
    ("Project uses PostgreSQL", "Project uses PostgreSQL 16", "one value refines the other"),
    ("Project uses Python 3", "Project uses Python 3.11", "version refinement"),
    ("Project uses PostgreSQL", "Project uses Python", "different categories"),
    ("User speaks English", "User speaks French", "speaking is multi-valued"),
    ("User likes PostgreSQL", "User likes MySQL", "liking is multi-valued"),
    ("User is tired", "User is happy", "states are not exclusive"),
    ("User has 2 cats", "User has 3 dogs", "different things counted"),
    ("Standup is at 9am", "Standup is at 9:00", "the same time written twice"),
    ("User has two cats", "User has 2 cats", "the same number written twice"),
    ("User likes tea", "User really likes tea", "an intensifier"),
    ("The API is not disabled", "The API is enabled", "a double negative"),
    ("User does not live in Berlin", "User lives in Paris", "denies another value"),
    ("User lives in Germany", "User does not live in Berlin", "denies a part, not the whole"),
    ("Project does not use MySQL", "Project does not use PostgreSQL", "both deny"),
    ("I like spicy food", "I don't like sweet food", "denies another value"),
    ("User lived in Berlin", "User lives in Paris", "different times"),
    ("The API was enabled", "The API is disabled", "different times"),
    ("User works at Google", "User lives in Paris", "different attributes"),
    ("The team deploys on Fridays", "The team deploys on Mondays", "deploy days can be several"),
    ("Standup is at 9am", "Standup is at the office", "a time and a place"),
    ("User lives in Berlin, Germany", "User lives in Berlin", "one value contains the other"),
    ("", "", "nothing to compare"),
    # real chat (RealMem, bench/judge_data/realmem.jsonl): one feels, thinks, has several things
    ("I'm feeling a bit better now.", "I'm feeling much better now after that cold.", "feelings"),
    ("Okay, so I understand the approach now.", "I understand the difference now.", "minds"),
    (
        "I'm a beginner; I don't think I can do this.",
        "I think I'd prefer to adjust the route.",
        "different thoughts",
    ),
    ("Now we have the blueprint.", "So, we have the picture now, sharp sharp.", "possessions"),
    (
        "My guy, this is not just crazy, it's completely useless!",
        "My guy, this is not just useless, it's a complete scam!",
        "'not just X' says more than X",
    ),
    ("Now that I feel a bit safer, we should start.", "I feel a bit better.", "'now that': why"),
    (
        "I don't have time to spoon-feed you clauses.",
        "I don't have time to spoon-feed you clauses right now, nor to do the review.",
        "'nor' continues a denial",
    ),
]


@pytest.mark.parametrize(
    ("first", "second", "cue"), CONTRADICTIONS, ids=[f"{a} / {b}" for a, b, _ in CONTRADICTIONS]
)
def test_given_a_contradictory_pair_when_judged_then_it_contradicts_with_its_cue(
    first: str, second: str, cue: str
) -> None:
    # Given / When
    verdict = judge_contradiction(first, second)

    # Then
    assert verdict.contradicts, verdict.explanation
    assert verdict.cue == cue, verdict.explanation
    assert verdict.confidence > 0.7


@pytest.mark.parametrize(
    ("first", "second", "why"),
    NON_CONTRADICTIONS,
    ids=[f"{why}: {a} / {b}" for a, b, why in NON_CONTRADICTIONS],
)
def test_given_a_compatible_pair_when_judged_then_it_does_not_contradict(
    first: str, second: str, why: str
) -> None:
    # Given / When
    verdict = judge_contradiction(first, second)

    # Then
    assert not verdict.contradicts, f"{why}: {verdict.explanation}"
    assert verdict.cue == "none"
    assert verdict.confidence <= 0.7


# --- explanations ---------------------------------------------------------------------------


def test_given_a_conflict_when_judged_then_the_explanation_names_the_reason() -> None:
    # Given / When
    verdict = judge_contradiction("Project is hosted on AWS", "Project is hosted on Azure")

    # Then
    assert verdict.explanation == (
        "conflicting values for 'project is hosted on': 'aws' vs 'azure' (both name a cloud)"
    )


def test_given_a_denied_country_when_judged_then_the_explanation_names_the_negator() -> None:
    # Given / When
    verdict = judge_contradiction("User lives in Berlin", "User does not live in Germany")

    # Then
    assert verdict.cue == "negation"
    assert "'not'" in verdict.explanation
    assert "'user does not live in germany'" in verdict.explanation


def test_given_a_non_contradiction_when_judged_then_the_explanation_says_why() -> None:
    # Given / When
    verdict = judge_contradiction("Project uses Postgres", "Project uses PostgreSQL")

    # Then
    assert verdict.explanation.startswith("no contradiction: ")
    assert "'postgres' = 'postgresql'" in verdict.explanation


# --- properties -----------------------------------------------------------------------------

POOL = sorted(
    {text for a, b, _ in CONTRADICTIONS + NON_CONTRADICTIONS for text in (a, b)}
    | {
        "Project uses PostgreSQL",
        "Project uses MySQL",
        "I like spicy food",
        "I don't like spicy food",
        "standup is at 9am",
        "standup is at 10am",
        "The API is enabled",
        "The API is disabled",
        "User lives in Germany",
        "I like tea",
        "I like coffee",
        "The API uses REST",
        "The API is RESTful",
    }
)


def _keeps_the_invariants(verdict: Judgement) -> None:
    assert 0.0 <= verdict.confidence <= 1.0
    assert verdict.cue in {"negation", "antonym", "conflicting_value", "none"}
    assert verdict.explanation
    if verdict.contradicts:
        assert verdict.confidence > 0.7 and verdict.cue != "none"
    else:
        assert verdict.cue == "none" or verdict.confidence <= 0.7


def test_given_every_known_pair_when_judged_both_ways_then_the_verdict_is_symmetric() -> None:
    # Given
    pairs = list(itertools.combinations(POOL, 2))

    # When
    asymmetric = [
        (a, b)
        for a, b in pairs
        if judge_contradiction(a, b).contradicts != judge_contradiction(b, a).contradicts
    ]

    # Then
    assert asymmetric == []


def test_given_every_known_pair_when_judged_then_confidence_and_cue_agree() -> None:
    # Given / When / Then
    for a, b in itertools.product(POOL, repeat=2):
        _keeps_the_invariants(judge_contradiction(a, b))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_given_arbitrary_text_when_judged_then_the_invariants_and_symmetry_hold(
    first: str, second: str
) -> None:
    # Given / When
    verdict, reverse = judge_contradiction(first, second), judge_contradiction(second, first)

    # Then
    _keeps_the_invariants(verdict)
    assert verdict.contradicts == reverse.contradicts


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(POOL), st.sampled_from(POOL))
def test_given_the_same_pair_twice_when_judged_then_the_judgement_is_identical(
    first: str, second: str
) -> None:
    # Given / When / Then (no clock, no randomness)
    assert judge_contradiction(first, second) == judge_contradiction(first, second)


def test_given_a_statement_when_judged_against_itself_then_it_never_contradicts() -> None:
    # Given / When / Then
    for text in POOL:
        assert not judge_contradiction(text, text).contradicts, text


# --- the value type and the module's purity -------------------------------------------------


def test_given_a_confidence_outside_the_unit_interval_when_building_then_it_is_refused() -> None:
    # Given / When / Then
    with pytest.raises(ValueError, match="confidence"):
        Judgement(True, 1.5, "negation", "x")


def test_given_an_unknown_cue_when_building_a_judgement_then_it_is_refused() -> None:
    # Given / When / Then
    with pytest.raises(ValueError, match="cue"):
        Judgement(False, 0.1, "vibes", "x")


def test_given_the_judge_module_when_its_imports_are_read_then_only_pure_stdlib_is_used() -> None:
    # Given (the judge is a package: every module of it is read; its modules import each other
    # relatively and read their JSON word lists with importlib.resources and json)
    sources = sorted(Path(judge_module.__file__).parent.glob("*.py"))

    # When
    imported = {
        name.split(".")[0]
        for source in sources
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8")))
        if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and node.level == 0)
        for name in (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
        )
    }

    # Then
    assert len(sources) > 1
    assert imported <= {
        "__future__",
        "re",
        "dataclasses",
        "difflib",
        "typing",
        "json",
        "importlib",
        "functools",  # lru_cache on attribute_keys: memoising a pure function
    }
