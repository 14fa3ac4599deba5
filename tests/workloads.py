"""Deterministic workloads for end-to-end tests, and what the oracle says they should produce."""

from __future__ import annotations

import random
import uuid
from typing import Any

from projections.rows import LINK_COLUMNS, REPORT_COLUMNS, RowBatch, to_datetime
from streams.engine.model import (
    LAYERS,
    ConsolidationRequested,
    ForgetRequested,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryPinned,
    MemoryWritten,
    SessionEnded,
)
from streams.engine.oracle import OracleRun
from streams.kafka import codec

BASE_TIME = 1_790_000_000_000  # a fixed event time: tests never read the clock for it
DIM = 384


def event_id(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def embedding(rng: random.Random) -> bytes:
    return codec.pack_embedding([rng.uniform(-1, 1) for _ in range(DIM)])


def mixed_workload(count: int, users: int, seed: int = 7) -> list[MemoryEvent]:
    """Writes in every layer, updates, accesses, pins and forgets, spread over ``users``."""
    rng = random.Random(seed)
    live: dict[str, list[str]] = {f"user-{u}": [] for u in range(users)}
    events = []
    for i in range(count):
        user = f"user-{i % users}"
        memories = live[user]
        roll = rng.random()
        at = BASE_TIME + i * 1000
        if memories and roll < 0.15:
            payload: Any = MemoryAccessed(rng.choice(memories))
        elif memories and roll < 0.22:
            target = rng.choice(memories)
            payload = MemoryWritten(_memory(rng, user, target, f"updated {i}"))
        elif memories and roll < 0.25:
            payload = MemoryPinned(rng.choice(memories))
        elif memories and roll < 0.28:
            target = memories.pop(rng.randrange(len(memories)))
            payload = ForgetRequested(target, "user_request")
        else:
            memory_id = f"{user}-m{i}"
            memories.append(memory_id)
            payload = MemoryWritten(_memory(rng, user, memory_id, f"memory {i} of {user}"))
        events.append(MemoryEvent(event_id(rng), user, at, payload, source="tests"))
    return events


def cycle_heavy_workload(
    count: int, users: int, seed: int = 5, forgets: float = 0.0
) -> list[MemoryEvent]:
    """Conversations long enough that cycles fire all the time: every user writes important
    working memories into one conversation at a time (an on-write cycle every 20 messages,
    promoting the 20), reads some back, and now and then asks for a manual cycle.

    With ``forgets`` (a share of the events, issue 42), the memories are turns of named
    speakers in explicit sessions that end now and then (observations, digests, summaries
    and profiles are made of them), and that share of events forgets one of the user's
    memories, most often one already consolidated. Without, the workload is what it was for
    its seed."""
    rng = random.Random(seed)
    written: dict[str, list[str]] = {f"user-{u}": [] for u in range(users)}
    events = []
    for i in range(count):
        user = f"user-{i % users}"
        memories = written[user]
        at = BASE_TIME + i * (10_000 if forgets else 1000)  # sessions long enough to narrate
        roll = rng.random()
        payload: Any
        if roll < 0.03:
            payload = ConsolidationRequested()
        elif memories and roll < 0.08:
            payload = MemoryAccessed(rng.choice(memories))
        elif forgets and memories and roll < 0.08 + forgets:
            payload = ForgetRequested(memories.pop(rng.randrange(len(memories))), "user_request")
        elif forgets and memories and roll < 0.1 + forgets:
            payload = SessionEnded(
                _session_of(user, len(memories)), _conversation_of(user, len(memories))
            )
        else:
            memory_id = f"{user}-m{i}"
            memories.append(memory_id)
            memory = Memory(
                memory_id=memory_id,
                user_id=user,
                content=f"{user} said fact number {i}: item {rng.randrange(10**6)}",
                layer="working",
                importance=round(rng.uniform(0.72, 1.0), 3),
                conversation_id=_conversation_of(user, len(memories)),
                embedding=embedding(rng) if rng.random() < 0.3 else None,
            )
            if forgets:
                memory = memory.evolve(
                    speaker=_SPEAKERS[i % 2],
                    session_id=_session_of(user, len(memories)),
                    importance=round(memory.importance - 0.5, 3),  # left for sessions to end
                )
            payload = MemoryWritten(memory)
        events.append(MemoryEvent(event_id(rng), user, at, payload, source="tests"))
    return events


def _conversation_of(user: str, written: int) -> str:
    return f"{user}-conversation-{written // 60}"


def _session_of(user: str, written: int) -> str:
    return f"{user}-session-{written // 15}"


_SPEAKERS = ("Caroline", "Melanie", None)


def _memory(rng: random.Random, user: str, memory_id: str, content: str) -> Memory:
    """A named speaker on about two memories in three, chosen by the content rather than
    drawn from ``rng``, so that every other value of a seed's workload stays as it was."""
    return Memory(
        memory_id=memory_id,
        user_id=user,
        content=content,
        layer=rng.choice(LAYERS),
        importance=round(rng.random(), 3),
        tags=("t1",) if rng.random() < 0.5 else (),
        embedding=embedding(rng) if rng.random() < 0.5 else None,
        metadata={"i": content},
        speaker=_SPEAKERS[sum(map(ord, content)) % len(_SPEAKERS)],
    )


def expected_rows(run: OracleRun) -> dict[tuple[str, str, str], tuple[Any, ...]]:
    """What the layer tables must hold after ``run``: (layer, user, memory) -> row facts.
    Forgotten, deleted (seed 002's pruner) and working memories promoted away have no row;
    archived and superseded ones keep theirs with that status."""
    rows: dict[tuple[str, str, str], tuple[Any, ...]] = {}
    for user_id, state in run.users.items():
        for record in state.memories.values():
            memory = record.memory
            if record.forgotten or memory.status in ("promoted", "deleted"):
                continue
            key = (memory.layer, user_id, memory.memory_id)
            rows[key] = (
                record.version,
                memory.access_count,
                memory.content,
                memory.status,
                memory.pinned,
                to_datetime(memory.invalid_at),
                memory.salience,
                memory.speaker,
            )
    return rows


def _oracle_batch(run: OracleRun) -> RowBatch:
    batch = RowBatch()
    for offset, decision in enumerate(run.decisions):
        batch.add(decision, "oracle", 0, offset)
    return batch


def expected_links(run: OracleRun) -> list[tuple[Any, ...]]:
    """``memory_links`` rows (in LINK_COLUMNS order) the oracle's decisions make, sorted."""
    return sorted(set(_oracle_batch(run).links), key=repr)


def expected_reports(run: OracleRun) -> list[tuple[Any, ...]]:
    """``consolidation_reports`` rows (in REPORT_COLUMNS order) of the oracle's cycles."""
    return sorted(_oracle_batch(run).reports, key=repr)


LINK_QUERY = f"SELECT {', '.join(LINK_COLUMNS)} FROM memory_links"
REPORT_QUERY = f"SELECT {', '.join(REPORT_COLUMNS)} FROM consolidation_reports"
