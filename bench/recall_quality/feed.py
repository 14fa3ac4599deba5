"""The corpus as memstream input: one ``MemoryEvent`` per turn, sessions closed, one cycle.

Per conversation, one user id holds both speakers' turns. Each turn is a ``MemoryWritten``
of a ``Memory`` whose id is the turn id, written by the user, in the conversation and an
explicit session, at the turn's time, with the turn's MiniLM embedding (the worker records
one for every memory written without). Style ``speaker``: the content is the turn's text and
``Memory.speaker`` names who said it; style ``prefixed``: the content is ``"Name: text"`` and
no speaker, as a corpus was fed before ``speaker`` existed. Each session ends with a
``SessionEnded`` a minute after its last turn, and each conversation with one manual
``ConsolidationRequested`` a minute after that.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Literal

from bench.recall_quality.corpus import Conversation, Corpus, Turn
from streams.engine.model import (
    ConsolidationRequested,
    Memory,
    MemoryEvent,
    MemoryWritten,
    SessionEnded,
)

Style = Literal["speaker", "prefixed"]
STYLES: tuple[Style, ...] = ("speaker", "prefixed")
MINUTE_MS = 60_000
SOURCE = "bench.recall_quality"
Embed = Callable[[Sequence[str]], list[bytes]]


def prefixed(turn: Turn) -> str:
    """``"Name: text"``: the turn attributed in its own words, as a transcript shows it."""
    return f"{turn.speaker}: {turn.text}"


def content_of(turn: Turn, style: Style) -> str:
    return prefixed(turn) if style == "prefixed" else turn.text


def events_of(
    corpus: Corpus, style: Style, embeddings: dict[str, bytes] | None = None
) -> list[MemoryEvent]:
    """Every conversation's input in order. ``embeddings``: turn id → the packed embedding
    of the turn's content in this style (None: memories go in without one)."""
    events: list[MemoryEvent] = []
    for conversation in corpus.conversations:
        events.extend(_conversation_events(conversation, style, embeddings or {}))
    return events


def _conversation_events(
    conversation: Conversation, style: Style, embeddings: dict[str, bytes]
) -> list[MemoryEvent]:
    user = conversation.user_id
    ids = _EventIds(conversation.conversation_id)
    events = []
    last = 0
    for session in conversation.sessions:
        for turn in session.turns:
            memory = Memory(
                memory_id=turn.turn_id,
                user_id=user,
                content=content_of(turn, style),
                created_by="user",
                speaker=turn.speaker if style == "speaker" else None,
                conversation_id=conversation.conversation_id,
                session_id=session.session_id,
                embedding=embeddings.get(turn.turn_id),
                created_at=turn.at,
            )
            events.append(MemoryEvent(ids.next(), user, turn.at, MemoryWritten(memory), SOURCE))
        last = session.turns[-1].at + MINUTE_MS
        ended = SessionEnded(session.session_id, conversation.conversation_id)
        events.append(MemoryEvent(ids.next(), user, last, ended, SOURCE))
    request = ConsolidationRequested()
    events.append(MemoryEvent(ids.next(), user, last + MINUTE_MS, request, SOURCE))
    return events


class _EventIds:
    """Deterministic UUIDs: the same corpus gives the same event ids on every run."""

    def __init__(self, namespace: str) -> None:
        self.namespace = uuid.uuid5(uuid.NAMESPACE_URL, f"memstream-recall-quality/{namespace}")
        self.count = 0

    def next(self) -> str:
        self.count += 1
        return str(uuid.uuid5(self.namespace, str(self.count)))


def embed_all(texts: Sequence[str], embed: Embed, batch: int = 64) -> list[bytes]:
    """``texts`` embedded in batches, in order."""
    vectors: list[bytes] = []
    for start in range(0, len(texts), batch):
        vectors.extend(embed(texts[start : start + batch]))
    return vectors
