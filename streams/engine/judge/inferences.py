"""Conflicts that follow from what a statement implies rather than from one shared attribute.

* *One value per subject*: two members of a per-subject category (licences, diets, relationship
  status, work arrangement, full- or part-time) said of one subject conflict whatever the verbs
  ("uses the MIT license" / "is BSD-licensed", "is engaged to Felix" / "is single").
* *A way of living and what it rules out*: "Marco is vegetarian" / "Marco eats meat".
* *A denied category and an owned member of it*: "The user has no children" / "The user's son
  starts school in May"; "I don't own any pets" / "I walk my dog".
* *A duty taken over*: "Jess walks our dog" / "Marco walks the dog now", "Hannah manages the
  front desk" / "Leo took over the front desk": one particular thing, a duty relation
  (``duty_relations``), two holders, one of them stated as a change.
"""

from __future__ import annotations

from .attributes import CATEGORY_MEMBERS, subject_key, subjects_match
from .judgement import (
    CATEGORY_NEGATION_CONFIDENCE,
    EXCLUSION_CONFIDENCE,
    VALUE_CONFIDENCE,
    Judgement,
)
from .lexicons import (
    CONSUMING_VERBS,
    COUNT_VERBS,
    DUTY_RELATION_PHRASES,
    EXCLUSIONS,
    PLANT_BASED_MODIFIERS,
    POSSESSIVE_DETERMINERS,
)
from .parse import PAST, Clause
from .values import category_members, part_of, per_subject_members
from .words import keys, phrase_key, show


def judge_per_subject(a: Clause, b: Clause) -> Judgement | None:
    if a.negated or b.negated or (a.tense != b.tense and not (a.update or b.update)):
        return None
    if not subjects_match(subject_key(a.subject), subject_key(b.subject)):
        return None
    members_a, members_b = per_subject_members(a.predicate), per_subject_members(b.predicate)
    for category in sorted(members_a.keys() & members_b.keys()):
        x, y = members_a[category], members_b[category]
        if x.key == y.key or part_of(x.key, y.key) or part_of(y.key, x.key):
            continue
        rest_a = set(keys(a.predicate)) - {x.key}
        rest_b = set(keys(b.predicate)) - {y.key}
        if rest_a and rest_b and rest_a != rest_b:
            continue  # "part-time at a cafe" / "full-time at a bank": two different jobs
        return Judgement(
            True,
            VALUE_CONFIDENCE["category"],
            "conflicting_value",
            f"conflicting values for the {category} of '{show(a.subject)}': "
            f"'{x.shown}' vs '{y.shown}' (one {category} at a time)",
        )
    return None


DUTY_RELATIONS = frozenset(phrase_key(phrase) for phrase in DUTY_RELATION_PHRASES)
TAKE = ("take",)


def _is_takeover(clause: Clause) -> bool:
    return clause.any_relation and clause.relation_key == TAKE


def _particular(clause: Clause) -> tuple[str, ...]:
    """The keys of a particular thing a clause is about ("our dog", "the lawn"), without its
    owner's word; empty when the value is not one particular thing."""
    if not (clause.definite or _is_takeover(clause)):
        return ()
    return tuple(word.key for word in clause.value if word.surface not in POSSESSIVE_DETERMINERS)


def judge_new_holder(a: Clause, b: Clause) -> Judgement | None:
    """ "Jess walks our dog" / "Marco walks the dog now", "Leo took over the front desk" /
    "Hannah manages the front desk": one duty, stated as changed to another person."""
    if a.negated or b.negated or a.addition or b.addition or not (a.update or b.update):
        return None
    if a.tense == PAST or b.tense == PAST:
        return None
    relation_a, relation_b = a.relation_key, b.relation_key
    if relation_a != relation_b and not (_is_takeover(a) or _is_takeover(b)):
        return None
    if not ({relation_a, relation_b} - {TAKE}) <= DUTY_RELATIONS:
        return None
    held = _particular(a)
    if not held or held != _particular(b):
        return None
    holder_a, holder_b = subject_key(a.subject), subject_key(b.subject)
    if not holder_a or not holder_b or len(holder_a) > 3 or len(holder_b) > 3:
        return None
    if set(holder_a) & set(holder_b):
        return None  # "our team" / "our new team": not two holders
    new, old = (a, b) if a.update else (b, a)
    return Judgement(
        True,
        VALUE_CONFIDENCE["name"],
        "conflicting_value",
        f"conflicting values for who holds '{show(new.value)}': '{show(new.subject)}' "
        f"(stated as a change) vs '{show(old.subject)}'",
    )


def judge_exclusion(claim: Clause, other: Clause) -> Judgement | None:
    """ "Marco is vegetarian" / "Marco eats meat"."""
    if claim.negated or other.negated or claim.tense != other.tense:
        return None
    if other.relation_key[0] not in CONSUMING_VERBS:
        return None
    if not subjects_match(subject_key(claim.subject), subject_key(other.subject)):
        return None
    for word in claim.predicate:
        for excluded in EXCLUSIONS.get(word.key, ()):
            members = CATEGORY_MEMBERS.get(excluded, frozenset({excluded}))
            eaten = next(
                (
                    w
                    for i, w in enumerate(other.value)
                    if w.key in members
                    and not (i and other.value[i - 1].key in PLANT_BASED_MODIFIERS)
                ),
                None,
            )
            if eaten is not None:
                return Judgement(
                    True,
                    EXCLUSION_CONFIDENCE,
                    "conflicting_value",
                    f"conflicting values for '{show(claim.subject)}': '{word.shown}' rules out "
                    f"'{eaten.shown}' ('{claim.text}' vs '{other.text}')",
                )
    return None


def owned(clause: Clause) -> list[tuple[tuple[str, ...], str]]:
    """What the clause says someone owns, as (owner, thing): "the user's son", "Ali's flat's
    parking spot" (the flat owns the parking and the spot), "I walk my dog" (in the value)."""
    found = []
    subject = subject_key(clause.subject)
    owners = [i for i, word in enumerate(clause.subject) if word.possessive]
    if owners and owners[-1] + 1 < len(clause.subject) and len(subject) == len(clause.subject):
        cut = owners[-1] + 1
        found += [(subject[:cut], thing) for thing in subject[cut:]]
    for owner, thing in zip(clause.value, clause.value[1:], strict=False):
        if owner.possessive:
            found.append(((owner.key,), thing.key))
    return found


def judge_owned_member(denial: Clause, other: Clause) -> Judgement | None:
    """ "The user has no children" / "The user's son starts school in May"."""
    if not denial.negated or denial.tense == PAST or other.negated or not denial.value:
        return None
    if denial.relation_key[0] not in COUNT_VERBS:
        return None
    owner = subject_key(denial.subject)
    members = category_members(denial.value) | {denial.value[-1].key}
    for holder, thing in owned(other):
        if thing in members and subjects_match(owner, holder):
            return Judgement(
                True,
                CATEGORY_NEGATION_CONFIDENCE,
                "negation",
                f"negation: '{denial.text}' denies the '{thing}' that '{other.text}' speaks of",
            )
    return None
