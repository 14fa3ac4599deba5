"""RealMem (``bench/data/realmem/``, Apache-2.0, see its ``NOTICE``) as the benchmark's corpus.

A persona is one person talking with an assistant over ~200 dated sessions. :func:`load`
reads one persona's file into plain values; nothing here runs the engine or a model.

**Time.** A session gives only its day (``current_time``). Sessions are sorted by day (some
files list them out of order; sessions of one day keep the file's order); a day's first
session starts at 09:00 UTC, its turns a minute apart; the session ends
(:attr:`Session.ended_at`) a minute after its last turn, and the day's next session starts an
hour after that.

**Turns.** Each dialogue turn becomes a :class:`Turn` with a stable id
(``<persona>/<session uuid>/<1-based turn number>``), its side (``User`` or ``Assistant``)
and its text unchanged. The user's side speaks by the persona's first name.

**Questions.** A user turn with ``is_query`` is a question, asked at its turn's time; the
memory points its answer needs are the ``memory_used`` of the assistant turn after it. Each
:class:`MemoryPoint` keeps its text and its **evidence turns**: the session's turn it was
extracted from, found by matching the point to the session's ``extracted_memory`` item of the
same text. RealMem's quirks (its ``NOTICE``): ``source_turn`` is 1-based; an item with
``source_turn`` 0 rewrites the items with the same ``index`` (its evidence is theirs); -1 marks
a schedule item with no single source turn (no evidence turn: the point still counts in the
context measure, not in evidence recall). A few points come from the question's own session,
from the question's turn or later: those turns are no evidence either (nothing can find them
when the question is asked).
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "realmem"
FILE_SUFFIX = "_dialogues_256k.json.gz"
USER, ASSISTANT = "User", "Assistant"
SIDES = (USER, ASSISTANT)
MINUTE_MS = 60_000
HOUR_MS = 60 * MINUTE_MS
DAY_START_MS = 9 * HOUR_MS  # a day's first session starts at 09:00 UTC
SESSION_GAP_MS = HOUR_MS  # from a session's end to the same day's next session
_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})")
_TAG = re.compile(r"^\s*【[^】]*】\s*")  # the annotator's topic label: "【Travel Plan】 ..."


@dataclass(frozen=True, slots=True)
class Turn:
    turn_id: str
    session_id: str
    side: str  # USER or ASSISTANT
    speaker: str  # the persona's first name, or "Assistant"
    text: str
    at: int  # epoch ms, UTC


@dataclass(frozen=True, slots=True)
class Session:
    session_id: str  # RealMem's session_uuid
    identifier: str  # RealMem's session_identifier ("Travel_Planning_123:S2_01")
    day: str  # "2025-12-18"
    turns: tuple[Turn, ...]

    @property
    def ended_at(self) -> int:
        """A minute after the last turn: when the session's ``SessionEnded`` is sent."""
        return self.turns[-1].at + MINUTE_MS


@dataclass(frozen=True, slots=True)
class MemoryPoint:
    """One earlier memory point a question's answer needs."""

    text: str  # as RealMem gives it (a topic label stripped)
    session_id: str
    evidence: tuple[str, ...]  # turn ids it was extracted from (empty: no single turn)


@dataclass(frozen=True, slots=True)
class Question:
    question_id: str  # "<persona>/<query id>"
    turn_id: str  # the query turn: asked at its time
    text: str
    at: int
    points: tuple[MemoryPoint, ...]


@dataclass(frozen=True, slots=True)
class Persona:
    name: str  # "Kenta_Tanaka"
    speaker: str  # "Kenta": how the user's side speaks
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def user_id(self) -> str:
        return f"realmem-{self.name}"

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]


def persona_names(directory: Path = DATA_DIR) -> list[str]:
    """The personas whose files ``directory`` holds, sorted."""
    return sorted(p.name[: -len(FILE_SUFFIX)] for p in directory.glob(f"*{FILE_SUFFIX}"))


def load(name: str, directory: Path = DATA_DIR, sessions: int | None = None) -> Persona:
    """Persona ``name`` from ``directory``; ``sessions``: only its first that many (in time)."""
    path = directory / f"{name}{FILE_SUFFIX}"
    if not path.is_file():
        known = ", ".join(persona_names(directory)) or "none"
        raise FileNotFoundError(f"no RealMem file for {name!r} in {directory} (there: {known})")
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        data = json.load(stream)
    return persona_of(name, data, sessions)


def persona_of(name: str, data: dict[str, Any], sessions: int | None = None) -> Persona:
    """A persona from a RealMem file's parsed JSON (``_metadata`` and ``dialogues``)."""
    dialogues = sorted(data["dialogues"], key=lambda d: day_of(d["current_time"]))
    if sessions is not None:
        dialogues = dialogues[:sessions]
    speaker = name.replace("_", " ").split()[0]
    extracted = extracted_items(data["dialogues"])
    built: list[Session] = []
    questions: list[Question] = []
    previous_day, cursor = "", 0
    for dialogue in dialogues:
        day = day_of(dialogue["current_time"])
        if day != previous_day:
            cursor = midnight_ms(day) + DAY_START_MS
            previous_day = day
        session = _session(name, speaker, dialogue, day, cursor)
        built.append(session)
        questions.extend(_questions(name, dialogue, session, extracted))
        cursor = session.ended_at + SESSION_GAP_MS
    return Persona(name, speaker, tuple(built), tuple(questions))


def day_of(current_time: str) -> str:
    """``"2025-12-18 (Thursday)"`` → ``"2025-12-18"``."""
    match = _DAY.match(current_time.strip())
    if match is None:
        raise ValueError(f"RealMem current_time {current_time!r} does not start with a date")
    return match[1]


def midnight_ms(day: str) -> int:
    return int(datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC).timestamp() * 1000)


def _session(name: str, speaker: str, dialogue: dict[str, Any], day: str, start: int) -> Session:
    session_id = dialogue["session_uuid"]
    turns = tuple(
        Turn(
            turn_id(name, session_id, number),
            session_id,
            turn["speaker"],
            speaker if turn["speaker"] == USER else ASSISTANT,
            turn["content"],
            start + (number - 1) * MINUTE_MS,
        )
        for number, turn in enumerate(dialogue["dialogue_turns"], 1)
    )
    return Session(session_id, dialogue.get("session_identifier", ""), day, turns)


def turn_id(name: str, session_id: str, number: int) -> str:
    """The id of a session's turn ``number`` (1-based, as RealMem's ``source_turn``)."""
    return f"{name}/{session_id}/{number}"


def _questions(
    name: str, dialogue: dict[str, Any], session: Session, extracted: Extracted
) -> list[Question]:
    raw_turns = dialogue["dialogue_turns"]
    found = []
    for index, turn in enumerate(raw_turns):
        if not turn.get("is_query") or turn["speaker"] != USER:
            continue
        answer = raw_turns[index + 1] if index + 1 < len(raw_turns) else {}
        used = answer.get("memory_used") or []
        query_id = turn.get("query_id") or f"{session.session_id}-{index + 1}"
        asked = session.turns[index]
        points = tuple(
            memory_point(name, item, extracted, (session.session_id, index + 1)) for item in used
        )
        found.append(Question(f"{name}/{query_id}", asked.turn_id, asked.text, asked.at, points))
    return found


Extracted = dict[str, list[dict[str, Any]]]  # session uuid → its extracted_memory items


def extracted_items(dialogues: Iterable[dict[str, Any]]) -> Extracted:
    return {d["session_uuid"]: list(d.get("extracted_memory") or []) for d in dialogues}


def text_of(content: Any) -> str:
    """An item's content as text (one RealMem item holds a JSON object, not a string)."""
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def point_text(content: Any) -> str:
    """A memory point's text without the annotator's topic label."""
    return _TAG.sub("", text_of(content)).strip()


def memory_point(
    name: str, item: dict[str, Any], extracted: Extracted, asked: tuple[str, int] | None = None
) -> MemoryPoint:
    """A ``memory_used`` item with its evidence turns (see the module docstring). ``asked``:
    the question's session and turn number; a turn of that session from the question on is
    no evidence (a few points were extracted from the question itself or a later turn)."""
    session_id = item["session_uuid"]
    content = text_of(item["content"])
    items = extracted.get(session_id, [])
    sources = [i for i in items if text_of(i["content"]) == content]
    numbers: set[int] = set()
    for source in sources:
        if source["source_turn"] > 0:
            numbers.add(source["source_turn"])
        elif source["source_turn"] == 0:  # a rewrite: its evidence is its originals'
            numbers.update(
                i["source_turn"]
                for i in items
                if i.get("index") == source.get("index") and i["source_turn"] > 0
            )
    if asked is not None and asked[0] == session_id:
        numbers = {n for n in numbers if n < asked[1]}
    evidence = tuple(turn_id(name, session_id, n) for n in sorted(numbers))
    return MemoryPoint(point_text(item["content"]), session_id, evidence)


def evidence_sides(persona: Persona) -> dict[str, int]:
    """How many evidence turns of the questions' points are the user's and the assistant's."""
    side = {t.turn_id: t.side for t in persona.turns}
    counts = dict.fromkeys(SIDES, 0)
    for question in persona.questions:
        for point in question.points:
            for turn in point.evidence:
                if turn in side:
                    counts[side[turn]] += 1
    return counts


def sessions_in_order(sessions: Sequence[Session]) -> bool:
    return all(a.turns[-1].at < b.turns[0].at for a, b in zip(sessions, sessions[1:], strict=False))
