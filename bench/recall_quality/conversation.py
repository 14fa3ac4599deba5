"""``python -m bench.recall_quality.conversation FILE...``: one conversation, any you write.

The held-out check of issue 38 runs on real conversations this repository never sees; the
nearest this repository gets is conversations written blind (by someone who has not read
the code) and scored before anyone reads them. This scores such a file: the same engine,
replay and fixed retrieval as the RealMem run (:mod:`.realmem_run`: MiniLM cosine, turns
a minute apart, the worker's ticks in event time), and the measure the held-out check
reports, the share of questions whose gold answer is in the 2,000-character context
(:func:`~.scoring.answer_in_context`: 80 % of its content words), by category, against
raw retrieval over the turns.

The file (UTF-8 JSON), a person with an assistant::

    {"user_name": "Noreen",
     "sessions": [{"date": "2025-03-04", "time": "19:05",
                   "turns": [{"role": "user", "content": "..."},
                             {"role": "assistant", "content": "..."}]}],
     "questions": [{"question": "...", "answer": "Escallonia", "category": "single-hop"}]}

or people texting: ``"speakers": ["Hannah", "Rory"]`` instead of ``user_name``, and each turn
``{"speaker": "Hannah", "content": "..."}``. Categories are free text (a row each).
Questions are asked a day after the last session, when its consolidation is done. The
evidence measures need the turn each answer came from, which such a file does not name.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.recall_quality.embeddings import EmbeddingCache
from bench.recall_quality.rankings import unit
from bench.recall_quality.realmem import ASSISTANT, MINUTE_MS, USER, Persona, Session, Turn
from bench.recall_quality.realmem_run import TAIL_MS, EventTimeDriver, events_of, prefixed, rank
from bench.recall_quality.scoring import answer_in_context, context
from streams.engine.policy import builtin_profile, profile_names
from streams.engine.step import EngineConfig

Embed = Callable[[Sequence[str]], list[bytes]]
BUDGET = 2_000
ALL = "all"


class ConversationError(ValueError):
    """A conversation file that is not of the documented shape (the message says where)."""


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    answer: str
    category: str


@dataclass(frozen=True, slots=True)
class Conversation:
    persona: Persona  # its sessions and turns, as a RealMem persona's
    agent: bool  # a person with an assistant (else people texting)
    questions: tuple[Question, ...]


def load(path: Path) -> Conversation:
    """The conversation in ``path`` (module doc), or a :class:`ConversationError` naming what
    is wrong and where."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConversationError(f"{path}: cannot read it as UTF-8 JSON ({exc})") from exc
    return conversation_of(path.stem, data)


def conversation_of(name: str, data: Any) -> Conversation:
    """A conversation from a parsed file (:func:`load`)."""
    if not isinstance(data, dict):
        raise ConversationError(f"{name}: the file holds {type(data).__name__}, not an object")
    agent = "user_name" in data
    if agent == ("speakers" in data):
        raise ConversationError(
            f"{name}: give either user_name (a person with an assistant) or speakers (people "
            "texting), not both or neither"
        )
    speakers = [data["user_name"]] if agent else data["speakers"]
    if not isinstance(speakers, list) or not all(_text(s) for s in speakers):
        raise ConversationError(f"{name}: user_name / speakers must be non-empty text")
    sessions = [
        _session(name, i, s, agent, speakers) for i, s in enumerate(_list(name, data, "sessions"))
    ]
    if not sessions:
        raise ConversationError(f"{name}: no sessions")
    if any(b.turns[0].at < a.ended_at for a, b in zip(sessions, sessions[1:], strict=False)):
        raise ConversationError(f"{name}: sessions overlap or are not in time order")
    questions = tuple(_question(name, i, q) for i, q in enumerate(_list(name, data, "questions")))
    persona = Persona(name, speakers[0], tuple(sessions), ())
    return Conversation(persona, agent, questions)


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _list(where: str, data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list):
        raise ConversationError(f"{where}: {key} must be a list")
    return value


def _session(name: str, index: int, raw: Any, agent: bool, speakers: list[str]) -> Session:
    where = f"{name}: session {index + 1}"
    if not isinstance(raw, dict):
        raise ConversationError(f"{where} is not an object")
    try:
        start = datetime.strptime(f"{raw['date']} {raw.get('time', '09:00')}", "%Y-%m-%d %H:%M")
    except (KeyError, TypeError, ValueError) as exc:
        raise ConversationError(f"{where}: date YYYY-MM-DD and time HH:MM ({exc})") from exc
    at = int(start.replace(tzinfo=UTC).timestamp() * 1000)
    session_id = f"{name}-s{index + 1}"
    turns = []
    for number, turn in enumerate(_list(where, raw, "turns"), 1):
        if not isinstance(turn, dict) or not _text(turn.get("content")):
            raise ConversationError(f"{where}, turn {number}: no content")
        if agent:
            role = turn.get("role")
            if role not in ("user", "assistant"):
                raise ConversationError(f"{where}, turn {number}: role is user or assistant")
            side, speaker = (USER, speakers[0]) if role == "user" else (ASSISTANT, ASSISTANT)
        else:
            said_by = turn.get("speaker")
            if said_by not in speakers:
                raise ConversationError(
                    f"{where}, turn {number}: speaker {said_by!r} is not in speakers"
                )
            side, speaker = USER, str(said_by)
        turn_id = f"{session_id}-t{number}"
        turns.append(
            Turn(turn_id, session_id, side, speaker, turn["content"], at + (number - 1) * MINUTE_MS)
        )
    if not turns:
        raise ConversationError(f"{where}: no turns")
    return Session(session_id, session_id, raw["date"], tuple(turns))


def _question(name: str, index: int, raw: Any) -> Question:
    if not isinstance(raw, dict) or not all(_text(raw.get(k)) for k in ("question", "answer")):
        raise ConversationError(f"{name}: question {index + 1} needs question and answer text")
    category = raw.get("category")
    return Question(raw["question"], raw["answer"], str(category) if _text(category) else "-")


@dataclass(frozen=True, slots=True)
class Score:
    """Per category (and :data:`ALL`): questions, answered by raw retrieval, by the profile."""

    answered: dict[str, tuple[int, int, int]]
    transcript_chars: int
    active_chars: int
    memories: int
    per_question: tuple[tuple[Question, bool, bool], ...]


def score(
    conversation: Conversation,
    embed: Embed,
    engine_embed: Embed,
    profile: str = "default",
    budget: int = BUDGET,
) -> Score:
    """Replay ``conversation`` through ``profile`` and ask every question of it and of the
    raw turns (module doc)."""
    turns = conversation.persona.turns
    texts = [t.text for t in turns] + [q.text for q in conversation.questions]
    vectors = dict(zip(texts, embed(texts), strict=True))
    driver = EventTimeDriver(
        conversation.persona.user_id, EngineConfig(builtin_profile(profile), embed=engine_embed)
    )
    for event in events_of(conversation.persona, {t.turn_id: vectors[t.text] for t in turns}):
        driver.feed(event)
    driver.advance(conversation.persona.sessions[-1].ended_at + TAIL_MS)
    active = driver.recallable()
    records = [r for r in active if r.memory.embedding]
    systems = (
        (
            [t.turn_id for t in turns],
            [prefixed(t) for t in turns],
            np.vstack([unit(vectors[t.text]) for t in turns]),
        ),
        (
            [r.memory.memory_id for r in records],
            [r.memory.content for r in records],
            np.vstack([unit(r.memory.embedding or b"") for r in records])
            if records
            else np.zeros((0, 1)),
        ),
    )
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    rows = []
    for question in conversation.questions:
        found = [
            answer_in_context(
                question.answer,
                context(
                    [r.content for r in rank(ids, contents, matrix, vectors[question.text])], budget
                ),
            )
            for ids, contents, matrix in systems
        ]
        for key in (question.category, ALL):
            counts[key][0] += 1
            counts[key][1] += found[0]
            counts[key][2] += found[1]
        rows.append((question, found[0], found[1]))
    return Score(
        {k: (n, a, b) for k, (n, a, b) in counts.items()},
        sum(len(t.text) for t in turns),
        sum(len(r.memory.content) for r in active),
        len(active),
        tuple(rows),
    )


# --- the command -----------------------------------------------------------------------------


def report(name: str, result: Score, profile: str) -> str:
    """A markdown table of ``result``: answers in context by category, raw and ``profile``."""
    n, raw, kept = result.answered[ALL]
    lines = [
        f"### {name}: {n} questions, answers in the {BUDGET:,}-character context",
        "",
        f"| category | questions | raw | `{profile}` |",
        "|---|---:|---:|---:|",
    ]
    for category in sorted(result.answered, key=lambda c: (c != ALL, c)):
        n, raw, kept = result.answered[category]
        lines.append(f"| {category} | {n} | {raw / n:.2f} | {kept / n:.2f} |")
    lines += [
        "",
        f"Active memories after the last session and a day: {result.memories}, "
        f"{result.active_chars:,} characters against the transcript's "
        f"{result.transcript_chars:,} ({result.active_chars / result.transcript_chars:.2f}).",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.recall_quality.conversation",
        description="Answers in the 2,000-character context of a conversation you wrote "
        "(module doc of bench/recall_quality/conversation.py for the file's shape), "
        "consolidated against raw retrieval over its turns.",
    )
    parser.add_argument("files", nargs="+", type=Path, help="conversation JSON files")
    parser.add_argument("--profile", default="default", choices=profile_names())
    parser.add_argument("--show", action="store_true", help="each question, answered or not")
    args = parser.parse_args(argv)
    try:
        conversations = [(path, load(path)) for path in args.files]
    except ConversationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from streams.config.settings import Settings, SettingsError
    from streams.embedders.base import EmbedderUnavailable
    from streams.embedders.factory import embedder_for

    try:
        cache = EmbeddingCache.default(Settings.from_env().cache_dir)
    except SettingsError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    try:
        embedder = embedder_for("minilm")
        for path, conversation in conversations:

            def embed(texts: Sequence[str]) -> list[bytes]:
                return cache.embed(texts, embedder.embed)

            result = score(conversation, embed, embed, args.profile)
            cache.save()
            print(report(path.name, result, args.profile), end="\n\n")
            if args.show:
                for question, raw, kept in result.per_question:
                    print(
                        f"- [{question.category}] raw {int(raw)} `{args.profile}` "
                        f"{int(kept)}: {question.text} -> {question.answer}"
                    )
                print()
    except EmbedderUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
