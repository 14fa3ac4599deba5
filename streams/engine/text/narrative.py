"""The built-in consolidation writers: session → narrative, narratives → summary → profile.

Without an LLM, memstream still has to compress a long conversation without forgetting it.
These writers are deterministic and *extractive*: they choose, cut and reorder the words that
were said, and reword pronouns into the third person, but never invent a fact. Their one hard
rule is the containment check of :mod:`.facts`: every fact term of the sources (named entity,
number, date, time, email, phone, URL) is still stated by the output, and who said it is still
written next to it. Every shortening step is checked against that rule and undone when it would
lose a term; a last resort appends the affected source lines verbatim, so the rule holds for
any input, not only for the sentences the heuristics were written for.

* :func:`write_narrative` (seed 002): one conversation session → ONE episodic narrative.
* :func:`write_summary` (seed 004): narratives → ONE semantic summary, map-reduce over chunks.
* :func:`write_profile` (seed 004): semantic memories → ONE behavioural profile.

Output formats are line based and parsed back by the next writer (a summary reads the lines a
narrative writes, a summary of summaries reads its own), and fact terms never span a line
break, so each line can be kept, dropped or copied on its own.

Part of the pure engine: no I/O apart from reading ``profile_cues.json`` from this package
once, no clock, no randomness; the same inputs always give the same text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from streams.engine.text.facts import FactTerm, fact_terms, find_terms
from streams.engine.text.profile import ProfileCues, profile_cues, write_profile
from streams.engine.text.prose import (
    join_sentences,
    keeps_terms,
    sentences,
    trimmed,
    with_missing_lines,
)
from streams.engine.text.summary import write_summary

__all__ = [
    "DEFAULT_PRIORITY_KINDS",
    "Narrative",
    "NarrativeSource",
    "ProfileCues",
    "Speaker",
    "profile_cues",
    "write_narrative",
    "write_profile",
    "write_summary",
]

Speaker = Literal["user", "agent", "system"]

# Seed 002: occurrences, dissonance events and task executions lead the narrative.
DEFAULT_PRIORITY_KINDS: tuple[str, ...] = ("occurrence", "dissonance_event", "task_execution")
LABELS: dict[str, str] = {"user": "User", "agent": "Agent", "system": "System"}
TOPIC_COUNT = 3
ARC_BUCKETS = 3  # start, middle, end
ANSWER_WINDOW = 3  # a question counts as answered by one of the next three turns

_OPEN_ITEM = re.compile(
    r"\bTODO\b|\bto-do\b|\bneeds?[ \t]+to\b|\b(?:will|['’]ll)[ \t]+(?:check|look[ \t]+into|"
    r"find[ \t]+out|get[ \t]+back|follow[ \t]+up)\b|\blet[ \t]+me[ \t]+check\b|\bremind[ \t]+me\b"
    r"|\bfollow[ \t]+up\b|\bdon['’]t[ \t]+(?:let[ \t]+me[ \t]+)?forget\b",
    re.IGNORECASE,
)
# A reply that puts a question off: the question stays open even without fact terms.
_PUT_OFF = re.compile(
    r"\blet[ \t]+me[ \t]+(?:check|look)\b|\b(?:will|['’]ll)[ \t]+(?:check|look|get[ \t]+back)\b"
    r"|\bone[ \t]+moment\b|\blook[ \t]+(?:it|that)[ \t]+up\b",
    re.IGNORECASE,
)
# A reply that is no answer (it puts the question off, or does not know).
_NO_ANSWER = re.compile(
    _PUT_OFF.pattern + r"|\bnot[ \t]+sure\b|\bdon['’]t[ \t]+know\b|\bdo[ \t]+not[ \t]+know\b"
    r"|\bno[ \t]+idea\b",
    re.IGNORECASE,
)
_POSSESSIVE_END = re.compile(r"['’]s$")

# --- narrative (seed 002) -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NarrativeSource:
    """One turn of a session, as the narrative writer needs it."""

    memory_id: str
    content: str
    kind: str
    speaker: Speaker
    valence: float  # [-1, 1]
    at: int  # epoch ms: orders the turns; never printed (a narrative reads the same any day)

    def __post_init__(self) -> None:
        if self.speaker not in LABELS:
            raise ValueError(f"speaker {self.speaker!r} is not one of {sorted(LABELS)}")
        if not -1.0 <= self.valence <= 1.0:  # also refuses NaN
            raise ValueError(f"valence {self.valence} is outside [-1, 1]")


@dataclass(frozen=True, slots=True)
class Narrative:
    """One episodic narrative: its text and the parts the text is made of."""

    content: str
    key_interactions: tuple[str, ...]  # "User: …" lines, priority kinds first
    emotional_arc: tuple[float, ...]  # mean valence at the start, middle and end (2 decimals)
    unresolved_threads: tuple[str, ...]  # unanswered questions and open items, attributed


def write_narrative(
    sources: Sequence[NarrativeSource],
    priority_kinds: Sequence[str] = DEFAULT_PRIORITY_KINDS,
) -> Narrative:
    """ONE narrative of a session's turns that keeps every fact term, who said it, and the mood.

    Layout (one part per line, so later writers can take it apart again)::

        Session of 24 turns: topics Alice, Lisbon, Neovim.
        User: my sister Alice lives in Lisbon.            <- key interactions
        Agent: the Atlas launch is on March 14.
        Unresolved: User: Where does Bob live again? | User: Remind me to call Carol.
        Emotional arc: 0.12 → -0.30 → 0.45.

    Turns of the ``priority_kinds`` come first (seed 002), the rest in time order. A turn
    without fact terms is chit-chat and is dropped ("ok", "thanks!"); a kept turn is cut down
    to its sentences with fact terms, each trimmed of leading and trailing clauses without any
    ("Oh nice, by the way, my sister …" → "my sister …"). Unresolved threads go to their own
    line instead: questions the other party puts off ("let me check"; the put-off reply is part
    of the thread), questions naming things that none of the other party's next three turns
    answers, and open items ("TODO", "need to", "will check", "remind me"). The header counts
    the turns and names the three most mentioned names; the arc is the mean valence of the
    first, middle and last third of the turns.
    """
    timeline = sorted(range(len(sources)), key=lambda i: (sources[i].at, i))
    open_turns = _unresolved(sources, timeline)
    rank = {kind: position for position, kind in enumerate(priority_kinds)}
    ordered = sorted(
        timeline, key=lambda i: (rank.get(sources[i].kind, len(rank)), sources[i].at, i)
    )
    key_lines: list[str] = []
    for i in ordered:
        if i in open_turns:
            continue
        text = _compress(sources[i].content, lambda _clause: False)
        line = None if text is None else f"{LABELS[sources[i].speaker]}: {text}"
        if line is not None and line not in key_lines:
            key_lines.append(line)
    threads = tuple(
        f"{LABELS[sources[i].speaker]}: "
        + (
            _compress(sources[i].content, _open_clause)
            or join_sentences(sentences(sources[i].content))
        )
        for i in timeline
        if i in open_turns
    )
    arc = emotional_arc([sources[i].valence for i in timeline])
    lines = [_header(sources, timeline), *key_lines]
    if threads:
        lines.append("Unresolved: " + " | ".join(threads))
    if arc:
        lines.append("Emotional arc: " + " → ".join(f"{value:.2f}" for value in arc) + ".")
    content = with_missing_lines(
        "\n".join(lines), [(LABELS[sources[i].speaker], sources[i].content) for i in timeline]
    )
    return Narrative(content, tuple(key_lines), arc, threads)


def _header(sources: Sequence[NarrativeSource], timeline: list[int]) -> str:
    count = len(sources)
    turns = f"Session of {count} {'turn' if count == 1 else 'turns'}"
    entities: list[FactTerm] = [
        found
        for i in timeline
        for found in find_terms(sources[i].content)
        if found.kind == "entity"
    ]
    if not entities:
        return f"{turns}: no named topics."
    counts = Counter(found.term for found in entities)
    first: dict[str, FactTerm] = {}
    for found in entities:
        first.setdefault(found.term, found)
    top = sorted(first, key=lambda term: -counts[term])[:TOPIC_COUNT]  # stable: first seen
    names = [_POSSESSIVE_END.sub("", first[term].surface) for term in top]
    return f"{turns}: topics {', '.join(names)}."


def _unresolved(sources: Sequence[NarrativeSource], timeline: list[int]) -> frozenset[int]:
    """Turns holding an open item, a question the other party put off ("let me check"), or a
    question about named things that none of the other party's next turns answers."""
    found: set[int] = set()
    for position, i in enumerate(timeline):
        turn = sources[i]
        if _OPEN_ITEM.search(turn.content):
            previous = timeline[position - 1] if position else None
            if (
                previous in found
                and sources[previous].speaker != turn.speaker
                and not fact_terms(turn.content)
            ):
                continue  # "I'll check" after an open question: the question is the thread
            found.add(i)
            continue
        questions = [sentence for sentence in sentences(turn.content) if sentence.endswith("?")]
        if not questions:
            continue
        asked: set[str] = set()
        for question in questions:
            asked |= fact_terms(question)
        later = [
            j
            for j in timeline[position + 1 : position + 1 + ANSWER_WINDOW]
            if sources[j].speaker != turn.speaker
        ]
        if later and _PUT_OFF.search(sources[later[0]].content):
            found.add(i)  # the other party put it off: open, with or without fact terms
        elif asked and not any(
            not _NO_ANSWER.search(sources[j].content) and fact_terms(sources[j].content) & asked
            for j in later
        ):
            found.add(i)  # a question about named things that nobody answered
    return frozenset(found)


def _open_clause(clause: str) -> bool:
    return clause.endswith("?") or _OPEN_ITEM.search(clause) is not None


def _compress(content: str, keep: Callable[[str], bool]) -> str | None:
    """``content`` cut down to its sentences with fact terms (or that ``keep`` wants), each
    trimmed of leading and trailing clauses without any ("Oh, by the way, …"); None when no
    clause qualifies. Falls back to whole sentences, then to all of it, whenever a cut would
    lose a term (a date cut from its year, say)."""
    kept: list[str] = []
    for sentence in sentences(content):
        text = trimmed(sentence, lambda clause: bool(fact_terms(clause)) or keep(clause))
        if text is not None:
            kept.append(text if keeps_terms(sentence, text) else sentence)
    if not kept:
        return None
    for candidate in (join_sentences(kept), join_sentences(sentences(content))):
        if keeps_terms(content, candidate):
            return candidate
    return "; ".join(content.split("\n"))  # line breaks are term boundaries, and so is "; "


def emotional_arc(valences: list[float]) -> tuple[float, ...]:
    """Mean valence per bucket (start, middle, end; fewer buckets for fewer turns)."""
    count = len(valences)
    buckets = min(ARC_BUCKETS, count)
    arc: list[float] = []
    start = 0
    for bucket in range(buckets):
        size = count // buckets + (1 if bucket < count % buckets else 0)
        part = valences[start : start + size]
        start += size
        arc.append(round(sum(part) / len(part), 2) + 0.0)  # + 0.0: no "-0.00"
    return tuple(arc)
