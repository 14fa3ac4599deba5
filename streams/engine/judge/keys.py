"""Blocking keys: the (subject, single-valued attribute) pairs a statement makes a claim about.

``attribute_keys(text)`` lets the engine index facts so that a correction can find the fact it
corrects even when the two sentences look little alike ("Bruno's phone number is ..." / "Bruno
has a new phone number: ..."). Two statements the judge calls contradictory because they give
one attribute two values share a key; unrelated statements rarely do. A key is
``"<subject>|<attribute>"``, where the attribute is one of:

* the attribute itself, when it holds one value: the noun after a possessive ("bruno|phone
  number", "user|main editor"), the noun before "for" ("nimbus review|budget"), the noun a
  relation states ("bea|project" for "Bea works on Atlas") or the relation ("user|live in",
  "cobalt launch|be at");
* the type of a value the attribute holds one of ("cobalt launch|date", "user|category:editor",
  "one on one with dario|time"; for a person, numbers and amounts with their relation, "user|
  have number"): a change ("moved to November 15", "switched to Zed") names no relation, only
  its new value, so it meets the statement it changes here;
* ``*`` for a thing (not a person) given a name or a code ("wifi password|*"), which a change
  to another one ("was changed to tulip77") also states;
* a per-subject category ("tomas|category:relationship status") or what a way of living rules
  out ("marco|rules out:meat", for "Marco is vegetarian" and "Marco eats meat").

Questions, denials, a person's past, multi-valued relations ("speaks French") and chit-chat
have no keys, nor do contradictions of polarity alone ("I love jazz" / "I can't stand jazz"):
those two sentences share their words, so similarity already pairs them. Subjects are read as
the judge compares them: an owner on one side ("our budget" / "the budget"), how often an
event recurs ("my weekly one-on-one") and a description in apposition ("my neighbour Tariq")
are dropped.
"""

from __future__ import annotations

from functools import lru_cache

from .attributes import (
    ATTRIBUTE,
    CATEGORY_MEMBERS,
    FIRING,
    MULTI,
    OWNERS,
    PRONOUNS,
    SINGLE,
    UPDATED,
    Reading,
    attribute_class,
    is_person,
    named_in_apposition,
    names_single_attribute,
    readings,
    subject_key,
    without_recurrence,
)
from .lexicons import CONSUMING_VERBS, EXCLUSIONS, ROLE_NOUNS
from .parse import PAST, Clause, parse
from .values import SLOT_PREPOSITIONS, item_type, per_subject_members
from .words import Word, Words, verb_base

ANY = "*"
HOLDER = "holder"  # who holds a role: "team lead|holder"
WAY_OF_LIVING = "rules out"
ALL_EXCLUDED = frozenset(excluded for found in EXCLUSIONS.values() for excluded in found)


def _excluded_as() -> dict[str, frozenset[str]]:
    """Word → the excluded things it is (a member of that category, or the thing itself):
    a way of living's keys are found per word of the value, not per excluded thing."""
    found: dict[str, set[str]] = {}
    for excluded in ALL_EXCLUDED:
        for member in CATEGORY_MEMBERS.get(excluded, frozenset({excluded})):
            found.setdefault(member, set()).add(excluded)
    return {member: frozenset(things) for member, things in found.items()}


_EXCLUDED_AS = _excluded_as()
# Subjects that name nothing a fact could be about: pronouns left unresolved, question words.
NOT_SUBJECTS = frozenset({"it", "that", "this", "there", "here", "what", "where", "which", "who"})
# The kind of exclusive difference each typed value makes (see values.compare_items).
_KIND_OF_TYPE = {"phone": "number", "email": "name"}


def _kind(value_type: str) -> str:
    if value_type == "quantity:period":
        return "period"
    return _KIND_OF_TYPE.get(value_type, value_type.split(":", 1)[0])


def _joined(subject: tuple[str, ...]) -> str:
    subject = without_recurrence(subject)
    if len(subject) > 1 and subject[0] in OWNERS:
        subject = subject[1:]  # "our budget" and "the budget" are one subject
    return " ".join(subject)


def _owner_and_noun(words: Words) -> tuple[str, str] | None:
    """ "Bruno's phone number" → (bruno, phone number); "the budget for the Nimbus review" →
    (nimbus review, budget)."""
    words = named_in_apposition(words)
    owners = [i for i, word in enumerate(words[:-1]) if word.possessive]
    if owners:
        cut = owners[-1] + 1
        owner, noun = subject_key(words[:cut]), subject_key(words[cut:])
        return (" ".join(owner), " ".join(noun)) if owner and noun else None
    at = next((i for i, word in enumerate(words) if word.key == "for"), None)
    if at is not None and 0 < at < len(words) - 1:
        owner, noun = subject_key(words[at + 1 :]), subject_key(words[:at])
        return (_joined(owner), " ".join(noun)) if owner and noun else None
    return None


def _value_type(word: Word) -> str | None:
    """The type of a value word that can tell one value of an attribute from another. Not
    opposites (a flipped word makes a denial, not another value), not "one" ("this one"),
    nor a verb read as a member of a category ("going" is not the language Go)."""
    if word.key in SLOT_PREPOSITIONS or word.surface == "one":
        return None
    found = item_type(word)
    if found is None or found.startswith("antonym:"):
        return None
    if found.startswith("category:") and word.surface != word.key == verb_base(word.surface):
        return None
    return found


def _names(value: Words) -> bool:
    """Whether a value names something: a proper name or an identifier ("sunflower42")."""
    return any(word.proper or not word.key.isalpha() for word in value)


def _reading_keys(reading: Reading, subject: str, person: bool) -> set[str]:
    """Keys of one reading of a clause; ``subject`` is the clause's subject as a key."""
    clause = reading.clause
    exclusivity = attribute_class(reading, reading)
    if not reading.value:
        return set()
    found: set[str] = set()
    relation = " ".join(reading.relation)
    named = reading.relation == ("be",) or clause.any_relation
    split = _owner_and_noun(clause.subject) if named else None
    if exclusivity == MULTI:
        pass  # only a kind of value that still fires ("meets every 2 weeks"), below
    elif reading.holder or _names_a_role(reading):
        found.add(f"{' '.join(reading.subject)}|{HOLDER}")  # "Tom is the team lead"
    elif reading.purpose:
        found.add(f"{subject}|for {_joined(reading.subject)}")  # "we use CircleCI for CI"
    elif reading.activity:
        found.add(f"{' '.join(reading.subject)}|{relation}")  # "I go climbing on Tuesdays"
    elif reading.derived:
        noun = reading.subject[len(subject_key(clause.subject)) :]
        found.add(f"{subject}|{' '.join(noun)}")  # "works on Atlas": the project
    elif split is not None:
        found.add(f"{split[0]}|{split[1]}")  # "Bruno's phone number is ..."
    elif exclusivity in {ATTRIBUTE, SINGLE, UPDATED} and not clause.any_relation:
        found.add(f"{subject}|{relation}")  # "lives in", "is scheduled for"
    firing = FIRING[exclusivity]
    types = {_value_type(word) for word in reading.value} - {None}
    for value_type in sorted(t for t in types if t is not None and _kind(t) in firing):
        if not person:
            found.add(f"{subject}|{value_type}")
        elif value_type.startswith("category:") or value_type == "place":
            found.add(f"{subject}|{value_type}")  # "I switched to Zed": an editor
        elif _kind(value_type) != "name" and not clause.any_relation:
            found.add(f"{subject}|{relation} {value_type}")  # "I have 2 kids"
    plain = exclusivity != MULTI and types <= {"name"}
    if not person and plain and (_names(reading.value) or names_single_attribute(reading.subject)):
        found.add(f"{subject}|{ANY}")  # a thing's plain value, which any change may replace
    return found


def _names_a_role(reading: Reading) -> bool:
    """ "The team lead is Ana (now)": a role's holder, stated of the role."""
    value = reading.value
    return (
        (reading.relation == ("be",) or reading.clause.any_relation)
        and bool(reading.subject)
        and reading.subject[0] not in OWNERS  # "my manager is Dan": "user|manager", above
        and reading.subject[-1] in ROLE_NOUNS
        and 0 < len(value) <= 3
        and not any(word.possessive or word.quantity or word.date for word in value)
    )


def _ways_of_living(clause: Clause) -> set[str]:
    """What a way of living rules out, on both sides: "Marco is vegetarian" (meat, seafood)
    and "Marco eats meat" (meat), which contradict (see inferences.judge_exclusion)."""
    ruled_out = {excluded for word in clause.predicate for excluded in EXCLUSIONS.get(word.key, ())}
    if clause.relation_key[0] in CONSUMING_VERBS:
        ruled_out |= {
            excluded for word in clause.value for excluded in _EXCLUDED_AS.get(word.key, ())
        }
    return ruled_out


def _clause_keys(clause: Clause) -> set[str]:
    if clause.negated or (clause.tense == PAST and is_person(clause.subject)):
        return set()  # a denial or a person's past period states no current value
    subject = _joined(subject_key(clause.subject))
    if not subject or set(subject.split()) <= NOT_SUBJECTS:
        return set()
    person = subject in OWNERS | PRONOUNS or is_person(named_in_apposition(clause.subject))
    found = {f"{subject}|category:{category}" for category in per_subject_members(clause.predicate)}
    found |= {f"{subject}|{WAY_OF_LIVING}:{ruled_out}" for ruled_out in _ways_of_living(clause)}
    for reading in readings(clause):
        found |= _reading_keys(reading, subject, person)
    return found


@lru_cache(maxsize=8192)
def attribute_keys(text: str) -> frozenset[str]:
    """The normalised ``"subject|attribute"`` keys of the single-valued attributes ``text``
    states a value of (see the module doc); empty when it states none."""
    if text.rstrip().endswith("?"):
        return frozenset()  # a question claims nothing
    found: set[str] = set()
    for clause in parse(text).clauses:
        found |= _clause_keys(clause)
    return frozenset(found)
