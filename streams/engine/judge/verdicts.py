"""The rules that decide whether two parsed statements contradict.

1. **Otherwise-equal statements.** The same content words in the same order: opposite polarity
   is a contradiction (cue ``antonym`` when antonyms differ, ``negation`` otherwise) if the two
   can be about the same time; the same polarity is an equivalent statement.
2. **Aligned clauses** (same subject and the same attribute: the same relation, a preference
   verb on both sides, an update on one side, or a relation and the noun naming its attribute,
   "works on" / "current project"):

   * *opposite polarity* contradicts when the denied value covers the asserted one (the same
     value, a more general one, a place or category containing it: "has no pets" / "has a
     cat") and the times overlap ("have never" covers every time; past and present do not);
   * *both affirmative, same time* conflict (cue ``conflicting_value``) when the values are
     exclusive in a way that fires for the attribute: see :data:`FIRES_FOR`.
3. **One value per subject.** Two members of a per-subject category (licences, diets,
   relationship status, work arrangement, full- or part-time) stated of one subject conflict
   whatever the verbs ("uses the MIT license" / "is BSD-licensed").
4. **A way of living and what it rules out.** "Marco is vegetarian" / "Marco eats meat".
5. **A denied category and a member of it owned.** "The user has no children" / "The user's son
   starts school in May".
6. **A duty taken over.** "Jess walks our dog" / "Marco walks the dog now": one particular thing
   done by another person, stated as a change.

Rules 3 to 6 live in :mod:`.inferences`; which attribute a clause states and how many values
it holds, in :mod:`.attributes`; how two values compare, in :mod:`.values`.

Guards (no false alarms): subjects and attributes must match; elaborations, refinements,
synonyms, part-of and unit-equivalent values are related, never exclusive; multi-valued
attributes hold several values; past and present statements do not overlap (but an update is a
present claim); a difference in several places is a conflict only when every differing part is
exclusive, otherwise the parts are contexts ("tea in the evening" / "coffee in the morning").
A statement that adds a value ("also", "too") conflicts with none; a question states nothing;
an update's plain words conflict only for one particular thing on both sides ("at the school" /
"at the church hall"), values of one frame ("the first floor" / "the ground floor") or a
change verb ("moved to"), not "my brother is at work now" / "is at university".
"""

from __future__ import annotations

from functools import lru_cache

from .attributes import (
    ATTRIBUTE,
    FIRING,
    MULTI,
    UPDATED,
    Reading,
    align,
    alike_values,
    attribute_class,
    describes,
    is_person,
    recurs_weekly_or_less,
)
from .inferences import judge_exclusion, judge_new_holder, judge_owned_member, judge_per_subject
from .judgement import (
    ANTONYM_CONFIDENCE,
    BOTH_NEGATIVE_CONFIDENCE,
    COVERED_NEGATION_CONFIDENCE,
    DIFFERENT_TIMES_CONFIDENCE,
    EQUIVALENT_CONFIDENCE,
    MULTI_VALUED_CONFIDENCE,
    NEGATION_CONFIDENCE,
    RELATED_VALUES_CONFIDENCE,
    UNCERTAIN_VALUES_CONFIDENCE,
    UNRELATED_CONFIDENCE,
    VALUE_CONFIDENCE,
    Judgement,
    no_contradiction,
)
from .lexicons import (
    COUNT_VERBS,
    PREFERENCE_RELATIONS,
    SINGLE_VALUED_PREFERENCES,
    STATE_OF_MIND_RELATIONS,
)
from .parse import PAST, PERFECT, Clause, Statement, parse, word_keys
from .values import OPEN, RELATED, SAME, compare_values, covers, without_own_purpose
from .words import ANTONYM_CANONICALS, Words, keys, show


def _times_overlap(negated: Clause, asserted: Clause) -> bool:
    """Whether a denial and an assertion speak of one time: the same tense, or a perfect
    denial ("I have never used X"), which covers every time up to now."""
    return negated.tense == asserted.tense or negated.tense == PERFECT


# --- explanations -------------------------------------------------------------------------


def _antonym_pairs(a: Words, b: Words) -> list[tuple[str, str]]:
    """Antonyms that differ between two word sequences, as (word in a, word in b)."""
    in_b = {(word.key, word.flipped): word.shown for word in reversed(b)}
    return [
        (word.shown, in_b[(word.key, not word.flipped)])
        for word in a
        if word.key in ANTONYM_CANONICALS and (word.key, not word.flipped) in in_b
    ]


def _always_never(a: Statement, b: Statement) -> list[tuple[str, str]]:
    """ "always" against "never": opposite frequencies, not a plain negation."""
    if "never" in b.negators and "always" in a.adverbs:
        return [("always", "never")]
    if "never" in a.negators and "always" in b.adverbs:
        return [("never", "always")]
    return []


def _opposite(
    pairs: list[tuple[str, str]],
    negated_text: str,
    other_text: str,
    negators: tuple[str, ...],
    confidence_scale: float,
    about: str,
    texts: tuple[str, str],
) -> Judgement:
    """The contradiction of two statements with opposite polarity: antonym or negation."""
    if pairs:
        shown = ", ".join(f"'{x}' vs '{y}'" for x, y in pairs)
        return Judgement(
            True,
            ANTONYM_CONFIDENCE * confidence_scale,
            "antonym",
            f"antonyms {shown} {about} ('{texts[0]}' vs '{texts[1]}')",
        )
    named = ", ".join(f"'{n}'" for n in negators) or "a negation"
    return Judgement(
        True,
        NEGATION_CONFIDENCE * confidence_scale,
        "negation",
        f"negation: {named} in '{negated_text}' denies '{other_text}' {about}".rstrip(),
    )


# --- rule 1: otherwise-equal statements ---------------------------------------------------


def _judge_equal_words(a: Statement, b: Statement) -> Judgement:
    if a.polarity == b.polarity:
        differing = [
            (x.shown, y.shown)
            for x, y in zip(a.words, b.words, strict=True)
            if x.surface != y.surface
        ]
        if differing:
            shown = ", ".join(f"'{x}' = '{y}'" for x, y in differing)
            return no_contradiction(
                EQUIVALENT_CONFIDENCE, f"the statements say the same thing ({shown})"
            )
        return no_contradiction(EQUIVALENT_CONFIDENCE, "the statements say the same thing")
    negated, other = (a, b) if a.polarity else (b, a)
    if negated.tense != other.tense and negated.tense != PERFECT:
        return no_contradiction(DIFFERENT_TIMES_CONFIDENCE, "one statement is about the past")
    return _opposite(
        _antonym_pairs(a.words, b.words) + _always_never(a, b),
        negated.text,
        other.text,
        negated.negators,
        1.0,
        "in otherwise equal statements",
        (a.text, b.text),
    )


# --- rule 2: aligned clauses --------------------------------------------------------------


def _judge_opposite_polarity(a: Reading, b: Reading, attribute: str) -> Judgement:
    asserted, negated = (a, b) if b.clause.negated else (b, a)
    if not _times_overlap(negated.clause, asserted.clause):
        return no_contradiction(
            DIFFERENT_TIMES_CONFIDENCE, f"'{attribute}' at different times (past/now)"
        )
    denies_the_activity = (
        not negated.value
        and not negated.clause.is_copula
        and asserted.relation[: len(negated.relation)] == negated.relation
    )
    if not (denies_the_activity or covers(negated.value, asserted.value)):
        return no_contradiction(
            BOTH_NEGATIVE_CONFIDENCE,
            f"'{show(negated.value)}' is denied, '{show(asserted.value)}' is asserted",
        )
    if negated.clause.replaced:
        what = "a change" if negated.clause.update else "a correction"
        return Judgement(
            True,
            NEGATION_CONFIDENCE,
            "negation",
            f"negation: {what} in '{negated.clause.text}' replaces '{show(negated.value)}', "
            f"which '{asserted.clause.text}' still states about '{attribute}'",
        )
    exact = keys(negated.value) == keys(asserted.value) or denies_the_activity
    if not exact and {a.relation[0], b.relation[0]} & STATE_OF_MIND_RELATIONS:
        return no_contradiction(  # "I don't think I can do this" / "I think I'd prefer X"
            BOTH_NEGATIVE_CONFIDENCE,
            f"'{show(negated.value)}' is not thought, '{show(asserted.value)}' is",
        )
    scale = 1.0 if exact else COVERED_NEGATION_CONFIDENCE / NEGATION_CONFIDENCE
    negators = tuple(w.surface for w in negated.clause.relation if w.flipped) or ("not",)
    if "never" in negated.clause.text.split():
        negators = ("never",)
    return _opposite(
        _antonym_pairs(a.clause.relation + a.value, b.clause.relation + b.value),
        negated.clause.text,
        asserted.clause.text,
        negators,
        scale,
        f"about '{attribute}'",
        (a.clause.text, b.clause.text),
    )


def _judge_aligned(a: Reading, b: Reading, other: Reading | None) -> Judgement:
    """``other``: the reading whose attribute a change on the other side is not about."""
    stated = b if a.clause.any_relation and not b.clause.any_relation else a
    attribute = stated.clause.attribute
    if other is not None:
        return no_contradiction(
            UNRELATED_CONFIDENCE, f"the change is not about '{other.clause.attribute}'"
        )
    if a.clause.negated != b.clause.negated:
        return _judge_opposite_polarity(a, b, attribute)
    if a.clause.negated:
        return no_contradiction(
            BOTH_NEGATIVE_CONFIDENCE, f"both statements deny a value of '{attribute}'"
        )
    if a.clause.tense != b.clause.tense:
        return no_contradiction(
            DIFFERENT_TIMES_CONFIDENCE, f"'{attribute}' at different times (past/now)"
        )
    if a.clause.tense == PAST and is_person(a.clause.subject) and "born" not in attribute:
        return no_contradiction(
            DIFFERENT_TIMES_CONFIDENCE, f"two past facts about '{attribute}' may be two periods"
        )
    return _judge_both_affirmative(a, b, attribute)


def _judge_both_affirmative(a: Reading, b: Reading, attribute: str) -> Judgement:
    """Two values stated for one attribute at one time: a conflict when they are exclusive
    in a way that counts for this attribute (see attributes.FIRES_FOR)."""
    if not a.value or not b.value:
        return no_contradiction(UNRELATED_CONFIDENCE, f"no value to compare for '{attribute}'")
    if a.clause.addition or b.clause.addition:
        return no_contradiction(
            MULTI_VALUED_CONFIDENCE, f"'{attribute}' gains a value ('also', 'too'), keeps the other"
        )
    preferences = {a.relation[0], b.relation[0]} <= PREFERENCE_RELATIONS
    if a.relation != b.relation and preferences:
        # aligned only as preferences: "I like Python" / "I prefer Go" can both hold
        return no_contradiction(
            MULTI_VALUED_CONFIDENCE, "liking one thing and preferring another can both hold"
        )
    exclusivity = attribute_class(a, b)
    minds = {a.relation[0], b.relation[0]} & STATE_OF_MIND_RELATIONS  # "I feel", "I think"
    one_day = recurs_weekly_or_less(a.subject) or recurs_weekly_or_less(b.subject)
    value_a, value_b = a.value, b.value
    if a.clause.any_relation or a.clause.update:
        value_a = without_own_purpose(value_a, value_b)  # "moved to Tampa for the sun"
    if b.clause.any_relation or b.clause.update:
        value_b = without_own_purpose(value_b, value_a)
    comparison = compare_values(value_a, value_b, FIRING[exclusivity], one_day=one_day)
    shown = f"'{show(a.value)}' vs '{show(b.value)}'"
    if comparison.verdict in {SAME, RELATED}:
        return no_contradiction(RELATED_VALUES_CONFIDENCE, f"{comparison.reason} ({shown})")
    if comparison.verdict == OPEN:
        return no_contradiction(UNCERTAIN_VALUES_CONFIDENCE, f"{comparison.reason} ({shown})")
    if {a.relation[0], b.relation[0]} <= COUNT_VERBS and comparison.kind == "generic":
        return no_contradiction(
            MULTI_VALUED_CONFIDENCE,
            f"one can have both '{show(a.value)}' and '{show(b.value)}'",
        )
    if minds and comparison.kind != "antonym":
        return no_contradiction(
            MULTI_VALUED_CONFIDENCE,
            f"one can {min(minds)} '{show(a.value)}' and '{show(b.value)}' (not opposites)",
        )
    unrelated_preferences = (
        comparison.kind == "generic"
        and a.relation[0] in SINGLE_VALUED_PREFERENCES
        and not set(keys(a.value)) & set(keys(b.value))
    )
    loosely_updated = (
        comparison.kind == "generic"
        and exclusivity == UPDATED
        and not (a.clause.any_relation or b.clause.any_relation)
        and not (a.clause.definite and b.clause.definite)
        and not (a.holder or b.holder)
        and not alike_values(a.value, b.value)
    )  # "my brother is at university" / "... at work now": not one attribute's two values
    described = (
        comparison.kind == "generic" and exclusivity == ATTRIBUTE and (describes(a) or describes(b))
    )  # "my husband is supportive" / "... is busy": what he is like, not who he is
    if (
        comparison.kind not in FIRING[exclusivity]
        or unrelated_preferences
        or loosely_updated
        or described
    ):
        confidence = (
            MULTI_VALUED_CONFIDENCE if exclusivity == MULTI else UNCERTAIN_VALUES_CONFIDENCE
        )
        both = f"'{show(a.value)}' and '{show(b.value)}'"
        return no_contradiction(confidence, f"'{attribute}' can hold both {both}")
    changed = " (stated as a change)" if a.clause.update or b.clause.update else ""
    return Judgement(
        True,
        VALUE_CONFIDENCE[comparison.kind],
        "antonym" if comparison.kind == "antonym" else "conflicting_value",
        f"conflicting values for '{attribute}': {shown} ({comparison.reason}){changed}",
    )


# --- the judge ----------------------------------------------------------------------------


def _judge_clauses(a: Clause, b: Clause) -> Judgement:
    aligned = align(a, b)
    verdict = (
        _judge_aligned(*aligned)
        if aligned is not None
        else no_contradiction(
            UNRELATED_CONFIDENCE,
            f"different subject or attribute ('{a.attribute}' vs '{b.attribute}')",
        )
    )
    if verdict.contradicts:
        return verdict
    inferences = (
        (judge_per_subject, a, b),
        (judge_new_holder, a, b),
        (judge_exclusion, a, b),
        (judge_exclusion, b, a),
        (judge_owned_member, a, b),
        (judge_owned_member, b, a),
    )
    for rule, first, second in inferences:
        inferred = rule(first, second)
        if inferred is not None:
            return inferred
    return verdict


def _strongest(verdicts: list[Judgement]) -> Judgement:
    """The first contradiction with the highest confidence, else the most confident "none"."""
    best = verdicts[0]
    for verdict in verdicts[1:]:
        if (verdict.contradicts, verdict.confidence) > (best.contradicts, best.confidence):
            best = verdict
    return best


def judge_statements(a: Statement, b: Statement) -> Judgement:
    """Whether ``a`` and ``b`` contradict, explained in ``a``-then-``b`` order."""
    if a.question or b.question:
        return no_contradiction(UNRELATED_CONFIDENCE, "a question states nothing")
    if word_keys(a) == word_keys(b):
        return _judge_equal_words(a, b)
    if not a.clauses or not b.clauses:
        return no_contradiction(UNRELATED_CONFIDENCE, "the statements are about different things")
    return _strongest([_judge_clauses(x, y) for x in a.clauses for y in b.clauses])


@lru_cache(maxsize=65536)
def judge_contradiction(first: str, second: str) -> Judgement:
    """Whether two short memory statements contradict each other, and why.

    The rules are written for an ordered pair; the verdict is the stronger of the two orders
    (the first when they tie), so verdict, confidence and cue never depend on the argument
    order. Only the wording of the explanation may. Memoised (bounded): a profile
    re-synthesis and the next cycles judge mostly pairs already judged.
    """
    a, b = parse(first), parse(second)
    forward, backward = judge_statements(a, b), judge_statements(b, a)
    if _rank(backward) > _rank(forward):
        return backward
    return forward


def _rank(verdict: Judgement) -> tuple[bool, float, str]:
    return verdict.contradicts, verdict.confidence, verdict.cue
