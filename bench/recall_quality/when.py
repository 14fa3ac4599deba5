"""Relative time expressions as people say them, and the absolute dates they mean.

The corpus states dated events relative to the day a turn is said ("yesterday", "last Fri",
"two weeks ago", "next month", "last summer", "this weekend", and wordings beyond issue 30's
examples: "last night", "the day before yesterday", "three weeks ago", "earlier this month",
"the day after tomorrow", "in two weeks", "this Sat", ...); the gold answer of a temporal
question is what the expression means on that day, written as an absolute date ("7 May 2023",
"June 2023", "summer 2022"). Only expressions that are unambiguous on a given day are offered:
"last <weekday>" only for a weekday later in the week than today (so it can only mean last
week's), "this weekend" / "last weekend" only from Monday to Thursday, "last summer" only
before June. This module is the benchmark's own calendar: it must never import the engine's
text or date functions, which it is used to grade.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

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
WEEKDAY_ABBREVIATIONS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
SATURDAY = 5


@dataclass(frozen=True, slots=True)
class When:
    """A time expression said on some day: its words, and what they mean in absolute terms.

    ``gold`` is the absolute form a temporal question expects; ``day`` is the resolved day
    when the expression names one (None for a month, a season or a year); ``family`` groups
    the ways of saying one kind of thing ("last Fri", "last Friday": ``weekday``), so a
    speaker picks a kind first and a wording second."""

    phrase: str
    gold: str
    day: date | None
    family: str
    relative: bool = True


def day_text(day: date) -> str:
    """``7 May 2023``: the day, the month's name, the year."""
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def month_text(year: int, month: int) -> str:
    return f"{MONTHS[month - 1]} {year}"


def ordinal(n: int) -> str:
    """``3rd``, ``11th``, ``22nd``: how a day of the month is said."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _shift_month(year: int, month: int, by: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + by
    return index // 12, index % 12 + 1


def past_expressions(today: date, long_ago: bool = False) -> list[When]:
    """What a person may say on ``today`` about something that already happened.

    ``long_ago``: the event may be months back (a trip), so "last month", "last summer" and
    "last year" are offered too; otherwise only expressions that name a day (and "last
    month")."""
    weekday = today.weekday()
    found = [_days_back(today, phrase, 0, "today") for phrase in ("earlier today", "this morning")]
    found += [_days_back(today, phrase, 1, "yesterday") for phrase in ("yesterday", "last night")]
    found += [_days_back(today, f"{word} days ago", n, "days_ago") for word, n in _FEW]
    found += [_days_back(today, "the day before yesterday", 2, "days_ago")]
    found += [_days_back(today, phrase, n, "weeks_ago") for phrase, n in _WEEKS]
    for target in range(weekday + 1, 7):  # later in the week than today: last week's
        back = weekday - target + 7
        found.append(_days_back(today, f"last {WEEKDAYS[target]}", back, "weekday"))
        found.append(_days_back(today, f"last {WEEKDAY_ABBREVIATIONS[target]}", back, "weekday"))
    if weekday <= 3:  # Monday to Thursday: the weekend just gone
        found.append(_days_back(today, "last weekend", weekday + 2, "weekend"))
    year, month = _shift_month(today.year, today.month, -1)
    found.append(When("last month", month_text(year, month), None, "month"))
    if today.day >= 10:
        this_month = month_text(today.year, today.month)
        found.append(When("earlier this month", this_month, None, "month"))
    if long_ago:
        if today.month <= 5:
            found.append(When("last summer", f"summer {today.year - 1}", None, "season"))
        found.append(When("last year", str(today.year - 1), None, "year"))
    return found


_FEW = (("two", 2), ("three", 3))
_WEEKS = (("a week ago", 7), ("two weeks ago", 14), ("three weeks ago", 21))


def _days_back(today: date, phrase: str, days: int, family: str) -> When:
    day = today - timedelta(days=days)
    return When(phrase, day_text(day), day, family)


def future_expressions(today: date) -> list[When]:
    """What a person may say on ``today`` about something still to come."""
    weekday = today.weekday()
    found = [
        _days_ahead(today, "tomorrow", 1, "tomorrow"),
        _days_ahead(today, "the day after tomorrow", 2, "tomorrow"),
        _days_ahead(today, "in three days", 3, "days_ahead"),
        _days_ahead(today, "in two weeks", 14, "days_ahead"),
    ]
    if weekday <= 3:  # Monday to Thursday: the coming weekend is this week's
        ahead = SATURDAY - weekday
        found += [_days_ahead(today, p, ahead, "weekend") for p in ("this weekend", "this Sat")]
        found.append(_days_ahead(today, "this Saturday", ahead, "weekend"))
    year, month = _shift_month(today.year, today.month, 1)
    found.append(When("next month", month_text(year, month), None, "month"))
    if today.day <= 15:
        this_month = month_text(today.year, today.month)
        found.append(When("later this month", this_month, None, "month"))
    return found


def _days_ahead(today: date, phrase: str, days: int, family: str) -> When:
    day = today + timedelta(days=days)
    return When(phrase, day_text(day), day, family)


def stated_date(today: date, days_ahead: int) -> When:
    """A day named outright, without its year ("on June 17th"), ``days_ahead`` after today."""
    day = today + timedelta(days=days_ahead)
    return When(f"on {MONTHS[day.month - 1]} {ordinal(day.day)}", day_text(day), day, "date", False)
