"""Fact terms: what a consolidated memory must keep of the memories it replaces.

A consolidation writer (narrative, summary, profile) may shorten, reorder and rephrase, but it
must not forget: every named entity, number, date, clock time, email address, phone number and
URL of its sources has to survive. :func:`fact_terms` names those facts as a set of normalised
strings, so "the summary forgot nothing" becomes the checkable statement
``missing_terms(sources, summary) == frozenset()``.

Canonical forms (one per fact, so the same fact written the same way compares equal):

=============== ========================================= ==============================
kind            written                                   term
=============== ========================================= ==============================
email           ``Alice@Example.com``                     ``alice@example.com``
url             ``https://Docs.example.com/a.``           ``https://docs.example.com/a``
phone           ``+1 (555) 123-4567``                     ``+15551234567``
date            ``2026-03-04``, ``4 March 2026``          ``march 4 2026``
date            ``March 4th``, ``the 4th of March``       ``march 4``
date            ``March 2026`` / ``Tuesdays``             ``march 2026`` / ``tuesday``
date            ``04/03/2026``                            ``04/03/2026`` (ambiguous: kept)
time            ``3pm``, ``3 p.m.``, ``15:00``            ``15:00``
money           ``$1,200``, ``€30``, ``$2.5m``            ``$1200``, ``€30``, ``$2.5m``
percentage      ``12 %``, ``12 percent``                  ``12%``
number          ``1,200``, ``3.5``, ``-4``, ``2nd``       ``1200``, ``3.5``, ``-4``, ``2nd``
number + unit   ``5 km``, ``5km``, ``3 kids``             ``5 km``, ``5 km``, ``3 kids``
entity          ``Alice``, ``New York``, ``AWS``          ``alice``, ``new york``, ``aws``
=============== ========================================= ==============================

A number is one term with its unit or currency, never also the bare digits: ``12000 euros``
does not yield ``12000`` as well, so a text keeps the number exactly when it keeps it with its
unit. The unit is the next lower-case word unless that is a function word ("3 kids", "2nd
floor", but "3 of them" is ``3``). Thousands separators are removed; decimals are kept as
written (``0.30`` stays ``0.30``).

Named entities are capitalised (or camel-case, or all-caps) words, grouped into phrases when
they follow each other separated by spaces only. Whether a capitalised word is an entity does
*not* depend on its position: words that are capitalised only because they start a sentence
("The", "Thanks", "Where", "Remind") are recognised by a stop-list, wherever they are, and
split phrases. That position independence is what makes the containment check usable: a clause
cut out of a sentence, or moved behind a "User: " label, has the same terms as before.

Patterns never span a line break (only spaces and tabs separate the parts of a date, a phone
number or a phrase), so the terms of a multi-line text are the union of its lines' terms.

:func:`extract_facts` is the separate, older extractor (seed 004): emails, phones and negated
preferences ("I don't use AWS" → "does not use AWS"), as statements.

This module is part of the pure engine: standard library only, no I/O, clock or randomness.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "STARTERS",
    "ExtractedFact",
    "FactTerm",
    "extract_facts",
    "fact_terms",
    "find_terms",
    "full_stop_keeps_terms",
    "is_starter",
    "missing_terms",
    "third_person_verb",
]

TermKind = Literal["email", "url", "phone", "date", "time", "number", "entity"]


def _words(text: str) -> frozenset[str]:
    """A word list written as whitespace-separated text (easier to read and extend)."""
    return frozenset(text.split())


MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

# Words that are capitalised because they start a sentence (or are "I"), not because they
# name something. Checked case-folded, wherever the word stands; contractions are checked by
# their first part ("Don't" → "do", "I'm" → "i"). Kept deliberately short of a dictionary:
# a missed starter only adds a spurious term, it never hides a real one.
STARTERS = _words(
    """
    a an the this that these those there here it its i me my mine myself we us our ours
    you your yours he him his she her they them their what when where who whom whose why how
    which whatever whenever wherever
    is am are was were be been being do does did done have has had can could will would shall
    should may might must ca wo let lets
    and but or nor so yet if then than because since though although while once also too
    either neither not no nope nah yes yeah yep yup ok okay sure thanks thank thx ty cheers
    please sorry hi hello hey bye goodbye welcome
    well oh ah aha hmm hm huh wow oops ugh haha hahaha lol lmao omg btw fyi imo tbh asap todo np
    actually anyway anyways basically honestly really just maybe perhaps probably definitely
    absolutely certainly still again now today tonight tomorrow yesterday later soon sometimes
    usually always never often first next last one
    great good nice cool awesome perfect fine right exactly indeed totally true alright
    interesting fair enough same glad happy sad sounds makes looks seems love hope guess think
    know feel mean need want try say tell ask got gotcha noted understood agreed makes mind
    wait hold morning evening afternoon night
    of in on at for with by from to about as into over under after before during between
    without within through every each some any all both many much more most few several other
    another such own only
    remind remember note check make send give keep go come see look call meet book buy bring
    find get put set take use read write pick grab ping text move add update schedule cancel
    stop start
    user agent system assistant session sessions unresolved emotional topics
    """
)

# Lower-case words that follow a number without being its unit ("3 of", "in 2024 and").
_NOT_UNITS = _words(
    """
    a an the this that these those it its i me my we us our you your he him his she her they
    them their and or but nor so if then than to of in on at for with by from as into onto over
    under after before about between per is am are was were be been do does did have has had
    can could will would shall should may might must not no yes also too very more less just
    only still again now when where who what which while since until till because though
    ago later earlier each every some any all both either neither outside inside today tonight
    tomorrow yesterday already apart away back down up out off left
    """
)

_ORDINALS = ("st", "nd", "rd", "th")
_MONTH = "|".join(MONTHS)
_WEEKDAY = "|".join(WEEKDAYS)
_SP = r"[ \t]+"  # never a line break: lines are independent (see the module docstring)
_INT = r"[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+"  # "1,200" or "1200"

_EMAIL = re.compile(
    r"(?<![\w.%+\-])[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}(?![\w\-])"
)
_URL = re.compile(r"(?<![\w/])(?:[Hh][Tt][Tt][Pp][Ss]?://|[Ww][Ww][Ww]\.)[^\s<>\"'`]+")
_URL_TRAILING = ".,;:!?)]}>'\""
_PHONE = re.compile(
    r"(?<![\w+.\-/])(?:\+[0-9]{1,3}[ .\-]?)?(?:\([0-9]{1,4}\)[ .\-]?)?"
    r"[0-9]{2,4}(?:[ .\-][0-9]{2,4}){1,4}(?![\w])"
)
_SLASH_DATE = re.compile(r"(?<![\w./\-])[0-9]{1,2}/[0-9]{1,2}/(?:[0-9]{4}|[0-9]{2})(?![\w/])")
_ISO_DATE = re.compile(r"(?<![\w.\-/])([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?![\w\-]|\.[0-9])")
_AM_PM = re.compile(
    r"(?<![\w.:])([0-9]{1,2})(?::([0-9]{2}))?[ \t]?([AaPp])(?:\.[Mm]\.?|[Mm])(?![\w])"
)
_CLOCK = re.compile(r"(?<![\w.:])([0-9]{1,2}):([0-9]{2})(?![\w:]|\.[0-9])")
_OCLOCK = re.compile(r"(?<![\w.])([0-9]{1,2})" + _SP + r"o['’]clock(?![\w])")
_DAY_MONTH = re.compile(
    r"(?<![\w.])([0-9]{1,2})(?:st|nd|rd|th)?(?:" + _SP + r"of)?" + _SP + r"(" + _MONTH + r")"
    r"(?:,?" + _SP + r"([0-9]{4}))?(?![\w])"
)
_MONTH_DAY = re.compile(
    r"(?<![\w])(" + _MONTH + r")" + _SP + r"([0-9]{1,2})(?:st|nd|rd|th)?"
    r"(?:,?" + _SP + r"([0-9]{4}))?(?![\w])"
)
_MONTH_YEAR = re.compile(r"(?<![\w])(" + _MONTH + r"),?" + _SP + r"([0-9]{4})(?![\w])")
_WEEKDAY_RE = re.compile(r"(?<![\w])(" + _WEEKDAY + r")s?(?![\w])")
_MONEY = re.compile(
    r"(?<![\w.,])([$€£¥])[ \t]?(" + _INT + r")(\.[0-9]+)?"
    r"(?:[ \t]?(k|K|m|M|bn|million|billion|thousand)(?![\w]))?(?![\w])"
)
_PERCENT = re.compile(
    r"(?:(?<![\w.,/:\-])-|(?<![\w.,/:\-]))(" + _INT + r")(\.[0-9]+)?[ \t]?(%|percent(?![\w]))"
)
_ASCII_DIGIT = re.compile(r"[0-9]")
_CURRENCY_SIGNS = "$€£¥"
_NUMBER = re.compile(
    r"((?<![\w.,/:\-])-|(?<![\w.,/:\-]))(" + _INT + r")(\.[0-9]+)?([^\W\d_]+)?(?![\w])"
)
_UNIT = re.compile(_SP + r"([a-z]+)(?![\w'’])")
_TOKEN = re.compile(r"[^\W\d_](?:\w|['’\-](?=\w))*")
_TOKEN_GAP = re.compile(r"[ \t]+")
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
_EDGE_PUNCTUATION = re.compile(r"^[\W_]+|[\W_]+$")
_MASK = "\x00"

# A match → its term, or (term, end) when the term ends before the match, or None to skip it.
_Normaliser = Callable[[re.Match[str]], str | tuple[str, int] | None]


@dataclass(frozen=True, slots=True)
class FactTerm:
    """One fact found in a text: its kind, canonical term and where it was written."""

    kind: TermKind
    term: str
    surface: str
    start: int
    end: int


@functools.lru_cache(maxsize=8192)
def fact_terms(text: str) -> frozenset[str]:
    """The canonical terms of every fact ``text`` states (see the module docstring).

    Cached: the writers ask again for the same clause while they try shorter wordings, and the
    answer depends on the text alone.
    """
    return frozenset(found.term for found in find_terms(text))


_DOT_TAKERS = frozenset(".@/:")


def full_stop_keeps_terms(text: str) -> bool:
    r"""Whether ``text + "."`` surely has the fact terms of ``text``, without reading it: it
    ends in a letter, in a word without '.', '@', '/' or ':'.

    A full stop after the text changes only the matches that reach its end. Every pattern
    above ends a match before a full stop as it ends one at the end of the text (a lookahead
    such as ``(?![\w])`` or ``(?!\.[0-9])`` passes either way), except two that can take it
    in: a URL's run of characters, which needs "://" or "www." in the last word, and a
    time's "p.m.", which needs a '.' in it. (Of 77,000 texts and prefixes of texts from the
    tests and workloads, the one whose terms a full stop changes is "http://".) The writers
    add a full stop to every statement they finish (:func:`streams.engine.text.prose.reported`):
    this spares a reading of the finished statement for most of them."""
    if not text[-1:].isalpha():
        return False
    last = text.rsplit(None, 1)[-1]
    return _DOT_TAKERS.isdisjoint(last)


def missing_terms(sources: Iterable[str], target: str) -> frozenset[str]:
    """The fact terms of ``sources`` that ``target`` does not state: empty when nothing was lost."""
    wanted: set[str] = set()
    for source in sources:
        wanted |= fact_terms(source)
    return frozenset(wanted) - fact_terms(target)


@functools.lru_cache(maxsize=16384)
def find_terms(text: str) -> tuple[FactTerm, ...]:
    """Every fact of ``text`` in reading order, each with its canonical term and its span.

    Memoised: a cycle reads the same memory's facts for blocking keys, the profile and the
    writers, and the answer (a tuple of frozen terms) depends on the text alone.

    Patterns are tried from the most specific to the least (an email before the words in it, a
    date before its day number, money before a plain number); a span taken by one pattern is
    masked so later patterns cannot read it again.
    """
    # A pattern is skipped when the text lacks a character every match of it contains: most
    # texts have no digit, and a skipped pattern could have found (and masked) nothing.
    scan = _Scan(text)
    digits = _ASCII_DIGIT.search(text) is not None
    if "@" in text:
        scan.take(_EMAIL, "email", lambda m: m.group(0).casefold())
    if "://" in text or "www." in text.casefold():
        scan.take(_URL, "url", _url)
    if digits:
        if "-" in text:
            scan.take(_ISO_DATE, "date", _iso_date)
        if "/" in text:
            scan.take(_SLASH_DATE, "date", lambda m: m.group(0))
        scan.take(_PHONE, "phone", _phone)
        scan.take(_AM_PM, "time", _am_pm)
        if ":" in text:
            scan.take(_CLOCK, "time", _clock)
        if "clock" in text:
            scan.take(_OCLOCK, "time", lambda m: _hh_mm(int(m.group(1)), 0, 23))
        scan.take(_DAY_MONTH, "date", lambda m: _date(m.group(2), m.group(1), m.group(3)))
        scan.take(_MONTH_DAY, "date", lambda m: _date(m.group(1), m.group(2), m.group(3)))
        scan.take(_MONTH_YEAR, "date", lambda m: f"{m.group(1).casefold()} {m.group(2)}")
    scan.take(_WEEKDAY_RE, "date", lambda m: m.group(1).casefold())
    if digits:
        if any(sign in text for sign in _CURRENCY_SIGNS):
            scan.take(_MONEY, "number", _money)
        if "%" in text or "percent" in text:
            scan.take(_PERCENT, "number", _percent)
        scan.numbers()
    scan.entities()
    return tuple(sorted(scan.found, key=lambda found: (found.start, found.end, found.term)))


class _Scan:
    """A text being read: the facts found so far and the text with their spans masked."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.masked = text
        self.found: list[FactTerm] = []

    def _mask(self, spans: list[tuple[int, int]]) -> None:
        if not spans:
            return
        pieces: list[str] = []
        done = 0
        for start, end in spans:
            pieces.append(self.masked[done:start])
            pieces.append(_MASK * (end - start))
            done = end
        pieces.append(self.masked[done:])
        self.masked = "".join(pieces)

    def take(self, pattern: re.Pattern[str], kind: TermKind, normalise: _Normaliser) -> None:
        spans: list[tuple[int, int]] = []
        for match in pattern.finditer(self.masked):
            if _MASK in match.group(0):
                continue
            result = normalise(match)
            if result is None:
                continue
            term, end = (result, match.end()) if isinstance(result, str) else result
            self.found.append(
                FactTerm(kind, term, self.text[match.start() : end], match.start(), end)
            )
            spans.append((match.start(), end))
        self._mask(spans)

    def numbers(self) -> None:
        spans: list[tuple[int, int]] = []
        for match in _NUMBER.finditer(self.masked):
            if _MASK in match.group(0):
                continue
            sign, whole, decimals, attached = match.groups()
            number = sign + whole.replace(",", "") + (decimals or "")
            end = match.end()
            suffix = attached.casefold() if attached else None
            if suffix is not None and suffix not in _ORDINALS:
                number += f" {suffix}"  # "5km" is "5 km"
            else:
                number += suffix or ""  # "2nd" stays "2nd", and may have a unit: "2nd floor"
                unit = _UNIT.match(self.masked, end)
                if unit and unit.group(1) not in _NOT_UNITS:
                    number += f" {unit.group(1)}"
                    end = unit.end()
            self.found.append(
                FactTerm("number", number, self.text[match.start() : end], match.start(), end)
            )
            spans.append((match.start(), end))
        self._mask(spans)

    def entities(self) -> None:
        phrase: list[str] = []
        start = end = 0
        for token in _TOKEN.finditer(self.masked):
            word = token.group(0)
            name = _entity_word(word)
            joins = bool(phrase) and _TOKEN_GAP.fullmatch(self.masked[end : token.start()])
            if phrase and (name is None or not joins):
                self._phrase(phrase, start, end)
                phrase = []
            if name is None:
                continue
            if not phrase:
                start = token.start()
            phrase.append(name)
            end = token.end()
            if _POSSESSIVE.search(word):  # "Alice's Lisbon flat": the owner ends the phrase
                self._phrase(phrase, start, end)
                phrase = []
        if phrase:
            self._phrase(phrase, start, end)

    def _phrase(self, words: list[str], start: int, end: int) -> None:
        self.found.append(FactTerm("entity", " ".join(words), self.text[start:end], start, end))


def _entity_word(word: str) -> str | None:
    """The case-folded entity word ``word`` is, or None for common and starter words."""
    if word.islower():
        return None  # the common case, decided in C: no capital letter anywhere
    if not (word[0].isupper() or any(c.isupper() for c in word[1:])):
        return None
    plain = _POSSESSIVE.sub("", word).replace("’", "'")
    folded = _EDGE_PUNCTUATION.sub("", plain.casefold())
    if not folded or is_starter(folded):
        return None
    return folded


def is_starter(word: str) -> bool:
    """Whether ``word`` is a starter (see STARTERS), contractions by their first part."""
    folded = word.casefold().replace("’", "'")
    base = folded[:-3] if folded.endswith("n't") else folded.split("'", 1)[0]
    return folded in STARTERS or base in STARTERS


def _url(match: re.Match[str]) -> tuple[str, int] | None:
    raw = match.group(0).rstrip(_URL_TRAILING)
    if len(raw) <= len("www."):
        return None
    return raw.casefold(), match.start() + len(raw)


def _phone(match: re.Match[str]) -> str | None:
    raw = match.group(0)
    digits = re.sub(r"[^0-9]", "", raw)
    if not 7 <= len(digits) <= 15:
        return None
    if not (raw.startswith(("+", "(")) or re.search(r"[0-9][.\-][0-9]", raw)):
        return None  # "020 7946 0958" with spaces only reads as three numbers
    return ("+" if raw.startswith("+") else "") + digits


def _iso_date(match: re.Match[str]) -> str | None:
    year, month, day = (int(part) for part in match.groups())
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return f"{MONTHS[month - 1].casefold()} {day} {year}"


def _date(month: str, day: str, year: str | None) -> str | None:
    if not 1 <= int(day) <= 31:
        return None
    return f"{month.casefold()} {int(day)}" + (f" {year}" if year else "")


def _hh_mm(hour: int, minute: int, max_hour: int) -> str | None:
    if not (0 <= hour <= max_hour and 0 <= minute <= 59):
        return None
    return f"{hour:02d}:{minute:02d}"


def _am_pm(match: re.Match[str]) -> str | None:
    hour, minute = int(match.group(1)), int(match.group(2) or 0)
    if not 1 <= hour <= 12:
        return None
    hour = hour % 12 + (12 if match.group(3) in "Pp" else 0)
    return _hh_mm(hour, minute, 23)


def _clock(match: re.Match[str]) -> str | None:
    return _hh_mm(int(match.group(1)), int(match.group(2)), 24)


def _money(match: re.Match[str]) -> str:
    symbol, whole, decimals, scale = match.groups()
    amount = symbol + whole.replace(",", "") + (decimals or "")
    if scale is None:
        return amount
    folded = scale.casefold()
    return amount + (folded if len(folded) <= 2 else f" {folded}")


def _percent(match: re.Match[str]) -> str:
    sign = "-" if match.group(0).startswith("-") else ""
    return sign + match.group(1).replace(",", "") + (match.group(2) or "") + "%"


# --- seed 004: pattern-based facts and negations -------------------------------------------


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    """A fact stated in a text: its kind, its value and a short third-person statement."""

    kind: Literal["email", "phone", "negation"]
    value: str
    statement: str


_OBJECT = r"(?P<obj>[^.,;:!?\n]+?)"
_OBJECT_END = r"(?=[.,;:!?\n]|[ \t]+(?:but|because|although|though|since|and[ \t]+I)\b|$)"
_SUBJECT = r"(?<![\w'’])(?:I|[Ww]e)[ \t]+"


def _negation_patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    """(pattern, statement template) pairs: ``{base}`` is the verb as written ("does not
    use"), ``{third}`` the verb in the third person ("never drinks")."""
    i_am = r"(?<![\w'’])(?:I['’]m|I[ \t]+am|[Ww]e['’]re|[Ww]e[ \t]+are)[ \t]+"
    verb = r"(?P<verb>[a-z]+)[ \t]+"
    table = (
        (_SUBJECT + r"(?:do[ \t]+not|don['’]?t)[ \t]+(?:really[ \t]+)?" + verb, "does not {base}"),
        (_SUBJECT + r"(?:did[ \t]+not|didn['’]?t)[ \t]+" + verb, "did not {base}"),
        (_SUBJECT + r"(?:can[ \t]*not|can['’]?t)[ \t]+" + verb, "cannot {base}"),
        (_SUBJECT + r"(?:will[ \t]+not|won['’]?t)[ \t]+" + verb, "will not {base}"),
        (_SUBJECT + r"(?:have[ \t]+not|haven['’]?t)[ \t]+" + verb, "has not {base}"),
        (_SUBJECT + r"never[ \t]+" + verb, "never {third}"),
        (_SUBJECT + r"no[ \t]+longer[ \t]+" + verb, "no longer {third}"),
        (i_am + r"not[ \t]+(?:a[ \t]+)?(?:big[ \t]+|huge[ \t]+)?fan[ \t]+of[ \t]+", "fan"),
        (i_am + r"no[ \t]+longer[ \t]+", "is no longer"),
        (i_am + r"not[ \t]+", "is not"),
    )
    return tuple((re.compile(p + _OBJECT + _OBJECT_END), t) for p, t in table)


_TRAILING_ADVERBS = re.compile(
    r"(?:[ \t]+(?:anymore|any[ \t]+more|any[ \t]+longer|at[ \t]+all|either|really|now))+$",
    re.IGNORECASE,
)
_LEADING_PREPOSITION = re.compile(r"^(?:at|in|on|for|with|to|from|about|into)[ \t]+", re.I)
_IRREGULAR_THIRD = {"have": "has", "do": "does", "go": "goes", "be": "is"}
_NEGATION_TABLE = _negation_patterns()


def third_person_verb(verb: str) -> str:
    """``verb`` conjugated for "he/she/the user" in the present tense ("use" → "uses")."""
    if verb in _IRREGULAR_THIRD:
        return _IRREGULAR_THIRD[verb]
    if verb.endswith(("s", "x", "z", "ch", "sh", "o")):
        return verb + "es"
    if len(verb) > 1 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def extract_facts(text: str) -> tuple[ExtractedFact, ...]:
    """Emails, phone numbers and negated preferences stated in ``text``, in reading order.

    Seed 004 extracts these by pattern, apart from summarisation, so that a negation ("I no
    longer work at Acme") is kept as a statement of its own and never blurred into a summary.
    """
    facts: list[tuple[int, ExtractedFact]] = []
    for found in find_terms(text):
        if found.kind == "email":
            facts.append(
                (found.start, ExtractedFact("email", found.term, f"email is {found.term}"))
            )
        elif found.kind == "phone":
            statement = f"phone number is {found.term}"
            facts.append((found.start, ExtractedFact("phone", found.term, statement)))
    taken: list[tuple[int, int]] = []
    for pattern, template in _NEGATION_TABLE:
        for match in pattern.finditer(text):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            obj = _TRAILING_ADVERBS.sub("", " ".join(match.group("obj").split()))
            value = _LEADING_PREPOSITION.sub("", obj)
            if not value:
                continue
            taken.append((match.start(), match.end()))
            facts.append((match.start(), _negation(match, template, obj, value)))
    seen: set[ExtractedFact] = set()
    ordered: list[ExtractedFact] = []
    for _, fact in sorted(facts, key=lambda pair: pair[0]):
        if fact not in seen:
            seen.add(fact)
            ordered.append(fact)
    return tuple(ordered)


def _negation(match: re.Match[str], template: str, obj: str, value: str) -> ExtractedFact:
    """The statement keeps the preposition ("works at Acme"), the value does not ("Acme")."""
    if template == "fan":
        return ExtractedFact("negation", value, f"is not a fan of {obj}")
    if "{" not in template:
        return ExtractedFact("negation", value, f"{template} {obj}")
    verb = match.group("verb").casefold()
    head = template.format(base=verb, third=third_person_verb(verb))
    return ExtractedFact("negation", value, f"{head} {obj}")
