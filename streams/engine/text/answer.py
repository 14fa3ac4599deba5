"""An assistant's long answer condensed to what it named, recommended, decided or committed to.

In a user/assistant conversation the assistant's answers are most of the characters (over
four fifths on RealMem) and most of them are the essay around a few points: a greeting back,
restating the request, explanations, an offer to go on. What a later question needs is what
the answer *named* (titles, products, places, people), its numbers, dates and times, the plan
or schedule it set out, and what it recommended. This writer keeps those, without the
markdown, as short statements in the answer's order::

    "Wine Folly: Learn Wine" podcast; Quizlet for flashcards; Saturday 4:00 PM: practical
    tasting (1 hour).

How, per line of the answer (one pass, a few regular expressions per line, so the cost grows
with the characters and not faster):

- markdown goes: headings' ``#``, list bullets and numbers, emphasis, code ticks, table bars,
  and fenced code blocks whole (code is reproduced, not stated: its lines had been kept as
  "SELECT site; ROUND(");
- a line is cut into sentences; a list item is one unit (its first sentence);
- a unit is *kept* when it names something (:func:`~.facts.fact_terms`: a name, number, date,
  time, money, an emphasised or quoted phrase) or says what the assistant recommends or plans
  (:data:`DECISION_WORDS`); a heading, and a lead that introduces a list ("Proposed next
  steps:"), weigh more (:data:`HEADING_WEIGHT`, :data:`LEAD_WEIGHT`); a short label that
  names nothing ("Book recommendations:") is said with the item after it (:func:`_label`);
  questions, units with no
  content word and bare numbers ("1.", the number of a bold heading) are dropped;
- each kept unit is cut to its first clauses (:data:`UNIT_CHARS`), and the units fill a
  budget that grows with the answer (:func:`answer_budget`: a longer answer keeps more, never
  more than one memory holds), the best first, where a unit's worth is what it names, plus
  the words it shares with the rest of the answer that no unit taken before it holds (what
  the answer is about: :data:`CENTRAL_WEIGHT`). Each unit taken lowers the worth of the units
  that repeat it, so the kept units cover the answer instead of saying its main point five
  times;
- an answer the person's reply welcomes ("perfect, saving this") keeps twice the budget
  (:func:`~.observation.approves`): what a person takes up is what they come back to ask about;
- an item the person's reply chose by its place ("the second one", "option 2":
  :func:`picked_lines`) is kept first, whatever it weighs; one whose name the reply says
  again ("ok the Rancilio") is kept besides what the budget keeps (:func:`_named_again`).

Part of the pure engine: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import functools
import heapq
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from streams.engine.judge.lexicons import NUMBER_WORDS
from streams.engine.judge.words import singular
from streams.engine.text.facts import fact_terms

__all__ = [
    "ENDS_IN_ABBREVIATION",
    "answer_budget",
    "answer_lines",
    "condensed_answer",
    "named_again",
    "picked_lines",
    "topic_terms",
    "without_emphasis",
]

UNIT_CHARS = 180
"""A kept unit's length at most: its first clauses, cut between words past this. RealMem
(issue 38): at 120 a kept unit lost the end of what it listed and the answers' facts that
later summaries name were held less often (assistant points found @5 0.05; at 180, with the
weights below, 0.06, evidence @5 of all questions 0.182 → 0.193; 240 kept no more)."""
HEADING_WEIGHT = 3
LEAD_WEIGHT = 2
"""What a markdown heading ("### Updated Flight Itinerary: Helsinki to Urumqi") and a lead
ending in a colon add to a unit's weight. Measured on RealMem's answers against the memory
points later drawn from them (issue 38): of the units whose words are mostly a point's,
headings are 64 %, leads 44 %, a unit with a named thing 33 %, one without 10 %. A heading
says what its section is about, which is what a summary of the answer names; a lead
counted half before this, and headings as any line."""
DECISION_WEIGHT = 2
"""What saying that something is recommended, planned or settled adds to a unit's weight."""
TITLE_WORDS = 3
"""Words a heading or lead needs to weigh more: a one-word label ("Podcasts:") says less than
the item under it."""
CENTRAL_WEIGHT = 1.0
"""What each word a unit shares with the answer's other units adds to its worth (each further
unit that says it: +1), unless a unit taken before holds the word; divided by the square root
of the unit's length in 40-character steps, so a long unit does not win on length alone.
RealMem (issue 38), at the same characters: the assistant's memory points kept 179 → 206,
points in the 2,000-character context 0.235 → 0.263 (0.75: 0.261, 2: 0.258); the words the
person's reply takes up, weighed as well, gained nothing (their reply is in the same memory)."""
_LENGTH_STEP = 40
TERM_CHARS = 3
"""Words shorter than this do not count for :data:`CENTRAL_WEIGHT`."""
BUDGET_BASE_CHARS = 40
BUDGET_SHARE = 0.10
"""An answer keeps at most ``BUDGET_BASE_CHARS + BUDGET_SHARE × its length`` characters."""
APPROVED_SHARE = 0.20
"""What ``BUDGET_SHARE`` becomes for an answer the person's reply welcomes
(:func:`~.observation.approves`: "perfect, saving this", "great, let's go with the second
one"): what a person takes up is what they come back to ask about. On RealMem an answer so
welcomed is a needed point's source three times as often as one that is not (0.37 against
0.12 of 623 and 3,016 answers). Measured (issue 38): blind conversations 38 and 39 (written
by helpers that saw no code, scored before being read), the assistant's facts 0.50 / 0.50 ->
0.70 / 0.70, answers 0.60 / 0.68 -> 0.65 / 0.72, characters 0.37 / 0.36 -> 0.39 / 0.38;
RealMem evidence @5 / @10 0.192 / 0.267 -> 0.191 / 0.268, points @2,000 0.253 -> 0.253, the
assistant's points kept 218 -> 231 of 638, characters 0.31 -> 0.32. 0.15 kept less of what
was asked (0.70 / 0.60), 0.25 no more than 0.20; every answer at 0.15 instead (blind 0.65 /
0.70) cost characters on all of them (0.40 / 0.39), and the others at 0.08 to pay for it lost
RealMem's points @2,000 (0.244)."""

DECISION_WORDS = frozenset(
    {"recommend", "recommended", "recommends", "recommendation", "suggest", "suggested"}
    | {"suggests", "suggestion", "advise", "advised", "plan", "planned", "schedule"}
    | {"scheduled", "decided", "decision", "choose", "chose", "chosen", "choice", "best"}
    | {"option", "booked", "book", "reserve", "reserved", "budget", "deadline", "goal"}
    | {"target", "confirmed", "confirm", "agreed", "step", "next", "priority", "pick"}
)
"""Words by which an answer says what it recommends, plans or settled (general English)."""

_LINE_MARK = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]*|[-*+•·▪◦][ \t]+|\(?[0-9]{1,3}[.)][ \t]+"
    r"|\(?[A-Za-z][.)][ \t]+|[IVX]{1,5}\.[ \t]+"
    r"|(?:\*\*|__)(?=\(?[0-9]{1,3}[.)][ \t]))*"  # a bold numbered heading: "**1. Team**"
)
_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]")
# a line all in bold, as a heading: "**Option 2: JR West Kansai-Hiroshima Area Pass**"
_BOLD_LINE = re.compile(r"^[ \t]*(?:\*\*|__)[^\n]*(?:\*\*|__)[.:]?[ \t]*$")
_LETTER = re.compile(r"[^\W\d_]")
_BLANKS = re.compile(r"[ \t]{2,}")  # a table's padding ("MD          ; Compliance")
_EMPHASIS = re.compile(r"\*\*\*?|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])|`+")
"""Markdown emphasis: bold, italic and both ("***How Bad Do You Want It?* by Matt
Fitzgerald**": the third asterisk had stayed), and code ticks."""
_TABLE_RULE = re.compile(r"^[ \t|:\-]+$")
_STRONG = re.compile(r"\*\*([^*\n]{2,80})\*\*|__([^_\n]{2,80})__")
_QUOTED = re.compile(r"[\"“]([^\"”\n]{2,80})[\"”]")
_SENTENCE = re.compile(r"(?<=[.!?])[ \t]+(?=[\"“(A-Z0-9*])")
ENDS_IN_ABBREVIATION = re.compile(
    r"(?:\b(?:mr|mrs|ms|dr|prof|st|jr|sr|vs|etc|approx|no|p\.m|a\.m|e\.g|i\.e|u\.s))\.$",
    re.IGNORECASE,
)
"""Text that ends in an abbreviation's full stop ("Dr.", "e.g."), where no sentence ends (the
observation writer's sentences too)."""
_CLAUSE_END = re.compile(r"[,;:—–][ \t]|[ \t][—–-][ \t]")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
# An exclamation of one or two words, no number: "Excellent!", "Excellent choice, Adeleke!"
_EXCLAMATION = re.compile(
    r"^[^\W\d_]+(?:['’][^\W\d_]+)?(?:[ \t]+[^\W\d_]+)?(?:,[ \t]*[^\W\d_]+)?!+$"
)


# The person called "my guy" (friend, brother ...) at a clause's edge: an assistant has none of
# these, so it is a vocative, which the third person would make "the agent's guy".
_VOCATIVE_WORDS = r"my[ \t]+(?:guy|man|dude|bro|friend|dear|brother|sister)"
_VOCATIVE = re.compile(
    rf",[ \t]*{_VOCATIVE_WORDS}\b(?=[ \t]*(?:[,.!?;:]|$))|(?:^|(?<=[.!?][ \t]))"
    rf"{_VOCATIVE_WORDS}[ \t]*,[ \t]*",
    re.IGNORECASE,
)


# a table's cell that numbers an option: "**2. 12-Week Run/Walk 10k Builder**"
_NUMBERED_CELL = re.compile(r"^(?:\*\*|__)?\(?([0-9]{1,2})[.)][ \t]+(?=\S)")


@functools.lru_cache(maxsize=16)
def answer_lines(text: str) -> tuple[str, ...]:
    """``text``'s lines as the condensation and the picks read them (the line numbers of
    :func:`picked_lines` are theirs): a table row whose cells number the options ("| |
    **1. YNAB** | **2. Emma** | **3. Snoop** |", the options compared in columns) is one
    numbered line per option, so that "the second one" picks the option, and the options are
    kept as three items rather than one row ("YNAB ; 2; Emma ; 3; Snoop", blind conversation
    46, where "Which 10k training plan did I go with?" found the row 7th)."""
    lines: list[str] = []
    for line in text.splitlines():
        cells = _numbered_cells(line) if "|" in line else None
        if cells is None and "|" in line and (row := _NUMBERED_ROW.match(line)):
            # "| 2 | **Academy Xi – UX Research** | ~$2,950 |": the second option, as its
            # row's number says ("leaning to the second one", blind conversation 50)
            line = f"{row[1]}. {line[row.end() :].strip().rstrip('|').strip()}"
        lines.extend(cells or (line,))
    return tuple(lines)


# a table's row numbered in its first cell: "| 2 | **Academy Xi** | ~$2,950 |"
_NUMBERED_ROW = re.compile(r"^[ \t]*\|[ \t]*([0-9]{1,2})[.)]?[ \t]*\|")


def _numbered_cells(line: str) -> list[str] | None:
    """The options of a table row whose cells number them 1, 2 … (a first cell that labels
    the rows may be empty or unnumbered), each as a numbered item; None: no such row."""
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    if cells and not _NUMBERED_CELL.match(cells[0]):
        cells = cells[1:]  # the column of the rows' labels
    found = [match for cell in cells if (match := _NUMBERED_CELL.match(cell))]
    if len(found) < 2 or len(found) < len(cells):
        return None
    if [int(match[1]) for match in found] != list(range(1, len(found) + 1)):
        return None
    return [f"{match[1]}. {without_emphasis(match.string[match.end() :])}" for match in found]


@dataclass(frozen=True, slots=True)
class _Unit:
    text: str
    order: int
    weight: int
    terms: frozenset[str]  # the words its worth counts (:func:`topic_terms`)
    picked: bool = False  # an item the person's reply chose (:func:`picked_lines`)
    names: frozenset[str] = frozenset()  # what it names, when a reply may name it again


def without_emphasis(text: str) -> str:
    """``text`` without markdown emphasis and code ticks ("**Quizlet**" → "Quizlet")."""
    return _EMPHASIS.sub("", text) if "*" in text or "_" in text or "`" in text else text


def answer_budget(length: int, max_chars: int, approved: bool = False) -> int:
    """The characters an answer of ``length`` characters keeps at most (more when its reply
    welcomes it: :data:`APPROVED_SHARE`)."""
    share = APPROVED_SHARE if approved else BUDGET_SHARE
    return min(max_chars, BUDGET_BASE_CHARS + int(share * length))


def condensed_answer(
    text: str,
    max_chars: int,
    words_of: Callable[[str], Iterable[str]],
    picked: frozenset[int] = frozenset(),
    reply: str = "",
    approved: bool = False,
) -> list[str]:
    """The statements of an assistant's answer worth keeping, in the answer's order, within
    :func:`answer_budget`. ``words_of`` gives a plain unit's content words (the observation
    writer's, so both writers agree on what is phatic: a unit with none is dropped).
    ``picked``: the lines (0-based) of the items the person's reply chose
    (:func:`picked_lines`), kept first and whatever they weigh: "I'll go with the second
    one" says nothing without the item it chose. ``reply``: the person's reply to the
    answer; the units naming what it names again are kept besides what the budget keeps
    (:func:`_named_again`). ``approved``: the reply welcomes the answer
    (:func:`~.observation.approves`), whose budget is larger."""
    budget = answer_budget(len(text), max_chars, approved)
    units = _units(text, words_of, picked)
    named = _named_again(units, reply) if reply else None
    if named is None:
        return list(_condensed(text, words_of, picked, budget))
    # what the reply chose is kept besides what the answer's budget keeps, not instead
    chose = sum(len(u.text) + 2 for u in named if u.picked and not units[u.order].picked)
    chosen = _chosen(named, min(max_chars, budget + chose))
    return [u.text for u in sorted(chosen, key=lambda u: u.order)]


@functools.lru_cache(maxsize=8)
def _condensed(
    text: str, words_of: Callable[[str], Iterable[str]], picked: frozenset[int], budget: int
) -> tuple[str, ...]:
    """What an answer keeps when its reply names nothing of it (cached as :func:`_units`)."""
    chosen = _chosen(list(_units(text, words_of, picked)), budget)
    return tuple(u.text for u in sorted(chosen, key=lambda u: u.order))


@functools.lru_cache(maxsize=16)
def _units(
    text: str, words_of: Callable[[str], Iterable[str]], picked: frozenset[int]
) -> tuple[_Unit, ...]:
    """The units of an answer that may be kept (module doc), in its order. Cached: an
    answer is condensed again, with the same ``words_of``, when the person's reply comes
    (:func:`_named_again`), and parsing it again made the observation writer ~15 % slower
    on RealMem."""
    units: list[_Unit] = []
    said: dict[str, int] = {}  # a unit's text: its place in ``units``
    code = False  # inside a fenced block: code is reproduced, not stated
    label: tuple[int, str, str] | None = None  # a label (:func:`_label`): line, text

    def add(number: int, raw_line: str, label: str = "") -> None:
        wanted = number in picked
        heading = bool(_HEADING.match(raw_line))
        marked = _LINE_MARK.match(raw_line)
        item = bool(marked and marked.group().strip()) and not heading
        line = raw_line[marked.end() :] if marked else raw_line
        strong = {m.group(1) or m.group(2) for m in _STRONG.finditer(line)}
        choice = item or heading or "|" in raw_line or bool(_BOLD_LINE.match(raw_line))
        line = _plain(line)
        if label and (_LABELLED.match(line) or _clipped(line) in said):
            label = ""  # "Easy runs: around 11:30/mile" has its own; a recap's item is said
        pieces = [f"{label}: {line}" if label else line] if item else _sentences(line)
        pieces = pieces if item else _quotations_continued(pieces)
        for piece in pieces[:1] if item or wanted else pieces:
            piece = piece.strip()
            if not piece or not _LETTER.search(piece):
                continue
            if not wanted and (piece.endswith("?") or _EXCLAMATION.match(piece)):
                continue  # "Excellent!", "Great choice!": praise, whatever is capitalised
            words = list(words_of(piece))
            if not words and not wanted:
                continue
            weight = _weight(piece, strong, words)
            if len(_WORD.findall(piece)) >= TITLE_WORDS:  # "Podcasts:" alone names no subject
                lead = piece.endswith(":")  # introduces what follows
                weight += HEADING_WEIGHT * heading + LEAD_WEIGHT * lead
            if not weight and not wanted:
                continue
            kept = _clipped(piece)
            if kept in said:  # a unit said again counts once, picked if either copy is
                if wanted:
                    i = said[kept]
                    units[i] = replace(units[i], picked=True)
                continue
            said[kept] = len(units)
            terms = words if kept == piece else list(words_of(kept))
            names = _name_words(piece, words) if choice else frozenset()  # what a reply may choose
            units.append(_Unit(kept, len(units), weight, topic_terms(terms), wanted, names))

    for number, raw_line in enumerate(answer_lines(text)):
        if raw_line.lstrip().startswith(("```", "~~~")):
            code = not code
            continue
        if code or not raw_line.strip() or _TABLE_RULE.match(raw_line):
            continue
        if label is not None:
            # "Book recommendations: How Bad Do You ..."; not a question, which is dropped
            if _is_item(raw_line) and not _asking(raw_line) and number not in picked:
                add(number, raw_line, label[2])
                label = None
                continue
            add(*label[:2])
            label = None
        introduces = _label(raw_line) if number not in picked else None
        if introduces is not None:
            label = (number, raw_line, introduces)
            continue
        add(number, raw_line)
    if label is not None:
        add(*label[:2])
    return tuple(units)


def _asking(line: str) -> bool:
    """Whether ``line`` ends in a question mark, its emphasis aside."""
    return line.rstrip(" \t*_").endswith("?")


def _plain(line: str) -> str:
    """A line without its markdown, table bars and a vocative of the person."""
    line = _BLANKS.sub(" ", _EMPHASIS.sub("", line).replace("|", ";")).strip(" \t;")
    if "my " in line or "My " in line:
        line = _VOCATIVE.sub("", line)  # "Sharp, my guy!": said to the person, not of them
    return line


def _is_item(raw_line: str) -> bool:
    """Whether ``raw_line`` is a list item (bulleted, numbered or lettered), not a heading."""
    marked = _LINE_MARK.match(raw_line)
    return bool(marked and marked.group().strip()) and not _HEADING.match(raw_line)


_LABELLED = re.compile(r"^[^\W\d_][^:\n]{0,40}:[ \t]")
"""An item that opens with a label of its own ("Easy runs: around 11:30/mile")."""
LABEL_WORDS = 5
"""The most words of a label (:func:`_label`): a name for a list ("Book recommendations"),
not a sentence that leads into it ("To build a meaningful relationship with someone, follow
these tips:", which weighs as a lead of its own)."""


def _label(raw_line: str) -> str | None:
    """The text of a line that only says what the list after it is, without its colon:
    a heading, a bold line or a lead ending in a colon that names nothing, no number, no
    name after its first word and no quotation ("**Book recommendations:**", "### During the
    race", "Tricks to try now:"). Such a line said the least of an answer and, short, was
    kept before the items it introduced (blind conversation 56: "Book recommendations" and
    "Tricks to try now" kept, "How Bad Do You Want It? by Matt Fitzgerald, my top pick"
    not); said with its first item, it says what the item is. None for any other line."""
    framed = bool(_HEADING.match(raw_line) or _BOLD_LINE.match(raw_line))
    if not (framed or ":" in raw_line) or _is_item(raw_line):
        return None  # most lines: no markdown made plain for them
    marked = _LINE_MARK.match(raw_line)
    plain = _plain(raw_line[marked.end() :] if marked else raw_line)
    if not (framed or plain.endswith(":")):
        return None
    words = _WORD.findall(plain)
    if (
        not 0 < len(words) <= LABEL_WORDS
        or len(_sentences(plain)) != 1
        or any(c.isdigit() for c in plain)
        or any(w[0].isupper() for w in words[1:])
        or _QUOTED.search(plain)
    ):
        return None
    return plain.rstrip(" \t:.")


NAMED_MAX = 2
"""Units at most that a reply's names keep (:func:`_named_again`), besides what the
answer's budget keeps (never past one memory). Measured (issue 38): RealMem evidence @5 /
@10 0.189 / 0.261 -> 0.189 / 0.265, the needed points in the 2,000-character context 0.258
-> 0.249, characters 0.30 -> 0.31; blind conversations 32, 33 and 35, written with such
choices ("ok the Rancilio"), answers 0.53 / 0.47 / 0.53 -> 0.72 / 0.50 / 0.57, the
assistant's facts 0.50 / 0.30 / 0.50 -> 1.00 / 0.50 / 0.60. Within the answer's budget the
chosen units displaced others: RealMem 0.190 / 0.265 and 0.249, blind 0.55 / 0.53 / 0.62."""
_NAME_WORD = re.compile(r"[^\W_]+(?:[-'’.][^\W_]+)*")


def _name_words(piece: str, words: Iterable[str]) -> frozenset[str]:
    """The words of what ``piece`` names (its fact terms), folded: those with a letter and
    three characters or more that are among its content words ``words`` ("kd-8000",
    "iwaso", "lodge"; not "Very" opening a sentence), and the plural of a name's first word,
    as people call the things of a brand ("going with the vittorias": the Vittoria Rubino
    Pro tyres, blind conversation 44; every word's plural had "switching hotels" name the
    "Miyajima Grand Hotel Arimoto").

    Not a word in -ing that opens a sentence after the piece's first: "Going" in "… keep
    climbs in Z3. Going into the red on every hill …" is capitalised for its place, and
    "going with the vittorias" had chosen that line. Other words opening a sentence stay: a
    place or a name often does ("… in June. Kyoto is quieter then"), and leaving out every
    one cost RealMem's evidence @5 0.193 -> 0.189."""
    content = {word.casefold() for word in words}
    opening = {found[1].casefold() for found in _OPENS_SENTENCE.finditer(piece)}
    names: set[str] = set()
    for term in fact_terms(piece):
        found = [
            word
            for word in _NAME_WORD.findall(term)
            if len(word) >= TERM_CHARS
            and _LETTER.search(word)
            and (word in content or not word.isalpha())  # "kd-8000" is two content words
            and word not in opening
        ]
        names.update(found)
        if found and found[0].isalpha():
            names.add(f"{found[0]}s")
        names.update(_amount(term))
    return frozenset(names)


def _amount(term: str) -> tuple[str, ...]:
    """The name a fact term gives when it is a time or an amount with a decimal point
    ("11:30", "09:15" for "9:15", "12.75" for "$12.75": fact terms are canonical, so a reply
    and the answer write them alike). Said again in a reply, it names the unit that says it
    ("11:30 feels sooo slow" to "Easy runs: around 11:30/mile"), where a bare "3" or "2025"
    names nothing in particular."""
    found = _AMOUNT.fullmatch(term)
    return (found[1],) if found else ()


_AMOUNT = re.compile(r"[$€£¥]?(\d+[:.]\d+)")


# a word in -ing after a sentence's end within a unit: capitalised for its place
_OPENS_SENTENCE = re.compile(r"[.!?][ \t]+([^\W\d_]+ing)\b")


def named_again(text: str, reply: str, words_of: Callable[[str], Iterable[str]]) -> list[str]:
    """The statements of the answer ``text`` that ``reply`` names again, as
    :func:`condensed_answer` keeps them, in the answer's order (:func:`_named_again`; empty:
    it names none of its items, or too many)."""
    named = _named_again(_units(text, words_of, frozenset()), reply)
    return [] if named is None else [unit.text for unit in named if unit.picked]


def _named_again(units: Sequence[_Unit], reply: str) -> list[_Unit] | None:
    """``units`` with those naming again what ``reply`` names marked picked (None: none
    is). "the KD-8000 with the bakers percentage mode speaks to me" after a list of three
    scales keeps the item of the "My Weigh KD-8000", "Iwaso." the item of the ryokan of
    that name (blind conversation 33, whose condensed answers had kept "Nice-to-haves
    (cheap)" and "Revised plan", and whose questions asked which scale, which ryokan).

    What a reply can choose is an item, a heading, a line all in bold or a table's row;
    each word of their names (:func:`_name_words`) that the reply says picks the unit
    naming it first, unless more than :data:`NAMED_MAX` units name it ("pass" in a
    comparison of rail passes names none of them). A reply whose words pick more than
    :data:`NAMED_MAX` units discusses the answer rather than choosing from it, and picks
    none: on RealMem, whose people's replies go over the answer at length, picking up to
    three from any of its units, within the answer's budget, cost the needed points in the
    2,000-character context 0.258 -> 0.239."""
    said = frozenset(_NAME_WORD.findall(reply.casefold())).union(
        *(_amount(term) for term in fact_terms(reply))
    )
    first: dict[str, _Unit] = {}
    naming: Counter[str] = Counter()
    for unit in units:
        for word in unit.names & said:
            naming[word] += 1
            first.setdefault(word, unit)
    named = {first[word].order for word in naming if naming[word] <= NAMED_MAX}
    if len(named) > NAMED_MAX:
        return None  # so many that the reply is about the answer
    named -= {unit.order for unit in units if unit.picked}
    if not named:
        return None
    return [replace(unit, picked=True) if unit.order in named else unit for unit in units]


# --- what a reply chose from a list -------------------------------------------------------

_ORDINALS = {
    word: number
    for number, words in enumerate(
        (
            ("first", "1st"),
            ("second", "2nd"),
            ("third", "3rd"),
            ("fourth", "4th"),
            ("fifth", "5th"),
            ("sixth", "6th"),
            ("seventh", "7th"),
            ("eighth", "8th"),
            ("ninth", "9th"),
            ("tenth", "10th"),
        ),
        1,
    )
    for word in words
}
_NUMBER_WORDS = {word: int(n) for word, n in NUMBER_WORDS.items() if 1 <= int(n) <= 10}
_LAST = 0  # "the last": the run's last item
LIST_NOUNS = frozenset(
    {"one", "ones", "option", "choice", "suggestion", "idea", "item", "point", "step", "pick"}
    | {"version", "draft", "tip", "approach", "plan", "route", "alternative", "variant"}
)
"""Nouns by which a reply names an item of a list whatever the list is of ("the second
option", "version 3", "the first one")."""
# Both scan the reply in lower case, a word's first letter looked at before its alternatives
# (a reply after every answer is scanned: ~2 µs for RealMem's, where case-blind alternation at
# every word took ~25)
_ORDINAL_PICK = re.compile(
    r"\b(?=[ty])(?:the|that|this|your|ur)[ \t]+(?:very[ \t]+)?"
    rf"({'|'.join(sorted(_ORDINALS, key=len, reverse=True))}|last)\b"
    r"(?:[ \t]+([^\W\d_]+))?"
)
_NUMBER = re.compile(rf"(?<![\w.,])(?=[0-9otfsen])(\d{{1,2}}|{'|'.join(_NUMBER_WORDS)})\b")
# What comes before a number that picks: "number" or "#" (whatever the word before them), or
# a noun ("option 2", "tagline number two", "#3")
_BEFORE_NUMBER = re.compile(r"(?:\b([^\W\d_]+)[ \t]+)?(number[ \t]+|no\.[ \t]*|#[ \t]*)?\Z")
_ITEM = re.compile(
    r"^([ \t]*)(#{1,6}[ \t]+)?(?:\*\*|__)?"
    r"(?:\(?([0-9]{1,2})[.):]|([-*+•·▪◦])"
    r"|([^\W\d_]+)[ \t]+([0-9]{1,2})\b[^\n]{0,3}?[:.–—-])"  # "### Option 2: ..."
    r"(?=[ \t])"
)


@dataclass(slots=True)
class _Run:
    """Items of one list of an answer: line numbers in order, and the words that say what the
    list is of (the heading or lead before it, the noun of "Option 2:" items)."""

    key: tuple[int, bool, str]  # indent, numbered, heading marks
    heading: str  # the line before its first item that is no item ("Tagline options:")
    noun: str | None = None  # what its items call themselves ("Option 2:"), singular
    lines: list[int] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)  # each item's number (or place)
    _title: frozenset[str] | None = None

    def title(self, words_of: Callable[[str], Iterable[str]]) -> frozenset[str]:
        """The words that say what the list is of: its heading's, and its items' noun (read
        only when a reply's noun is to be matched: most picks need no title)."""
        if self._title is None:
            words = topic_terms(words_of(without_emphasis(self.heading)))
            self._title = words | {self.noun} if self.noun else words
        return self._title

    def item(self, place: int, numbered: bool) -> int | None:
        """The line of the item at ``place`` (``_LAST``: the last); ``numbered``: the item
        numbered so ("option 2"), otherwise the one in that place ("the second")."""
        if place == _LAST:
            return self.lines[-1]
        if numbered:
            return self.lines[self.numbers.index(place)] if place in self.numbers else None
        return self.lines[place - 1] if place <= len(self.lines) else None


def picked_lines(
    answer: str, reply: str, words_of: Callable[[str], Iterable[str]]
) -> frozenset[int]:
    """The lines of ``answer`` (0-based, of :func:`answer_lines`) holding the
    items of its lists that ``reply`` chooses by their place: "the second one", "I'll go with
    the first option, the NMTF", "tagline number two", "Option 1", "#3", "the first and the
    last". A noun picks the list whose items it names ("Option 2:"), then one whose title
    names it ("Tagline options:"), then the first numbered list long enough, then the first
    bulleted one.

    What may follow a place word is what keeps a date or a time from being taken for a pick:
    "the first" and "the last" choose alone, with a conjunction or with a list noun
    (:data:`LIST_NOUNS`), the list's own noun or a word of its title, never with a word of
    time ("the first time", "the last week"); "the 9th" and "aug 2" are days, so a number
    chooses only after "number", "#" or a list noun ("option 2")."""
    places = _places(reply.lower())
    runs = _runs(answer) if places else []
    lines: set[int] = set()
    for place, noun, how in places if runs else ():
        run = _run_for(runs, place, noun, words_of)
        if run is not None and _chooses(run, noun, how, words_of):
            line = run.item(place, how != _ORDINAL)
            if line is not None:
                lines.add(line)
    return frozenset(lines)


_NUMBERED, _ORDINAL, _NOUN_NUMBER = range(3)  # "number two", "the second", "option 2"


def _chooses(
    run: _Run, noun: str | None, how: int, words_of: Callable[[str], Iterable[str]]
) -> bool:
    """Whether a place said ``how`` with ``noun`` after or before it chooses an item of
    ``run`` (:func:`picked_lines`)."""
    if how == _NUMBERED or noun in LIST_NOUNS or (noun is not None and noun == run.noun):
        return True
    if how == _ORDINAL:
        return noun is None or (noun not in TIME_NOUNS and noun in run.title(words_of))
    return False


_LINKING = frozenset({"and", "or", "of", "with", "but", "for", "is", "sounds", "looks"})
"""Words after an ordinal by which it stands for the item ("the second one and the last",
"the first sounds good")."""
TIME_NOUNS = frozenset(
    {"time", "times", "day", "week", "weekend", "month", "year", "morning", "afternoon"}
    | {"evening", "night", "hour", "minute", "half", "quarter", "season", "date", "round"}
)
"""Nouns after "the first" or "the last" that count time, not items ("the first time")."""


def _places(reply: str) -> list[tuple[int, str | None, int]]:
    """The places ``reply`` (in lower case) chooses: each with the noun that says what it is
    of (None: the place alone, which any list can have) and how it was said
    (:func:`_chooses`)."""
    places: list[tuple[int, str | None, int]] = []
    for found in _ORDINAL_PICK.finditer(reply):
        word, after = found[1], found[2] or ""
        noun = None if not after or after in _LINKING else singular(after)
        if word[0].isdigit():  # "the 9th", "the 2nd week": a day unless a list noun follows
            places.append((_ORDINALS[word], noun, _NOUN_NUMBER))
        else:
            places.append((_LAST if word == "last" else _ORDINALS[word], noun, _ORDINAL))
    for found in _NUMBER.finditer(reply):  # numbers are few: what is before each is read
        before = _BEFORE_NUMBER.search(reply, max(0, found.start() - 40), found.start())
        if before is None or not (before[1] or before[2]):
            continue
        number = found[1]
        place = int(number) if number.isdigit() else _NUMBER_WORDS[number]
        noun = singular(before[1]) if before[1] else None
        if noun in ("number", "no"):  # "number two" first in the reply
            noun, numbered = None, True
        else:
            numbered = bool(before[2])
        places.append((place, noun, _NUMBERED if numbered else _NOUN_NUMBER))
    return [(place, noun, how) for place, noun, how in places if place <= 10]


def _run_for(
    runs: list[_Run], place: int, noun: str | None, words_of: Callable[[str], Iterable[str]]
) -> _Run | None:
    def fits(run: _Run) -> bool:
        return len(run.lines) >= max(place, 2)

    called = [run for run in runs if noun is not None and noun == run.noun and fits(run)]
    named = [run for run in runs if noun is not None and fits(run) and noun in run.title(words_of)]
    numbered = [run for run in runs if run.key[1] and fits(run)]
    return next(iter(called or named or numbered or [run for run in runs if fits(run)]), None)


def _runs(answer: str) -> list[_Run]:
    """The lists of ``answer``: numbered items (a number that does not follow the run's last
    starts another), bulleted items at one indent (a line of text at their indent or less
    ends them), and headings that number their sections ("### 2. Budget", "**Option 2:**")."""
    runs: list[_Run] = []
    open_runs: dict[tuple[int, bool, str], _Run] = {}
    heading = ""
    for number, line in enumerate(answer_lines(answer)):
        if not line.strip():
            continue
        found = _ITEM.match(line)
        if found is None:
            indent = len(line.expandtabs()) - len(line.lstrip())
            for key in [key for key in open_runs if not key[1] and key[0] >= indent]:
                del open_runs[key]  # text at a bulleted list's indent ends it
            if _HEADING.match(line):
                open_runs.clear()
            heading = line
            continue
        ordinal = found[3] or found[6]
        key = (len(found[1].expandtabs()), ordinal is not None, (found[2] or "").strip())
        run = open_runs.get(key)
        if ordinal is not None:
            place = int(ordinal)
            if run is None or place != run.numbers[-1] + 1:
                noun = singular(found[5].casefold()) if found[5] else None
                run = open_runs[key] = _Run(key, heading, noun)
                runs.append(run)
        else:
            if run is None:
                run = open_runs[key] = _Run(key, heading)
                runs.append(run)
            place = len(run.lines) + 1
        run.lines.append(number)
        run.numbers.append(place)
        for deeper in [k for k in open_runs if k[0] > key[0] and k[2] == key[2]]:
            del open_runs[deeper]
    return [run for run in runs if len(run.lines) >= 2]


def _sentences(line: str) -> list[str]:
    """``line`` cut after each sentence, not after an abbreviation: "ask Dr. Okafor" had been
    two units, written "ask Dr; Okafor"."""
    pieces = _SENTENCE.split(line)
    if len(pieces) == 1:
        return pieces
    joined = [pieces[0]]
    for piece in pieces[1:]:
        if ENDS_IN_ABBREVIATION.search(joined[-1]):
            joined[-1] = f"{joined[-1]} {piece}"
        else:
            joined.append(piece)
    return joined


_QUOTE_MARK = re.compile(r'(?<!\d)"|[“”]')
"""A double quotation mark; one after a digit is an inch (33" wide)."""


def _quotations_continued(pieces: list[str]) -> list[str]:
    """A line's sentences, each that a quotation opened in an earlier one runs on into
    opened again with its mark: a draft in the person's voice ('Here is a thank-you: "THANK
    YOU! Last Saturday I finished the 180 km Ring of Kerry …"') is the person's words in each
    of its sentences, and the third person reads the mark (a sentence cut from the draft had
    become "the agent finished the 180 km Ring of Kerry", conversation 15's draft)."""
    continued = []
    opened: str | None = None  # the mark of the quotation still open
    for piece in pieces:
        continued.append(piece if opened is None else opened + piece)
        for mark in _QUOTE_MARK.findall(piece):
            if mark == "“":
                opened = mark
            elif mark == "”":
                opened = None
            else:
                opened = None if opened else mark
    return continued


def _chosen(units: list[_Unit], budget: int) -> list[_Unit]:
    """The units that fill ``budget``, the worthiest first (module doc). A unit's worth only
    falls as others are taken, so the one at the top of the heap whose worth, computed again,
    still leads is the worthiest: each unit is looked at a few times, not once per pick."""
    repeated = Counter(term for unit in units for term in unit.terms)
    covered: set[str] = set()
    chosen = [unit for unit in units if unit.picked]  # first, whatever the budget
    used = sum(len(unit.text) + 2 for unit in chosen)
    covered.update(term for unit in chosen for term in unit.terms)
    units = [unit for unit in units if not unit.picked]

    def worth(unit: _Unit) -> float:
        central = sum(repeated[term] - 1 for term in unit.terms - covered)
        length = max(1.0, math.sqrt(len(unit.text) / _LENGTH_STEP))
        return unit.weight + CENTRAL_WEIGHT * central / length

    heap = [(-worth(unit), unit.order, unit) for unit in units]
    heapq.heapify(heap)
    while heap:
        _, order, unit = heapq.heappop(heap)
        now = (-worth(unit), order)
        if heap and now > heap[0][:2]:  # worth less since others were taken
            heapq.heappush(heap, (*now, unit))
            continue
        if used + len(unit.text) + 2 > budget and chosen:
            continue
        chosen.append(unit)
        used += len(unit.text) + 2
        covered.update(unit.terms)
    return chosen


def topic_terms(words: Iterable[str]) -> frozenset[str]:
    """Content words as :data:`CENTRAL_WEIGHT` counts them, and as a reply is told apart from
    a message that moves on (the observation writer's): singular, ``TERM_CHARS`` or more."""
    return frozenset(singular(w.casefold()) for w in words if len(w) >= TERM_CHARS)


def _weight(unit: str, strong: set[str], words: list[str]) -> int:
    """How much ``unit`` names: its fact terms, emphasised and quoted phrases, and whether it
    says what is recommended or planned (0: nothing, and the unit is dropped). ``words``: its
    content words; a unit whose only ones are decision words ("It is confirmed.") says that
    something was decided, not what, and weighs nothing for it: in a short answer it took the
    budget from the sentence naming what was booked."""
    named = len(fact_terms(unit)) + sum(1 for s in strong if s in unit) + len(_QUOTED.findall(unit))
    decides = any(w.casefold() in DECISION_WORDS for w in _WORD.findall(unit)) and not all(
        w.casefold() in DECISION_WORDS for w in words
    )
    recommends = _RECOMMENDS.search(unit) is not None
    return named + (DECISION_WEIGHT if decides else 0) + (RECOMMEND_WEIGHT if recommends else 0)


RECOMMEND_WEIGHT = 2
"""What an answer's own verdict adds beyond its decision words: "My recommendation: buy the
Discovery Pass", "my top pick", "I'd go with the RAV4", "Bottom line: ...". It is what the
person asks again ("Which GPS watch was your top pick for me?"), and it names one thing where
a schedule or an itinerary names many. Blind conversation 56: the assistant's facts 0.50 ->
0.83 (its two misses were a top pick and a recommended book); RealMem unchanged (at 3:
points @2,000 0.254 -> 0.252)."""
_RECOMMENDS = re.compile(
    r"\b(?:my|our)[ \t]+(?:top[ \t]+|main[ \t]+|honest[ \t]+)?"
    r"(?:recommendation|pick|suggestion|advice|choice|vote)\b"
    r"|\bI(?:['’]d|[ \t]+would)?[ \t]+(?:recommend|suggest|go[ \t]+with|pick|choose|opt[ \t]+for)\b"
    r"|^[ \t]*(?:recommendation|verdict|bottom[ \t]+line|in[ \t]+short|tl;?dr)\b",
    re.IGNORECASE,
)


def _clipped(unit: str) -> str:
    """``unit`` cut to its first clauses within :data:`UNIT_CHARS`, between words."""
    unit = unit.rstrip(" .:;,")
    if len(unit) <= UNIT_CHARS:
        return unit
    cut = 0
    for brk in _CLAUSE_END.finditer(unit):
        if brk.start() > UNIT_CHARS:
            break
        cut = brk.start()
    if cut >= UNIT_CHARS // 2:
        return unit[:cut]
    space = unit.rfind(" ", 0, UNIT_CHARS)
    return unit[: space if space > 0 else UNIT_CHARS]
