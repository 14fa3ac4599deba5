"""``attribute_keys``: the (subject, single-valued attribute) keys a statement makes a claim
about, which the engine indexes facts by to find the fact a correction corrects."""

from __future__ import annotations

from collections import defaultdict

import pytest

from streams.engine.judge import attribute_keys, judge_contradiction
from tests.conversations import (
    AGENT_ACKNOWLEDGEMENTS,
    AGENT_DEFERRALS,
    AGENT_FILLER,
    USER_FILLER,
    long_conversations,
)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Bruno's phone number is +1 (299) 751-7349.", "bruno|phone number"),
        ("Bruno has a new phone number: 609-674-2407.", "bruno|phone number"),
        ("The Cobalt launch moved to November 15.", "cobalt launch|date"),
        ("Just a heads up, the Cobalt launch is scheduled for December 19.", "cobalt launch|date"),
        ("I switched to Zed now, it is my main editor.", "user|main editor"),
        ("I've been using Helix as my main editor lately.", "user|main editor"),
        ("So the budget for the Nimbus review ended up at €29,500.", "nimbus review|budget"),
        ("My sister Alice lives in Lisbon.", "alice|live in"),
        ("Pia is divorced.", "pia|category:relationship status"),
    ],
)
def test_given_a_statement_of_a_single_valued_attribute_when_keyed_then_its_key_is_named(
    text: str, key: str
) -> None:
    """Given a statement giving a single-valued attribute a value, when its keys are read, then
    "<subject>|<attribute>" is among them, normalised as the judge compares subjects."""
    assert key in attribute_keys(text)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (
            "Just a heads up, the Cobalt launch is scheduled for December 19.",
            "The Cobalt launch moved to November 15.",
        ),
        (
            "Bruno's phone number is +1 (299) 751-7349.",
            "Bruno has a new phone number: 609-674-2407.",
        ),
        (
            "So the budget for the Nimbus review ended up at €29,500.",
            "The budget for the Nimbus review is now €34,500.",
        ),
        (
            "My weekly one-on-one with Dario is at 2pm on Tuesdays.",
            "My one-on-one with Dario is at 4pm on Wednesdays now.",
        ),
        (
            "I've been using Helix as my main editor lately.",
            "I switched to Zed now, it is my main editor.",
        ),
        ("I switched to IntelliJ last week.", "I switched to VS Code now, it is my main editor."),
        ("The wifi password is sunflower42.", "The wifi password was changed to tulip77."),
        ("Marco is vegetarian.", "Marco eats meat."),
        ("My neighbour Tariq lives in Osaka.", "Tariq lives in Montreal now."),
    ],
)
def test_given_a_correction_pair_when_keyed_then_both_statements_share_a_key(
    first: str, second: str
) -> None:
    """Given a statement and the later statement that corrects its value, when both are keyed,
    then they share a key (and the judge does call them contradictory)."""
    assert judge_contradiction(first, second).contradicts
    assert attribute_keys(first) & attribute_keys(second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Bruno's phone number is 415-555-0199.", "Bruno's email is bruno@example.com."),
        ("Bruno's phone number is 415-555-0199.", "Ana's phone number is 415-555-0142."),
        ("The Cobalt launch moved to November 15.", "The Nimbus launch moved to November 15."),
        ("I switched to Zed now, it is my main editor.", "My main browser is Firefox."),
        ("My weekly one-on-one with Dario is at 2pm.", "My weekly one-on-one with Sam is at 2pm."),
    ],
)
def test_given_statements_about_other_attributes_when_keyed_then_they_share_no_key(
    first: str, second: str
) -> None:
    """Given two statements about another subject or another attribute, when keyed, then they
    share no key."""
    assert not attribute_keys(first) & attribute_keys(second)


@pytest.mark.parametrize(
    "text",
    [
        *USER_FILLER,
        *AGENT_FILLER,
        *AGENT_ACKNOWLEDGEMENTS,
        *AGENT_DEFERRALS,
        "What's Bruno's number again?",
        "When is the Cobalt launch?",
        "I speak French and German.",
        "I don't like jazz.",
        "I lived in Toronto in 2015.",
        "",
    ],
)
def test_given_a_statement_of_no_single_valued_attribute_when_keyed_then_it_has_no_keys(
    text: str,
) -> None:
    """Given chit-chat, a question, a multi-valued relation, a denial or a person's past, when
    keyed, then there are no keys."""
    assert attribute_keys(text) == frozenset()


def test_given_the_same_text_when_keyed_twice_then_the_answer_is_cached_and_equal() -> None:
    """Given one statement, when keyed twice, then the two answers are the same frozenset (the
    function is pure, so it is memoised)."""
    text = "Bruno's phone number is +1 (299) 751-7349."

    first, second = attribute_keys(text), attribute_keys(text)

    assert isinstance(first, frozenset) and first == second
    assert attribute_keys.cache_info().hits >= 1
    assert first and all(isinstance(key, str) and "|" in key for key in first)


def _workload_texts() -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    workload = long_conversations(users=3, sessions_per_user=25, seed=1)
    contents = {
        event.payload.memory.memory_id: event.payload.memory.content for event in workload.events
    }
    facts = [
        (fact.user_id, fact.memory_id, fact.corrected_by_memory_id or "") for fact in workload.facts
    ]
    return contents, facts


def test_given_the_workload_corrections_when_keyed_then_almost_all_share_a_key() -> None:
    """Given every fact of the long-conversation workload and the turn that corrected it, when
    both are keyed, then at least 95 % of the pairs share a key."""
    contents, facts = _workload_texts()
    pairs = [(contents[stated], contents[corrected]) for _, stated, corrected in facts if corrected]

    shared = sum(bool(attribute_keys(a) & attribute_keys(b)) for a, b in pairs)

    assert len(pairs) >= 20
    assert shared >= 0.95 * len(pairs)


def test_given_the_workload_facts_when_keyed_then_keys_are_specific() -> None:
    """Given every turn of the long-conversation workload, when keyed per user, then a key
    holds few memories on average (a fact and its correction, rarely more), and only turns
    that state a fact have keys."""
    contents, facts = _workload_texts()
    users = {memory_id: user for user, memory_id, _ in facts}
    fact_turns = {memory_id for _, memory_id, _ in facts} | {c for _, _, c in facts if c}
    per_key: dict[tuple[str, str], set[str]] = defaultdict(set)
    for memory_id, text in contents.items():
        for key in attribute_keys(text):
            per_key[(memory_id.split("-s")[0], key)].add(memory_id)

    keyed_turns = set().union(*per_key.values())
    mean = sum(len(ids) for ids in per_key.values()) / len(per_key)

    assert mean <= 1.5
    assert keyed_turns <= fact_turns
    assert users  # the workload states facts


@pytest.mark.parametrize(
    ("stated", "update", "key"),
    [
        ("Tom is the team lead.", "Ana took over as team lead.", "team lead|holder"),
        (
            "We use Mailchimp for newsletters.",
            "We moved to Brevo for newsletters.",
            "we|for newsletter",
        ),
        ("Our shop is on the ground floor.", "Our shop is on the first floor now.", "shop|be on"),
    ],
)
def test_given_a_fact_and_its_update_as_people_state_it_when_keyed_then_they_share_a_key(
    stated: str, update: str, key: str
) -> None:
    """Given a role's holder and its new holder, what a supplier is for and the new supplier,
    or a place and the place it is "now", when keyed, then both statements carry one key."""
    assert key in attribute_keys(stated) & attribute_keys(update)
