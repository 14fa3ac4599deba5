"""The judge's word lists, read once from the JSON files in ``lexicons/``.

The tables are data, not code, so they can grow without touching the rules: word classes the
parser needs (``grammar.json``), synonyms and multi-word names (``synonyms.json``), opposites
(``antonyms.json``), value categories (``categories.json``), what contains what
(``places.json``, ``part_of.json``), how many values an attribute holds (``attributes.json``),
units of measure (``units.json``) and what a way of living rules out (``exclusions.json``).

The files are package data read through :mod:`importlib.resources`, so they load the same from
a source tree, a wheel or a zip; nothing here touches the file system directly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

assert __package__ is not None  # always set for a module inside a package
_DATA = resources.files(__package__) / "lexicons"


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((_DATA / f"{name}.json").read_text(encoding="utf-8"))
    return data


def _words(table: dict[str, Any], name: str) -> frozenset[str]:
    return frozenset(table[name])


@dataclass(frozen=True, slots=True)
class Category:
    """A named set of values ("database": postgresql, mysql, ...)."""

    name: str
    members: frozenset[str]
    nouns: frozenset[str]  # keys naming the whole set, multi-word ones joined by a space
    exclusive: bool  # members exclude each other as the value of a single-valued attribute
    per_subject: bool  # a subject holds one member at a time, whatever the verb says
    temporal: bool  # members exclude each other only for a single-valued relation


@dataclass(frozen=True, slots=True)
class Unit:
    dimension: str
    size: float  # in the dimension's base unit
    tolerance: float  # relative difference still read as the same amount


_grammar = _load("grammar")
NEGATORS = _words(_grammar, "negators")
# "not just X, Y" says more than X: after a negator these make it no denial.
LIMITING_ADVERBS = _words(_grammar, "limiting_adverbs")
FREQUENCY_ADVERBS = _words(_grammar, "frequency_adverbs")
PAST_ADVERBS = _words(_grammar, "past_adverbs")
AUXILIARIES = _words(_grammar, "auxiliaries")
DROPPED = _words(_grammar, "dropped")
DETERMINERS = _words(_grammar, "determiners")
POSSESSIVE_DETERMINERS = _words(_grammar, "possessive_determiners")
PRONOUN_SUBJECTS = _words(_grammar, "pronoun_subjects")
PAST_MARKERS = _words(_grammar, "past_markers") | PAST_ADVERBS
COPULAS = _words(_grammar, "copulas")
SUBJECT_ALIASES: dict[str, str] = dict(_grammar["subject_aliases"])
IGNORED_SUBJECT_MODIFIERS = _words(_grammar, "subject_modifiers_ignored")
PREPOSITIONS = _words(_grammar, "prepositions")
CONTEXT_PREPOSITIONS = _words(_grammar, "context_prepositions")
PARTICLES = _words(_grammar, "particles")
PARTICIPLES = _words(_grammar, "participles")
VERBS = _words(_grammar, "verbs")
IRREGULAR_VERBS: dict[str, str] = dict(_grammar["irregular_verbs"])
IRREGULAR_PAST = _words(_grammar, "irregular_past")
IRREGULAR_PARTICIPLES = _words(_grammar, "irregular_participles")
DISCOURSE_WORDS = _words(_grammar, "discourse_words")
PREAMBLE_WORDS = _words(_grammar, "preamble_words")
UPDATE_VERBS = _words(_grammar, "update_verbs")
LEAVE_VERBS = _words(_grammar, "leave_verbs")
JOIN_VERBS = _words(_grammar, "join_verbs")
LEAVE_RELATIONS: tuple[str, ...] = tuple(_grammar["update_leave_relations"])
# "we dropped Comcast": a supplier, tool or habit given up, and the relations it held by.
DROP_VERBS = _words(_grammar, "drop_verbs")
DROP_RELATIONS: tuple[str, ...] = tuple(_grammar["drop_relations"])
UNIVERSAL_VALUES = _words(_grammar, "universal_values")
PERSON_NOUNS = _words(_grammar, "person_nouns")
# "our team", "our family": the people "we" names ("Our team uses Asana" / "We use Asana").
COLLECTIVE_NOUNS = _words(_grammar, "collective_nouns")
RECURRING_CONTEXT_WORDS = _words(_grammar, "recurring_context_words")
GO_ACTIVITIES = _words(_grammar, "go_activities")
# "in Berlin for a conference": a stay, not a move.
STAY_WORDS = _words(_grammar, "stay_words")
CHANGE_TIME_WORDS = _words(_grammar, "change_time_words")

_synonyms = _load("synonyms")
SYNONYMS: dict[str, str] = dict(_synonyms["synonyms"])
NUMBER_WORDS: dict[str, str] = dict(_synonyms["number_words"])
PHRASES: dict[str, str] = dict(_synonyms["phrases"])

ANTONYM_GROUPS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = tuple(
    (tuple(positives), tuple(negatives)) for positives, negatives in _load("antonyms")["groups"]
)

CATEGORIES: tuple[Category, ...] = tuple(
    Category(
        name=name,
        members=frozenset(entry["members"]),
        nouns=frozenset(entry.get("nouns", ())),
        exclusive=bool(entry.get("exclusive", False)),
        per_subject=bool(entry.get("per_subject", False)),
        temporal=bool(entry.get("temporal", False)),
    )
    for name, entry in _load("categories").items()
    if not name.startswith("_")
)

PLACE_PART_OF: dict[str, tuple[str, ...]] = {
    child: tuple(parents) for child, parents in _load("places")["part_of"].items()
}
VALUE_PART_OF: dict[str, tuple[str, ...]] = {
    child: tuple(parents) for child, parents in _load("part_of")["part_of"].items()
}

_attributes = _load("attributes")
SINGLE_VALUED_NOUNS = _words(_attributes, "single_valued_nouns")
SINGLE_VALUED_MODIFIERS = _words(_attributes, "single_valued_modifiers")
# "has a new phone number: ...": the attribute nouns a "has a new <noun>" statement sets.
NEW_ATTRIBUTE_NOUNS = SINGLE_VALUED_NOUNS | _words(_attributes, "new_attribute_nouns")
SINGLE_VALUED_RELATION_PHRASES: tuple[str, ...] = tuple(_attributes["single_valued_relations"])
RELATION_ALIAS_PHRASES: dict[str, str] = dict(_attributes["relation_aliases"])
ATTRIBUTE_NOUN_PHRASES: dict[str, str] = dict(_attributes["attribute_nouns"])
NOUN_ALIAS_PHRASES: dict[str, str] = dict(_attributes["noun_aliases"])
MULTI_VALUED_VERBS = _words(_attributes, "multi_valued_verbs")
COUNT_VERBS = _words(_attributes, "count_verbs")
# "I feel a bit better" / "I feel safer": states of mind hold together; only opposites conflict.
STATE_OF_MIND_RELATIONS = _words(_attributes, "state_of_mind_relations")
PREFERENCE_RELATIONS = _words(_attributes, "preference_relations")
SINGLE_VALUED_PREFERENCES = _words(_attributes, "single_valued_preferences")
# Roles one person holds at a time ("Tom is the team lead": the team lead is Tom).
ROLE_NOUNS = _words(_attributes, "role_nouns")
# "We use CircleCI for CI": relations whose "for ..." names the attribute the value is of.
PURPOSE_RELATION_PHRASES: tuple[str, ...] = tuple(_attributes["purpose_relations"])
# "Jess walks our dog" / "Marco walks the dog now": duties one person does at a time.
DUTY_RELATION_PHRASES: tuple[str, ...] = tuple(_attributes["duty_relations"])
# "I go climbing on Tuesdays": relations whose value is an activity and when it happens.
ACTIVITY_RELATION_PHRASES: tuple[str, ...] = tuple(_attributes["activity_relations"])
# A copula value of this category states this attribute ("he is a pilot": his job).
TYPED_ATTRIBUTE_NOUNS: dict[str, str] = dict(_attributes["typed_attribute_nouns"])

_units = _load("units")
UNITS: dict[str, Unit] = {
    word: Unit(entry["dimension"], float(entry["size"]), float(entry.get("tolerance", 0.0)))
    for word, entry in _units["units"].items()
}
FREQUENCIES: dict[str, float] = {word: float(size) for word, size in _units["frequencies"].items()}
MAGNITUDES: dict[str, int] = dict(_units["magnitudes"])
CURRENCY_SYMBOLS: dict[str, str] = dict(_units["currency_symbols"])
MULTIPLIERS: dict[str, int] = dict(_units["multipliers"])

_exclusions = _load("exclusions")
EXCLUSIONS: dict[str, tuple[str, ...]] = {
    claim: tuple(excluded) for claim, excluded in _exclusions["excludes"].items()
}
CONSUMING_VERBS = _words(_exclusions, "consuming_verbs")
PLANT_BASED_MODIFIERS = _words(_exclusions, "plant_based_modifiers")
