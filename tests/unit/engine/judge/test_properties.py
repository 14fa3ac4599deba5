"""Properties every judgement keeps, on arbitrary input: symmetric, deterministic, consistent,
and a pure package (no I/O beyond its own data, no clock, no randomness, no logging)."""

from __future__ import annotations

import ast
import json
from importlib import resources
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from streams.engine import judge as judge_package
from streams.engine.judge import Judgement, attribute_keys, judge_contradiction
from streams.engine.judge import parse as parse_package
from streams.engine.judge.normalise import normalise
from streams.engine.judge.parse import _TOKEN as TOKEN
from streams.engine.judge.quantities import may_start_amount, read_date, read_quantity

# Words that reach the deeper rules: subjects, verbs, negators, corrections, changes, amounts.
VOCABULARY = (
    "I",
    "the user",
    "my",
    "Maya's son",
    "we",
    "not",
    "never",
    "don't",
    "can't stand",
    "is",
    "was",
    "has",
    "have been",
    "was moved to",
    "switched from",
    "to",
    "now",
    "no longer",
    ", not",
    "instead of",
    "over",
    "Correction:",
    "Lisbon",
    "Porto",
    "Berlin",
    "Germany",
    "9am",
    "10:30",
    "two weeks",
    "every 10 days",
    "a month",
    "2 million",
    "$5",
    "40k",
    "June 5",
    "2025-01-01",
    "and",
    "likes",
    "hates",
    "prefers",
    "is a fan of",
    "works at",
    "lives in",
    "vegan",
    "eats meat",
    "has no children",
    "pets",
    "full-time",
    "part-time",
    "public",
    "private",
    "PostgreSQL",
    "MySQL",
    "the demo",
    "on Tuesday",
    "Just a heads up,",
    "is scheduled for",
    "moved to",
    "has a new phone number:",
    "'s new email is",
    "+1 (299) 751-7349",
    "609-674-2407",
    "bruno@example.com",
    "you can reach Bruno at",
    "ended up at",
    "my weekly one-on-one with Dario",
    "on Tuesdays",
    "switched to Zed",
    "last week",
    ", it is my main editor",
    "as my main editor",
    "my neighbour Tariq",
    "€29,500",
    "these days",
    # updates as people state them (issue 30)
    "took over as",
    "team lead",
    "from",
    "Wait, no.",
    "Actually,",
    "my bad,",
    "also",
    "too",
    "might",
    "slipped to",
    "pushed back to",
    "as of March",
    "Starting Monday,",
    "went with a different",
    "vet",
    "turned 8",
    "Arjun's in",
    "started eating",
    "stopped using",
    "for running",
    "i drive to work",
    "so",
    "walks the dog",
    "dropped",
    ".",
    "?",
)
SENTENCES = st.lists(st.sampled_from(VOCABULARY), max_size=14).map(" ".join)
TEXTS = st.one_of(st.text(max_size=80), SENTENCES)
BANNED_MODULES = {
    "os",
    "time",
    "random",
    "logging",
    "asyncio",
    "socket",
    "faust",
    "kafka",
    "psycopg",
    "datetime",
}


@settings(max_examples=500, deadline=None)
@given(TEXTS, TEXTS)
def test_given_two_statements_when_the_arguments_are_swapped_then_the_verdict_is_the_same(
    first: str, second: str
) -> None:
    """Given any two statements, when judged in both orders, then the verdict and the
    confidence are the same (only the explanation's wording may follow the order)."""
    forward, backward = judge_contradiction(first, second), judge_contradiction(second, first)

    assert forward.contradicts == backward.contradicts
    assert forward.confidence == backward.confidence
    assert forward.cue == backward.cue


@settings(max_examples=300, deadline=None)
@given(TEXTS, TEXTS)
def test_given_two_statements_when_judged_twice_then_the_judgement_is_identical(
    first: str, second: str
) -> None:
    """Given any two statements, when judged twice, then both judgements are equal."""
    assert judge_contradiction(first, second) == judge_contradiction(first, second)


@settings(max_examples=500, deadline=None)
@given(TEXTS, TEXTS)
def test_given_any_judgement_then_confidence_and_cue_agree_with_the_verdict(
    first: str, second: str
) -> None:
    """Given any two statements, when judged, then the confidence is above 0.7 exactly when
    they contradict, and the cue is "none" exactly when they do not."""
    verdict = judge_contradiction(first, second)

    assert isinstance(verdict, Judgement)
    assert (verdict.confidence > 0.7) == verdict.contradicts
    assert (verdict.cue == "none") != verdict.contradicts
    assert verdict.explanation


@settings(max_examples=500, deadline=None)
@given(TEXTS)
def test_given_any_statement_then_every_date_and_amount_starts_where_the_cheap_test_allows(
    text: str,
) -> None:
    """The parser asks ``may_start_amount`` before reading a date or a quantity at a token
    (most tokens are plain words); it must never say no where one can be read."""
    tokens = TOKEN.findall(normalise(text))
    for i, token in enumerate(tokens):
        if read_date(tokens, i) is not None or read_quantity(tokens, i) is not None:
            assert may_start_amount(token), (token, tokens)


@settings(max_examples=200, deadline=None)
@given(TEXTS)
def test_given_a_statement_when_judged_against_itself_then_it_never_contradicts(text: str) -> None:
    """Given any statement, when judged against itself, then there is no contradiction."""
    assert not judge_contradiction(text, text).contradicts


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_given_any_statement_when_keyed_then_the_keys_are_subject_attribute_strings(
    text: str,
) -> None:
    """Given any text, when its attribute keys are read (twice), then the answer is the same
    frozenset of "<subject>|<attribute>" strings each time, and never raises."""
    keys = attribute_keys(text)

    assert isinstance(keys, frozenset)
    assert keys == attribute_keys(text)
    assert all(isinstance(key, str) and "|" in key for key in keys)
    assert all(all(side.strip() for side in key.split("|", 1)) for key in keys), keys


def _imports(source: Path) -> set[str]:
    tree = ast.parse(source.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_given_the_judge_package_when_its_imports_are_read_then_no_impure_module_is_used() -> None:
    """Given every module of the judge package, when its imports are read, then none of them
    brings I/O, a clock, randomness, logging, concurrency, the network or a driver."""
    sources = sorted(Path(judge_package.__file__).parent.glob("*.py"))

    imported = set().union(*(_imports(source) for source in sources))

    assert len(sources) > 1
    assert imported.isdisjoint(BANNED_MODULES)


def test_given_the_judge_package_when_its_code_is_read_then_files_are_never_opened() -> None:
    """Given every module of the judge package, when its code is read, then it neither calls
    open() nor builds paths from __file__: data files come through importlib.resources."""
    sources = sorted(Path(judge_package.__file__).parent.glob("*.py"))

    for source in sources:
        tree = ast.parse(source.read_text(encoding="utf-8"))
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        assert "open" not in names, source.name
        assert "__file__" not in names, source.name


def test_given_the_lexicon_files_when_read_as_package_data_then_each_is_a_json_object() -> None:
    """Given the package's lexicons/*.json, when read through importlib.resources, then each
    parses to a non-empty JSON object."""
    directory = resources.files("streams.engine.judge") / "lexicons"
    files = [entry for entry in directory.iterdir() if entry.name.endswith(".json")]

    assert len(files) >= 8
    for entry in files:
        data = json.loads(entry.read_text(encoding="utf-8"))
        assert isinstance(data, dict) and data, entry.name


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_given_any_statement_then_its_parse_does_not_depend_on_the_shared_words(
    text: str,
) -> None:
    """Plain words are shared between statements (``parse._plain_word``): a statement read
    with the table empty, or full of other statements' words, is read the same."""
    parse_package.parse.cache_clear()
    parse_package._plain_word.cache_clear()
    alone = parse_package.parse(text)
    parse_package.parse.cache_clear()
    for other in ("I live in Oslo", "Maya's son is 14 years old", "we switched from Chrome"):
        parse_package.parse(other)

    assert parse_package.parse(text) == alone
