"""Fact terms (what a consolidated memory must keep) and seed 004's pattern-based fact and
negation extraction, in ``streams.engine.text.facts``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import streams.engine.text as text_package
from streams.engine.text.facts import (
    ExtractedFact,
    extract_facts,
    fact_terms,
    find_terms,
    full_stop_keeps_terms,
    missing_terms,
)

# --- strategies: texts made of fact-like and tricky fragments --------------------------------

FRAGMENTS = (
    "Alice",
    "New York",
    "$1,200",
    "12%",
    "3pm",
    "3 p.m.",
    "10:30",
    "March 14",
    "14 March 2026",
    "the 5th of June",
    "2026-03-04",
    "alice@example.com",
    "+1 (555) 123-4567",
    "555-123-4567",
    "https://x.example.com/a",
    "5 km",
    "3 kids",
    "AWS",
    "Monday",
    "COVID-19",
    "iPhone",
    "O'Brien",
    "Alice's",
    "-4",
    "0.30",
    "€30",
    "ok",
    "thanks",
    "the",
    "lives in",
    "I",
    "my",
    "The",
    "Where",
    "User:",
    "km",
    "%",
    "$",
    "@",
    "-",
    "'s",
)
SEPARATORS = ("", " ", " ", ", ", ". ", "? ", "; ", ",", ".", ":", "\t")
one_line = st.lists(
    st.tuples(
        st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=5)), st.sampled_from(SEPARATORS)
    ),
    max_size=12,
).map(lambda pairs: "".join(a + b for a, b in pairs).replace("\n", " "))


# --- named entities ----------------------------------------------------------------------------


def test_given_names_in_a_sentence_when_reading_its_terms_then_they_are_case_folded() -> None:
    """Given a sentence naming a person and a city, when its fact terms are read, then both
    are terms, case-folded, and the common words around them are not."""
    # Given / When
    terms = fact_terms("My sister Alice lives in Lisbon.")

    # Then
    assert terms == {"alice", "lisbon"}


def test_given_consecutive_capitalised_words_when_reading_terms_then_they_are_one_phrase() -> None:
    """Given a multi-word name, when its terms are read, then it is one term, not two."""
    # Given / When
    terms = fact_terms("I moved to New York last year.")

    # Then
    assert terms == {"new york"}


def test_given_only_sentence_starters_when_reading_terms_then_there_are_none() -> None:
    """Given chit-chat whose capitals only start sentences, when its terms are read, then
    there are none (the stop-list of sentence starters)."""
    # Given / When
    terms = fact_terms("Thanks! Sure, the plan is fine. Where were we? Also, I agree. Ok.")

    # Then
    assert terms == frozenset()


def test_given_a_starter_inside_a_sentence_when_reading_terms_then_position_does_not_matter() -> (
    None
):
    """Given the same clause at the start of a text and after a label, when their terms are
    read, then they are equal: whether a word is a name never depends on where it stands."""
    # Given
    clause = "Thanks Alice, the Guardian piece was great"

    # When
    alone, labelled = fact_terms(clause), fact_terms(f"User: ok. {clause}")

    # Then
    assert alone == labelled == {"alice", "guardian"}


@pytest.mark.parametrize(
    ("text", "term"),
    [("We deploy on AWS.", "aws"), ("My iPhone broke.", "iphone"), ("Alice's flat", "alice")],
)
def test_given_acronyms_camel_case_and_possessives_when_reading_terms_then_each_is_a_name(
    text: str, term: str
) -> None:
    """Given an acronym, a camel-case brand or a possessive, when terms are read, then the
    name is a term (a possessive without its "'s")."""
    # Given / When / Then
    assert fact_terms(text) == {term}


# --- numbers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("It costs $1,200.", "$1200"),
        ("It costs €30.", "€30"),
        ("about 1,200 of them", "1200"),
        ("a 12% rise", "12%"),
        ("a 12 percent rise", "12%"),
        ("it took 3.5 of them", "3.5"),
        ("I ran 5 km today", "5 km"),
        ("I ran 5km today", "5 km"),
        ("I have 3 kids", "3 kids"),
        ("it was -4 outside", "-4"),
        ("the 2nd floor", "2nd floor"),
    ],
)
def test_given_a_number_when_reading_terms_then_it_has_one_canonical_form(
    text: str, term: str
) -> None:
    """Given a number written with separators, a currency, a percent sign or a unit, when its
    terms are read, then it is exactly one term in the documented canonical form."""
    # Given / When / Then
    assert fact_terms(text) == {term}


def test_given_a_number_with_its_unit_when_reading_terms_then_the_bare_number_is_not_a_term() -> (
    None
):
    """Given "12000 euros", when its terms are read, then "12000" alone is not one, so a text
    keeps the number exactly when it keeps it with its unit."""
    # Given / When
    terms = fact_terms("Our budget for the offsite is 12000 euros.")

    # Then
    assert terms == {"12000 euros"}


# --- dates and times ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("due 2026-03-04", "march 4 2026"),
        ("due 4 March 2026", "march 4 2026"),
        ("due March 4, 2026", "march 4 2026"),
        ("on March 4", "march 4"),
        ("on the 5th of June", "june 5"),
        ("on June 5th", "june 5"),
        ("in March 2026", "march 2026"),
        ("every Tuesday", "tuesday"),
        ("on Tuesdays", "tuesday"),
        ("on 04/03/2026", "04/03/2026"),
    ],
)
def test_given_a_date_when_reading_terms_then_every_spelling_has_one_form(
    text: str, term: str
) -> None:
    """Given a date in any of the usual spellings, when its terms are read, then it is one
    term: "<month> <day>[ <year>]", a weekday, or an ambiguous numeric date as written."""
    # Given / When / Then
    assert fact_terms(text) == {term}


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("at 3pm", "15:00"),
        ("at 3 p.m. sharp", "15:00"),
        ("at 15:00", "15:00"),
        ("at 10:30am", "10:30"),
        ("at 10:30 PM", "22:30"),
        ("at 9:30", "09:30"),
        ("at 12am", "00:00"),
        ("at 7 o'clock", "07:00"),
    ],
)
def test_given_a_clock_time_when_reading_terms_then_it_is_24_hour_hh_mm(
    text: str, term: str
) -> None:
    """Given a clock time in 12- or 24-hour spelling, when its terms are read, then it is one
    "HH:MM" term on the 24-hour clock."""
    # Given / When / Then
    assert fact_terms(text) == {term}


# --- contact details -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("mail Alice.Smith@Example.com today", "alice.smith@example.com"),
        ("see https://Docs.example.com/a/b.", "https://docs.example.com/a/b"),
        ("see www.example.org/x, then", "www.example.org/x"),
        ("call +1 (555) 123-4567", "+15551234567"),
        ("call 555-123-4567", "5551234567"),
        ("call +44 20 7946 0958", "+442079460958"),
    ],
)
def test_given_contact_details_when_reading_terms_then_each_is_normalised(
    text: str, term: str
) -> None:
    """Given an email, a URL or a phone number, when terms are read, then it is one term:
    case-folded, without trailing punctuation, phones as digits with their "+"."""
    # Given / When
    terms = fact_terms(text)

    # Then
    assert term in terms
    assert not any(other != term and other in term for other in terms)  # no digits on the side


def test_given_a_fact_when_finding_terms_then_the_span_and_kind_are_reported() -> None:
    """Given a sentence with a time, when its terms are found, then each comes with its kind
    and the words it was read from."""
    # Given / When
    found = find_terms("The standup with Bob is at 9:30am.")

    # Then
    assert [(f.kind, f.term, f.surface) for f in found] == [
        ("entity", "bob", "Bob"),
        ("time", "09:30", "9:30am"),
    ]


# --- composition properties ------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.lists(one_line, max_size=5))
def test_given_any_lines_when_joined_then_the_terms_are_the_union_of_each_lines_terms(
    lines: list[str],
) -> None:
    """Given any lines, when they are joined with line breaks, then the text's terms are the
    union of the lines' terms: no fact spans a line break (the writers' last resort relies on
    it)."""
    # Given / When
    joined = fact_terms("\n".join(lines))

    # Then
    assert joined == frozenset().union(*(fact_terms(line) for line in lines))


@settings(max_examples=300, deadline=None)
@given(one_line, st.sampled_from(["User: ", "Agent: ", "System: ", "Unresolved: "]))
def test_given_any_line_when_a_label_is_put_before_it_then_no_term_is_lost(
    line: str, label: str
) -> None:
    """Given any line, when a speaker label is put in front of it, then it keeps every term."""
    # Given / When / Then
    assert fact_terms(label + line) >= fact_terms(line)


# --- missing_terms -----------------------------------------------------------------------------


def test_given_a_target_that_drops_a_fact_when_comparing_then_the_missing_term_is_named() -> None:
    """Given two sources and a target that forgot one of their facts, when the missing terms
    are computed, then exactly the forgotten term is returned."""
    # Given
    sources = ["My sister Alice lives in Lisbon.", "The launch is on March 14."]

    # When
    missing = missing_terms(sources, "Alice lives in Lisbon; the launch is soon.")

    # Then
    assert missing == {"march 14"}


def test_given_a_target_with_every_fact_reworded_when_comparing_then_nothing_is_missing() -> None:
    """Given a target that words the facts differently but keeps them, when the missing terms
    are computed, then there are none."""
    # Given
    sources = ["I ran 5km on 2026-03-04 at 3pm for $1,200"]

    # When
    missing = missing_terms(sources, "On 4 March 2026 at 15:00 they ran 5 km ($1200).")

    # Then
    assert missing == frozenset()


# --- extract_facts (seed 004) ------------------------------------------------------------------


def test_given_an_email_and_a_phone_when_extracting_then_both_are_facts_in_reading_order() -> None:
    """Given a sentence with an email address and a phone number, when facts are extracted,
    then both come back normalised, with a short statement, in reading order."""
    # Given / When
    facts = extract_facts("Mail Bob@Example.com or call +1 (555) 123-4567.")

    # Then
    assert facts == (
        ExtractedFact("email", "bob@example.com", "email is bob@example.com"),
        ExtractedFact("phone", "+15551234567", "phone number is +15551234567"),
    )


@pytest.mark.parametrize(
    ("text", "value", "statement"),
    [
        ("I don't use AWS anymore.", "AWS", "does not use AWS"),
        ("I do not like Java.", "Java", "does not like Java"),
        ("I never drink coffee.", "coffee", "never drinks coffee"),
        ("I no longer work at Acme Corp.", "Acme Corp", "no longer works at Acme Corp"),
        ("I'm not a fan of Slack.", "Slack", "is not a fan of Slack"),
        ("I can't stand loud music.", "loud music", "cannot stand loud music"),
    ],
)
def test_given_a_negated_preference_when_extracting_then_it_is_a_third_person_negation(
    text: str, value: str, statement: str
) -> None:
    """Given a first-person negation, when facts are extracted, then it is a negation fact
    whose statement says what the user does not do, without trailing "anymore"."""
    # Given / When
    facts = extract_facts(text)

    # Then
    assert facts == (ExtractedFact("negation", value, statement),)


def test_given_an_affirmative_sentence_when_extracting_then_there_is_no_negation() -> None:
    """Given a sentence that affirms a preference, when facts are extracted, then there is
    none: only negations, emails and phones are extracted by pattern."""
    # Given / When / Then
    assert extract_facts("I use AWS every day and I love it.") == ()


def test_given_a_negation_then_a_clause_when_extracting_then_the_value_stops_at_the_clause() -> (
    None
):
    """Given a negation followed by another clause, when facts are extracted, then the value
    ends where the clause does."""
    # Given / When
    facts = extract_facts("I don't eat meat, but I love fish.")

    # Then
    assert [fact.value for fact in facts] == ["meat"]


# --- purity ------------------------------------------------------------------------------------

ALLOWED_IMPORTS = {
    "__future__",
    "collections",
    "dataclasses",
    "datetime",  # calendar arithmetic for relative dates; the clock check is below
    "functools",
    "heapq",
    "importlib",
    "json",
    "math",
    "re",
    "streams",
    "typing",
    # VADER's sentiment lexicon (observation.approves): read once, as importlib reads a word
    # list; its scoring is arithmetic on the text alone
    "vaderSentiment",
}


def test_given_the_text_package_when_its_imports_are_read_then_it_is_pure() -> None:
    """Given every module of the text package, when its imports are read, then only pure
    standard library and engine modules are used: no os, time, random, logging, I/O or
    network (the engine's rule)."""
    # Given
    directory = Path(text_package.__file__).parent
    imported: set[str] = set()

    # When
    for path in directory.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add((node.module or "").split(".")[0])

    # Then
    assert imported <= ALLOWED_IMPORTS
    clock = re.compile(r"\b(?:date|datetime)\.(?:today|now|utcnow)\b|\btime\.time\(")
    assert [p.name for p in directory.glob("*.py") if clock.search(p.read_text())] == []


# --- a full stop after a text ------------------------------------------------------------------

_FACT_PIECES = st.sampled_from(
    [
        "Ana",
        "New York",
        "talked",
        "about",
        "the",
        "team",
        "3",
        "3pm",
        "3 p.m",
        "at",
        "10:30",
        "www",
        "http://",
        "www.example",
        "https://docs.example.com/a",
        "ana@example.com",
        "$1,200",
        "12",
        "%",
        "percent",
        "5km",
        "2nd",
        "floor",
        "March",
        "4th",
        "2026-03-04",
        "04/03/2026",
        "v2",
        "+1 (555) 123-4567",
        "o'clock",
        "km",
        "Dr",
        "St",
        "e.g",
        "U.S",
        "don't",
        "Tuesday",
        "-4",
        "3.5",
        "kids",
        "é",
        "Zoë",
        "api",
        "k8s",
        "x",
        "mg",
        "(",
        ")",
        ",",
        "-",
        "'s",
    ]
)
_TEXTS = st.lists(_FACT_PIECES, min_size=1, max_size=8).flatmap(
    lambda pieces: st.lists(
        st.sampled_from([" ", "", "\t", ", "]), min_size=len(pieces), max_size=len(pieces)
    ).map(lambda gaps: "".join(g + p for g, p in zip(gaps, pieces, strict=True)).strip())
)


@settings(max_examples=3000)
@given(text=_TEXTS)
def test_a_full_stop_said_to_keep_the_terms_keeps_them(text: str) -> None:
    """The writers finish statements with a full stop and skip reading the result when this
    says it keeps the terms: it must never say so wrongly."""
    if full_stop_keeps_terms(text):
        assert fact_terms(text + ".") == fact_terms(text)


@pytest.mark.parametrize(
    ("text", "keeps"),
    [
        ("Ana talked about on-call with the team", True),
        ("the launch is on March 4", False),  # ends in a digit: read it
        ("see https://docs.example.com/a", False),  # a URL takes the stop in
        ("see http://", False),  # "http://." reads as a URL: the one text found that changes
        ("meet at 3 p.m", False),
        ("write to ana@example", False),
        ("call me at 10:30 or later", True),
        ("", False),
    ],
)
def test_a_full_stop_is_said_to_keep_the_terms_only_after_a_plain_last_word(
    text: str, keeps: bool
) -> None:
    assert full_stop_keeps_terms(text) is keeps
