"""How one ranked list of memories is scored against one question. Pure functions.

**Content words** (:func:`content_words`): the text lower-cased; an ISO date ``2023-05-07``
read as ``7 may 2023``; a possessive ``'s`` dropped; split on anything but letters and digits
(so ``9:30`` is ``9`` and ``30``); an ordinal ``3rd`` read as ``3`` and a number without its
leading zeros (``07`` → ``7``); a simple plural made singular (``-ies`` → ``-y``; ``-es``
after s, x, z, ch, sh or o dropped; else a final ``-s`` dropped, except after ``s``, ``u`` or
``i`` and in words of three letters or fewer: ``tuesdays`` → ``tuesday``, ``classes`` →
``class``, ``strawberries`` → ``strawberry``, ``bus`` and ``class`` unchanged); then the
words of :data:`STOP_WORDS` removed. Month names (``may`` too), weekdays and numbers are
never stop words: they are what temporal answers are made of.

**Answer in context**: the memories are taken in rank order into a context until its budget
of characters is reached, the last one cut to fit (a newline between two memories counts as
one character); the answer is in context when the context holds at least 80 % of the gold
answer's distinct content words.

**Evidence recall @k**: the share of a question's evidence turns found among the top ``k``
memories (averaged over questions). A turn is found when one of them is the turn itself, or
a memory of at most 1,500 characters derived from it (:class:`Lineage`, transitively), that
keeps at least half of the turn's key words: the content words of its fact sentences.

**Stale first** (update questions): within the largest context, the first memory that holds
the replaced value and not the current one comes before the first that holds the current one.

**Chance**: the same contexts checked against a decoy, the gold answer of another question of
the same kind and conversation (:func:`decoys`). Answer in context reads the context as a
whole, so words from different memories add up: a context of many dated memories holds "7",
"May" and "2023" by chance. The chance figure is that floor; an answer figure means something
only as far as it stands above it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from bench.recall_quality.when import MONTHS

ANSWER_SHARE = 0.8
KEY_WORD_SHARE = 0.5
DERIVED_MAX_CHARS = 1_500
BUDGETS = (2_000, 7_000)
EVIDENCE_KS = (5, 10)

_MONTHS = tuple(month.lower() for month in MONTHS)
STOP_WORDS = frozenset(
    """
    a an the and or but nor of to in on at for with from by about as into onto over under
    after before than then so if because while until up down out off again once there here
    is am are was were be been being do does did doing done have has had having get got
    i me my mine myself we us our ours you your yours he him his she her hers they them their
    theirs it its this that these those what which who whom whose when where why how
    not no yes just also too very really quite s t d ll ve re m can could would should will
    shall might must all any both each few more most other some such own same now
    oh hey hi hello lol haha ok okay yeah
    """.split()  # noqa: SIM905 (a list literal of 140 words reads worse)
)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_POSSESSIVE = re.compile(r"['’]s\b")
_TOKEN = re.compile(r"[a-z0-9]+")
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_ES_AFTER = ("ses", "xes", "zes", "ches", "shes", "oes")


def _iso_as_words(match: re.Match[str]) -> str:
    year, month, day = int(match[1]), int(match[2]), int(match[3])
    if not 1 <= month <= 12:
        return match[0]
    return f"{day} {_MONTHS[month - 1]} {year}"


@lru_cache(maxsize=65_536)
def normalise(token: str) -> str:
    """One lower-case token as :func:`content_words` counts it."""
    ordinal = _ORDINAL.match(token)
    if ordinal:
        return str(int(ordinal[1]))
    if token.isdigit():
        return str(int(token))
    if len(token) <= 3 or token.endswith(("ss", "us", "is")):
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(_ES_AFTER):
        return token[:-2]
    if token.endswith("s"):
        return token[:-1]
    return token


@lru_cache(maxsize=65_536)
def content_words(text: str) -> frozenset[str]:
    """The distinct content words of ``text`` (see the module docstring)."""
    text = _ISO_DATE.sub(_iso_as_words, text.lower())
    text = _POSSESSIVE.sub("", text)
    words = (normalise(t) for t in _TOKEN.findall(text))
    return frozenset(w for w in words if w not in STOP_WORDS)


def holds(words: frozenset[str], text_words: frozenset[str], share: float) -> bool:
    """``text_words`` holds at least ``share`` of ``words`` (an empty ``words`` is held)."""
    if not words:
        return True
    return len(words & text_words) >= share * len(words)


def context(contents: Iterable[str], budget: int) -> list[str]:
    """The memories' contents in rank order until ``budget`` characters, the last one cut."""
    taken: list[str] = []
    left = budget
    for content in contents:
        if left <= 0:
            break
        piece = content[:left]
        taken.append(piece)
        left -= len(piece) + 1
    return taken


def answer_in_context(gold: str, pieces: Sequence[str]) -> bool:
    found: frozenset[str] = frozenset().union(*(content_words(p) for p in pieces))
    return holds(content_words(gold), found, ANSWER_SHARE)


class Lineage:
    """What each memory was derived from, followed transitively.

    ``parents``: memory id → the ids it was made from directly (a memory's metadata keys and
    the ledger's links, gathered by :mod:`bench.recall_quality.systems`)."""

    def __init__(self, parents: Mapping[str, Iterable[str]]) -> None:
        self.parents = {child: frozenset(ids) for child, ids in parents.items()}
        self._origins: dict[str, frozenset[str]] = {}

    def origins(self, memory_id: str) -> frozenset[str]:
        """Every memory ``memory_id`` was derived from, directly or not (itself excluded)."""
        known = self._origins.get(memory_id)
        if known is not None:
            return known
        seen: set[str] = set()
        frontier = list(self.parents.get(memory_id, ()))
        while frontier:
            current = frontier.pop()
            if current in seen or current == memory_id:
                continue
            seen.add(current)
            frontier.extend(self.parents.get(current, ()))
        found = frozenset(seen)
        self._origins[memory_id] = found
        return found


NO_LINEAGE = Lineage({})


@dataclass(frozen=True, slots=True)
class Ranked:
    """A memory as a ranking returns it."""

    memory_id: str
    content: str


def evidence_found(
    turn_id: str, key_words: frozenset[str], memory: Ranked, lineage: Lineage
) -> bool:
    """``memory`` is the evidence turn, or carries it: derived from it, short enough to be
    read, and keeping at least half of its key words."""
    if memory.memory_id != turn_id:
        if len(memory.content) > DERIVED_MAX_CHARS:
            return False
        if turn_id not in lineage.origins(memory.memory_id):
            return False
    return holds(key_words, content_words(memory.content), KEY_WORD_SHARE)


def evidence_recall(
    evidence: Mapping[str, frozenset[str]], top: Sequence[Ranked], lineage: Lineage
) -> float:
    """The share of the evidence turns (turn id → key words) that ``top`` carries."""
    if not evidence:
        return 1.0
    found = sum(
        any(evidence_found(turn, words, memory, lineage) for memory in top)
        for turn, words in evidence.items()
    )
    return found / len(evidence)


def stale_first(gold: str, stale: str, pieces: Sequence[str]) -> bool:
    """The first piece holding ``stale`` and not ``gold`` comes before the first holding
    ``gold`` (or ``gold`` is nowhere)."""
    gold_words, stale_words = content_words(gold), content_words(stale)
    for piece in pieces:
        words = content_words(piece)
        if holds(gold_words, words, ANSWER_SHARE):
            return False
        if holds(stale_words, words, ANSWER_SHARE):
            return True
    return False


def decoys(questions: Sequence[tuple[str, str, str, str]]) -> dict[str, str]:
    """question id → the gold answer of the next question (cyclically, in the given order)
    of the same conversation and kind whose gold differs; ``questions``: (question id,
    conversation id, kind, gold). A question with no such other has no decoy."""
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for question_id, conversation, kind, gold in questions:
        groups.setdefault((conversation, kind), []).append((question_id, gold))
    found: dict[str, str] = {}
    for members in groups.values():
        for index, (question_id, gold) in enumerate(members):
            for step in range(1, len(members)):
                other = members[(index + step) % len(members)][1]
                if content_words(other) != content_words(gold):
                    found[question_id] = other
                    break
    return found


@dataclass(frozen=True, slots=True)
class QuestionScore:
    question_id: str
    kind: str
    answer_in_context: dict[int, bool]  # budget → answered
    evidence_recall: dict[int, float]  # k → share of evidence turns found
    stale_first: bool | None  # update questions only
    chance: dict[int, bool]  # budget → the decoy answer is "in context" too


def score_question(
    question_id: str,
    kind: str,
    gold: str,
    stale: str | None,
    evidence: Mapping[str, frozenset[str]],
    ranked: Sequence[Ranked],
    lineage: Lineage,
    decoy: str | None = None,
    budgets: Sequence[int] = BUDGETS,
    ks: Sequence[int] = EVIDENCE_KS,
) -> QuestionScore:
    contents = [m.content for m in ranked]
    contexts = {budget: context(contents, budget) for budget in budgets}
    widest = contexts[max(budgets)]
    return QuestionScore(
        question_id,
        kind,
        {budget: answer_in_context(gold, pieces) for budget, pieces in contexts.items()},
        {k: evidence_recall(evidence, ranked[:k], lineage) for k in ks},
        stale_first(gold, stale, widest) if stale is not None else None,
        {
            budget: decoy is not None and answer_in_context(decoy, pieces)
            for budget, pieces in contexts.items()
        },
    )


# --- RealMem: memory points (bench.recall_quality.realmem) ---------------------------------

POINT_SHARES = (KEY_WORD_SHARE, ANSWER_SHARE)  # a point "in context": half, or 80 %, of its words
ANNOTATION_WORDS = frozenset({"user", "assistant"})
"""RealMem's annotator writes "User prefers ...": the word names the annotation's subject, not
what was said, and no turn or memory of the conversation need contain it."""


def point_words(text: str) -> frozenset[str]:
    """A memory point's key words: its content words less :data:`ANNOTATION_WORDS`."""
    return content_words(text) - ANNOTATION_WORDS


@dataclass(frozen=True, slots=True)
class Point:
    """A needed memory point as scored: its key words and the turns it came from."""

    words: frozenset[str]
    evidence: frozenset[str]  # turn ids (empty: no single source turn)
    # the content words of each evidence turn: a memory holding all of one's kept it whole
    turns: tuple[frozenset[str], ...] = ()


def point_found(point: Point, memory: Ranked, lineage: Lineage) -> bool:
    """``memory`` is a turn the point came from, or a memory of at most
    :data:`DERIVED_MAX_CHARS` derived from one of them (transitively) that holds at least
    half of the point's key words (a condensed memory counts when it kept what was needed)
    or every content word of one of them (it kept the turn whole, as the turn counts)."""
    if memory.memory_id in point.evidence:
        return True
    if not point.evidence & lineage.origins(memory.memory_id):
        return False
    return keeps(point, memory.content)


def keeps(point: Point, content: str) -> bool:
    """A memory derived from the point's turns (of at most :data:`DERIVED_MAX_CHARS`) carries
    it: ``content`` holds half the point's key words, or every content word of one of its
    turns."""
    if len(content) > DERIVED_MAX_CHARS:
        return False
    words = content_words(content)
    return holds(point.words, words, KEY_WORD_SHARE) or any(t and t <= words for t in point.turns)


def points_found(
    points: Sequence[Point], top: Sequence[Ranked], lineage: Lineage
) -> tuple[bool | None, ...]:
    """For each point, whether ``top`` carries it (None: it has no evidence turn)."""
    return tuple(
        any(point_found(p, m, lineage) for m in top) if p.evidence else None for p in points
    )


def point_recall(points: Sequence[Point], top: Sequence[Ranked], lineage: Lineage) -> float | None:
    """The share of the points with evidence turns that ``top`` carries (None: no point has
    one, so the question has no evidence to find)."""
    return share_of(points_found(points, top, lineage))


def share_of(flags: Sequence[bool | None]) -> float | None:
    """The share of true flags among those not None (None: all are None)."""
    known = [f for f in flags if f is not None]
    return sum(known) / len(known) if known else None


def points_held(points: Sequence[Point], pieces: Sequence[str], share: float) -> tuple[bool, ...]:
    """For each point, whether the context ``pieces`` holds at least ``share`` of its key
    words (the words of all pieces together)."""
    found: frozenset[str] = frozenset().union(*(content_words(p) for p in pieces))
    return tuple(holds(p.words, found, share) for p in points)


def points_in_context(points: Sequence[Point], pieces: Sequence[str], share: float) -> float:
    """The share of ``points`` whose key words the context ``pieces`` holds."""
    if not points:
        return 1.0
    return sum(points_held(points, pieces, share)) / len(points)


@dataclass(frozen=True, slots=True)
class PointScore:
    question_id: str
    found: dict[int, tuple[bool | None, ...]]  # k → per point: carried by the top k
    held: dict[float, tuple[bool, ...]]  # share of a point's words → per point: in context
    chance: dict[float, float]  # share → share of another question's points in context

    @property
    def evidence_recall(self) -> dict[int, float | None]:
        """k → the share of the traced points found (None: the question has none)."""
        return {k: share_of(flags) for k, flags in self.found.items()}

    @property
    def in_context(self) -> dict[float, float]:
        """share → the share of the points in context."""
        return {s: (sum(f) / len(f) if f else 1.0) for s, f in self.held.items()}


def score_points(
    question_id: str,
    points: Sequence[Point],
    ranked: Sequence[Ranked],
    lineage: Lineage,
    decoy: Sequence[Point] = (),
    budget: int = BUDGETS[0],
    ks: Sequence[int] = EVIDENCE_KS,
    shares: Sequence[float] = POINT_SHARES,
) -> PointScore:
    """One question against one ranked list: evidence at each ``k``, the points (and the
    decoy's, for chance) in the context of ``budget`` characters."""
    pieces = context((m.content for m in ranked), budget)
    return PointScore(
        question_id,
        {k: points_found(points, ranked[:k], lineage) for k in ks},
        {share: points_held(points, pieces, share) for share in shares},
        {share: points_in_context(decoy, pieces, share) if decoy else 0.0 for share in shares},
    )


def point_decoys(questions: Sequence[tuple[str, frozenset[frozenset[str]]]]) -> dict[str, int]:
    """question id → the index (in ``questions``) of the next question, cyclically, whose
    points' words differ from its own; ``questions``: (question id, its points' word sets)."""
    found: dict[str, int] = {}
    for index, (question_id, words) in enumerate(questions):
        for step in range(1, len(questions)):
            other = (index + step) % len(questions)
            if questions[other][1] and not questions[other][1] & words:
                found[question_id] = other
                break
    return found
