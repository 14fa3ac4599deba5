"""Words and their comparison keys.

A token's *key* is what the judge compares: synonyms folded ("postgres" → "postgresql"), verb
and plural endings removed ("lives" → "live", "cats" → "cat"), and antonyms folded onto one
side with a *flip* mark ("disabled" → "enable", flipped), so opposite words compare equal with
opposite polarity.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .lexicons import (
    ANTONYM_GROUPS,
    CATEGORIES,
    COPULAS,
    IRREGULAR_VERBS,
    NUMBER_WORDS,
    PHRASES,
    PLACE_PART_OF,
    SUBJECT_ALIASES,
    SYNONYMS,
    VALUE_PART_OF,
    VERBS,
)
from .quantities import CalendarDate, Quantity

# Roles of a token in its statement.
CONTENT, NEGATOR, ADVERB, OTHER, PUNCTUATION = "content", "negator", "adverb", "other", "punct"


@dataclass(frozen=True, slots=True)
class Word:
    surface: str  # as written (normalised), for explanations
    key: str  # what the judge compares
    role: str = CONTENT
    flipped: bool = False  # the negative side of an antonym pair
    proper: bool = False  # written with a capital letter inside the sentence
    possessive: bool = False  # "user's", "my": owns the next noun
    quantity: Quantity | None = None
    date: CalendarDate | None = None

    @property
    def shown(self) -> str:
        return self.surface.replace("_", " ")


Words = tuple[Word, ...]


def keys(words: Words) -> tuple[str, ...]:
    return tuple(word.key for word in words)


def show(words: Words) -> str:
    return " ".join(word.shown for word in words)


def _antonym_table() -> dict[str, tuple[str, bool]]:
    table: dict[str, tuple[str, bool]] = {}
    for positives, negatives in ANTONYM_GROUPS:
        canonical = positives[0]
        table.update(dict.fromkeys(positives, (canonical, False)))
        table.update(dict.fromkeys(negatives, (canonical, True)))
    return table


ANTONYMS = _antonym_table()
ANTONYM_CANONICALS = frozenset(canonical for canonical, _ in ANTONYMS.values())
# Words that stay as they are (no verb or plural stripping): every value the lexicons name.
KNOWN = (
    frozenset(member for category in CATEGORIES for member in category.members)
    | frozenset(PLACE_PART_OF)
    | frozenset(parent for parents in PLACE_PART_OF.values() for parent in parents)
    | frozenset(VALUE_PART_OF)
    | frozenset(SYNONYMS.values())
    | frozenset(PHRASES.values())
)


@lru_cache(maxsize=65536)
def verb_base(word: str) -> str | None:
    """The base form of ``word`` if it is an inflection of a known verb. Memoised, like
    :func:`key_of`: a vocabulary repeats, and every fact the judge reads asks for each word."""
    if word in IRREGULAR_VERBS:
        return IRREGULAR_VERBS[word]
    candidates = [word]
    if word.endswith("ies"):
        candidates.append(word[:-3] + "y")
    if word.endswith("es"):
        candidates.append(word[:-2])
    if word.endswith("s"):
        candidates.append(word[:-1])
    if word.endswith("ied"):
        candidates.append(word[:-3] + "y")
    if word.endswith("ed"):
        candidates += [word[:-1], word[:-2], word[:-3]]
    if word.endswith("ing"):
        candidates += [word[:-3], word[:-3] + "e", word[:-4]]
    return next((c for c in candidates if c in VERBS), None)


def singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "ous")):
        return word[:-1]
    return word


def _antonym(word: str) -> tuple[str, bool] | None:
    """``(canonical, flipped)`` when ``word`` (or a de-inflected form of it) is in the table."""
    candidates = [word]
    if word.endswith("s"):
        candidates += [word[:-1], word[:-2]]
    if word.endswith("d"):
        candidates += [word[:-1], word[:-2], word[:-3]]
    for candidate in candidates:
        if candidate in ANTONYMS and (candidate == word or len(candidate) >= 3):
            return ANTONYMS[candidate]
    return None


@lru_cache(maxsize=65536)
def key_of(surface: str) -> tuple[str, bool]:
    """The comparison key of a token and whether it is the flipped side of an antonym pair.
    Memoised (a fifth of parsing a fact was spent here, on words seen many times before)."""
    word = surface.removesuffix("'s")
    word = SUBJECT_ALIASES.get(word, word)
    if word in COPULAS:
        return "be", False
    word = SYNONYMS.get(word, NUMBER_WORDS.get(word, word))
    antonym = _antonym(word)
    if antonym is not None:
        return antonym
    if word in KNOWN or not word.isalpha():
        return word, False
    base = verb_base(word)
    if base is not None:
        return base, False
    plain = singular(word)
    return SYNONYMS.get(plain, plain), False


def phrase_key(phrase: str) -> tuple[str, ...]:
    """The key of a table phrase, computed exactly as for a statement's words."""
    return tuple(key_of(token)[0] for token in phrase.split())
