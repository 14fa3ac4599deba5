"""Which attribute a clause states, whether two clauses state the same one, and how many
values that attribute can hold at once.

Two clauses are about one attribute when their subjects match ("our standup" / "standup") and
their relations do: the same relation, two preference verbs ("likes" / "prefers"), a change
standing for the other's relation ("was moved to" / "is on"), or a relation and the noun naming
its attribute ("Bea is working on Atlas" / "Bea's current project is Falcon").

How many values an attribute holds decides which differences are conflicts (:data:`FIRES_FOR`):
"User's favourite food" holds one value of any kind, "lives in" one place or name, "uses" one
member of a category (one database) but several plain values, "speaks" several of everything.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..memo import by_identity
from .lexicons import (
    ATTRIBUTE_NOUN_PHRASES,
    CATEGORIES,
    COUNT_VERBS,
    IGNORED_SUBJECT_MODIFIERS,
    MULTI_VALUED_VERBS,
    NOUN_ALIAS_PHRASES,
    PERSON_NOUNS,
    POSSESSIVE_DETERMINERS,
    PREFERENCE_RELATIONS,
    SINGLE_VALUED_MODIFIERS,
    SINGLE_VALUED_NOUNS,
    SINGLE_VALUED_PREFERENCES,
    SINGLE_VALUED_RELATION_PHRASES,
    TYPED_ATTRIBUTE_NOUNS,
)
from .parse import Clause
from .quantities import PERIOD
from .values import item_type
from .words import Words, keys, phrase_key

ATTRIBUTE, SINGLE, DEFAULT, COUNT, MULTI = "attribute", "single", "default", "count", "multi"
# Which kinds of exclusive value difference make a contradiction for which class of attribute.
FIRES_FOR = {
    "time": frozenset({ATTRIBUTE, SINGLE, DEFAULT, COUNT}),
    "date": frozenset({ATTRIBUTE, SINGLE, DEFAULT, COUNT}),
    "quantity": frozenset({ATTRIBUTE, SINGLE, DEFAULT, COUNT}),
    "number": frozenset({ATTRIBUTE, SINGLE, DEFAULT, COUNT}),
    "period": frozenset({ATTRIBUTE, SINGLE, DEFAULT, COUNT, MULTI}),
    "antonym": frozenset({ATTRIBUTE, SINGLE, DEFAULT}),
    "category": frozenset({ATTRIBUTE, SINGLE, DEFAULT}),
    "temporal": frozenset({ATTRIBUTE, SINGLE}),
    "place": frozenset({ATTRIBUTE, SINGLE}),
    "name": frozenset({ATTRIBUTE, SINGLE}),
    "generic": frozenset({ATTRIBUTE}),
}
FIRING = {
    exclusivity: frozenset(kind for kind, classes in FIRES_FOR.items() if exclusivity in classes)
    for exclusivity in (ATTRIBUTE, SINGLE, DEFAULT, COUNT, MULTI)
}
SINGLE_VALUED_RELATIONS = frozenset(phrase_key(p) for p in SINGLE_VALUED_RELATION_PHRASES)
ATTRIBUTE_NOUNS = {
    phrase_key(relation): phrase_key(noun) for relation, noun in ATTRIBUTE_NOUN_PHRASES.items()
}
NOUN_ALIASES = {phrase_key(noun): phrase_key(alias) for noun, alias in NOUN_ALIAS_PHRASES.items()}
CATEGORY_MEMBERS = {category.name: category.members for category in CATEGORIES}
OWNERS = frozenset({"user", "we"})
RECURRENCE_KEY = f"{PERIOD}="  # the key of a period word ("weekly"): see quantities.Quantity
WEEK_SECONDS = 604800
PRONOUNS = frozenset({"user", "we", "he", "she", "they", "you"})


def is_person(subject: Words) -> bool:
    """Whether a subject names a person (or people): "I", "we", "she", "Rahul", "Ana Ruiz"."""
    found = [word for word in subject if word.key not in OWNERS or len(subject) == 1]
    return bool(found) and all(word.key in PRONOUNS or word.proper for word in found)


# --- subjects and attributes --------------------------------------------------------------


def named_in_apposition(words: Words) -> Words:
    """The name a subject gives in apposition: "my neighbour Tariq" and "Keiko, my climbing
    partner" are Tariq and Keiko. Other subjects are returned as they are."""
    if len(words) < 2 or any(word.surface.endswith("'s") for word in words):
        return words
    names = next((i for i, word in enumerate(reversed(words)) if not word.proper), len(words))
    described = words[: len(words) - names]
    if 0 < names < len(words) and _describes_a_person(described):
        return words[len(words) - names :]  # "my neighbour Tariq"
    leading = next((i for i, word in enumerate(words) if not word.proper), len(words))
    if 0 < leading < len(words) and _describes_a_person(words[leading:]):
        return words[:leading]  # "Keiko, my climbing partner"
    return words


def _describes_a_person(words: Words) -> bool:
    """ "my neighbour", "my old climbing partner": an owner's word for a person."""
    return (
        len(words) >= 2
        and words[0].surface in POSSESSIVE_DETERMINERS
        and words[-1].key in PERSON_NOUNS
        and not any(word.proper or not word.surface.isalpha() for word in words)
    )


@by_identity(maxsize=65536)
def subject_key(words: Words) -> tuple[str, ...]:
    """The subject as compared: "the price of the plan" → plan price, "job title" → job,
    "my neighbour Tariq" → tariq."""
    words = named_in_apposition(words)
    found = [key for key in keys(words) if key not in IGNORED_SUBJECT_MODIFIERS]
    if "of" in found[1:-1]:
        cut = found.index("of")
        found = found[cut + 1 :] + found[:cut]
    for size in (2, 1):
        tail = tuple(found[-size:])
        if len(found) >= size and tail in NOUN_ALIASES:
            found = found[:-size] + list(NOUN_ALIASES[tail])
            break
    return tuple(found)


@by_identity(maxsize=65536)
def without_recurrence(subject: tuple[str, ...]) -> tuple[str, ...]:
    """The subject without how often it recurs: "my weekly one-on-one" → my one-on-one."""
    return tuple(key for key in subject if not key.startswith(RECURRENCE_KEY))


def subjects_match(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """The same subject, allowing an owner on one side only ("our standup" / "standup") and
    how often it recurs on one side only ("my weekly one-on-one" / "my one-on-one")."""
    if a == b:
        return True
    plain_a, plain_b = without_recurrence(a), without_recurrence(b)
    if (plain_a != a) != (plain_b != b):  # a recurrence named on one side only
        a, b = plain_a, plain_b
    return (
        a == b
        or (len(a) > 1 and a[0] in OWNERS and a[1:] == b)
        or (len(b) > 1 and b[0] in OWNERS and b[1:] == a)
    )


def recurs_weekly_or_less(subject: tuple[str, ...]) -> bool:
    """Whether a subject names an event held once a week or less often ("my weekly
    one-on-one", "the monthly review"): such an event is on one day, not on several."""
    return any(
        key.startswith(RECURRENCE_KEY) and float(key[len(RECURRENCE_KEY) :]) >= WEEK_SECONDS
        for key in subject
    )


@dataclass(frozen=True, slots=True)
class Reading:
    """One way of reading a clause as (subject, relation, value)."""

    clause: Clause
    subject: tuple[str, ...]
    relation: tuple[str, ...]
    value: Words
    derived: bool = False  # read through the noun naming the attribute, not as stated


@by_identity(maxsize=65536)
def readings(clause: Clause) -> tuple[Reading, ...]:
    """The clause as stated, and as a statement about the noun naming its attribute
    ("Bea is working on Atlas" is also "Bea's project is Atlas"). Memoised: a clause is
    compared with many others, and readings depend on the clause alone."""
    subject, relation = subject_key(clause.subject), clause.relation_key
    found = [Reading(clause, subject, relation, clause.value)]
    noun = ATTRIBUTE_NOUNS.get(relation)
    if noun is not None:
        found.append(Reading(clause, subject + noun, ("be",), clause.value, True))
    if relation == ("be",):  # "he is a pilot" states his job
        for category, attribute in TYPED_ATTRIBUTE_NOUNS.items():
            if any(word.key in CATEGORY_MEMBERS[category] for word in clause.value):
                found.append(Reading(clause, subject + (attribute,), ("be",), clause.value, True))
    return tuple(found)


def stands_for(clause: Clause, relation: tuple[str, ...]) -> bool:
    """Whether a change ("was moved to") may stand for ``relation`` of the other statement."""
    allowed = clause.relations_allowed
    return clause.any_relation and (allowed is None or relation in allowed)


def relations_align(a: Reading, b: Reading) -> bool:
    """The same relation, a change standing for the other's, or two preference verbs."""
    if a.relation == b.relation:
        return True
    if stands_for(a.clause, b.relation) or stands_for(b.clause, a.relation):
        return True
    return a.relation[:1] != b.relation[:1] and {a.relation[0], b.relation[0]} <= (
        PREFERENCE_RELATIONS
    )


def subjects_align(a: Reading, b: Reading) -> bool:
    """The same subject; a value someone changed away from ("I switched from iPhone") may
    also be stated of something they own ("my phone is an iPhone")."""
    if subjects_match(a.subject, b.subject):
        return True
    for change, other in ((a, b), (b, a)):
        owned = other.subject
        if (
            change.clause.replaced
            and change.clause.any_relation
            and len(owned) == 2
            and owned[1] not in PERSON_NOUNS
            and subjects_match(change.subject, owned[:1])
        ):
            return True
    return False


def align(a: Clause, b: Clause) -> tuple[Reading, Reading] | None:
    """The first readings of two clauses that are about one attribute, if any."""
    for reading_a in readings(a):
        for reading_b in readings(b):
            if subjects_align(reading_a, reading_b) and relations_align(reading_a, reading_b):
                return reading_a, reading_b
    return None


def names_single_attribute(subject: tuple[str, ...]) -> bool:
    """Whether a subject names an attribute with one value ("the default branch", "Ana's
    manager", "my favourite food")."""
    return bool(subject) and (
        subject[-1] in SINGLE_VALUED_NOUNS or bool(SINGLE_VALUED_MODIFIERS & set(subject))
    )


def attribute_class(a: Reading, b: Reading) -> str:
    """How many values the pair's attribute can hold at once (see FIRES_FOR)."""
    stated = b if a.clause.any_relation and not b.clause.any_relation else a
    subject, relation = stated.subject, stated.relation
    if a.relation[0] in SINGLE_VALUED_PREFERENCES and b.relation[0] in SINGLE_VALUED_PREFERENCES:
        return ATTRIBUTE
    if relation[:1] == ("be",) and names_single_attribute(subject):
        # Read through a noun ("reports to" as "manager is"), plain words are too loose a match.
        return SINGLE if a.derived or b.derived else ATTRIBUTE
    if relation in SINGLE_VALUED_RELATIONS:
        exclusivity = SINGLE
    elif MULTI_VALUED_VERBS & set(relation) or " ".join(relation) in MULTI_VALUED_VERBS:
        exclusivity = MULTI
    elif relation[0] in COUNT_VERBS:
        exclusivity = COUNT
    else:
        exclusivity = DEFAULT
    changed = a.clause.any_relation or b.clause.any_relation
    now = (a.clause.update or b.clause.update) and relation[:1] == ("be",)
    if (changed or now) and exclusivity in {DEFAULT, COUNT}:
        return SINGLE  # a change says the attribute now holds this value, not another
    return exclusivity


def value_kinds(value: Words) -> frozenset[str]:
    """The kinds of typed items in a value (see values.item_type)."""
    return frozenset(kind for kind in (item_type(word) for word in value) if kind is not None)


def change_fits(change: Reading, other: Reading) -> bool:
    """Whether a change ("moved to Thursday", "switched to a Pixel") can be about the
    attribute the other statement states. A value the other states was replaced outright;
    otherwise the new value must be of the same kind as the other value (a day for a day, a
    place for a place, a phone for a phone); two plain names fit only for a thing or an event
    ("the office moved to Canary Wharf"), not for a person, who has many named attributes."""
    if change.clause.replaced:
        return True
    kinds_change, kinds_other = value_kinds(change.value), value_kinds(other.value)
    strong_change, strong_other = kinds_change - {"name"}, kinds_other - {"name"}
    if strong_change or strong_other:
        return bool(strong_change & strong_other)
    return not is_person(change.clause.subject)
