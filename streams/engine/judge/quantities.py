"""Amounts with a unit and calendar dates, read from a run of tokens.

"2 weeks", "14 days" and "a fortnight" are one duration; "every 2 weeks" and "once a fortnight"
one period; "1 g" and "1000 mg" one mass; "june 5", "5 june" (already reordered by the
normaliser) and "2025-06-05" one date, the first two without a year. Reading them into values
lets the judge tell "18 months" / "a year and a half" (the same) from "every 2 weeks" / "every
10 days" (different), whatever the wording.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .lexicons import FREQUENCIES, MAGNITUDES, MULTIPLIERS, NUMBER_WORDS, UNITS

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
MONTH_NUMBER = {month: number for number, month in enumerate(MONTHS, start=1)}
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_YEAR = re.compile(r"(?:19|20)\d{2}")
# the words a date or a quantity can start with, besides a number written in digits
_STARTS = frozenset(
    {*FREQUENCIES, *MULTIPLIERS, *NUMBER_WORDS, *MONTH_NUMBER, "every", "half", "a", "an"}
)


def may_start_amount(token: str) -> bool:
    """Whether :func:`read_date` or :func:`read_quantity` can read anything at ``token``: a
    cheap test asked first, as most tokens are plain words."""
    return token in _STARTS or token[:1].isdigit()


PERIOD = "period"


@dataclass(frozen=True, slots=True)
class Quantity:
    dimension: str  # "duration", "period", "mass", "length", "area", "data", "volume"
    amount: float  # in the dimension's base unit (seconds, grams, metres, ...)
    tolerance: float  # relative difference still read as the same amount

    @property
    def key(self) -> str:
        return f"{self.dimension}={self.amount:.6g}"

    def same_as(self, other: Quantity) -> bool:
        if self.dimension != other.dimension:
            return False
        allowed = max(self.tolerance, other.tolerance, 1e-9)
        larger = max(abs(self.amount), abs(other.amount)) or 1.0
        return abs(self.amount - other.amount) / larger <= allowed


@dataclass(frozen=True, slots=True)
class CalendarDate:
    year: int | None
    month: int
    day: int | None

    @property
    def key(self) -> str:
        year = f"{self.year:04d}" if self.year is not None else "-"
        day = f"-{self.day:02d}" if self.day is not None else ""
        return f"{year}-{self.month:02d}{day}"

    def agrees_with(self, other: CalendarDate) -> bool:
        """Whether the two can name the same day: every field both state is equal."""
        return (
            self.month == other.month
            and (self.year is None or other.year is None or self.year == other.year)
            and (self.day is None or other.day is None or self.day == other.day)
        )


def _count(token: str) -> float | None:
    """A number written as digits or a word ("2", "two", "a", "an")."""
    if token in {"a", "an"}:
        return 1.0
    word = NUMBER_WORDS.get(token, token)
    return float(word) if _NUMBER.fullmatch(word) else None


def _unit_at(tokens: list[str], i: int) -> tuple[str, int] | None:
    """The unit word at ``i`` (two-word "square metres" joined) and the tokens it spans."""
    if i >= len(tokens):
        return None
    if tokens[i] in {"square", "sq"} and i + 1 < len(tokens):
        joined = f"square_{tokens[i + 1]}"
        if tokens[i + 1] in {"m", "meter", "meters", "metre", "metres"}:
            return "square_meters", 2
        if tokens[i + 1] in {"ft", "feet", "foot"}:
            return "square_feet", 2
        return (joined, 2) if joined in UNITS else None
    return (tokens[i], 1) if tokens[i] in UNITS else None


def _amount(tokens: list[str], i: int) -> tuple[Quantity, int] | None:
    """An amount with a unit starting at ``i``: "2 weeks", "an hour and a half", "half an
    hour", "1.5 hours", "two and a half years". Returns the quantity and the tokens used."""
    if tokens[i] == "half" and i + 2 < len(tokens) and tokens[i + 1] in {"a", "an"}:
        unit = _unit_at(tokens, i + 2)
        if unit is not None:
            return _quantity(0.5, unit[0]), 2 + unit[1]
        return None
    count = _count(tokens[i])
    if count is None:
        return None
    j = i + 1
    if j + 2 < len(tokens) and tokens[j : j + 3] == ["and", "a", "half"]:
        count, j = count + 0.5, j + 3
    if j < len(tokens) and tokens[j] in MAGNITUDES:
        count, j = count * MAGNITUDES[tokens[j]], j + 1
    unit = _unit_at(tokens, j)
    if unit is None:
        return None
    end = j + unit[1]
    if end + 2 < len(tokens) + 0 and tokens[end : end + 3] == ["and", "a", "half"]:
        count, end = count + 0.5, end + 3
    return _quantity(count, unit[0]), end - i


def _quantity(count: float, unit_word: str) -> Quantity:
    unit = UNITS[unit_word]
    return Quantity(unit.dimension, count * unit.size, unit.tolerance)


def _period(amount: Quantity, times: float = 1.0) -> Quantity:
    return Quantity(PERIOD, amount.amount / times, amount.tolerance)


def read_quantity(tokens: list[str], i: int) -> tuple[Quantity, int] | None:
    """A quantity starting at token ``i`` and how many tokens it spans, or None.

    Periods first ("every 2 weeks", "once a week", "3 times a month", "every other day",
    "weekly"), then plain amounts ("2 weeks", "500 mg").
    """
    token = tokens[i]
    if token in FREQUENCIES:
        return Quantity(PERIOD, FREQUENCIES[token], 0.1 if FREQUENCIES[token] > 1e6 else 0.0), 1
    if token == "every" and i + 1 < len(tokens):
        if tokens[i + 1] == "other" and i + 2 < len(tokens):
            unit = _unit_at(tokens, i + 2)
            if unit is not None:
                return _period(_quantity(2, unit[0])), 2 + unit[1]
        unit = _unit_at(tokens, i + 1)
        if unit is not None and UNITS[unit[0]].dimension == "duration":
            return _period(_quantity(1, unit[0])), 1 + unit[1]
        found = _amount(tokens, i + 1)
        if found is not None and found[0].dimension == "duration":
            return _period(found[0]), 1 + found[1]
        return None
    times = _times(tokens, i)
    if times is not None:
        count, used = times
        if i + used + 1 < len(tokens) and tokens[i + used] in {"a", "an", "per", "every"}:
            unit = _unit_at(tokens, i + used + 1)
            if unit is not None and UNITS[unit[0]].dimension == "duration":
                period = _period(_quantity(1, unit[0]), count)
                return period, used + 1 + unit[1]
        return None
    return _amount(tokens, i)


def _times(tokens: list[str], i: int) -> tuple[float, int] | None:
    """ "once", "twice", "3 times", "three times": how often and the tokens used."""
    if tokens[i] in MULTIPLIERS:
        return float(MULTIPLIERS[tokens[i]]), 1
    count = _count(tokens[i]) if tokens[i] not in {"a", "an"} else None
    if count is not None and i + 1 < len(tokens) and tokens[i + 1] == "times":
        return count, 2
    return None


def read_date(tokens: list[str], i: int) -> tuple[CalendarDate, int] | None:
    """A date starting at token ``i``: "2025-06-05", "june 5", "june 5 2025", "june 2025"."""
    iso = _ISO_DATE.fullmatch(tokens[i])
    if iso is not None:
        year, number, day = (int(part) for part in iso.groups())
        return (CalendarDate(year, number, day), 1) if 1 <= number <= 12 else None
    month = MONTH_NUMBER.get(tokens[i])
    if month is None or i + 1 >= len(tokens):
        return None
    following = tokens[i + 1]
    if _YEAR.fullmatch(following):
        return CalendarDate(int(following), month, None), 2
    if not following.isdigit() or not 1 <= int(following) <= 31:
        return None
    j = i + 2
    if j < len(tokens) and tokens[j] == ",":
        j += 1
    if j < len(tokens) and _YEAR.fullmatch(tokens[j]):
        return CalendarDate(int(tokens[j]), month, int(following)), j + 1 - i
    return CalendarDate(None, month, int(following)), 2
