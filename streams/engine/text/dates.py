"""Relative dates resolved against a turn's event time: "yesterday", said on 8 May 2023, is 7 May.

A statement like "I went to a support group yesterday" means nothing a month later unless the
day it was said is known. Every turn carries its event time (``occurred_at``, epoch
milliseconds UTC), so the writers can turn the relative expression into an absolute date:
:func:`grounded` writes "yesterday (7 May 2023)", :func:`resolve_dates` returns the same as
values (span, first and last day, granularity) for metadata.

The reference day is the **UTC calendar day** of the event time (:func:`day_label`). Nothing
here reads a clock, a locale or a time zone: the same text and event time always give the same
dates. Part of the pure engine: standard library only, no I/O, clock or randomness.

Why hand-written: ``python -m bench.date_resolution`` measured ``dateparser`` and
``parsedatetime`` (each given the event time as its base) against this module on the test table
and on chat turns (figures in ``bench/results/date_resolution-*.md``). At the corpus's mix of
turns they cost ~800 µs and ~155 µs per turn against ~3 µs here (2 and 0.4 times a worker's
whole per-input budget), agree with the table's conventions on about half of its expressions
(neither knows weekends, seasons, "a few"/"a couple of", "Thurs"), give dates to words that are
not dates ("we" as Wednesday, "this may take a while"), and parsedatetime reads the clock and
the local time zone for "this morning" and "last night" even with a base given.

Conventions (``D`` = the reference day; weeks start on Monday, as in ISO 8601)
===============================================================================

======================================= ============================================ ==========
expression (case-insensitive)           resolves to                                  granularity
======================================= ============================================ ==========
today, tonight, this morning/afternoon/ D                                            day
evening
yesterday, last night                   D - 1                                        day
the day before yesterday                D - 2                                        day
tomorrow / the day after tomorrow       D + 1 / D + 2                                day
last <weekday>, this past <weekday>     the most recent such weekday strictly        day
                                        before D (1-7 days back)
this <weekday>                          that weekday of D's week (Mon-Sun)           day
next <weekday>                          that weekday of the week after D's           day
this coming <weekday>                   the first such weekday strictly after D      day
last / this / next week                 D's week - 1 / D's week / D's week + 1       week
the week after next / before last       D's week + 2 / - 2                           week
last / this / next weekend              Sat-Sun of D's week - 1 / 0 / + 1            weekend
this past weekend                       = last weekend                               weekend
this coming weekend                     Sat-Sun from the first Saturday after D      weekend
the weekend after next / before last    Sat-Sun of D's week + 2 / - 2                weekend
N weekends ago                          Sat-Sun of D's week - N                      weekend
last / this / next month, year          the calendar month (year) before / of / after month, year
the month (year) after next / before    the calendar month (year) 2 after / before   month, year
last
earlier / later this week, month, year  D's week, month, year                        as named
last / this / next <month name>         the most recent one strictly before D's      month
                                        month / the one in D's year / the first one
                                        strictly after D's month
last <season>                           the most recent such season that ended       season
                                        before D's season began
this <season>                           the one D is in, else the one that begins    season
                                        in D's year (in a sentence in the past, the
                                        most recent such one)
next <season>                           the first such season that begins after D    season
N days / weeks / months / years ago     D - N units (calendar arithmetic)            day
N units ago today / yesterday /         that day - N units ("a week ago yesterday")  day
  tomorrow
in N units, N units from now / today    D + N units (days, weeks, months, years)     day
N units from tomorrow, N units          D + 1 day + N units (none after a perfect:   day
tomorrow ("a week tomorrow")            "married three years today")
N weeks on <weekday> ("a week on        the coming <weekday> + N weeks               day
Friday")
<day> <month>, <month> <day>, the <day> that day in the year that puts it nearest D   day
of <month> (no year after it), the     (so within half a year, but for 29 February);
month whole or shortened ("aug 2")      after "since", the last up to D; arranged
                                        for, or in the future, and over two months
                                        gone: the first after D
on <weekday>, in a sentence in the past as "last <weekday>"; in the future as     day
/ in the future                         "this coming <weekday>", after the day to
                                        come its sentence named before it
that <weekday> / the <weekday> after    in the week of the day named before it in    day
                                        the message / the first after that day
in [early / late / mid] <month>, in a   the most recent such month up to D's / the   month
sentence in the past / in the future    first one from D's on
since <month>, in any sentence          the most recent such month up to D's         month
<holiday> (Christmas, Boxing Day, New   last / next: the most recent before D / the  day
Year's Eve, Valentine's Day, Easter,    first after D; this: D's year's; alone, in a
Thanksgiving ...), [last / this / next] sentence in the past / future: the most
                                        recent up to D / the first from D on
in [the] [early / late] <season>, in a  the most recent such season up to D's / the  season
sentence in the past / in the future    first one from D's on
on (by, until, from, to ...) the <day>, the most recent such day up to D / the first    day
in a sentence in the past / the future  from D on
======================================= ============================================ ==========

Why these choices:

* "last Fri" said on Monday 8 May 2023 is Friday 5 May: the most recent Friday strictly before
  the day. That is what speakers mean in chat ("last Friday" on a Saturday is yesterday), and
  it never names the day itself ("last Monday" said on a Monday is a week ago).
* "this Friday" is the Friday of the day's own Monday-start week, in the past or the future
  ("this Friday" on Saturday was yesterday), and "next Friday" the Friday of the following
  week. Speakers disagree about "next Friday" said early in a week (some mean the coming
  Friday); tying "this" and "next" to weeks keeps them different and predictable, and
  "this coming Friday" names the first Friday after the day for those who mean that.
* Weekends and weeks follow the same rule, so "last weekend" on a Monday is the weekend that
  just ended and on a Sunday the one before the current weekend.
* "N units ago" is the day exactly N units earlier, as ``dateparser`` and ``parsedatetime``
  compute it. Months and years clamp to the month's end: "a month ago" on 31 March is 28 (or
  29) February, "a year ago" on 29 February 2024 is 28 February 2023. The speaker's precision
  is looser, but the label keeps the day, month and year a question may name.
* Counts are digits or one..twelve; "a"/"an" is 1, "a couple (of)" is 2, "a few" is **3**
  (the smallest count "a few" is commonly used for; "several" is left unresolved).
* A day and month without a year ("June 3rd", "the 3rd of june", "3 June") is that day in
  the year nearest the day it was said: "June 3rd" said on 17 May 2024 is 3 June 2024, and
  "December 20th" said then is 20 December 2023. Only the tense tells a plan for next
  December from a memory of the last one; the nearest is right for the dates chat mostly
  names, those within a few months, and it gives the year that a question names ("When does
  she start? 3 June 2024"). A day and month followed by a year, or a range's end ("3-5
  June"), is left as written.
* "on <weekday>" and "in <month>" are dated by their sentence's tense, as a reader does: "we
  went hiking on Saturday" is the Saturday before the day, "I'll call her on Friday" the
  Friday after it; "we moved in March" said in May is this March, "we're going camping in
  June" the coming June. The tense is read from English's own marks: an auxiliary of the
  future ("will", "'ll", "going to", "gonna", "plan to", "can't wait") or a present
  progressive ("we're going camping"), a common irregular past ("went", "saw", "had") or a
  word in -ed after its subject ("we visited", "Leo turned", "my sister moved") or before
  its object ("carmen called me"); any other present-tense verb ("am", "is", "have", "it's")
  leaves it open. The limit: an adjective in -ing
  after "is" reads as a plan ("the weather is amazing in June" is labelled with the coming
  June), and a past the same as its present ("I quit in January") reads as none.
* Seasons are the northern hemisphere's meteorological ones: spring March-May, summer
  June-August, autumn (fall) September-November, winter December-February. A winter spans
  the year boundary and is labelled with both years: "winter 2022-23" is 1 December 2022 to
  28 February 2023, so "this winter" said on 15 January 2023 is winter 2022-23. "last
  summer" said in September is the summer that just ended.

What is left unresolved, on purpose:

* A day of the month alone but after a preposition ("the 21st was fun"; "on the 21st" is
  dated), and a month alone whose sentence's tense is unclear ("it rains a lot in April"):
  which month, or which year, is open.
* Bare weekdays ("see you Friday", "Friday was fun") and "on <weekday>" in a sentence whose
  tense is unclear: with both a past and a future, with a present-tense verb ("I have a
  meeting on Friday": the coming one, or every week's), or with neither. "on Fridays" names no
  day at all. The statement keeps the day it was said on, which dates it within a week.
* Vague expressions: "the other day", "recently", "lately", "over the weekend", "several days
  ago"; "in the spring" whose sentence's tense is unclear ("it's lovely there in the spring")
  or that names its year ("in the spring of 2019", left as written).
* A modifier after a determiner or possessive names a period of something else, not a date:
  "the last week" (the past seven days), "my last Friday at work", "the next day".
* "in N units" that measures a duration rather than naming a day: after "once", "twice",
  "times" ("twice in a week"), after things counted ("12 shows in 3 weeks") or an amount of
  time ("64 days in 4 years"; not after "for": "away for 10 days in 2 weeks"), with a
  negation or "first/last/only time" earlier in its clause ("I haven't seen him in two
  years", "the first time in a month"), or in the past
  (:func:`_tense`: "I lost 5 kilos in a month", "we drove to Lisbon in two days"). The
  future "in two weeks" is resolved.
* "Sat", "Sun", "May" and "March" are also English words: as abbreviations and month names
  they are recognised only when capitalised ("this Sun", not "this sun is brutal").
* Hours and minutes ("two hours ago"): the day of the turn already dates them.

Matching is ASCII-only and on whole words; a possessive "'s" belongs to the expression ("last
Friday's party"), and so does an abbreviation's full stop when the sentence goes on ("last Fri.
we went"). An expression followed by an explicit date ("last
Friday, 5 May", "yesterday (7 May 2023)") is left as written by :func:`grounded`, which makes
:func:`grounded` idempotent.

Cost: a text with none of the substrings an expression needs is rejected by a few substring
tests (~1.3 µs for a 130-character chat turn, most turns); otherwise one compiled regular
expression scans it (~8 µs; ~12 µs with an expression to resolve).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from streams.engine.text.facts import MONTHS

__all__ = [
    "PRESENT_IN_ED",
    "Granularity",
    "ResolvedDate",
    "day_label",
    "day_stamp",
    "grounded",
    "has_a_verb",
    "resolve_dates",
    "tells_what_happened",
]

Granularity = Literal["day", "weekend", "week", "month", "season", "year"]

_DAY_MS = 86_400_000
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


@dataclass(frozen=True, slots=True)
class ResolvedDate:
    """One relative expression of a text and the period it names."""

    start: int  # the expression's span in the text: text[start:end] == expression
    end: int
    expression: str  # as written, e.g. "last Fri"
    first: date  # first day of the period it names
    last: date  # last day (== first for a day)
    granularity: Granularity

    def label(self) -> str:
        """The period as an absolute date: "7 May 2023", "6-7 May 2023", "30 April-1 May
        2023", "week of 1 May 2023", "May 2023", "summer 2023", "winter 2022-23", "2023"."""
        first, last = self.first, self.last
        match self.granularity:
            case "day":
                return _day(first)
            case "weekend":
                if first.year != last.year:
                    return f"{_day(first)}-{_day(last)}"
                if first.month != last.month:
                    return f"{first.day} {MONTHS[first.month - 1]}-{_day(last)}"
                return f"{first.day}-{_day(last)}"
            case "week":
                return f"week of {_day(first)}"
            case "month":
                return f"{MONTHS[first.month - 1]} {first.year}"
            case "season":
                name = _season_name(first.month, self.expression)
                if name == "winter":
                    return f"winter {first.year}-{last.year % 100:02d}"
                return f"{name} {first.year}"
            case _:
                return str(first.year)


def day_label(at_ms: int) -> str:
    """The UTC calendar day of an event time (epoch milliseconds): "8 May 2023"."""
    return _day(_utc_day(at_ms))


def day_stamp(at_ms: int) -> str:
    """The UTC calendar day of an event time as ISO 8601: "2023-05-08". The header of what a
    writer dates (an observation, a session's digest): unambiguous, sortable, and 10
    characters where "8 September 2023" takes 16."""
    return _utc_day(at_ms).isoformat()


def resolve_dates(text: str, at_ms: int, context: str | None = None) -> tuple[ResolvedDate, ...]:
    """Every relative date expression of ``text``, in order, resolved against the UTC day of
    ``at_ms`` (the turn's event time, epoch milliseconds). Conventions: the module docstring.
    ``context``: the message ``text`` is a sentence of, whose tense a sentence of no verb
    takes ("tuesday." in "table's delivered. tuesday. ... i said no"); ``text`` itself when
    None."""
    lowered = text.lower()
    if not _may_have_dates(lowered):
        return ()
    return _resolve(text, lowered, _utc_day(at_ms), context)


def grounded(text: str, at_ms: int, context: str | None = None) -> str:
    """``text`` with each relative date followed by its label: "yesterday (7 May 2023)".

    An expression already followed by an explicit date ("last Friday, 5 May 2023", "yesterday
    (7 May 2023)") is left as it is, so ``grounded(grounded(t, at), at) == grounded(t, at)``;
    one followed by a day without its year ("on Saturday the 21st of June") leaves the label
    to that day ("… the 21st of June (21 June 2025)"). A text
    without an expression is returned unchanged (the same object). ``context``: as for
    :func:`resolve_dates`."""
    resolved = resolve_dates(text, at_ms, context)
    if not resolved:
        return text
    parts: list[str] = []
    position = 0
    dated_until = -1  # the end of the explicit date that follows an expression, if any
    for found in resolved:
        if found.start < dated_until:
            continue  # inside the explicit date that follows an expression
        explicit = _FOLLOWED_BY_DATE.match(text, found.end)
        if explicit:
            if not any(found.end <= other.start < explicit.end() for other in resolved):
                dated_until = explicit.end()  # else a day without its year: labelled itself
            continue
        parts.append(text[position : found.end])
        parts.append(f" ({found.label()})")
        position = found.end
    if not parts:
        return text
    parts.append(text[position:])
    return "".join(parts)


# --- the cheap pre-check ----------------------------------------------------------------------

# Every expression contains one of these (lower-case) substrings: "day" (today, yesterday,
# the weekday names, days), "week", "month", "year", "night" (tonight), "orrow" (tomorrow) or
# a part of the day ...
_ALWAYS = ("day", "week", "month", "year", "night", "orrow", "morning", "noon", "evening")
# ... or a holiday's name (scanned for apart, :data:`_HOLIDAY_EXPRESSION`; "Boxing Day" and
# "New Year's Eve" have "day" and "year" too) ...
_HOLIDAY_NEEDLES = (
    *("christmas", "xmas", "boxing", "new year", "valentine", "halloween"),
    *("good friday", "easter", "thanksgiving"),
)
# ... or a month name with a day number ("June 3rd") or after "in" ("in June"), or a season
# after "in" ...
_MONTH_NEEDLES = (
    "uary",  # January, February
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "ember",  # September, November, December
    "october",
)
_DIGIT = re.compile(r"[0-9]")
_MONTH_ABBREVIATIONS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7,
    "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
"""A month's name as people shorten it before or after a day ("aug 2", "Oct 11th", "2 Sept"):
only there, where a day number beside it makes it a date."""
_SHORT_MONTH = "|".join(sorted(_MONTH_ABBREVIATIONS, key=len, reverse=True))
_SHORTENED_MONTH_DAY = re.compile(
    rf"\b(?:{_SHORT_MONTH})\.?[ \t]+(?:the[ \t]+)?[0-9]"
    rf"|[0-9](?:st|nd|rd|th)?(?:[ \t]+of)?[ \t]+(?:{_SHORT_MONTH})\b",
    re.ASCII,
)
_ORDINAL = re.compile(r"[0-9](?:st|nd|rd|th)\b")  # "on the 15th"
# ... or a modifier together with an abbreviated weekday, a season or a month name (these come
# only after last / this / next; the month names are the needles above).
_AFTER_MODIFIER: tuple[str, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_SEASON_NEEDLES = ("spring", "summer", "fall", "autumn", "winter")
_AFTER_MODIFIER += _SEASON_NEEDLES


def _names_a_holiday(lowered: str) -> bool:
    """Whether ``lowered`` may name a holiday (a superset test, as :func:`_may_have_dates`)."""
    return any(needle in lowered for needle in _HOLIDAY_NEEDLES)


def _may_have_dates(lowered: str) -> bool:
    """False only when no expression can match ``lowered`` (the text in lower case): a
    superset test, never a false negative."""
    for needle in _ALWAYS:
        if needle in lowered:
            return True
    if _names_a_holiday(lowered):
        return True
    month = any(needle in lowered for needle in _MONTH_NEEDLES)
    digit = _DIGIT.search(lowered)
    if month and ("in" in lowered or digit):
        return True
    if digit and _SHORTENED_MONTH_DAY.search(lowered):
        return True  # "aug 2", "the 14th of sept"
    if "in" in lowered and any(needle in lowered for needle in _SEASON_NEEDLES):
        return True  # "in the summer"
    if "the" in lowered and _ORDINAL.search(lowered):
        return True  # "on the 15th"
    if ("the" in lowered or month) and any(needle in lowered for needle in _SPELLED_NEEDLES):
        return True  # "on the fifteenth", "the first of March", "June first"
    if "last" not in lowered and "this" not in lowered and "next" not in lowered:
        return False
    return month or any(needle in lowered for needle in _AFTER_MODIFIER)


# --- the expressions ---------------------------------------------------------------------------

_WEEKDAYS = {
    "monday": 0,
    "mon": 0,
    "tuesday": 1,
    "tue": 1,
    "tues": 1,
    "wednesday": 2,
    "wed": 2,
    "weds": 2,
    "thursday": 3,
    "thu": 3,
    "thur": 3,
    "thurs": 3,
    "friday": 4,
    "fri": 4,
    "saturday": 5,
    "sat": 5,
    "sunday": 6,
    "sun": 6,
}
_DAY_NAMES = tuple(name for name in _WEEKDAYS if name.endswith("day"))  # written whole
_DAY_NAME = "|".join(_DAY_NAMES)
_COUNTS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple": 2,
    "a couple of": 2,
    "couple of": 2,
    "a few": 3,
}
_SEASONS = {"spring": 0, "summer": 1, "fall": 2, "autumn": 2, "winter": 3}  # by start month
_CAPITALISED_ONLY = frozenset({"sat", "sun", "may", "march", "mar"})  # also English words
# A word before last/this/next that makes the phrase name something else ("the last week").
_DETERMINERS = frozenset(
    {"the", "a", "an", "my", "your", "his", "her", "its", "our", "their", "whose", "every", "each"}
)
# Before "in N units": a frequency ("twice in a week"), not a date.
_FREQUENCY = frozenset({"once", "twice", "thrice", "times"})
# Earlier in the clause of "in N units": a duration ("haven't seen him in two years", "the first
# time in a month").
_DURATION_CUE = re.compile(
    r"n['’]t\b|\b(?:not|never)\b|\b(?:first|last|only)[ \t]+time\b", re.IGNORECASE | re.ASCII
)
_CLAUSE_MARKS = (".", "!", "?", ";", "\n")
# Just before "in N units": things counted ("12 shows in 3 weeks", "five books in a month"), a
# rate, not a date; not units of time, counted or before what is ("in 3 days in 3 days", "in 3
# days class in 3 days" would not ground twice alike: a label parts "days" from "class").
_A_NUMBER = r"\b(?:[0-9][0-9,.]*|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_TIME_UNITS = r"(?!(?:second|minute|hour|day|night|week|weekend|month|year)s\b)"
_COUNTED = re.compile(
    rf"(?:{_A_NUMBER}|\b(?:dozens|hundreds))[ \t]+(?:{_TIME_UNITS}[a-z]+[ \t]+)?{_TIME_UNITS}"
    r"(?!(?:tues|weds|thurs)\b)"  # a weekday, no thing counted ("next Thurs in 3 days")
    r"[a-z]{2,}s[ \t]+$",
    re.IGNORECASE | re.ASCII,
)
# Just before "in N units": an amount of time ("64 days in 4 years", "three weeks in a
# month"), a share of a period, not a date; unless it follows "for" ("away for 10 days in two
# weeks": how long, then when) or "in" ("in 3 days in 3 days", so that grounding twice agrees).
_TIME_COUNTED = re.compile(
    rf"(?:\b(?P<before>[a-z]+)[ \t]+)?{_A_NUMBER}[ \t]+(?:day|week|month|year)s[ \t]+$",
    re.IGNORECASE | re.ASCII,
)

_SP = r"[ \t]+"
_REL = rf"last|this{_SP}past|this{_SP}coming|this|next"
_WEEKDAY = "|".join(sorted(_WEEKDAYS, key=len, reverse=True))
_MONTH = "|".join(name.lower() for name in MONTHS)
_MONTHS_TOO = rf"{_MONTH}|(?:{_SHORT_MONTH})\.?"  # a month's name, whole or shortened
_COUNT = (
    r"[0-9]{1,4}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    rf"|a{_SP}couple(?:{_SP}of)?|couple{_SP}of|a{_SP}few|an?"
)
_UNIT = r"days?|weeks?|fortnights?|months?|years?"  # "a fortnight today": two weeks
_SPELLED_DAYS = {
    word: number
    for number, word in enumerate(
        (
            *("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"),
            *("ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth"),
            *("sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth"),
            *("twenty-first", "twenty-second", "twenty-third", "twenty-fourth"),
            *("twenty-fifth", "twenty-sixth", "twenty-seventh", "twenty-eighth"),
            *("twenty-ninth", "thirtieth", "thirty-first"),
        ),
        1,
    )
}
"""A day of the month in words ("on the fifteenth", "the twenty-first of June")."""
_SPELLED_DAY = "|".join(
    word.replace("-", "[- ]") for word in sorted(_SPELLED_DAYS, key=len, reverse=True)
)
_SPELLED_NEEDLES = ("first", "second", "third", "th")
"""What every day in words holds (a superset test: "fourth" … "thirty-first" end in "th")."""
_DAY_OF_MONTH = rf"(?:[12][0-9]|3[01]|0?[1-9])(?:st|nd|rd|th)?|(?:{_SPELLED_DAY})(?=[ \t]+of[ \t])"
"""A day before its month: a number, or a day in words before "of" ("the first of March"; not
"the first March we lived here")."""
_DAY_AFTER_MONTH = rf"(?:[12][0-9]|3[01]|0?[1-9])(?:st|nd|rd|th)?|{_SPELLED_DAY}"

_HOLIDAYS: dict[str, Callable[[int], date]] = {
    "christmas eve": lambda year: date(year, 12, 24),
    "christmas day": lambda year: date(year, 12, 25),
    "christmas": lambda year: date(year, 12, 25),
    "xmas": lambda year: date(year, 12, 25),
    "boxing day": lambda year: date(year, 12, 26),
    "new year's eve": lambda year: date(year, 12, 31),
    "new year's day": lambda year: date(year, 1, 1),
    "valentine's day": lambda year: date(year, 2, 14),
    "halloween": lambda year: date(year, 10, 31),
    "good friday": lambda year: _easter(year) - timedelta(days=2),
    "easter sunday": lambda year: _easter(year),
    "easter monday": lambda year: _easter(year) + timedelta(days=1),
    "easter": lambda year: _easter(year),
    "thanksgiving": lambda year: _thanksgiving(year),
}
"""The holidays of one day a year that English names: fixed ones, Easter by the Gregorian
computus, and (American) Thanksgiving, the fourth Thursday of November. Easter and Christmas
said alone name their day ("at Easter": Easter Sunday). An apostrophe may be left out or
curled ("new years eve", "Valentine’s Day")."""
_HOLIDAY = "|".join(
    re.escape(name).replace("\\ ", _SP).replace("'", "['’]?")
    for name in sorted(_HOLIDAYS, key=len, reverse=True)
)
_HOLIDAY_BY_NAME = {name.replace("'", ""): day_of for name, day_of in _HOLIDAYS.items()}
""":data:`_HOLIDAYS` by their names as :func:`_holiday` folds what was written."""


def _easter(year: int) -> date:
    """Easter Sunday of ``year`` (the anonymous Gregorian algorithm)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    weekday = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 19 * weekday) // 433
    month = (h + weekday - 7 * m + 90) // 25
    return date(year, month, (h + weekday - 7 * m + 33 * month + 19) % 32)


def _thanksgiving(year: int) -> date:
    """The fourth Thursday of November of ``year``."""
    first = date(year, 11, 1)
    return first + timedelta(days=(3 - first.weekday()) % 7 + 21)


_ONLY_A_FUNCTION_WORD_AFTER = (
    r"(?![ \t]+(?!(?:and|or|but|so|at|in|on|for|to|with|i|we|you|he|she|they|it|is|was|will"
    r"|as|because|when|if|then|this|that)\b)[a-z])"
)
"""What keeps a day from being a noun's modifier ("on the 15th floor", "Christmas presents"):
after it, only a function word may come, or no word at all."""

_DAY_COUNTED_FROM = {"yesterday": -1, "tomorrow": 1}
"""Days from D to the day "N units ago" or "N units from ..." counts from when it names one
("a week ago yesterday", "a week tomorrow"); "today" and "now" are D."""


def _counted_from(today: date, named: str | None) -> date:
    """The day an "ago" or "from" count starts at: ``named`` (:data:`_DAY_COUNTED_FROM`), else
    ``today``."""
    return today + timedelta(days=_DAY_COUNTED_FROM.get((named or "").lower(), 0))


_EXPRESSION_SOURCE = (
    # A word start whose letter can begin an expression: a cheap filter for the scan.
    r"\b(?=[tylneiacofsjmdw0-9])(?:"
    rf"(?P<fixed>the{_SP}day{_SP}before{_SP}yesterday|the{_SP}day{_SP}after{_SP}tomorrow"
    rf"|today|tonight|yesterday|tomorrow|this{_SP}(?:morning|afternoon|evening)|last{_SP}night)"
    rf"|(?P<weekday>(?P<wd_rel>{_REL}){_SP}(?P<wd_name>{_WEEKDAY}))"
    rf"|(?P<period>(?P<p_rel>{_REL}){_SP}(?P<p_unit>weekend|week|month|year|spring|summer|fall|autumn|winter))"
    rf"|(?P<named_month>(?P<m_rel>last|this|next){_SP}(?P<m_name>{_MONTH}))"
    rf"|(?P<part>(?:earlier|later){_SP}this{_SP}(?P<part_unit>week|month|year))"
    rf"|(?P<two_away>the{_SP}(?P<an_unit>weekend|week|month|year){_SP}"
    rf"(?P<an_rel>after{_SP}next|before{_SP}last(?!{_SP}(?:{_WEEKDAY}|{_MONTH}|{_UNIT}|weekend))))"
    rf"|(?P<ago>(?P<ago_n>{_COUNT}){_SP}(?P<ago_unit>weekends?|{_UNIT}){_SP}ago"
    # "a week ago yesterday", "114 years ago yesterday": that many before the day named
    rf"(?:{_SP}(?P<ago_from>today|yesterday|tomorrow)\b)?)"
    rf"|(?P<ahead>in{_SP}(?P<in_n>{_COUNT}){_SP}(?P<in_unit>{_UNIT}))"
    rf"|(?P<from_now>(?P<fn_n>{_COUNT}){_SP}(?P<fn_unit>{_UNIT}){_SP}"
    # without "from", weeks only: "a week tomorrow", "a fortnight today", not "the full five
    # days tomorrow"
    r"(?:from[ \t]+|(?<=k[ \t])|(?<=ks[ \t])|(?<=ht[ \t])|(?<=hts[ \t]))"
    r"(?P<fn_from>(?<=from )now|today|tomorrow))"
    # "a week on Friday" (British): a week after the coming Friday
    rf"|(?P<week_on>(?P<wo_n>{_COUNT}){_SP}weeks?{_SP}on{_SP}(?P<wo_name>{_DAY_NAME}))"
    # "on <weekday>", dated by its sentence's tense
    rf"|(?P<on_weekday>on{_SP}(?P<ow_name>{_DAY_NAME})"
    r"(?![ \t]+(?:mornings|afternoons|evenings|nights)\b))"
    # a weekday said alone ("Saturday was a blur", "went to a meet and greet sunday", "see
    # you Friday"), dated by its clause's tense as "on <weekday>" is (_alone says when it is
    # not alone: in a range, a list, a name, before a date)
    r"|(?P<lead_weekday>(?<![-–/(])"
    rf"(?P<lw_name>{_DAY_NAME})"
    r"(?:['’]s\b|[ \t]+(?:morning|afternoon|evening|night)(?:['’]s)?\b)?(?![a-z]))"
    # "in <month>", dated by its sentence's tense; not a day or a year after it ("in June 3rd")
    rf"|(?P<in_month>in{_SP}(?:early{_SP}|late{_SP}|mid-?)?(?P<im_name>{_MONTH})"
    r"(?![ \t]*(?:,?[ \t]*[0-9]|[-–])))"
    # "since <month>": the last such month, whatever the tense ("together since November")
    rf"|(?P<since_month>since{_SP}(?P<sm_name>{_MONTH})"
    r"(?![ \t]*(?:,?[ \t]*[0-9]|[-–])))"
    # "in the summer", dated by its sentence's tense; not "in the summer of 2019"
    rf"|(?P<in_season>in{_SP}(?:the{_SP})?(?:early{_SP}|late{_SP})?"
    r"(?P<is_name>spring|summer|fall|autumn|winter)"
    r"(?![ \t]+of\b)(?![ \t]*,?[ \t]*[0-9]))"
    # a day of this, next or last month ("the 1st of this month")
    rf"|(?P<day_of_named_month>the{_SP}"
    rf"(?P<dn_day>(?:[12][0-9]|3[01]|0?[1-9])(?:st|nd|rd|th)|{_SPELLED_DAY})"
    rf"{_SP}of{_SP}(?P<dn_rel>this|next|last){_SP}month)"
    # a day of the month alone after a preposition ("on the 15th"), dated by its sentence's
    # tense; not before a noun ("on the 15th floor"): only a function word may follow
    r"|(?P<day_of_month>(?:(?<=\bon[ \t])|(?<=\bby[ \t])|(?<=\buntil[ \t])|(?<=\btill[ \t])"
    r"|(?<=\bbefore[ \t])|(?<=\bafter[ \t])|(?<=\bfrom[ \t])|(?<=\bto[ \t])"
    # or "for", "is" or "was" ("it's the 21st"), or a sentence of its own ("op's booked! the
    # 21st"; "the 21st was fun" may be someone's 21st birthday)
    r"|(?<=\bfor[ \t])|(?<=\bis[ \t])|(?<=['’]s[ \t])|(?<=\bwas[ \t])"
    r"|(?:(?<=[.!?][ \t])|(?<=\n)|^)(?=the[ \t]+[0-9]{1,2}(?:st|nd|rd|th)[ \t]*(?:[.!?\n]|$)))"
    rf"the{_SP}(?P<dm_day>(?:[12][0-9]|3[01]|0?[1-9])(?:st|nd|rd|th)"
    # in words, only after "on", "by", "until": "from the first" is the first of anything
    rf"|(?:(?<=on the )|(?<=by the )|(?<=until the )|(?<=till the ))(?:{_SPELLED_DAY}))"
    rf"(?![ \t]*(?:of\b|[-–0-9])){_ONLY_A_FUNCTION_WORD_AFTER})"
    # a day and month, not a range's end ("3-5 June") and with no year after it
    rf"|(?P<calendar>(?<![-–])(?<![-–][ \t])"
    rf"(?:(?:the{_SP})?(?P<c_day>{_DAY_OF_MONTH})(?:{_SP}of)?{_SP}(?P<c_month>{_MONTHS_TOO})"
    rf"|(?P<c_month2>{_MONTHS_TOO}){_SP}(?:the{_SP})?(?P<c_day2>{_DAY_AFTER_MONTH}))"
    r"(?![ \t]*(?:,?[ \t]*[0-9]|[-–%])|[.,][0-9]))"  # no year, range or rate ("APR 5.9%")
    r")(?!\w)(?:['’]s(?!\w))?"
)
# Scans the lower-cased text (the usual case: the scan is twice as fast without case folding),
# or the text itself when lower-casing changed its length, so that offsets would not agree.
_EXPRESSION = re.compile(_EXPRESSION_SOURCE, re.ASCII)
_EXPRESSION_ANY_CASE = re.compile(_EXPRESSION_SOURCE, re.IGNORECASE | re.ASCII)
# A holiday of a fixed or computed day ("on Boxing Day", "last Christmas", "at Easter"), dated
# by "last/this/next" or by its sentence's tense; not a noun's modifier ("Easter eggs"). Apart
# from :data:`_EXPRESSION`, and scanned for only when a needle is there: in the one scan, the
# letters its names begin with cost every text ~40 % more.
_HOLIDAY_EXPRESSION = re.compile(
    rf"\b(?P<holiday>(?:(?P<h_rel>last|this|next){_SP})?(?P<h_name>{_HOLIDAY})"
    rf"{_ONLY_A_FUNCTION_WORD_AFTER})(?!\w)(?:['’]s(?!\w))?",
    re.IGNORECASE | re.ASCII,
)
# An abbreviated weekday's full stop belongs to the expression when the sentence goes on after
# it in lower case or with a bracket ("last Fri. we went", "last Fri. (5 May 2023)"); otherwise
# it ends the sentence and stays outside.
_ABBREVIATION_DOT = re.compile(r"\.(?=[ \t]+[a-z0-9(])")

# What counts as an explicit date right after an expression: "(7 May 2023)", "(week of 1 May
# 2023)", "(summer 2023)", "(2023)", ", 5 May", " on May 5th", " 2023-05-05", " 5/5".
_MONTH_WORD = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_DAY_NUMBER = r"[0-9]{1,2}(?:st|nd|rd|th)?"
_DATE = (
    rf"(?:{_DAY_NUMBER}(?:[ \t]*-[ \t]*{_DAY_NUMBER})?(?:{_SP}of)?{_SP}(?:{_MONTH_WORD})\.?(?!\w)"
    rf"|(?:{_MONTH_WORD})\.?{_SP}(?:{_DAY_NUMBER}|[0-9]{{4}})(?!\w)"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}|[0-9]{1,2}/[0-9]{1,2}(?:/[0-9]{2,4})?(?![0-9]))"
)
_FOLLOWED_BY_DATE = re.compile(
    rf"[ \t]*(?:\([ \t]*(?:week{_SP}of{_SP}|(?:spring|summer|fall|autumn|winter){_SP}[0-9]{{4}}"
    rf"|[0-9]{{4}}(?![0-9])|{_DATE})|,?[ \t]*(?:(?:on|the){_SP})?{_DATE})",
    re.IGNORECASE | re.ASCII,
)


def _resolve(
    text: str, lowered: str, today: date, context: str | None = None
) -> tuple[ResolvedDate, ...]:
    matches: Iterable[re.Match[str]]
    if len(lowered) == len(text):
        matches = _EXPRESSION.finditer(lowered)
    else:
        matches = _EXPRESSION_ANY_CASE.finditer(text)
    if _names_a_holiday(lowered):
        matches = sorted([*matches, *_HOLIDAY_EXPRESSION.finditer(text)], key=lambda m: m.start())
    found: list[ResolvedDate] = []
    for match in matches:
        if found and match.start() < found[-1].end:
            continue  # within the expression before it ("the 17th" of "Thursday the 17th")
        if match.lastgroup == "lead_weekday":  # "that next Friday" is next's
            anchor = found[-1] if found else _day_before(match, text, today, context)
            anchored = None if anchor is None else _anchored_weekday(match, text, anchor)
            if anchored is not None:
                found.append(anchored)
                continue
            if found and _word_before(text, match.start()).lower() == "that":
                continue
        period = None
        if match.lastgroup == "day_of_month" and found:
            # a later day of the month just named, whatever the tense: "the flight on August
            # 19, so I land on the 20th" (said in June, not the coming 20th of June)
            period = _later_that_month(match, text, found[-1])
        try:
            period = period or _period(match, text, today, context)
        except (OverflowError, ValueError):  # before year 1 or after 9999
            continue
        if period is None:
            continue
        start, end = match.span()
        if (
            match.lastgroup == "weekday"
            and not match.group("wd_name").lower().endswith("day")
            and _ABBREVIATION_DOT.match(text, end)
        ):
            end += 1
        numbered = (
            _WEEKDAY_NUMBERED.match(text, end) if match.lastgroup in _NAMING_A_WEEKDAY else None
        )
        if numbered is not None and not _OF_AFTER.match(text, numbered.end()):
            end = numbered.end()  # "Thursday the 17th (17 March 2022)", not between the two
        first, last, granularity = period
        if match.lastgroup in ("on_weekday", "lead_weekday") and found and first > today:
            first = last = _in_order(first, granularity, found[-1], text[found[-1].end : start])
        found.append(ResolvedDate(start, end, text[start:end], first, last, granularity))
    return _not_this_one(found, text)


_MONTH_SAID = re.compile(
    rf"\bin[ \t]+(?:early[ \t]+|mid[ \t-]+|late[ \t]+)?({_MONTH_WORD})\b", re.IGNORECASE
)
"""A month said in a sentence ("in july"), which a weekday and day of the month after it
may fall in."""


def _not_this_one(found: list[ResolvedDate], text: str) -> tuple[ResolvedDate, ...]:
    """``found``, with a "next <weekday>" that the text tells apart from "this <weekday>"
    ("next saturday — not this saturday, the one after", said on a Sunday, when both named the
    coming one by the week's rule; blind conversation 76) a week after the day the two named."""
    for i, (said, other) in enumerate(zip(found, found[1:], strict=False)):
        relation, _, name = said.expression.lower().partition(" ")
        if (
            relation == "next"
            and other.expression.lower() == f"this {name}"
            and other.first == said.first
            and _NOT_BEFORE.search(text, said.end, other.start)
        ):
            day = said.first + timedelta(days=7)
            found[i] = ResolvedDate(said.start, said.end, said.expression, day, day, "day")
    return tuple(found)


_NOT_BEFORE = re.compile(r"\bnot[ \t]+\Z", re.IGNORECASE)
""""not" just before the expression it is said of."""


def _anchored_weekday(match: re.Match[str], text: str, before: ResolvedDate) -> ResolvedDate | None:
    """The weekday of ``match`` (said alone) told from the day named before it in its
    message (``before``), or None: "that saturday" is in that day's week ("closing is may
    15, and we're moving her in that saturday"), "the wednesday after" the first one after it
    ("thursday night, back monday. mum's op is the wednesday after": blind conversation 72
    had left it undated)."""
    if before.granularity != "day":
        return None
    word = _word_before(text, match.start()).lower()
    target = _WEEKDAYS[match.group("lw_name").lower()]
    after = _AFTER_IT.match(text, match.end()) if word == "the" else None
    if after is not None:
        day = before.first + timedelta(days=(target - before.first.weekday() - 1) % 7 + 1)
        start, end = match.start(), after.end("after")
    elif word == "that":
        day = before.first + timedelta(days=(target - before.first.weekday()) % 7)
        start, end = match.span("lw_name")
    else:
        return None
    return ResolvedDate(start, end, text[start:end], day, day, "day")


def _day_before(
    match: re.Match[str], text: str, today: date, context: str | None
) -> ResolvedDate | None:
    """For "the <weekday> after" that opens ``text``'s dates, the last day named before
    ``text`` in its message (``context``), or None: "thursday night, back monday. mum's op is
    the wednesday after" is grounded a sentence at a time."""
    if context is None or not _AFTER_IT.match(text, match.end()):
        return None
    if _word_before(text, match.start()).lower() != "the":
        return None
    at = context.find(text)
    if at <= 0:
        return None
    before = context[:at]
    days = [d for d in _resolve(before, before.lower(), today, context) if d.granularity == "day"]
    return days[-1] if days else None


_AFTER_IT = re.compile(
    r"[ \t]+(?P<after>after)(?=[ \t]*(?:$|[.,!?;:)\n]|(?:and|but|so|then|that|which)\b))",
    re.IGNORECASE,
)
""""after" that ends a clause: after the day named before ("the wednesday after"), not
after a thing ("the Friday after the party") nor "after next"."""


def _in_order(first: date, granularity: str, before: ResolvedDate, between: str) -> date:
    """``first``, a day to come dated by its tense, moved on by weeks to after the day to come
    named just before it in the same sentence (``before``; ``between``: the text between): a
    plan is told in the order it goes ("thursday night, back monday", said on a Saturday, is
    the Monday after that Thursday, not the one before it; blind conversation 72)."""
    if (
        granularity != "day"
        or before.granularity != "day"
        or first >= before.first  # the same day named again ("Friday night ... Friday")
        or any(mark in between for mark in _SENTENCE_MARKS)
        or (before.first - first).days >= 7
    ):
        return first
    return first + timedelta(days=7)


_Period = tuple[date, date, Granularity]


_OF_AFTER = re.compile(r"[ \t]+of\b", re.IGNORECASE)
"""A day of the month that goes on ("the 2nd of next month"): an expression of its own."""


def _later_that_month(match: re.Match[str], text: str, before: ResolvedDate) -> _Period | None:
    """A day of the month after a day and month said before it in its sentence: a later day
    of that month ("moving out by August 15, the flight on the 19th,
    the Anmeldung on the 22nd", blind conversation 61: the two were left open). None when
    the date before is no day, is in another sentence, or is not earlier in that month."""
    if before.granularity != "day" or any(
        mark in text[before.end : match.start()] for mark in _SENTENCE_MARKS
    ):
        return None
    number = _day_number(match.group("dm_day"))
    if number <= before.first.day or number > _month_days(before.first.year, before.first.month):
        return None
    day = before.first.replace(day=number)
    return day, day, "day"


def _period(
    match: re.Match[str], text: str, today: date, context: str | None = None
) -> _Period | None:
    kind = match.lastgroup
    if kind == "fixed":
        phrase = _normalised(match.group("fixed"))
        if phrase == "last night" and _after_determiner(text, match.start()):
            return None
        offset = _FIXED_OFFSETS[phrase]
        day = today + timedelta(days=offset) if offset else today
        return day, day, "day"
    if kind in ("weekday", "period", "named_month") and _after_determiner(text, match.start()):
        return None
    monday = today - timedelta(days=today.weekday())
    if kind in _NAMING_A_WEEKDAY:
        numbered = _WEEKDAY_NUMBERED.match(text, match.end())
        if numbered is not None:
            if _MONTH_AFTER.match(text, numbered.end()):
                return None  # "Saturday the 19th of July": the day and month date it
            return _numbered_weekday(match, kind, int(numbered.group("n")), text, today)
    if kind == "weekday":
        name = text[match.start("wd_name") : match.end("wd_name")]
        if name.lower() in _CAPITALISED_ONLY and not name[0].isupper():
            return None
        relation = _normalised(match.group("wd_rel"))
        day = _weekday(relation, _WEEKDAYS[name.lower()], today, monday)
        if relation == "this" and day < today and _tense(match, text, context) != "past":
            # said on a Saturday, "First one is this Tuesday" is the coming one; "we met this
            # Tuesday", in the past, is the week's
            day += timedelta(days=7)
        return day, day, "day"
    if kind == "period":
        relation, unit = _normalised(match.group("p_rel")), match.group("p_unit").lower()
        period = _named_period(relation, unit, today, monday)
        to_come = relation == "this" and unit in _SEASONS and period[0] > today
        if to_come and _tense(match, text, context) == "past":
            # "this winter finally broke us", said on 1 March: the winter just gone, not the
            # one to begin later in the year (blind conversation 73)
            return _named_period("last", unit, today, monday)
        return period
    if kind == "named_month":
        month = _month_named(text[match.start("m_name") : match.end("m_name")])
        if month is None:
            return None
        return _named_month(match.group("m_rel").lower(), month, today)
    if kind == "part":
        return _named_period("this", match.group("part_unit").lower(), today, monday)
    if kind == "two_away":
        step = 2 if match.group("an_rel").lower().startswith("after") else -2
        return _stepped_period(step, match.group("an_unit").lower(), today, monday)
    if kind == "ago":
        count = _count(match.group("ago_n"))
        unit = match.group("ago_unit").lower().rstrip("s")
        if unit == "weekend":
            return _weekend(monday - timedelta(days=7 * count))
        start = _counted_from(today, match.group("ago_from"))
        day = _shifted(start, unit, -count)
        return day, day, "day"
    if kind == "ahead":
        if (
            _is_duration(text, match.start())
            or _tense(match, text, context) == "past"
            or _SPAN_PERFECT.search(_sentence_before(match, text))
        ):
            # "twice in a week", "I lost 5 kilos in a month", "the best present she's had in
            # 90 years": how long, not when
            return None
        day = _shifted(
            today, match.group("in_unit").lower().rstrip("s"), _count(match.group("in_n"))
        )
        return day, day, "day"
    if kind == "calendar":
        return _calendar_day(match, text, today)
    if kind == "holiday":
        return _holiday(match, text, today, context)
    if kind == "since_month":
        return _said_month(match, text, today, "past", group="sm_name")
    if kind == "day_of_named_month":
        year, month = _month_shift(today.year, today.month, _STEPS[match.group("dn_rel").lower()])
        day_number = _day_number(match.group("dn_day"))
        if day_number > _month_days(year, month):
            return None  # "the 31st of next month" in a month of 30 days
        day = date(year, month, day_number)
        return day, day, "day"
    if kind == "lead_weekday" and not _alone(match, text):
        return None
    if kind == "day_of_month" and _RESCHEDULED.search(text, 0, match.start()):
        # "the op got moved to the 21st": what it was moved to is to come
        return _said_day(match, today, "future")
    if kind in _SAID_IN_A_TENSE:
        tense = _tense(match, text, context)
        if tense is None:
            return None  # left open, as a sentence without a tense leaves it
        if kind in ("on_weekday", "lead_weekday"):
            return _said_weekday(match, today, tense)
        if kind == "in_month":
            return _said_month(match, text, today, tense)
        if kind == "in_season":
            return _said_season(match, today, tense)
        return _said_day(match, today, tense)
    if kind == "week_on":
        target = _WEEKDAYS[match.group("wo_name").lower()]
        day = _weekday("this coming", target, today, monday)
        day += timedelta(days=7 * _count(match.group("wo_n")))
        return day, day, "day"
    # from_now: "two weeks from tomorrow" (or "a week tomorrow") counts from the day after;
    # not after a perfect ("we've been married three years today": a span)
    if _SPAN_PERFECT.search(_sentence_before(match, text)):
        return None
    start = _counted_from(today, match.group("fn_from"))
    day = _shifted(start, match.group("fn_unit").lower().rstrip("s"), _count(match.group("fn_n")))
    return day, day, "day"


_NAMING_A_WEEKDAY = {"weekday": "wd_name", "on_weekday": "ow_name", "lead_weekday": "lw_name"}
_WEEKDAY_NUMBERED = re.compile(
    r",?[ \t]+(?:the[ \t]+)?(?P<n>[12][0-9]|3[01]|0?[1-9])(?:st|nd|rd|th)\b", re.IGNORECASE
)
"""A day of the month right after a weekday ("saturday the 10th", "Tuesday the 20th")."""
_MONTH_AFTER = re.compile(rf"[ \t]+(?:of[ \t]+)?(?:{_MONTH_WORD})\b", re.IGNORECASE)
"""A month after that day: the weekday is part of a date ("Saturday the 19th of July", said
in March, had been 19 April, the next 19th on a Saturday; blind conversation 48)."""


def _numbered_weekday(
    match: re.Match[str], kind: str, number: int, text: str, today: date
) -> _Period | None:
    """The day that a weekday and a day of the month name together ("saturday the 10th" said
    on Thursday 8 February 2024: Saturday 10 February): of this month and the months either
    side, the one with that number on that weekday nearest the day it was said, whatever the
    tense; None when none is (a slip of the writer's: which of the two they meant is open).
    The number says which week, where the weekday alone was dated by the tense ("saturday"
    in a message about what was booked had been the Saturday before). A month said before
    it in its sentence holds it when that month has it ("it's in july starting monday
    15th", said in May, had been 15 April; blind conversation 76)."""
    target = _WEEKDAYS[match.group(_NAMING_A_WEEKDAY[kind]).lower()]
    candidates = [d for d in _numbered_days(number, today) if d.weekday() == target]
    if not candidates:
        return None
    sentence = text[_sentence_start(text, match.start()) : match.start()]
    months = [_month_named(m.group(1)) for m in _MONTH_SAID.finditer(sentence)]
    month = next((m for m in reversed(months) if m is not None), None)
    if month is not None:
        candidates = [d for d in _around(month, number, today) if d.weekday() == target] or (
            candidates
        )
    day = min(candidates, key=lambda d: abs((d - today).days))
    return day, day, "day"


def _holiday(match: re.Match[str], text: str, today: date, context: str | None) -> _Period | None:
    """The day of a holiday ("on Boxing Day", "last Christmas"): "last", the most recent before
    the day said; "next", the first after it; "this", the one of its year; alone, by the tense
    of its sentence as "in June" (:func:`_said_month`): the most recent up to the day said in
    the past ("she got engaged on Boxing Day", said in February: 26 December of the year
    before), the first from it on in the future; left open otherwise."""
    name = " ".join(match.group("h_name").lower().replace("’", "").replace("'", "").split())
    day_of = _HOLIDAY_BY_NAME[name]
    days = [day_of(year) for year in (today.year - 1, today.year, today.year + 1)]
    relation = match.group("h_rel")
    if relation is not None:
        relation = relation.lower()
        if relation == "this":
            day = day_of(today.year)
        elif relation == "last":
            day = [d for d in days if d < today][-1]
        else:
            day = [d for d in days if d > today][0]
        return day, day, "day"
    tense = _tense(match, text, context)
    if tense == "past":
        day = [d for d in days if d <= today][-1]
    elif tense == "future":
        day = [d for d in days if d >= today][0]
    else:
        return None
    return day, day, "day"


def _calendar_day(match: re.Match[str], text: str, today: date) -> _Period | None:
    """A day and month said without a year ("June 3rd", "the 3rd of June"): that day in the
    year that puts it nearest the day it was said (None for a day the month does not have);
    the first from that day on when it is what something was moved or put off to, and the
    last up to that day after "since"."""
    group = "c_month" if match.group("c_month") else "c_month2"
    name = text[match.start(group) : match.end(group)]
    month = _month_named(name)
    if month is None and _DAY_ENDS_IT.match(text, match.end()):
        month = _month_named(name.capitalize())  # "she starts march 20": chat's lower case
    if month is None:
        return None  # "they march 3 miles", "we may 2 of them"
    number = _day_number(match.group("c_day") or match.group("c_day2"))
    candidates = _around(month, number, today)
    if not candidates:
        return None
    named = _WEEKDAY_BEFORE.search(text, 0, match.start())
    if named is not None:
        # "saturday 13th september", said in March: the year whose 13 September is a Saturday
        # (within half a year of it: a weekday mistaken is likelier than a year gone)
        weekday = _WEEKDAYS[named.group(1).lower()]
        near = [d for d in candidates if abs((d - today).days) <= _HALF_YEAR_DAYS]
        candidates = [d for d in near if d.weekday() == weekday] or candidates
    later = [d for d in candidates if d >= today]
    if later and (
        _RESCHEDULED.search(text, 0, match.start()) or _word_before(text, match.start()) in _UNTIL
    ):
        # "the date's moved to 2nd September", "the new permit is until september 30"
        return later[0], later[0], "day"
    day = min(candidates, key=lambda d: (abs((d - today).days), d))
    if (
        later
        and (today - day).days > _RECENT_DAYS
        and (_ARRANGED_FOR.search(text, 0, match.start()) or _tense(match, text) == "future")
    ):
        # "now they fixed the wedding: 18 October", "the wedding will be on 18 October", said
        # in February: the coming one, not the nearer one gone (none for a 29 February
        # said in 2025: the last was in 2024)
        return later[0], later[0], "day"
    if _word_before(text, match.start()) == "since":
        earlier = [d for d in candidates if d <= today]  # "since June 3rd": one gone by
        if earlier:
            return earlier[-1], earlier[-1], "day"
    return day, day, "day"


_RECENT_DAYS = 60
"""How long ago a day and month may be and still be the one meant when its sentence says it
is to come: a day of the last two months named in the future is one just gone, told loosely
("let's circle back to your trip from July 15th", said in August), not one a year away."""


# After a day and "may" or "march" in lower case, what makes them a date: the sentence ends
# or goes on with a word that cannot be the day's noun ("march 20 is her first day", not
# "march 20 miles")
_DAY_ENDS_IT = re.compile(
    r"[ \t]*(?:$|[.,!?;:)\n]|(?:and|or|but|so|at|in|on|for|to|with|is|was|will|then)\b)",
    re.IGNORECASE | re.ASCII,
)


_HALF_YEAR_DAYS = 200
"""How far from the day said a day and month may be to have its year told by the weekday
named before it."""
_WEEKDAY_BEFORE = re.compile(rf"\b({_WEEKDAY}),?[ \t]+(?:the[ \t]+)?$", re.IGNORECASE)
"""A weekday just before a day and month, which tells its year apart."""
_UNTIL = frozenset({"until", "till", "til", "through", "thru"})
"""Words before a date that make it a bound still ahead: what lasts until then has not ended
(blind conversation 44: "new permit is until september 30", said in March, had become the
September before, the nearer of the two)."""
_ARRANGED_FOR = re.compile(
    r"\b(?:booked|scheduled|fixed|set|planned|arranged|reserved)\b[^.!?\n]{0,40}?"
    r"(?:[ \t]for|:)[ \t]+(?:the[ \t]+)?$",
    re.IGNORECASE | re.ASCII,
)
"""What is arranged for a day is to come, told in any tense: "they fixed the wedding: 18
October", said in February (blind conversation 74: the nearer 18 October, of the year
before), "we booked the venue for 3 June"."""
# What a day is put off or moved to is a day to come: "the wedding's moved to 2nd September",
# "they pushed it back to the 3rd of June", "postponed until March 9th"
_RESCHEDULED = re.compile(
    r"\b(?:moved|pushed|postponed|rescheduled|bumped|delayed|put[ \t]+off|changed)"
    r"(?:[ \t]+(?:it|them|back|forward|out|up))*[ \t]+(?:to|till|until|for)[ \t]+(?:the[ \t]+)?$",
    re.IGNORECASE | re.ASCII,
)


# The tense of a clause or a sentence, from the words that mark it in English: auxiliaries,
# the common irregular past forms, a regular past (a word in -ed after its subject) and the
# perfect ("I've already finished").
# "'s" after a pronoun or a wh-word is "is" or "has" ("it's this Thursday", "she's been"),
# never a possessive; after a name it may be either ("Ana's party"), so names are not here.
# Nor "that's", which mostly opens a reaction to someone's news ("That's great to hear you
# finished it on Wednesday!"), told in the news' tense (RealMem: the one day it would leave
# open of all 10,472 turns of both corpora and two conversations)
_IS_OR_HAS = r"(?:it|he|she|there|here|what|who|where|when|how)['’]s"
_SUBJECT_PRONOUN = r"i|we|he|she|it|they|you"
# Contractions as chat types them, without the apostrophe ("im going", "didnt", "ive got"):
# only the spellings that are no other English word ("were", "ill", "well", "hell", "shell"
# and "its" are, and are not read so; "its" has a rule of its own below)
_BARE_BE = "im|youre|theyre"  # a subject and "be": before -ing, the progressive
_BARE_SUBJECT = f"{_BARE_BE}|ive"  # a subject and its verb
_BARE_PRESENT = f"{_BARE_SUBJECT}|isnt|arent|dont|doesnt|havent|hasnt"
_BARE_PAST = "didnt|wasnt|werent|hadnt"
_BARE_FUTURE = "wont|youll|theyll|itll"
_DEGREE = "(?:so|very|too|quite|pretty|super|still|just|also|all|even|kinda|sorta|not|never)"
"""Degree and focus adverbs: after a name's "'s" ("is") they open an adjective, not a noun."""
_ARRANGING = (
    "booked|entered|signed|registered|scheduled|planned|arranged|organised|organized|reserved"
)
_ONE_OFF_EVENTS = (
    "launch|wedding|funeral|party|delivery|appointment|interview|surgery|operation|op|gig"
    "|concert|premiere|graduation|ceremony|exam|deadline|flight|hearing|audition|recital"
    "|reunion|move|viewing|christening|housewarming|leaving do|send-off|opening|scan"
)
"""Nouns of events that happen once, in general English: one of them "is" on a day to come."""
_FUTURE_CUE = re.compile(
    rf"\b(?:will|won['’]t|{_BARE_FUTURE}|shall|gonna|going[ \t]+to|plan(?:s|ning)?[ \t]+to"
    r"|hop(?:e|es|ing)[ \t]+to"
    r"|can['’]t[ \t]+wait|let['’]s)\b|['’]ll\b|^[ \t]*see[ \t]+(?:you|ya)\b"
    # a one-off event is, now, on a day to come: "album launch is friday", "the delivery's on
    # the 20th" (not what happens every week or month: "rent is due on the 1st")
    rf"|\b(?:{_ONE_OFF_EVENTS})(?:['’]s|[ \t]+is)\b"
    r"(?![ \t]+(?:over|done|finished|cancel+ed|off|postponed)\b)"
    # and one someone has (got) is to come: "we've got a flat viewing saturday", "she has her
    # interview on the 9th" (what one has every week stays open: "I have yoga on Friday")
    r"|\b(?:(?:have|has)(?:[ \t]+got)?|['’](?:ve|s)[ \t]+got|ive[ \t]+got)[ \t]+"
    rf"(?:a|an|the|my|our|his|her|their|your)(?:[ \t]+[a-z]+){{0,2}}?[ \t]+(?:{_ONE_OFF_EVENTS})\b"
    # what is arranged now is to come: "the op is booked for the 21st", "we're all set for",
    # "still on for sunday?"
    r"|\bstill[ \t]+on[ \t]+for\b"
    rf"|(?:\b(?:is|are)|['’]s|['’]re)[ \t]+(?:(?:all|now|finally|already|just)[ \t]+)?"
    rf"(?:{_ARRANGING}|set[ \t]+for|confirmed[ \t]+for)\b",
    re.IGNORECASE | re.ASCII,
)
# The present progressive, a plan when its clause names a day or month: "we're going camping
# in June", "I'm flying to Frankfurt on Friday" (in another clause it is the present: "I'm
# feeling drained, and ...").
_BE_NOW = rf"\b(?:am|is|are|{_BARE_BE})|['’](?:m|re)"  # "be" in the present, "'s" aside
_PROGRESSIVE = re.compile(
    rf"(?:{_BE_NOW}|\b(?:he|she|it|there)['’]s)"
    r"[ \t]+(?:[a-z]+[ \t]+)?[a-z]{2,}ing\b",
    re.I | re.A,
)
# (a pronoun's "'s" before -ing is "is": "he's coming friday"; a name's may be a possessive,
# "Sarah's painting class")
_PERFECT = re.compile(
    r"(?:\b(?:have|has)|['’]ve)[ \t]+(?:already[ \t]+|just[ \t]+|finally[ \t]+|also[ \t]+)?"
    r"(?:[a-z]+ed|been|had|gone|done|seen|made|gotten|taken|met|found|left|spent|won|lost"
    r"|bought|sent|built|sold)\b"
    # "it's been": the "'s" of "has" only before "been" ("it's done" is a present passive)
    rf"|\b{_IS_OR_HAS}[ \t]+(?:already[ \t]+|just[ \t]+|finally[ \t]+)?been\b",
    re.IGNORECASE | re.ASCII,
)
_ARRANGED = re.compile(rf"\b(?:{_ARRANGING})$", re.IGNORECASE | re.ASCII)
"""Participles of arranging something: after "have" the time in their clause is what was
arranged ("Owen has entered the Great North Run in September", said in June: the coming
September), not when, as the perfect takes no time of its own."""
_PRESENT_CUE = re.compile(
    rf"\b(?:am|is|are|have|has|do|does|{_BARE_PRESENT})\b|['’](?:m|re|ve)\b|\b{_IS_OR_HAS}\b"
    # common verbs in the present's -s, none of them also a plural noun: "agent says sellers
    # answer monday" is no past, whatever the message before it told
    r"|\b(?:says|starts|begins|opens|closes|finishes|arrives|gets|flies|lives|wants|needs"
    r"|thinks|knows|reckons|seems|expects)\b"
    # "has got" is "has": "euan's got a couple of jobs lined up in september"
    r"|['’]s[ \t]+got\b"
    # "it's" as chat types it, where no possessive can stand: "its the first sunday in
    # september" (said in March, it had taken its message's past: September gone)
    r"|\bits[ \t]+(?=(?:the|a|an|not|so|very|just|gonna|going|on|in|at|like|only|still"
    r"|really|too|my|our|your|his|her|their)\b(?!-))",
    re.I | re.A,
)
PRESENT_IN_ED = frozenset(
    {"need", "feed", "bleed", "breed", "speed", "succeed", "proceed", "exceed", "heed", "embed"}
)
"""Present-tense verbs that end like a past one: "I need" is no past (and "Samuel needs")."""
_NOT_PAST = "|".join(sorted(PRESENT_IN_ED))
_PAST_WORDS = (
    "was|were|had|did|went|saw|came|took|made|met|ran|ate|bought|found|gave|told"
    "|said|felt|left|spent|won|lost|drove|flew|began|brought|caught|heard|kept|slept|spoke"
    "|swam|wore|paid|sent|built|sold|fell|broke|chose|forgot|grew|knew|rode|sang|threw|wrote"
    "|became|held|stood|woke|taught|thought|fought|hung|sat|drank|stole|shook|rang|hid|blew"
    "|drew|froze|struck|swore|swept|tore|understood|dug|fled|forgave|crept|dealt|flung|knelt"
    "|leapt|sought|shone|shrank|slid|sprang|swung|wept|withdrew|awoke|arose|laid|meant"
)
"""Irregular verbs' past forms that no present or noun shares ("read", "put" and "cost" do;
"a bit", "a rose", "stuck", "fed up"); "got" apart, which is no past after "'s"."""
_PAST_CUE = re.compile(
    rf"\b(?:{_PAST_WORDS}|{_BARE_PAST}"
    # not "has got" ("euan's got"), nor "have got" ("we've got a viewing"): the present
    r"|(?<!['’]s[ \t])(?<!['’]ve[ \t])(?<!\bhave[ \t])(?<!\bive[ \t])got)\b"
    # a word in -ed after its subject: a pronoun, a name, "my sister" or "the wife"; not a
    # linking verb before a participle ("Be prepared for snow", "Stay focused")
    rf"|\b(?:{_SUBJECT_PRONOUN}|(?-i:(?!(?:Be|Get|Stay|Feel|Keep|Look|Seem|Become|Remain"
    # nor a count or a determiner standing for a noun ("One booked at the Lamb on the 19th":
    # the slot's day), nor "Fingers crossed for Thursday"
    r"|Sound|Appear|Fingers|One|Two|Three|Some|All|Both|Each|Another|Any|No|This|These"
    r"|Those)\b)[A-Z][a-z]+)|(?:the|my|our|his|her|their)"
    # and a noun or two ("the washing machine flooded"), not an auxiliary ("the op is booked")
    r"(?:[ \t]+(?!(?:is|are|was|were|has|have|had|be|been|being|gets?|got)\b)[a-z]+){1,2}?"
    # or a possessive and its noun ("euan's van died"), not a pronoun's "'s" ("she's so
    # tired": "is") nor an adverb after a name's ("Ana's really excited")
    rf"|(?!{_IS_OR_HAS}|that['’]s|let['’]s)[a-z]+['’]s[ \t]+(?![a-z]+ly\b|{_DEGREE}\b)[a-z]+)"
    r"[ \t]+"
    r"(?:just[ \t]+|finally[ \t]+|also[ \t]+|all[ \t]+)?"
    rf"(?!(?:{_NOT_PAST})\b)[a-z]+ed\b"
    # or before an object pronoun, whatever its subject ("carmen called me friday", as chat
    # writes a name in lower case): an adjective in -ed takes no object. Not "her", also a
    # possessive ("so excited her band plays on Friday")
    rf"|\b(?!(?:{_NOT_PAST}|indeed)\b)[a-z]{{3,}}ed[ \t]+(?:me|him|us|them)\b",
    re.IGNORECASE | re.ASCII,
)
_SENTENCE_MARKS = (".", "!", "?", "\n")
# Words a weekday may follow after a comma to name their day again ("yesterday, Friday"),
# and the weekdays a list goes on after ("Monday, Wednesday, Friday")
_NAMED_AGAIN: tuple[str, ...] = (
    *("today", "tonight", "yesterday", "tomorrow", "morning", "afternoon", "evening"),
    *_DAY_NAMES,
)
# Words before a weekday that make it no day said alone: a determiner or a frequency ("the
# Friday shift", "every Friday"), a list or a range ("Friday and Saturday", "from Monday"),
# a bound ("since Thursday", "by Friday": the time before or after it, not the day), a day
# it names again ("today, Monday, January 5th", "tomorrow morning, Monday")
_NOT_ALONE = _DETERMINERS | frozenset(
    {"every", "each", "per", "on", "last", "this", "next", "past", "coming", "and", "or", "to"}
    | {"that"}  # "closing is may 15, and we're moving her in that saturday": that week's
    | {"from", "through", "thru", "till", "until", "since", "by", "before", "after", "of"}
    | {"first", "second", "third", "fourth", "fifth", "final"}  # "the first Monday of"
    | {"entire", "whole"}  # "my entire Saturday": a span, whichever day
    | {word for word in _COUNTS if " " not in word}  # "six Saturday classes", "one Saturday"
    | {"several", "few", "many", "some", "other"}
    | {"night", *_NAMED_AGAIN}  # "today Monday", "Monday Friday": a day named again, a list
)
# What may follow a weekday said alone: not a range or a list ("Monday-Friday", "Friday/
# Saturday", "Monday to Friday", "Friday and Saturday"), nor a capitalised word other than I
# ("Friday Night Lights": a name)
_NOT_ALONE_AFTER = re.compile(
    r"[-–/]|[ \t]+(?:(?i:to|through|thru|till|until)\b|(?!I\b)[A-Z])"
    # "and" or "or" then a subject pronoun starts a clause, no list: "it was Thursday and I
    # think it went well"
    rf"|[ \t]+(?i:and|or)\b(?![ \t]+(?i:{_SUBJECT_PRONOUN})\b)"
    r"|[ \t]+(?i:nights|mornings|afternoons|evenings)\b"  # "Tuesday nights": every one
    rf"|,[ \t]*(?i:(?:and|or)[ \t]+)?(?i:{_WEEKDAY})\b"  # a list: "Monday, Wednesday, Friday"
)


def _alone(match: re.Match[str], text: str) -> bool:
    """Whether the weekday of ``match`` is said alone, a day of its own: not in a range, a
    list or a name ("Focus Friday", "Friday Night Lights"), not followed by the date it is
    ("Saturday, January 17th"), not after a word that makes it a frequency or a bound."""
    start, end = match.span()
    if _NOT_ALONE_AFTER.match(text, end) or _FOLLOWED_BY_DATE.match(text, end):
        return False
    before, at = _word_before_at(text, start, raw=True)
    if before[:1].isupper() and before != "I":
        return False  # "Focus Friday", "Black Friday": a capitalised word before it
    if _word_before(text, at) in ("a", "an"):
        return False  # "a typical Saturday afternoon", "a lazy Sunday": a kind of day
    if before.lower() == "coming" and _BE_BEFORE.search(text, max(0, at - 12), at):
        return True  # "Keith is coming monday morning": the verb, not "the coming Monday"
    return before.lower() not in _NOT_ALONE and not before.isdigit()


_BE_BEFORE = re.compile(rf"(?:{_BE_NOW}|\b(?:was|were)|['’]s)[ \t]+\Z", re.IGNORECASE | re.ASCII)
"""A form of "be" just before a word: "is coming" is a verb, whatever "coming" is elsewhere."""


# The expressions dated by the tense they are said in (:func:`_tense`), each left open when
# its sentence has none
_SAID_IN_A_TENSE = frozenset(
    {"on_weekday", "lead_weekday", "in_month", "in_season", "day_of_month"}
)
_CLAUSE_BREAK = re.compile(
    r"[,;:\u2600-\u27bf\U0001f300-\U0001faff]|\b(?:and|but|so|because|while|although)\b"
    # "that" before a subject opens a clause of its own ("they announced on tuesday that
    # Harbourline is being acquired"); before a day or month's name it is a determiner
    r"|\bthat(?=[ \t]+(?:(?:i|we|you|he|she|they|it|the|my|our|his|her|their)\b"
    rf"|(?-i:[A-Z])(?!(?:{_WEEKDAY}|{_MONTHS_TOO})\b)))",
    re.I | re.A,
)
"""Where a clause ends: a comma, a conjunction, or an emoji, which in chat ends a thought as
a full stop would ("I'm organising the hen 😬 she got engaged on Boxing Day": the present
and the past were one clause, and its tense none)."""
Tense = Literal["past", "future"]


def _tense(match: re.Match[str], text: str, context: str | None = None) -> Tense | None:
    """The tense ``match`` is said in: its clause's (split at commas and conjunctions: "we went
    to the lake on Sunday and it is lovely"), else its sentence's ("On Saturday, we went
    hiking"); None when neither is marked, or when the first that is says "present" or both
    tenses (:func:`_marked`)."""
    start = _sentence_start(text, match.start())
    ends = [i for i in (text.find(mark, match.end()) for mark in _SENTENCE_MARKS) if i >= 0]
    end = min(ends, default=len(text))
    breaks_before = [b.end() for b in _CLAUSE_BREAK.finditer(text, start, match.start())]
    break_after = _CLAUSE_BREAK.search(text, match.end(), end)
    clause = text[
        breaks_before[-1] if breaks_before else start : break_after.start() if break_after else end
    ]
    intended = _INTENDED.search(text, start, match.start())
    if intended is not None and not _PAST_CUE.search(text, intended.end(), match.start()):
        return "future"  # "Jo has asked me to run a group in September": what is to be done
    if not _PAST_CUE.search(clause):  # "the baby was due in June but came early"
        if match.lastgroup in ("in_month", "in_season") and _DUE.search(
            text, max(0, match.start() - 8), match.start()
        ):
            return "future"  # "due in February": a baby, an essay, a bill expected then
        if (
            _SCHEDULED.search(clause)
            and not _HABITUAL.search(clause)
            and not _PERFECT.search(clause)
        ):
            return "future"  # "he starts on the 11th": a day on a timetable, the coming one
    marked, tense = _marked(clause, progressive=True)
    if marked:
        return tense
    if _ELIDED_PAST.match(clause):
        return "past"
    if _SUBJECT_AND_VERB.search(clause):
        return None  # "We fly out on Tuesday and I haven't packed": its own verb, unmarked
    marked, tense = _marked(text[start:end], progressive=False)
    message = text if context is None else context
    if (
        marked
        or len(message) > _FRAGMENT_CONTEXT_CHARS
        or _SUBJECT.search(text, start, end)
        or _ELIDED_SUBJECT.match(clause)
    ):
        return tense
    hedged = _HEDGED_FRAGMENT.match(text, start, end)
    if hedged is not None:
        return "future" if hedged.group(1) or _AGAIN.search(text, start, end) else None
    # a sentence of no verb ("table's delivered. tuesday. the couple loved it, i said no"):
    # the day it names is told in the tense of the message around it
    return _marked(message, progressive=False)[1]


_HEDGED_FRAGMENT = re.compile(
    r"[ \t]*(?:(?:and|but|so|or|then)[ \t,]+)?(?:(hopefully)|maybe|perhaps|probably|possibly)\b",
    re.IGNORECASE | re.ASCII,
)
"""A sentence of no verb opened by a hedge is a guess or a hope, not news told in its message's
tense: "I paused the membership for the summer. Maybe again in October." (said in July, it had
taken the pause's past: the October before). A hope is of what is to come, and so is a guess
at a thing done again; another guess is left undated ("maybe in October?" may guess when
something happened)."""
_AGAIN = re.compile(r"\bagain\b", re.IGNORECASE | re.ASCII)


_SCHEDULED = re.compile(
    r"\b(?:starts|begins|opens|finishes|ends|arrives|leaves|departs|lands|kicks[ \t]+off)\b"
    r"|\b(?:i|we|you|they)[ \t]+(?:start|begin|arrive|leave|depart|land|fly|finish)\b",
    re.IGNORECASE | re.ASCII,
)
"""A verb of a timetable in the present simple ("he starts on the 11th", "the course begins
in September", "we fly on Friday"): said of one day or month, the coming one, as English
tells what is fixed to come (blind conversation 64: "Diego got the job!!! ... he starts on
the 11th", said on 2 August, had stayed undated)."""
_DUE = re.compile(r"\bdue[ \t]+\Z", re.IGNORECASE | re.ASCII)
""""due" just before a month or season: what is expected then, the coming one ("Harriet is
expecting her second baby, due in February!", said in August, had stayed undated; blind
conversation 65). A day of the month stays open: "rent is due on the 1st" is every month's."""
_HABITUAL = re.compile(
    r"\b(?:always|usually|normally|generally|often|sometimes|never|every|each)\b",
    re.IGNORECASE | re.ASCII,
)
"""What makes the present simple a habit ("it always starts on the 1st"), not a timetable."""

_FRAGMENT_CONTEXT_CHARS = 500
"""A sentence with no tense of its own takes the tense of its message when the message is no
longer than this: a chat message tells one thing; a long answer or a document mixes them."""
_SUBJECT = re.compile(
    rf"\b(?:i|we|you|he|she|they|{_BARE_SUBJECT})[ \t]+[a-z]", re.IGNORECASE | re.ASCII
)
"""A subject and the word after it: a sentence with a verb whose tense no mark tells ("I stay
until the 30th as planned"), which is no fragment to take its message's tense (its message
said "she booked hers on thursday", and "the 30th" had become 30 March, a day gone)."""
_ELIDED_SUBJECT = re.compile(
    r"[ \t]*(?!(?:this|thus|plus|less|unless|yes|news|series|ones|is|was|has|does)\b)"
    r"[a-z]+[^\Wsu]s(?:[ \t]+[a-z]+){0,2}[ \t]+(?:in|on|at|from|this|next|until|till|by)\b",
    re.IGNORECASE | re.ASCII,
)
"""A clause that opens with a verb in -s whose subject chat leaves out ("got the job! starts
in november", "flies out on friday"): a present-tense verb, not a fragment to take its
message's tense (blind conversation 40: "she got the job in edinburgh! some housing
association, starts in november", said in October 2024, had become November 2023)."""


_STATE_IN_ED = (
    "excited|tired|bored|worried|scared|stressed|obsessed|interested|pleased|relieved|annoyed"
    "|confused|surprised|exhausted|amazed|thrilled|devastated|shocked|prepared|supposed|used"
    "|based|related|involved|closed|crowded|packed|swamped|gutted|chuffed|stoked|psyched"
    f"|bummed|wrecked|knackered|stuffed|fed|{_ARRANGING}"
)
"""Words in -ed that open a clause as a state or an arrangement ("so excited friday",
"booked for saturday"), not as a verb told in the past."""
_ELIDED_PAST = re.compile(
    r"[ \t]*(?:(?:ok|okay|then|just|finally|also|lol|haha|well|oh)\b[ \t,]*)*"
    rf"(?!(?:{_NOT_PAST}|{_STATE_IN_ED})\b)[a-z]{{3,}}ed\b"
    r"(?![ \t]+(?:to|about|of|with|for|that|by)\b)",
    re.IGNORECASE | re.ASCII,
)
"""A clause that opens with a verb in -ed, its subject left out as chat does ("finished the
last google course on sunday, certificate DONE", blind conversation 43; "started monday"):
the past, whatever else its sentence says."""
_SPAN_PERFECT = re.compile(
    r"(?:\b(?:have|has)(?:n['’]t)?|['’]ve)[ \t]+(?:not[ \t]+|never[ \t]+|ever[ \t]+)?"
    r"(?:had|been|seen|done|heard|felt|known|met|eaten|gone|[a-z]+ed)\b"
    r"|['’]s[ \t]+(?:not[ \t]+|never[ \t]+|ever[ \t]+)?"
    r"(?:had|been|seen|done|heard|known|met|gone)\b",
    re.IGNORECASE | re.ASCII,
)
"""A perfect before "in N units": the span looked back over ("the best present she's had in
90 years", blind conversation 40, had become a day in 2114), not a day ahead."""


def _sentence_before(match: re.Match[str], text: str) -> str:
    """What ``match``'s sentence says before it ("follow up in a few days if you haven't
    received a reply": the perfect after it is another clause's)."""
    return text[_sentence_start(text, match.start()) : match.start()]


def _sentence_start(text: str, at: int) -> int:
    """Where the sentence holding position ``at`` of ``text`` begins."""
    return max(text.rfind(mark, 0, at) for mark in _SENTENCE_MARKS) + 1


_INTENDED = re.compile(
    r"\b(?:ask(?:s|ed|ing)|invit(?:es|ed|ing)|decid(?:ed|ing)|agree(?:d|ing)|offer(?:ed|ing)"
    r"|promis(?:es|ed|ing)|plan(?:s|ned|ning))"
    r"(?:[ \t]+(?:me|us|him|her|them|you))?[ \t]+to[ \t]+"
    r"(?!(?:the|a|an|my|our|his|her|their|your)\b)[a-z]+\b",  # an infinitive, not a place
    re.IGNORECASE | re.ASCII,
)
"""A verb of asking, deciding or promising before an infinitive: the day in what follows is
when the thing asked or decided is to be done, after the asking ("Jo has asked me to run a
group in September", said in July, had become the September before; "they invited us to
stay in August")."""
_SUBJECT_AND_VERB = re.compile(
    rf"\b(?:i|we|you|they)[ \t]+(?!(?:{_NOT_PAST})\b)(?![a-z]+ed\b)(?!(?:{_PAST_WORDS}|got)\b)"
    r"[a-z]+(?:[ \t]+(?:out|off|in|up|back|home|away))?[ \t]+(?:on|this|next)\b",
    re.IGNORECASE | re.ASCII,
)
"""A clause whose subject and verb, in no tense a mark tells, come before the day it names
("We fly out on Tuesday and I haven't started packing, whereas Marcus has packed": the
present, a day planned, not the past the rest of its sentence is told in; blind conversation
41 had labelled it the Tuesday before). Left open rather than given the sentence's tense."""


def tells_what_happened(sentence: str) -> bool:
    """Whether ``sentence`` is in the past tense and in no other ("Got engaged!!", "We
    adopted a puppy"): news of something that happened, however few its words."""
    return _marked(sentence, progressive=False)[1] == "past"


def has_a_verb(clause: str) -> bool:
    """Whether ``clause`` marks a tense (an auxiliary, a common verb's past, a word in -ed
    after its subject): a clause, not a noun phrase ("the finale wrecked me", "my mom is
    obsessed"; not "the one on Sunday")."""
    return _marked(clause, progressive=False)[0]


_ELIDED_HAVE_GOT = re.compile(
    r"^([ \t]*(?:(?:and|but|so|also|still)[ \t]+)?)got(?=[ \t]+(?:a|an|the|my|our|his|her|their)"
    rf"(?:[ \t]+[a-z]+){{0,2}}?[ \t]+(?:{_ONE_OFF_EVENTS})\b(?![ \t]+[a-z]+(?<!\bon)(?<!\bat)"
    r"(?<!\bin)(?<!\bthis)(?<!\bnext)(?<!\btomorrow)(?<!day)(?<!\bbtw)(?<!\bfor)\b))",
    re.IGNORECASE | re.ASCII,
)
"""A clause that opens with "got" and an event, its subject and "have" left out as chat leaves
them: "got an interview on tuesday btw" (said on a Sunday) is "I've got", the coming Tuesday,
not "I got" (blind conversation 68 had dated it to the Tuesday before). The event must end its
noun phrase: "got my scan results on friday" is what came."""


def _marked(scope: str, *, progressive: bool) -> tuple[bool, Tense | None]:
    """Whether ``scope`` marks a tense, and which: the future with a mark of it and none of the
    past, the past with a mark of it and no other present-tense verb ("I have a meeting on
    Friday": the coming one, or every week's); otherwise None."""
    scope = _ELIDED_HAVE_GOT.sub(r"\1have got", scope)
    # "I've booked a table on Friday": the day is the table's, the booking holds now
    perfects = [m for m in _PERFECT.finditer(scope) if not _ARRANGED.search(m.group())]
    perfect = bool(perfects)
    present_scope = scope
    for found in reversed(perfects):
        present_scope = f"{present_scope[: found.start()]} {present_scope[found.end() :]}"
    future = _FUTURE_CUE.search(scope) is not None or (
        progressive and _PROGRESSIVE.search(scope) is not None
    )
    past = perfect or _PAST_CUE.search(scope) is not None
    present = _PRESENT_CUE.search(present_scope) is not None
    if future and not past:
        return True, "future"
    if past and not future and not present:
        return True, "past"
    return future or past or present, None


def _said_weekday(match: re.Match[str], today: date, tense: Tense) -> _Period:
    """The day of "on Friday" by the tense of its sentence (:func:`_tense`): in the past ("we
    went hiking on Saturday"), the most recent such day before the day it was said; in the
    future ("I'll call her on Friday"), the first one after it."""
    target = _WEEKDAYS[(match.group("ow_name") or match.group("lw_name")).lower()]
    monday = today - timedelta(days=today.weekday())
    day = _weekday("last" if tense == "past" else "this coming", target, today, monday)
    return day, day, "day"


def _said_month(
    match: re.Match[str], text: str, today: date, tense: Tense, group: str = "im_name"
) -> _Period | None:
    """The month of "in June" by the tense of its sentence (:func:`_tense`): in the past ("we
    moved in March"), the most recent such month up to the one it was said in; in the future
    ("we're going camping in June"), the first one from it on."""
    month = _month_named(text[match.start(group) : match.end(group)])
    if month is None:
        return None
    year = today.year
    if tense == "past" and month > today.month:
        year -= 1
    elif tense == "future" and month < today.month:
        year += 1
    return _whole_month(year, month)


def _day_number(said: str) -> int:
    """A day of the month as written: "15th", "15", "fifteenth", "twenty first"."""
    said = said.lower()
    if said[0].isdigit():
        return int(said.rstrip("stndrh"))
    return _SPELLED_DAYS[_SPACES_OR_HYPHEN.sub("-", said)]


_SPACES_OR_HYPHEN = re.compile(r"[ \t-]+")


def _said_day(match: re.Match[str], today: date, tense: Tense) -> _Period | None:
    """The day of "on the 15th" by the tense of its sentence (:func:`_tense`), as "on Friday":
    in the past, the most recent 15th up to the day it was said; in the future ("we're
    moving on the 15th", "the op is booked for the 21st": what is arranged now is to come),
    the first from it on, as what a day is moved or put off to. In the present it is left
    open, as a weekday is: "rent is due on the 21st" is every month's."""
    candidates = _numbered_days(_day_number(match.group("dm_day")), today)
    if tense == "past":
        candidates = [d for d in candidates if d <= today][-1:]
    else:
        candidates = [d for d in candidates if d >= today][:1]
    if not candidates:
        return None
    return candidates[0], candidates[0], "day"


def _around(month: int, number: int, today: date) -> list[date]:
    """Day ``number`` of ``month`` in the years before, of and after ``today``'s, in order (a
    year without it, as 29 February mostly, has none)."""
    days = []
    for year in (today.year - 1, today.year, today.year + 1):
        if number <= _month_days(year, month):
            days.append(date(year, month, number))
    return days


def _numbered_days(number: int, today: date) -> list[date]:
    """The days of the month numbered ``number`` in ``today``'s month and the months either
    side, in order (a month without that day has none)."""
    days = []
    for step in (-1, 0, 1):
        year, month = _month_shift(today.year, today.month, step)
        if number <= _month_days(year, month):
            days.append(date(year, month, number))
    return days


def _said_season(match: re.Match[str], today: date, tense: Tense) -> _Period:
    """The season of "in the summer" by the tense of its sentence, as "in June"
    (:func:`_said_month`): in the past, the most recent such season up to the one it was said
    in; in the future, the first one from it on."""
    season = _SEASONS[match.group("is_name").lower()]
    current = _season(0, season, today)
    if current[0] <= today <= current[1]:
        return current  # said in that season: this one, whichever the tense
    return _season(-1 if tense == "past" else 1, season, today)


def _month_named(name: str) -> int | None:
    """The month (1-12) that ``name`` names as written, whole or shortened ("Aug", "sept.");
    None for "may", "march" and "mar" in lower case, which are other words."""
    name = name.rstrip(".")
    if name.lower() in _CAPITALISED_ONLY and not name[0].isupper():
        return None
    shortened = _MONTH_ABBREVIATIONS.get(name.lower())
    return shortened if shortened is not None else MONTHS.index(name.capitalize()) + 1


_FIXED_OFFSETS = {
    "today": 0,
    "tonight": 0,
    "this morning": 0,
    "this afternoon": 0,
    "this evening": 0,
    "yesterday": -1,
    "last night": -1,
    "the day before yesterday": -2,
    "tomorrow": 1,
    "the day after tomorrow": 2,
}


def _weekday(relation: str, target: int, today: date, monday: date) -> date:
    if relation in ("last", "this past"):
        return today - timedelta(days=(today.weekday() - target - 1) % 7 + 1)
    if relation == "this coming":
        return today + timedelta(days=(target - today.weekday() - 1) % 7 + 1)
    if relation == "this":
        return monday + timedelta(days=target)
    return monday + timedelta(days=7 + target)  # next


def _named_period(relation: str, unit: str, today: date, monday: date) -> _Period:
    step = _STEPS[relation]
    if unit == "weekend" and relation == "this coming":
        saturday = today + timedelta(days=(5 - today.weekday() - 1) % 7 + 1)
        return saturday, saturday + timedelta(days=1), "weekend"
    if unit in _SEASONS:
        return _season(step, _SEASONS[unit], today)
    return _stepped_period(step, unit, today, monday)


def _stepped_period(step: int, unit: str, today: date, monday: date) -> _Period:
    """The week, weekend, calendar month or year ``step`` of them from D's (``monday``: the
    Monday of D's week)."""
    if unit == "week":
        start = monday + timedelta(days=7 * step)
        return start, start + timedelta(days=6), "week"
    if unit == "weekend":
        return _weekend(monday + timedelta(days=7 * step))
    if unit == "month":
        return _whole_month(*_month_shift(today.year, today.month, step))
    year = today.year + step
    return date(year, 1, 1), date(year, 12, 31), "year"


_STEPS = {"last": -1, "this past": -1, "this": 0, "next": 1, "this coming": 1}


def _season(step: int, season: int, today: date) -> _Period:
    """Seasons numbered year * 4 + index, index 0 spring, 1 summer, 2 autumn, 3 winter (a
    winter numbered by the year of its December)."""
    if today.month <= 2:
        current = (today.year - 1) * 4 + 3
    else:
        current = today.year * 4 + (today.month - 3) // 3
    if step < 0:  # the most recent one before the current season
        number = current - 1 - (current - 1 - season) % 4
    elif step > 0:  # the first one after the current season
        number = current + 1 + (season - current - 1) % 4
    elif current % 4 == season:
        number = current
    else:  # the one that begins in the day's year
        number = today.year * 4 + season
    year, index = divmod(number, 4)
    first = date(year, 3 + 3 * index, 1)
    end_year, end_month = _month_shift(year, 5 + 3 * index, 0)
    return first, date(end_year, end_month, _month_days(end_year, end_month)), "season"


def _named_month(relation: str, month: int, today: date) -> _Period:
    year = today.year
    if relation == "last" and month >= today.month:
        year -= 1
    elif relation == "next" and month <= today.month:
        year += 1
    return _whole_month(year, month)


def _whole_month(year: int, month: int) -> _Period:
    return date(year, month, 1), date(year, month, _month_days(year, month)), "month"


def _weekend(monday: date) -> _Period:
    saturday = monday + timedelta(days=5)
    return saturday, saturday + timedelta(days=1), "weekend"


def _shifted(day: date, unit: str, count: int) -> date:
    if unit == "day":
        return day + timedelta(days=count)
    if unit in ("week", "fortnight"):
        return day + timedelta(days=(7 if unit == "week" else 14) * count)
    months = count if unit == "month" else 12 * count
    year, month = _month_shift(day.year, day.month, months)
    return date(year, month, min(day.day, _month_days(year, month)))


def _month_shift(year: int, month: int, months: int) -> tuple[int, int]:
    """(year, month) moved by ``months``; month 13 is January of the next year."""
    years, index = divmod(month - 1 + months, 12)
    return year + years, index + 1


def _month_days(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _count(written: str) -> int:
    normalised = _normalised(written)
    return _COUNTS[normalised] if normalised in _COUNTS else int(normalised)


def _after_determiner(text: str, start: int) -> bool:
    """Whether the word just before ``start`` is a determiner or possessive ("the last week")."""
    return _word_before(text, start) in _DETERMINERS


def _word_before(text: str, start: int, *, raw: bool = False) -> str:
    """The word just before ``start``, lower-case unless ``raw`` ("" at the start of a
    sentence or clause: after a mark of punctuation there is none; markdown emphasis, "**",
    is no mark)."""
    return _word_before_at(text, start, raw=raw)[0]


def _word_before_at(text: str, start: int, *, raw: bool = False) -> tuple[str, int]:
    """:func:`_word_before` and where it starts in ``text`` (``start`` when there is none):
    the word before it is looked for there, past a label grounding wrote between them, so
    that grounding a grounded text changes nothing ("in a month (1 February 1970) Saturday")."""
    window = max(0, start - 48)
    before = _unlabelled(text[window:start])  # a prefix of the window: only its end is cut
    if before.endswith(",") and _unlabelled(before[:-1]).lower().endswith(_NAMED_AGAIN):
        before = _unlabelled(before[:-1])  # "yesterday, Friday": the day named again
    if not before or not before[-1].isalnum():
        return "", start
    word = before.rsplit(None, 1)[-1].lstrip("*_\"'“‘(")
    return (word if raw else word.lower()), window + len(before) - len(word)


_LABEL_AT_END = re.compile(r"[ \t]*\([^()]*\)$")


def _unlabelled(before: str) -> str:
    """``before`` without what ends it and is no word: spaces, emphasis, quotes, and the
    label grounding wrote ("yesterday (5 May 2023)")."""
    before = before.rstrip(" \t*_\"'“‘")
    if before.endswith(")"):
        before = _LABEL_AT_END.sub("", before).rstrip(" \t*_\"'“‘")
    return before


def _is_duration(text: str, start: int) -> bool:
    """Whether "in N units" at ``start`` measures a duration: after a frequency word or things
    counted ("12 shows in 3 weeks"), or with a negation or "first/last/only time" earlier in
    its clause (which begins after the last sentence or clause mark, however far back: labels
    inserted by :func:`grounded` hold none of these marks or words, so grounding twice
    decides the same way)."""
    words = text[max(0, start - 16) : start].split()
    if words and words[-1].lower() in _FREQUENCY:
        return True
    if _COUNTED.search(text, max(0, start - 48), start):
        return True
    amount = _TIME_COUNTED.search(text, max(0, start - 48), start)
    if amount is not None and (amount.group("before") or "").lower() not in {"for", "in"}:
        return True
    clause_start = max(text.rfind(mark, 0, start) for mark in _CLAUSE_MARKS) + 1
    return _DURATION_CUE.search(text, clause_start, start) is not None


def _normalised(phrase: str) -> str:
    return " ".join(phrase.lower().split())


def _utc_day(at_ms: int) -> date:
    return date.fromordinal(_EPOCH_ORDINAL + at_ms // _DAY_MS)


def _day(day: date) -> str:
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def _season_name(first_month: int, expression: str) -> str:
    if first_month == 3:
        return "spring"
    if first_month == 6:
        return "summer"
    if first_month == 9:
        return "fall" if "fall" in expression.lower() else "autumn"
    return "winter"
