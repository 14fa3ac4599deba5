"""Comparing two values of one attribute: the same, related, mutually exclusive, or unknown.

Two values are *related*, never in conflict, when they are synonyms, when one contains the
other ("thrillers" / "thrillers and poetry"), when one is part of the other ("Berlin" /
"Germany", "vegan" / "vegetarian"), or when they are one amount in different units ("18 months"
/ "a year and a half"). They are *exclusive* when they differ in a way that cannot hold at once
for a single-valued attribute: different times, dates, amounts or numbers, two members of one
category (two databases, two licences), opposite adjectives, different places or names.

Values are compared slot by slot: "on Thursday at 7pm" has a day slot and a time slot, so "on
Friday at 6pm" differs in two slots, both exclusive (a contradiction), while "tea in the
evening" / "coffee in the morning" differs in a preference and in its context (no conflict).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..memo import by_identity
from .lexicons import (
    CATEGORIES,
    PLACE_PART_OF,
    RECURRING_CONTEXT_WORDS,
    STAY_WORDS,
    UNIVERSAL_VALUES,
    VALUE_PART_OF,
)
from .quantities import MONTH_NUMBER, PERIOD, CalendarDate
from .words import ANTONYM_CANONICALS, Word, Words, keys, show

PART_OF: dict[str, tuple[str, ...]] = {**PLACE_PART_OF, **VALUE_PART_OF}
PLACES = frozenset(PLACE_PART_OF) | frozenset(
    parent for parents in PLACE_PART_OF.values() for parent in parents
)
EXCLUSIVE_CATEGORIES_OF: dict[str, frozenset[str]] = {}
TEMPORAL_CATEGORY_OF: dict[str, str] = {}
PER_SUBJECT_CATEGORY_OF: dict[str, str] = {}
MEMBERS_BY_NOUN: dict[str, frozenset[str]] = {}
for _category in CATEGORIES:
    for _member in _category.members:
        if _category.temporal:
            TEMPORAL_CATEGORY_OF[_member] = _category.name
        elif _category.exclusive:
            found = EXCLUSIVE_CATEGORIES_OF.get(_member, frozenset())
            EXCLUSIVE_CATEGORIES_OF[_member] = found | {_category.name}
        if _category.per_subject:
            PER_SUBJECT_CATEGORY_OF[_member] = _category.name
    for _noun in _category.nouns:
        MEMBERS_BY_NOUN[_noun] = MEMBERS_BY_NOUN.get(_noun, frozenset()) | _category.members

# Prepositions that open a new slot of a value ("on Thursday | at 7pm").
SLOT_PREPOSITIONS = frozenset(
    {"in", "on", "at", "for", "with", "from", "to", "during", "by", "near", "until", "since"}
    | {"before", "after", "of", "over", "under", "via", "through"}
)
# Kinds of exclusive difference, strongest first (the one an explanation names).
KIND_ORDER = (
    "time",
    "date",
    "period",
    "quantity",
    "number",
    "antonym",
    "category",
    "temporal",
    "place",
    "name",
    "generic",
)
_TIME = re.compile(r"\d{2}:\d{2}")
PHONE_PREFIX = "tel_"  # see normalise: a phone number is read as one token of its digits
_NUMBER = re.compile(r"\d+(?:\.\d+)*")

SAME, RELATED, EXCLUSIVE, OPEN = "same", "related", "exclusive", "open"
# "another", "a different", "some other" (see normalise): a value other than the one stated.
ANOTHER = "another"


@dataclass(frozen=True, slots=True)
class Comparison:
    verdict: str  # SAME | RELATED | EXCLUSIVE | OPEN
    kind: str  # for EXCLUSIVE: one of KIND_ORDER
    reason: str


# --- single items -------------------------------------------------------------------------


def ancestors(key: str) -> frozenset[str]:
    """Everything that contains ``key`` ("berlin" → germany, eu, europe)."""
    found: set[str] = set()
    frontier = list(PART_OF.get(key, ()))
    while frontier and len(found) < 20:
        parent = frontier.pop()
        if parent not in found:
            found.add(parent)
            frontier.extend(PART_OF.get(parent, ()))
    return frozenset(found)


def part_of(child: str, parent: str) -> bool:
    return parent in ancestors(child)


def is_time(key: str) -> bool:
    return _TIME.fullmatch(key) is not None


def is_number(key: str) -> bool:
    return _NUMBER.fullmatch(key) is not None


def _as_date(word: Word) -> CalendarDate | None:
    if word.date is not None:
        return word.date
    month = MONTH_NUMBER.get(word.key)
    return CalendarDate(None, month, None) if month is not None else None


def _negative_form(word: str, other: str) -> bool:
    """ "unheated" / "heated", "nonrefundable" / "refundable": a negating prefix."""
    return len(other) >= 4 and word in {"un" + other, "non" + other}


def _is_identifier(key: str) -> bool:
    """A code mixing letters and digits ("4b", "sunflower42", "o2")."""
    return key.isalnum() and not key.isalpha() and not key.isdigit()


def _version_prefix(a: str, b: str) -> bool:
    """One version number refines the other: "3" and "3.11"."""
    return a.startswith(b + ".") or b.startswith(a + ".")


def is_phone(key: str) -> bool:
    return key.startswith(PHONE_PREFIX) and key[len(PHONE_PREFIX) :].isdigit()


def is_email(key: str) -> bool:
    return "@" in key


def _same_phone(a: str, b: str) -> bool:
    """One phone number with and without its country code: "+1 299 ..." and "299 ..."."""
    x, y = sorted((a[len(PHONE_PREFIX) :], b[len(PHONE_PREFIX) :]), key=len)
    return x == y or (len(x) >= 7 and y.endswith(x) and len(y) - len(x) <= 3)


def same_item(a: Word, b: Word) -> bool:
    """Whether two words name the same value (synonyms, one amount, one date)."""
    if a.quantity is not None and b.quantity is not None:
        return a.quantity.same_as(b.quantity)
    if is_phone(a.key) and is_phone(b.key):
        return _same_phone(a.key, b.key)
    return a.key == b.key and a.flipped == b.flipped


def item_type(word: Word) -> str | None:
    """The kind of value a word names, when it has one that can be compared."""
    key = word.key
    if word.quantity is not None:
        return f"quantity:{word.quantity.dimension}"
    if word.date is not None or key in MONTH_NUMBER:
        return "date"
    if is_time(key):
        return "time"
    if is_number(key):
        return "number"
    if is_phone(key):
        return "phone"
    if is_email(key):
        return "email"
    if key in EXCLUSIVE_CATEGORIES_OF:
        return "category:" + min(EXCLUSIVE_CATEGORIES_OF[key])
    if key in TEMPORAL_CATEGORY_OF:
        return "temporal:" + TEMPORAL_CATEGORY_OF[key]
    if key in ANTONYM_CANONICALS:
        return "antonym:" + key
    if key in PLACES:
        return "place"
    if word.proper:
        return "name"
    return None


def compare_items(a: Word, b: Word) -> Comparison:
    """How two single value items relate. Symmetric in ``a`` and ``b``."""
    x, y = a.key, b.key
    if x == y and a.flipped != b.flipped:
        return Comparison(EXCLUSIVE, "antonym", f"'{a.shown}' and '{b.shown}' are opposites")
    if a.quantity is not None or b.quantity is not None:
        return _compare_quantities(a, b)
    if x == y:
        return Comparison(SAME, "", f"'{a.shown}' and '{b.shown}' are synonyms")
    if is_phone(x) and is_phone(y):
        if _same_phone(x, y):
            return Comparison(SAME, "", "one phone number, with and without its country code")
        return Comparison(EXCLUSIVE, "number", "different phone numbers")
    if is_email(x) and is_email(y):
        return Comparison(EXCLUSIVE, "name", "different email addresses")
    date_a, date_b = _as_date(a), _as_date(b)
    if date_a is not None and date_b is not None:
        if date_a.agrees_with(date_b):
            return Comparison(RELATED, "", f"'{a.shown}' and '{b.shown}' can be one date")
        return Comparison(EXCLUSIVE, "date", "different dates")
    if part_of(x, y) or part_of(y, x):
        child, parent = (a, b) if part_of(x, y) else (b, a)
        return Comparison(RELATED, "", f"'{child.shown}' is part of '{parent.shown}'")
    if is_time(x) and is_time(y):
        return Comparison(EXCLUSIVE, "time", "different times")
    if is_number(x) and is_number(y):
        if _version_prefix(x, y):
            return Comparison(RELATED, "", f"'{a.shown}' and '{b.shown}' are one version")
        return Comparison(EXCLUSIVE, "number", "different numbers")
    shared = EXCLUSIVE_CATEGORIES_OF.get(x, frozenset()) & EXCLUSIVE_CATEGORIES_OF.get(
        y, frozenset()
    )
    if shared:
        category = min(shared)
        article = "an" if category[0] in "aeiou" else "a"
        return Comparison(EXCLUSIVE, "category", f"both name {article} {category}")
    if x in TEMPORAL_CATEGORY_OF and TEMPORAL_CATEGORY_OF.get(x) == TEMPORAL_CATEGORY_OF.get(y):
        return Comparison(EXCLUSIVE, "temporal", f"different {TEMPORAL_CATEGORY_OF[x]}s")
    shorter, longer = sorted((x, y), key=lambda k: (len(k), k))
    if len(shorter) >= 3 and longer.startswith(shorter):
        return Comparison(RELATED, "", f"'{shorter}' and '{longer}' are forms of one word")
    if x in EXCLUSIVE_CATEGORIES_OF and y in EXCLUSIVE_CATEGORIES_OF:
        return Comparison(OPEN, "", f"'{a.shown}' and '{b.shown}' are different kinds of things")
    if x in PLACES and y in PLACES:
        return Comparison(EXCLUSIVE, "place", "different places, neither part of the other")
    if (x in PLACES and b.proper) or (y in PLACES and a.proper):
        return Comparison(OPEN, "", "an unknown name may lie inside a known place")
    if a.proper and b.proper:
        return Comparison(EXCLUSIVE, "name", "different names")
    if _negative_form(x, y) or _negative_form(y, x):
        return Comparison(EXCLUSIVE, "antonym", f"'{a.shown}' and '{b.shown}' are opposites")
    if _is_identifier(x) and _is_identifier(y):
        return Comparison(EXCLUSIVE, "name", "different identifiers")
    if x.isalpha() and y.isalpha():
        return Comparison(EXCLUSIVE, "generic", "different values")
    return Comparison(OPEN, "", "values of different kinds")


def _compare_quantities(a: Word, b: Word) -> Comparison:
    if a.quantity is None or b.quantity is None:
        return Comparison(OPEN, "", "an amount and a value of another kind")
    if a.quantity.dimension != b.quantity.dimension:
        return Comparison(OPEN, "", "amounts of different kinds")
    if a.quantity.same_as(b.quantity):
        return Comparison(SAME, "", f"'{a.shown}' and '{b.shown}' are the same amount")
    kind = "period" if a.quantity.dimension == PERIOD else "quantity"
    what = "frequencies" if kind == "period" else "amounts"
    return Comparison(EXCLUSIVE, kind, f"different {what}")


# --- sequences and slots ------------------------------------------------------------------


def _contains(whole: Words, part: Words) -> bool:
    return all(any(same_item(word, other) for other in whole) for word in part)


def strip_common(a: Words, b: Words) -> tuple[Words, Words]:
    """The differing middles of two word sequences (common prefix and suffix removed)."""
    start = 0
    while start < min(len(a), len(b)) and same_item(a[start], b[start]):
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and same_item(a[-1 - end], b[-1 - end]):
        end += 1
    return a[start : len(a) - end], b[start : len(b) - end]


def _drop_versions(words: Words) -> Words:
    """Remove version numbers right after a categorised tool ("postgresql 16" → "postgresql")."""
    kept: list[Word] = []
    for word in words:
        if is_number(word.key) and kept and kept[-1].key in EXCLUSIVE_CATEGORIES_OF:
            continue
        kept.append(word)
    return tuple(kept)


def _compare_typed(a: Words, b: Words) -> Comparison | None:
    """Compare the typed items (times, members of a category, names...) two values share.

    Typed items decide only when they are what the values are about: the last word (the
    head: "senior designer" / "product manager"), or the rest of the words agree or is missing
    on one side ("the Hilton downtown" / "the Marriott"). "2 cats" / "3 dogs" count different
    things, so the numbers do not decide.
    """
    typed_a = {word: item_type(word) for word in a}
    typed_b = {word: item_type(word) for word in b}
    heads_typed = typed_a[a[-1]] is not None and typed_a[a[-1]] == typed_b[b[-1]]
    rest_a = {word.key for word, kind in typed_a.items() if kind is None}
    rest_b = {word.key for word, kind in typed_b.items() if kind is None}
    if not (heads_typed or not rest_a or not rest_b or rest_a == rest_b):
        return None
    by_kind_a: dict[str, list[Word]] = {}
    by_kind_b: dict[str, list[Word]] = {}
    for typed, by_kind in ((typed_a, by_kind_a), (typed_b, by_kind_b)):
        for word, kind in typed.items():
            if kind is not None:
                by_kind.setdefault(kind, []).append(word)
    for kind in sorted(by_kind_a.keys() & by_kind_b.keys()):
        items_a, items_b = by_kind_a[kind], by_kind_b[kind]
        if any(same_item(x, y) for x in items_a for y in items_b):
            continue
        return compare_items(items_a[0], items_b[0])
    places_a, places_b = by_kind_a.get("place", []), by_kind_b.get("place", [])
    names_a, names_b = by_kind_a.get("name", []), by_kind_b.get("name", [])
    if (places_a and names_b and not places_b) or (places_b and names_a and not places_a):
        return Comparison(OPEN, "", "an unknown name may lie inside a known place")
    proper_a = [word for word in a if word.proper]
    proper_b = [word for word in b if word.proper]
    if proper_a and proper_b and not {w.key for w in proper_a} & {w.key for w in proper_b}:
        return compare_items(proper_a[0], proper_b[0])  # names, whatever else they are
    return None


def compare_slot(a: Words, b: Words) -> Comparison:
    """How two differing slots (or whole values) relate. Symmetric in ``a`` and ``b``."""
    if _contains(a, b) or _contains(b, a):
        return Comparison(RELATED, "", "one value contains the other")
    middle_a, middle_b = strip_common(a, b)
    if len(middle_a) == len(middle_b) == 1:
        return compare_items(middle_a[0], middle_b[0])
    versionless_a, versionless_b = _drop_versions(middle_a), _drop_versions(middle_b)
    if len(versionless_a) == len(versionless_b) == 1:
        return compare_items(versionless_a[0], versionless_b[0])
    typed = _compare_typed(middle_a, middle_b)
    if typed is not None:
        return typed
    keys_a, keys_b = set(keys(middle_a)), set(keys(middle_b))
    if keys_a.isdisjoint(keys_b) and all(word.proper for word in middle_a + middle_b):
        return Comparison(EXCLUSIVE, "name", "different names")
    if keys_a.isdisjoint(keys_b):
        return Comparison(EXCLUSIVE, "generic", "different values")
    return Comparison(OPEN, "", "the values differ in more than one place")


@by_identity(maxsize=65536)
def slots(words: Words) -> list[tuple[str, Words]]:
    """A value cut at its prepositions: "thursday at 19:00" → ("", thursday), ("at", 19:00).
    Memoised: a clause's value is cut again for every statement it is compared with (the
    list is shared: callers only read it)."""
    found: list[tuple[str, list[Word]]] = [("", [])]
    for word in words:
        if word.key in SLOT_PREPOSITIONS and found[-1][1]:
            found.append((word.key, []))
        else:
            found[-1][1].append(word)
    return [(preposition, tuple(slot)) for preposition, slot in found if slot]


def _aligned(a: Words, b: Words) -> list[tuple[Words, Words]]:
    """Pairs of slots that state the same part of two values (by position when the two
    values have the same prepositions, else by preposition)."""
    slots_a, slots_b = slots(a), slots(b)
    if [p for p, _ in slots_a] == [p for p, _ in slots_b]:
        return [(x, y) for (_, x), (_, y) in zip(slots_a, slots_b, strict=True)]
    pairs = []
    used: set[int] = set()
    for preposition, slot_a in slots_a:
        for j, (other, slot_b) in enumerate(slots_b):
            if j not in used and other == preposition:
                pairs.append((slot_a, slot_b))
                used.add(j)
                break
    return pairs


def _is_context(preposition: str, slot: Words, one_day: bool = False) -> bool:
    """A slot that restricts when or what for a value holds ("on weekends", "for caching",
    "in winter"), as opposed to a detail of one event ("at 5pm", "in Room 4"). For an event
    held on one day of the week (``one_day``: "my weekly one-on-one"), "on Tuesdays" is which
    day, a detail."""
    if any(word.quantity is not None or word.date is not None for word in slot):
        return False
    if one_day and all(TEMPORAL_CATEGORY_OF.get(word.key) == "weekday" for word in slot):
        return False
    if preposition in {"for", "during", "when", "while"}:
        return True
    if preposition not in {"in", "on", "at"}:
        return False
    return any(
        word.key in RECURRING_CONTEXT_WORDS
        or word.surface != word.key
        and word.surface.endswith("s")
        for word in slot
        if word.key not in SLOT_PREPOSITIONS
    )


def _context_on_one_side(a: Words, b: Words, one_day: bool = False) -> bool:
    """Whether one value is restricted to a context the other does not mention."""
    slots_a, slots_b = slots(a), slots(b)
    keys_a = {keys(slot) for _, slot in slots_a}
    keys_b = {keys(slot) for _, slot in slots_b}
    return any(
        _is_context(preposition, slot, one_day) and keys(slot) not in other
        for own, other in ((slots_a, keys_b), (slots_b, keys_a))
        for preposition, slot in own
    )


def names_another(value: Words) -> bool:
    """ "another provider", "a different vet": a value said to differ from the one before."""
    return bool(value) and value[0].key == ANOTHER


def compare_values(
    a: Words, b: Words, firing: frozenset[str], *, one_day: bool = False
) -> Comparison:
    """How two values of the same attribute relate. Symmetric in ``a`` and ``b``.

    ``firing`` is the set of exclusive kinds that make a contradiction for this attribute; a
    difference in several slots is exclusive only when every differing slot is exclusive (not
    merely "different words") and one of them fires. ``one_day``: the attribute is the slot
    of an event held on one day of the week, so its weekdays are details, not contexts.
    """
    if len(a) == len(b) and all(same_item(x, y) for x, y in zip(a, b, strict=True)):
        return Comparison(SAME, "", "the same value")
    if names_another(a) != names_another(b):
        stated = show(b if names_another(a) else a)
        return Comparison(EXCLUSIVE, "name", f"another one, not '{stated}'")
    if _contains(a, b) or _contains(b, a):
        return Comparison(RELATED, "", "one value contains the other")
    if _context_on_one_side(a, b, one_day):
        return Comparison(OPEN, "", "one value holds in a context the other does not name")
    middle_a, middle_b = strip_common(a, b)
    if len(middle_a) == len(middle_b) == 1:
        return compare_items(middle_a[0], middle_b[0])
    pairs = _aligned(a, b)
    if len(pairs) < 2:
        return compare_slot(a, b)
    differing = [
        comparison
        for comparison in (compare_slot(x, y) for x, y in pairs)
        if comparison.verdict not in {SAME, RELATED}
    ]
    if not differing:
        return Comparison(RELATED, "", "each part of one value agrees with the other")
    if len(differing) == 1:
        return differing[0]
    if all(c.verdict == EXCLUSIVE and c.kind != "generic" for c in differing):
        strongest = min(differing, key=lambda c: (c.kind not in firing, KIND_ORDER.index(c.kind)))
        reasons = "; ".join(dict.fromkeys(c.reason for c in differing))
        return Comparison(EXCLUSIVE, strongest.kind, reasons)
    return Comparison(OPEN, "", "the values differ in their context as well")


def without_own_purpose(value: Words, other: Words) -> Words:
    """A new place or name without why someone went there, when the other value does not
    speak of it ("moved to Tampa for the sun", "in Bangalore now for his new job"); a
    recurring context ("for work") or a stay ("for a conference", "for two weeks") stays."""
    if not any(word.key == "for" for word in value):
        return value  # most values: nothing to drop
    found = slots(value)
    if len(found) < 2 or any(preposition == "for" for preposition, _ in slots(other)):
        return value
    head = found[0][1]
    if found[0][0] or item_type(head[0]) not in {"place", "name"}:
        return value
    kept = [
        (preposition, slot)
        for preposition, slot in found
        if preposition != "for"
        or any(
            word.quantity or word.date or word.key in RECURRING_CONTEXT_WORDS | STAY_WORDS
            for word in slot
        )
    ]
    if len(kept) == len(found):
        return value
    return tuple(
        word
        for preposition, slot in kept
        for word in ((Word(preposition, preposition),) if preposition else ()) + slot
    )


def without_contexts(words: Words) -> Words:
    """The value without its context slots ("coffee in the morning" → "coffee")."""
    kept: list[Word] = []
    for preposition, slot in slots(words):
        if not _is_context(preposition, slot):
            kept += ([Word(preposition, preposition)] if preposition else []) + list(slot)
    return tuple(kept)


def covers(negated: Words, asserted: Words) -> bool:
    """Whether denying ``negated`` denies ``asserted``: the same value, a more general one
    ("food" covers "spicy food"), a place containing it ("germany" covers "berlin"), a category
    containing it ("pets" covers "a cat", "alcohol" covers "wine"), or anything at all. A
    context of the asserted value does not count: "I hate mornings" does not deny "I prefer
    coffee in the morning"."""
    asserted = without_contexts(asserted)
    if not negated or not asserted:
        return False
    negated_keys = keys(negated)
    if _denies_everything(negated_keys):
        return True
    if _contains(asserted, negated):
        return True
    middle_negated, middle_asserted = strip_common(negated, asserted)
    if len(middle_negated) == 1 and any(
        part_of(word.key, middle_negated[0].key) for word in middle_asserted
    ):
        return True
    return bool(category_members(negated) & set(keys(asserted)))


def _denies_everything(value: tuple[str, ...]) -> bool:
    """A denied value that is everything: "anything", "anything at all", "any of it". Not a
    universal word that only qualifies the value ("the energy for anything") or is narrowed
    by another word ("anything specific")."""
    if not value or value[0] not in UNIVERSAL_VALUES:
        return False
    rest = value[1:]
    return not rest or rest[0] in SLOT_PREPOSITIONS or set(rest) <= UNIVERSAL_REST


UNIVERSAL_REST = frozenset({"at", "all", "else", "whatsoever"})


def category_members(value: Words) -> frozenset[str]:
    """The members of the category a value names ("european languages" → french, ...)."""
    value_keys = keys(value)
    for size in (2, 1):
        if len(value_keys) >= size:
            noun = " ".join(value_keys[-size:])
            if noun in MEMBERS_BY_NOUN:
                return MEMBERS_BY_NOUN[noun] | {value_keys[-1]}
    return frozenset()


def per_subject_members(value: Words) -> dict[str, Word]:
    """Members of per-subject categories in a value, by category ("vegan" → diet)."""
    return {
        PER_SUBJECT_CATEGORY_OF[word.key]: word
        for word in value
        if word.key in PER_SUBJECT_CATEGORY_OF and not word.flipped
    }


def describe(words: Words) -> str:
    return show(words)
