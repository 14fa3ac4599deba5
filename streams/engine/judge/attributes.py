"""Which attribute a clause states, whether two clauses state the same one, and how many
values that attribute can hold at once.

Two clauses are about one attribute when their subjects match ("our standup" / "standup") and
their relations do: the same relation, two preference verbs ("likes" / "prefers"), a change
standing for the other's relation ("was moved to" / "is on"), or a relation and the noun naming
its attribute ("Bea is working on Atlas" / "Bea's current project is Falcon").

How many values an attribute holds decides which differences are conflicts (:data:`FIRES_FOR`):
"User's favourite food" holds one value of any kind, "lives in" one place or name, "uses" one
member of a category (one database) but several plain values, "speaks" several of everything.
An attribute a statement says has changed ("now", "switched to", "took over": ``UPDATED``) holds
one value of any kind, unless the statement only adds one ("also", "too").

Other readings of a clause: who holds a role ("Tom is the team lead": the team lead is Tom),
what a tool or supplier is for ("We use CircleCI for CI": our CI is CircleCI), when an activity
happens ("I go climbing on Tuesdays": climbing is on Tuesdays), a price ("the plan is $15":
its price). Subjects also align when a change is about something its subject owns ("I switched
to GCP" / "our cloud provider is AWS", "we're on the first floor now" / "our shop is on the
ground floor"), when "we" is "our team", when an update names the subject with one word less
("the plan is $15 now" / "the streaming plan costs $12") and when what a change is for names
the other's subject with one noun more ("switched to Asics for running" / "my running shoes").
"""

from __future__ import annotations

from dataclasses import dataclass

from ..memo import by_identity
from .lexicons import (
    ACTIVITY_RELATION_PHRASES,
    ATTRIBUTE_NOUN_PHRASES,
    CATEGORIES,
    COLLECTIVE_NOUNS,
    COUNT_VERBS,
    IGNORED_SUBJECT_MODIFIERS,
    MULTI_VALUED_VERBS,
    NOUN_ALIAS_PHRASES,
    PERSON_NOUNS,
    POSSESSIVE_DETERMINERS,
    PREFERENCE_RELATIONS,
    PURPOSE_RELATION_PHRASES,
    RECURRING_CONTEXT_WORDS,
    ROLE_NOUNS,
    SINGLE_VALUED_MODIFIERS,
    SINGLE_VALUED_NOUNS,
    SINGLE_VALUED_PREFERENCES,
    SINGLE_VALUED_RELATION_PHRASES,
    TYPED_ATTRIBUTE_NOUNS,
)
from .parse import Clause
from .quantities import PERIOD
from .values import TEMPORAL_CATEGORY_OF, is_time, item_type, names_another, slots
from .words import Word, Words, keys, phrase_key

ATTRIBUTE, SINGLE, DEFAULT, COUNT, MULTI = "attribute", "single", "default", "count", "multi"
# An attribute one statement says has changed ("now", "these days", "switched to", "took
# over"): it holds the new value instead of the old, so plain different words conflict too.
UPDATED = "updated"
# Which kinds of exclusive value difference make a contradiction for which class of attribute.
FIRES_FOR = {
    "time": frozenset({ATTRIBUTE, SINGLE, UPDATED, DEFAULT, COUNT}),
    "date": frozenset({ATTRIBUTE, SINGLE, UPDATED, DEFAULT, COUNT}),
    "quantity": frozenset({ATTRIBUTE, SINGLE, UPDATED, DEFAULT, COUNT}),
    "number": frozenset({ATTRIBUTE, SINGLE, UPDATED, DEFAULT, COUNT}),
    "period": frozenset({ATTRIBUTE, SINGLE, UPDATED, DEFAULT, COUNT, MULTI}),
    "antonym": frozenset({ATTRIBUTE, SINGLE, UPDATED, DEFAULT}),
    "category": frozenset({ATTRIBUTE, SINGLE, UPDATED, DEFAULT}),
    "temporal": frozenset({ATTRIBUTE, SINGLE, UPDATED}),
    "place": frozenset({ATTRIBUTE, SINGLE, UPDATED}),
    "name": frozenset({ATTRIBUTE, SINGLE, UPDATED}),
    "generic": frozenset({ATTRIBUTE, UPDATED}),
}
FIRING = {
    exclusivity: frozenset(kind for kind, classes in FIRES_FOR.items() if exclusivity in classes)
    for exclusivity in (ATTRIBUTE, SINGLE, UPDATED, DEFAULT, COUNT, MULTI)
}
SINGLE_VALUED_RELATIONS = frozenset(phrase_key(p) for p in SINGLE_VALUED_RELATION_PHRASES)
PURPOSE_RELATIONS = frozenset(phrase_key(p) for p in PURPOSE_RELATION_PHRASES)
ACTIVITY_RELATIONS = frozenset(phrase_key(p) for p in ACTIVITY_RELATION_PHRASES)
ATTRIBUTE_NOUNS = {
    phrase_key(relation): phrase_key(noun) for relation, noun in ATTRIBUTE_NOUN_PHRASES.items()
}
NOUN_ALIASES = {phrase_key(noun): phrase_key(alias) for noun, alias in NOUN_ALIAS_PHRASES.items()}
CATEGORY_MEMBERS = {category.name: category.members for category in CATEGORIES}
OWNERS = frozenset({"user", "we"})
RECURRENCE_KEY = f"{PERIOD}="  # the key of a period word ("weekly"): see quantities.Quantity
WEEK_SECONDS = 604800
PRONOUNS = frozenset({"user", "we", "he", "she", "they", "you"})
_LIVING_IN = frozenset({("be", "in"), ("live", "in")})


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
        or (a == ("we",) and _names_us(b))
        or (b == ("we",) and _names_us(a))
    )


def _names_us(subject: tuple[str, ...]) -> bool:
    """ "our team", "our family": who "we" are."""
    return len(subject) == 2 and subject[0] == "we" and subject[1] in COLLECTIVE_NOUNS


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
    purpose: bool = False  # read as what the value is for ("CircleCI for CI": the CI)
    activity: bool = False  # read as when an activity happens ("climbing on Tuesdays")
    holder: bool = False  # read as who holds a role ("Tom is the team lead": the lead is Tom)


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
        if any(word.key in CATEGORY_MEMBERS["currency"] for word in clause.value):
            found.append(Reading(clause, subject + ("price",), ("be",), clause.value, True))
        role = _role_held(clause)
        if role is not None:  # "Tom is the team lead": the team lead is Tom
            found.append(Reading(clause, role, ("be",), clause.subject, True, holder=True))
    purpose = _purpose_reading(clause, relation)
    if purpose is not None:
        found.append(purpose)
    if relation in ACTIVITY_RELATIONS and not clause.negated:
        activity = _activity_reading(clause, relation)
        if activity is not None:
            found.append(activity)
    return tuple(found)


def _activity_reading(clause: Clause, relation: tuple[str, ...]) -> Reading | None:
    """ "I go climbing on Tuesdays" is also "climbing is on Tuesdays" (for me), which
    "climbing is on Saturdays now" changes."""
    parts = slots(clause.value)
    if len(parts) != 2 or parts[0][0] or parts[1][0] not in {"on", "at"}:
        return None
    activity, (preposition, when) = parts[0][1], parts[1]
    if len(activity) > 3 or any(item_type(word) is not None for word in activity):
        return None
    if not all(_is_when(word) for word in when):
        return None
    return Reading(clause, keys(activity), ("be", preposition), when, True, activity=True)


def _is_when(word: Word) -> bool:
    return (
        word.date is not None
        or is_time(word.key)
        or TEMPORAL_CATEGORY_OF.get(word.key) in {"weekday", "part of day"}
        or word.key in RECURRING_CONTEXT_WORDS
    )


def _role_held(clause: Clause) -> tuple[str, ...] | None:
    """The role a person is said to hold ("Tom is the team lead", "Kira is captain now"), as
    the subject of the holder's name; None for other copula values."""
    value, subject = clause.value, clause.subject
    if not value or len(value) > 3 or clause.negated or not subject or len(subject) > 3:
        return None
    if value[-1].key not in ROLE_NOUNS or any(word.possessive or word.proper for word in value):
        return None
    if any(word.possessive or word.quantity or word.date for word in subject):
        return None
    return subject_key(value)


def _purpose_reading(clause: Clause, relation: tuple[str, ...]) -> Reading | None:
    """ "We use CircleCI for CI" is also "(our) CI is CircleCI", and "we moved to Sky for
    broadband" is "(our) broadband is Sky now": what a tool or supplier is for names the
    attribute it is the value of."""
    if not (clause.any_relation or relation in PURPOSE_RELATIONS) or clause.negated:
        return None
    if not is_person(clause.subject):
        return None  # "yoga is on Tuesdays for the beginners": who it is for
    value = clause.value
    at = next((i for i, word in enumerate(value) if word.key == "for"), None)
    if at is None or at == 0 or at > 3 or len(value) - at - 1 not in {1, 2}:
        return None
    purpose = value[at + 1 :]
    if any(word.quantity is not None or word.date is not None for word in purpose):
        return None  # "for 3 years", "for May": how long or when, not what for
    return Reading(clause, subject_key(purpose), ("use",), value[:at], True, True)


def stands_for(clause: Clause, relation: tuple[str, ...]) -> bool:
    """Whether a change ("was moved to") may stand for ``relation`` of the other statement."""
    allowed = clause.relations_allowed
    return clause.any_relation and (allowed is None or relation in allowed)


def _says_when(value: Words) -> bool:
    """A value that opens with a date, a time, a weekday or a month ("May 6", "at 4pm")."""
    first = next((word for word in value if word.key not in {"on", "at", "in"}), None)
    return first is not None and (
        first.date is not None
        or is_time(first.key)
        or first.key in CATEGORY_MEMBERS["weekday"]
        or first.key in CATEGORY_MEMBERS["month"]
    )


def relations_align(a: Reading, b: Reading) -> bool:
    """The same relation, a change standing for the other's, two preference verbs, or "is"
    with and without a preposition before when ("is May 6" / "is on May 4")."""
    if a.relation == b.relation:
        return True
    if stands_for(a.clause, b.relation) or stands_for(b.clause, a.relation):
        return True
    if (
        a.relation[:1] == b.relation[:1] == ("be",)
        and len(a.relation) + len(b.relation) == 3
        and _says_when(a.value)
        and _says_when(b.value)
    ):
        return True
    if {a.relation, b.relation} == _LIVING_IN and (a.clause.update or b.clause.update):
        return True  # "we're in Leeds now" / "we live in Manchester": who lives is a person
    for denial, other in ((a, b), (b, a)):
        if (
            denial.clause.negated
            and not denial.value
            and not other.clause.negated
            and len(other.relation) == len(denial.relation) + 1
            and other.relation[: len(denial.relation)] == denial.relation
            and other.relation[0] != "be"
        ):
            return True  # "I don't swim anymore" / "I swim on Sundays"
    return a.relation[:1] != b.relation[:1] and {a.relation[0], b.relation[0]} <= (
        PREFERENCE_RELATIONS
    )


def subjects_align(a: Reading, b: Reading) -> bool:
    """The same subject; a value someone changed away from ("I switched from iPhone") may
    also be stated of something they own ("my phone is an iPhone")."""
    if subjects_match(a.subject, b.subject):
        return True
    changed_a = a.clause.any_relation or a.clause.update
    changed_b = b.clause.any_relation or b.clause.update
    if not (changed_a or changed_b):
        return False  # two plain statements (most pairs): the same subject or none
    for change, changed, other in ((a, changed_a, b), (b, changed_b, a)):
        owned = other.subject
        if (
            changed
            and len(owned) in {2, 3}
            and owned[-1] not in PERSON_NOUNS
            and subjects_match(change.subject, owned[:1])
            and (
                (change.clause.replaced and change.clause.any_relation)
                or _share_a_category(change.value, other.value)
                or _same_head(change.value, other.value)
            )
        ):
            return True  # "I switched to GCP" / "our cloud provider is AWS"
    if (a.purpose or b.purpose) and (_gear_for(a, b) or _gear_for(b, a)):
        return True
    return _one_word_apart(a, b)


def _gear_for(change: Reading, other: Reading) -> bool:
    """ "I switched to Asics for running" / "my running shoes are Brooks": what a change is
    for, with one noun more, names what the other statement is about."""
    if not (change.purpose and change.clause.any_relation) or other.derived:
        return False
    owner = subject_key(change.clause.subject)
    named = _unowned(other.subject)
    return (
        subjects_match(owner + named[:-1], owner + change.subject)
        and len(named) == len(change.subject) + 1
        and named[-1] not in PERSON_NOUNS
        and other.subject[:1] == owner[:1]
    )


def _one_word_apart(a: Reading, b: Reading) -> bool:
    """ "The streaming plan costs $12" / "the plan is $15 now", "yoga class" / "yoga": in an
    update, a subject named with one word more or less (not an owner's word: "Sara's husband"
    is not Sara, "my sister's rent" not my rent)."""
    if not (a.derived == b.derived or a.activity or b.activity or _extends(a) and _extends(b)):
        return False
    shorter, longer = sorted((_unowned(a.subject), _unowned(b.subject)), key=len)
    if not shorter or len(longer) != len(shorter) + 1:
        return False
    named_shortly = a if len(_unowned(a.subject)) < len(_unowned(b.subject)) else b
    if not (named_shortly.clause.update or named_shortly.clause.any_relation):
        return False  # "the half marathon was postponed" is not the marathon
    extra = next((i for i, key in enumerate(shorter) if key != longer[i]), len(shorter))
    if longer[:extra] + longer[extra + 1 :] != shorter:
        return False
    if extra == len(shorter) and longer[extra] in PERSON_NOUNS:
        return False  # "Jess" / "Jess mum": another person, not a longer name
    stated = [reading.clause.subject for reading in (a, b) if not reading.derived]
    owned = any(
        word.possessive and word.surface not in POSSESSIVE_DETERMINERS
        for subject in stated
        for word in subject
    )
    named = any(
        word.proper
        for reading in (a, b)
        for word in reading.clause.subject + reading.clause.value
        if word.key == longer[extra]
    )
    return not (owned or named)


def _extends(reading: Reading) -> bool:
    """A reading whose subject is the clause's subject, or it with the noun naming the
    attribute ("the gala is at the Ritz": the gala's venue)."""
    stated = subject_key(reading.clause.subject)
    return reading.subject[: len(stated)] == stated


def _unowned(subject: tuple[str, ...]) -> tuple[str, ...]:
    return subject[1:] if len(subject) > 1 and subject[0] in OWNERS else subject


def alike_values(a: Words, b: Words) -> bool:
    """Two values of one frame: one word apart ("year 5" / "year 6") or one head ("the first
    floor" / "the ground floor")."""
    return _one_word_differs(a, b) or _same_head(a, b)


def _one_word_differs(a: Words, b: Words) -> bool:
    """Two values of two or more words that differ in one word ("year 5" / "year 6", "the
    data team" / "the platform team"): one frame, two fillers."""
    if len(a) != len(b) or len(a) < 2:
        return False
    return sum(x.key != y.key for x, y in zip(a, b, strict=True)) == 1


def _same_head(a: Words, b: Words) -> bool:
    """Two values that name one kind of thing, told apart by a word before it ("the Pro tier"
    / "the Standard tier", "the first floor" / "the ground floor")."""
    head_a, head_b = slots(a)[:1], slots(b)[:1]
    if not head_a or not head_b or head_a[0][0] or head_b[0][0]:
        return False
    first_a, first_b = head_a[0][1], head_b[0][1]
    return (
        len(first_a) >= 2
        and len(first_b) >= 2
        and first_a[-1].key == first_b[-1].key
        and keys(first_a) != keys(first_b)
        and item_type(first_a[-1]) is None
    )


def _share_a_category(a: Words, b: Words) -> bool:
    kinds_a = {kind for kind in value_kinds(a) if kind.startswith("category:")}
    return bool(kinds_a & value_kinds(b))


Alignment = tuple[Reading, Reading, Reading | None]


def align(a: Clause, b: Clause) -> Alignment | None:
    """The first readings of two clauses that are about one attribute, if any: readings a
    change fits first, else the first that align, with the reading whose attribute the change
    is not about (see :func:`changes_another_attribute`)."""
    first = None
    for reading_a in readings(a):
        for reading_b in readings(b):
            if subjects_align(reading_a, reading_b) and relations_align(reading_a, reading_b):
                unfit = changes_another_attribute(reading_a, reading_b)
                if unfit is None:
                    return reading_a, reading_b, None
                first = first or (reading_a, reading_b, unfit)
    return first


def changes_another_attribute(a: Reading, b: Reading) -> Reading | None:
    """The side of two aligned readings that is a change about another attribute than the
    other side states ("I switched to Zed" / "I work at Google"), if any."""
    for change, other in ((a, b), (b, a)):
        if (
            change.clause.any_relation
            and change.relation != other.relation
            and not change_fits(change, other)
        ):
            return other
    return None


def names_single_attribute(subject: tuple[str, ...]) -> bool:
    """Whether a subject names an attribute with one value ("the default branch", "Ana's
    manager", "my favourite food")."""
    return bool(subject) and (
        subject[-1] in SINGLE_VALUED_NOUNS or bool(SINGLE_VALUED_MODIFIERS & set(subject))
    )


def describes(reading: Reading) -> bool:
    """Whether a reading says what its subject is like rather than which it is: a noun of
    one value ("my husband", "my job", "the deadline") with a descriptive value ("is
    supportive", "is boring", "is tight"), where naming it takes a name, a determiner or a
    role ("is John", "is a nurse", "is head of sales"). "My favourite food is sushi" names: a
    modifier ("favourite", "main") makes the copula say which."""
    return (
        reading.clause.descriptive
        and reading.relation[:1] == ("be",)
        and not reading.derived
        and not SINGLE_VALUED_MODIFIERS & set(reading.subject)
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
    now = a.clause.update or b.clause.update
    addition = a.clause.addition or b.clause.addition
    if (changed or now) and not addition and exclusivity in {DEFAULT, COUNT, SINGLE}:
        return UPDATED  # a change says the attribute now holds this value, not another
    if (changed or now) and not addition and _one_word_differs(a.value, b.value):
        return UPDATED  # "Ahmed now manages the platform team" / "... the data team"
    if a.activity or b.activity:
        return DEFAULT  # "I go climbing on Tuesdays" and on Saturdays, unless it changed
    return exclusivity


def value_kinds(value: Words) -> frozenset[str]:
    """The kinds of typed items in a value (see values.item_type)."""
    return frozenset(kind for kind in (item_type(word) for word in value) if kind is not None)


def _share_a_detail(a: Words, b: Words) -> bool:
    """Two values with one slot after the first in common ("... at the cafe")."""
    details_a = {(preposition, keys(slot)) for preposition, slot in slots(a)[1:]}
    return bool(details_a) and any(
        (preposition, keys(slot)) in details_a for preposition, slot in slots(b)[1:]
    )


def change_fits(change: Reading, other: Reading) -> bool:
    """Whether a change ("moved to Thursday", "switched to a Pixel") can be about the
    attribute the other statement states. A value the other states was replaced outright;
    otherwise the new value must be of the same kind as the other value (a day for a day, a
    place for a place, a phone for a phone); two plain names fit only for a thing or an event
    ("the office moved to Canary Wharf"), not for a person, who has many named attributes.
    Values of one frame fit too ("the Pro tier" / "the Standard tier", "weekdays at the cafe" /
    "weekends at the cafe")."""
    if change.clause.replaced or change.purpose or other.purpose or names_another(change.value):
        return True
    kinds_change, kinds_other = value_kinds(change.value), value_kinds(other.value)
    strong_change, strong_other = kinds_change - {"name"}, kinds_other - {"name"}
    if strong_change & strong_other:
        return True
    if not (strong_change or strong_other) and not is_person(change.clause.subject):
        return True
    return _share_a_detail(change.value, other.value) or _same_head(change.value, other.value)
