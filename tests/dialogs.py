"""Dialogs between two named people over two sessions, for the forget tests (issue 42).

Every content-bearing sentence carries a number no other sentence of the dialog holds (its
*marker*), and the writers keep numbers (a narrative keeps every number; an observation keeps
the turn's words): so a marker found in a memory means the memory quotes that sentence,
however a writer reworded the rest. A turn may also repeat an earlier turn word for word (its
markers are then no longer unique to either), so duplicates merge and patterns form.

Deterministic for its inputs; the only clock is ``BASE_TIME``.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

from streams.engine.model import (
    ConsolidationRequested,
    CreatedBy,
    Layer,
    Memory,
    MemoryEvent,
    MemoryWritten,
    SessionEnded,
)

BASE_TIME = 1_790_000_000_000
MINUTE_MS = 60_000
DAY_MS = 86_400_000
SPEAKERS: tuple[tuple[str, CreatedBy], ...] = (("Caroline", "user"), ("Melanie", "agent"))

THINGS = ("locker", "bike lock", "garage", "alarm", "safe", "gym badge", "wifi", "mailbox")
RELATIONS = ("sister", "brother", "neighbour", "cousin", "aunt", "colleague")
STATEMENTS = (
    "My {thing} code is {n}.",
    "I paid {n} dollars for the new {thing}.",
    "My {relation} lives at number {n} on Harbour Street.",
    "I ran {n} metres with my {relation} on Sunday.",
    "The {thing} at work has {n} buttons on it.",
    "My {relation} keeps {n} stamps in an album.",
)
QUESTIONS = ("Is your {thing} code {n}?", "Did you pay {n} dollars for the {thing}?")
ANSWERS = ("Yes, it is.", "Yes, exactly that.")
PHATIC = ("Thanks!", "Haha, nice.", "Oh wow!", "Hi there!")
NEGATIONS = ("I don't use Jira anymore.", "I no longer drink coffee.")
_MARKER = re.compile(r"\b\d{4}\b")


@dataclass(frozen=True)
class Turn:
    """One planned turn: what kind (statement, question, answer, phatic, negation, repeat)
    and a choice among its templates (``pick``); a repeat repeats turn ``pick`` modulo the
    turns so far."""

    kind: str
    pick: int


@dataclass
class Dialog:
    user_id: str
    events: list[MemoryEvent] = field(default_factory=list)
    turn_ids: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # turn id → what it said

    def unique_markers(self, memory_id: str, remaining: set[str] | None = None) -> set[str]:
        """The markers of turn ``memory_id`` no other turn (of ``remaining``, by default all)
        says: what no memory may quote once the turn is forgotten."""
        others = (remaining if remaining is not None else set(self.turn_ids)) - {memory_id}
        mine = markers(self.texts.get(memory_id, ""))
        for other in others:
            mine -= markers(self.texts.get(other, ""))
        return mine


def markers(text: str) -> set[str]:
    return set(_MARKER.findall(text))


def write_dialog(
    user_id: str,
    sessions: list[list[Turn]],
    layer: Layer = "working",
    importance: float = 0.5,
    procedural: bool = True,
) -> Dialog:
    """The events of a two-person dialog: each session's turns a minute apart, sessions two
    days apart, each ended by ``SessionEnded``; then a manual consolidation and (with
    ``procedural``) a request for the behavioural profile."""
    dialog = Dialog(user_id)
    ns = uuid.uuid5(uuid.NAMESPACE_URL, f"dialog/{user_id}")
    number = iter(range(3001, 9999, 7))
    at = BASE_TIME

    def emit(payload: object, when: int) -> None:
        event_id = str(uuid.uuid5(ns, str(len(dialog.events))))
        dialog.events.append(MemoryEvent(event_id, user_id, when, payload))  # type: ignore[arg-type]

    for s, turns in enumerate(sessions):
        session_id = f"{user_id}-s{s}"
        for t, turn in enumerate(turns):
            speaker, created_by = SPEAKERS[t % 2]
            text = _text(turn, dialog, number)
            memory_id = f"{user_id}-t{len(dialog.turn_ids)}"
            dialog.turn_ids.append(memory_id)
            dialog.texts[memory_id] = text
            memory = Memory(
                memory_id=memory_id,
                user_id=user_id,
                content=text,
                layer=layer,
                kind="dialog_turn",
                importance=importance,
                speaker=speaker,
                created_by=created_by,
                conversation_id=f"{user_id}-chat",
                session_id=session_id,
            )
            emit(MemoryWritten(memory), at)
            at += MINUTE_MS
        emit(SessionEnded(session_id, f"{user_id}-chat"), at)
        at += 2 * DAY_MS
    emit(ConsolidationRequested(), at)
    if procedural:
        emit(ConsolidationRequested(trigger="procedural"), at + MINUTE_MS)
    return dialog


def _text(turn: Turn, dialog: Dialog, number: object) -> str:
    pick = turn.pick
    if turn.kind == "repeat" and dialog.turn_ids:
        return dialog.texts[dialog.turn_ids[pick % len(dialog.turn_ids)]]
    fill = {
        "thing": THINGS[pick % len(THINGS)],
        "relation": RELATIONS[pick % len(RELATIONS)],
        "n": str(next(number)),  # type: ignore[call-overload]
    }
    if turn.kind == "question":
        return QUESTIONS[pick % len(QUESTIONS)].format(**fill)
    if turn.kind == "answer":
        return ANSWERS[pick % len(ANSWERS)]
    if turn.kind == "phatic":
        return PHATIC[pick % len(PHATIC)]
    if turn.kind == "negation":
        return NEGATIONS[pick % len(NEGATIONS)]
    first = STATEMENTS[pick % len(STATEMENTS)].format(**fill)
    if pick % 3 == 0:  # two sentences in one turn, now and then
        fill["n"] = str(next(number))  # type: ignore[call-overload]
        fill["thing"] = THINGS[(pick + 1) % len(THINGS)]
        return f"{first} {STATEMENTS[(pick + 1) % len(STATEMENTS)].format(**fill)}"
    return first


def scripted_sessions(turns: int) -> list[list[Turn]]:
    """A fixed dialog of ``turns`` turns in two sessions: statements, a question answered,
    thanks and the like, as people talk (the end-to-end scenario of issue 42)."""
    cycle = ("statement", "statement", "question", "answer", "statement", "phatic", "statement")
    planned = [Turn(cycle[i % len(cycle)], i) for i in range(turns)]
    half = turns // 2
    return [planned[:half], planned[half:]]
