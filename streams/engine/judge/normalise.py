"""Text normalisation: one spelling for what people write many ways.

Lowercase, straight apostrophes, a leading "Correction:" or "Sorry, I meant" dropped,
contractions expanded ("don't" → "do not"), multi-word names joined ("new york" → ``new_york``),
preference idioms reduced to the preference verb ("is a big fan of" → "likes", "can't stand" →
"hates"), clock times made canonical ("9am", "9 a.m.", "9:00" → ``09:00``), money and magnitudes
written out ("$1.5M" → "1500000 usd", "40k" → "40000"), ordinals and day-month dates put in one
order ("the 3rd of March" → "the march 3"). Phone numbers become one token of their digits
("+1 (299) 751-7349" → ``tel_12997517349``) and email addresses stay whole; "you can reach Bruno
at X" says what Bruno's email (or phone number) is; "ended up at" states a value ("is");
openers ("Just a heads up,", "Oh, by the way,") and loose present markers ("these days",
"lately") are dropped.
"""

from __future__ import annotations

import re

from .lexicons import CURRENCY_SYMBOLS, GO_ACTIVITIES, MAGNITUDES, PHRASES, PREAMBLE_WORDS
from .quantities import MONTHS

# (pattern, replacement, needle): a match always contains the needle, so a text without it
# skips the pattern (most texts have no apostrophe, and no idiom below). normalise() checks
# the same way, on the text as it stands, before each pattern that always matches a needle.
_CONTRACTIONS = tuple(
    (re.compile(pattern), replacement, needle)
    for pattern, replacement, needle in (
        (r"\bwon't\b", "will not", "won't"),
        (r"\bcan't\b", "can not", "can't"),
        (r"\bcannot\b", "can not", "cannot"),
        (r"\bshan't\b", "shall not", "shan't"),
        (r"\bain't\b", "is not", "ain't"),
        (r"n't\b", " not", "n't"),
        (r"'m\b", " am", "'m"),
        (r"'re\b", " are", "'re"),
        (r"'ve\b", " have", "'ve"),
        (r"'ll\b", " will", "'ll"),
        (r"'d\b", " would", "'d"),
        (
            r"\b(it|that|there|here|what|who|where|he|she|this|everything|nothing|everyone"
            r"|someone|something)'s\b",
            r"\1 is",
            "'s",
        ),
    )
)
_PHRASE = re.compile(
    r"(?<!\w)("
    + "|".join(re.escape(phrase) for phrase in sorted(PHRASES, key=len, reverse=True))
    + r")(?!\w)"
)
_WORD = re.compile(r"[^\W\d_][\w']*")
# "Correction:", "To correct my earlier note:", "Just to fix my earlier message,".
_PREAMBLE = re.compile(r"^\s*([^:;,.]{1,60}?)\s*(:|;|,|\s[-\u2013\u2014]\s)\s*")
_PREAMBLE_OPENERS = frozenset(
    {"correction", "sorry", "oops", "update", "actually", "just", "to", "let", "quick", "small"}
    | {"minor", "fixing", "correcting", "fix", "typo", "my", "ok", "okay", "wait"}
)
_DISCOURSE = re.compile(
    r"^(?:(?:actually|oops|sorry|ok|okay|so|well|wait|fyi|note|update|correction|also|oh|btw)"
    r"\b[,:]?\s*"
    r"|i\s+meant?\b,?\s*(?:that\s+)?|i\s+should\s+say\b,?\s*"
    r"|(?:just\s+)?(?:a\s+)?(?:quick\s+)?heads[\s-]up\b[,:]?\s*(?:that\s+)?"
    r"|by\s+the\s+way\b[,:]?\s*|(?:just\s+)?so\s+you\s+know\b[,:]?\s*(?:that\s+)?"
    r"|for\s+the\s+record\b[,:]?\s*)+"
)
_PREFERENCE_IDIOMS = tuple(  # (pattern, replacement, needles: a match contains one of them)
    (re.compile(pattern), replacement, needles)
    for pattern, replacement, needles in (
        (
            r"\b(?:am|is|are)\s+(not\s+)?(?:an?\s+)?(?:(?:big|huge|great|real|massive|total"
            r"|true|diehard|die-hard)\s+)?(?:fan|lover)\s+of\b",
            r"\1likes",
            ("fan", "lover"),
        ),
        (
            r"\b(?:was|were)\s+(not\s+)?(?:an?\s+)?(?:(?:big|huge|great|real|massive|total"
            r"|true|diehard|die-hard)\s+)?(?:fan|lover)\s+of\b",
            r"\1liked",
            ("fan", "lover"),
        ),
        (
            r"\b(?:am|is|are)\s+(not\s+)?(?:really\s+|very\s+|so\s+)?(?:into|fond\s+of|keen\s+on"
            r"|crazy\s+about|passionate\s+about)\b",
            r"\1likes",
            ("into", "fond", "keen", "crazy", "passionate"),
        ),
        (r"\b(?:can|could|will)\s+not\s+(?:stand|bear)\b", "hates", ("stand", "bear")),
        (r"\b(?:takes|take)\s+place\b", "is held", ("place",)),
        (r"\btook\s+place\b", "was held", ("place",)),
        (r"\b(?:is|are)\s+taking\s+place\b", "is held", ("place",)),
    )
)
_UNHYPHENATED = re.compile(r"\b(non|un)-(?=[a-z])")  # "non-smoker" is "nonsmoker"
_NOON = re.compile(r"\bnoon\b")
_MIDNIGHT = re.compile(r"\bmidnight\b")
# An email address, kept whole: one value, not a run of words.
EMAIL = r"[a-z0-9][\w.+-]*@[a-z0-9-]+(?:\.[a-z0-9-]+)+"
# A phone number ("+1 (299) 751-7349", "609-674-2407", "+44 20 5285 6965"), read as one token
# of its digits, "tel_12997517349": a leading "+", a bracketed area code or dashes mark it.
_PHONE = re.compile(
    r"(?<![\w.+-])(?:\+\d{1,3}[\s.-]?(?:\(\d{1,4}\)[\s.-]?)?\d{1,4}(?:[\s.-]\d{2,5}){1,4}"
    r"|\(\d{2,4}\)[\s.-]?\d{2,4}(?:[\s.-]\d{2,5}){1,3}"
    r"|\d{2,4}-\d{3,4}(?:-\d{2,5}){1,2})(?![\w+-]|\.\d)"
)
_ISO_DATE_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}")
# "you can reach Bruno at bruno@x.org": Bruno's email (or phone number) is that address.
_REACH = re.compile(
    r"\b(?:(?:you|i|we|one|they|people)\s+(?:can|could|may)\s+)?(?:reach|contact|email|call|text)\s+"
    rf"([a-z][\w' ]{{0,40}}?)\s+(?:at|on|via)\s+({EMAIL}|tel_\d+)\b"
)
_REACHED = re.compile(
    rf"\b([a-z][\w' ]{{0,40}}?)\s+(?:can|could)\s+be\s+(?:reached|contacted)\s+(?:at|on|via)\s+"
    rf"({EMAIL}|tel_\d+)\b"
)
# "the budget ended up at €29,500", "the bill totals $80": a statement of the value.
_OUTCOME = re.compile(
    r"\b(?:(?:has|have)\s+)?(?:ended|ends|wound|winds)\s+up\s+(?:at|as|being)\b"
    r"|\b(?:totals|totalled|totaled|amounts\s+to|amounted\s+to)\b"
)
# "these days", "lately", "nowadays": the present, said loosely; nothing to compare.
_LOOSE_PRESENT = re.compile(r",?\s*\b(?:these\s+days|lately|nowadays|of\s+late)\b")
_AM_PM = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\b\.?")
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_MAGNITUDE_WORDS = "|".join(sorted(MAGNITUDES, key=len, reverse=True))
_MONEY = re.compile(
    "(" + "|".join(re.escape(symbol) for symbol in CURRENCY_SYMBOLS) + r")\s?(\d+(?:\.\d+)?)"
    rf"(?:\s?(m|{_MAGNITUDE_WORDS})\b)?"
)
_MAGNITUDE = re.compile(rf"\b(\d+(?:\.\d+)?)\s?({_MAGNITUDE_WORDS})\b")
_GLUED_UNIT = re.compile(r"\b(\d+(?:\.\d+)?)(mg|kg|km|cm|mm|gb|mb|tb|kb|ml|hrs?|mins?|g|m|h|l)\b")
_AGE = re.compile(r"\b(\d+)\s*-?\s*years?\s*-?\s*old\b")
_BEEN_DOING = re.compile(r"\bbeen\s+(" + "|".join(sorted(GO_ACTIVITIES)) + r")\b")
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")
_DIGIT = re.compile(r"\d")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})\s+(?:of\s+)?({'|'.join(MONTHS)})\b")


def _am_pm(match: re.Match[str]) -> str:
    hour, minute = int(match.group(1)), int(match.group(2) or 0)
    if not 1 <= hour <= 12 or minute > 59:
        return match.group(0)
    hour = hour % 12 + (12 if match.group(3) == "p" else 0)
    return f"{hour:02d}:{minute:02d}"


def _clock(match: re.Match[str]) -> str:
    hour, minute = int(match.group(1)), int(match.group(2))
    if hour > 23 or minute > 59:
        return match.group(0)
    return f"{hour:02d}:{minute:02d}"


def _scaled(amount: str, magnitude: str | None) -> str:
    """``amount`` times the magnitude word, written without exponent or trailing zeros."""
    whole, _, fraction = amount.partition(".")
    numerator = int(whole + fraction) * (MAGNITUDES.get(magnitude, 1) if magnitude else 1)
    denominator = 10 ** len(fraction)
    if numerator % denominator == 0:
        return str(numerator // denominator)
    return str(numerator / denominator)


def _money(match: re.Match[str]) -> str:
    magnitude = match.group(3)
    if magnitude == "m":
        magnitude = "million"  # "$1.5m": after a currency sign, m is a million, not a metre
    return f"{_scaled(match.group(2), magnitude)} {CURRENCY_SYMBOLS[match.group(1)]}"


def _phone(match: re.Match[str]) -> str:
    text = match.group(0)
    digits = re.sub(r"\D", "", text)
    if _ISO_DATE_TEXT.fullmatch(text) or len(digits) < 7:
        return text
    return f"tel_{digits}"


def _reach(match: re.Match[str]) -> str:
    who, address = match.group(1), match.group(2)
    attribute = "phone number" if address.startswith("tel_") else "email"
    owner = "my" if who in {"me", "i"} else f"{who}'s"
    return f"{owner} {attribute} is {address}"


def _drop_preamble(text: str) -> str:
    """Remove a leading correction note ("Correction:", "Sorry, I meant") and interjections."""
    match = _PREAMBLE.match(text)
    if match is not None:
        words = _WORD.findall(match.group(1))
        separator = match.group(2).strip()
        if (
            words
            and len(words) <= 8
            and PREAMBLE_WORDS.intersection(words)
            and (separator in {":", "-", "\u2013", "\u2014"} or words[0] in _PREAMBLE_OPENERS)
        ):
            text = text[match.end() :]
    return _DISCOURSE.sub("", text.lstrip())


def normalise(text: str) -> str:
    """Lowercase text with one spelling for names, idioms, times, amounts and dates."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    text = _drop_preamble(text)
    for pattern, replacement, needle in _CONTRACTIONS:
        if needle in text:
            text = pattern.sub(replacement, text)
    # Most of the patterns below read numbers; a text without a digit skips them (one scan
    # instead of ten: the judge normalises every fact it reads).
    has_digit = _DIGIT.search(text) is not None
    if has_digit and ("+" in text or "(" in text or "-" in text):
        text = _PHONE.sub(_phone, text)
    if "@" in text or "tel_" in text:  # an email address, or a phone number read above
        text = _REACHED.sub(_reach, text)
        text = _REACH.sub(_reach, text)
    if "up" in text or "total" in text or "amount" in text:
        text = _OUTCOME.sub("is", text)
    if "days" in text or "late" in text:
        text = _LOOSE_PRESENT.sub("", text)
    text = _PHRASE.sub(lambda match: PHRASES[match.group(1)], text)
    if "-" in text:
        text = _UNHYPHENATED.sub(r"\1", text)
    for pattern, replacement, needles in _PREFERENCE_IDIOMS:
        if any(needle in text for needle in needles):
            text = pattern.sub(replacement, text)
    if "noon" in text:
        text, noons = _NOON.subn("12:00", text)
        has_digit = has_digit or noons > 0
    if "midnight" in text:
        text, midnights = _MIDNIGHT.subn("00:00", text)
        has_digit = has_digit or midnights > 0
    if "been" in text:
        text = _BEEN_DOING.sub(r"gone \1", text)  # "been skiing" is "gone skiing"
    if not has_digit:
        return text
    text = _AM_PM.sub(_am_pm, text)
    if ":" in text:
        text = _CLOCK.sub(_clock, text)
    if "," in text:
        text = _THOUSANDS.sub("", text)
    if any(symbol in text for symbol in CURRENCY_SYMBOLS):
        text = _MONEY.sub(_money, text)
    text = _MAGNITUDE.sub(lambda match: _scaled(match.group(1), match.group(2)), text)
    text = _GLUED_UNIT.sub(r"\1 \2", text)
    if "old" in text:
        text = _AGE.sub(r"\1", text)  # "14 years old" is an age, not a duration
    text = _ORDINAL.sub(r"\1", text)
    return _DAY_MONTH.sub(r"\2 \1", text)


_NAME_IN_APPOSITION = re.compile(r"\s*([A-Z][\w']*)\s*,\s*(?:my|our|his|her|their)\s")


def capitalised(text: str) -> frozenset[str]:
    """Lowercased words written with a capital letter somewhere after the first word, and a
    first word followed by a description of it ("Keiko, my climbing partner, ...")."""
    text = text.replace("\u2019", "'")
    words = _WORD.findall(text)
    found = {word.lower().removesuffix("'s") for word in words[1:] if word[0].isupper()}
    apposition = _NAME_IN_APPOSITION.match(text)
    if apposition is not None:
        found.add(apposition.group(1).lower())
    return frozenset(found)
