"""The benchmark's events: new working-layer memories (``MemoryWritten``) spread over users.

Deterministic for a seed, so every throughput phase of a run sees byte-identical input. Each
memory carries a realistic payload: a sentence of content, tags, metadata and an embedding of
the configured dimension (random float32, generated with numpy so building 20 000 is quick).
Each user's messages fill conversations of 20, so under the default profile every 20th
message of a user starts an on-write consolidation cycle (seed 000): the worker is measured
doing its real job, not only ingesting.

The latency phase staggers the users: each is at a different point of its conversations, as
independent users are. With round-robin publishing and every user starting at message 1, all
users' cycles fall in the same round and the worker runs ~50 cycles back to back (at 500 ev/s
on 7ed923c, two runs each: p50 336 ms in step against 170-221 ms staggered). The throughput
phases keep every user in step: a staggered user's first conversation is cut short and holds
no cycle, so a short staggered workload would hold fewer cycles and flatter the worker.
"""

from __future__ import annotations

import random
import uuid

import numpy as np

from streams.engine.model import Memory, MemoryEvent, MemoryWritten
from streams.kafka import codec

BASE_TIME = 1_790_000_000_000  # fixed event time of the pre-published workload
SOURCE = "bench"
_TOPICS = ("deploys", "the billing service", "PostgreSQL tuning", "a Kafka migration", "on-call")
CONVERSATION_LENGTH = 20  # messages; the default profile's on-write cycle threshold
SESSION_LENGTH = 40


def user_name(index: int) -> str:
    return f"bench-user-{index}"


def new_memories(
    count: int,
    users: int,
    dim: int,
    seed: int = 11,
    staggered: bool = False,
    label: str = "",
    conversations: bool = True,
) -> list[Memory]:
    """``count`` distinct memories, round-robin over ``users`` users, who start at different
    points of their conversations when ``staggered``. A ``label`` names conversations and
    sessions of their own (a warm-up's), so the next workload's do not continue them.
    Without ``conversations`` no memory names one, so no on-write cycle runs: the same
    memories measure the worker's path without consolidation."""
    if count <= 0 or users <= 0:
        raise ValueError("the workload needs at least one event and one user")
    rng = random.Random(seed)
    vectors = np.random.default_rng(seed).uniform(-1.0, 1.0, (count, dim)).astype("<f4")
    label = f"{label}-" if label else ""
    memories = []
    for i in range(count):
        user = user_name(i % users)
        # The user's position in its conversations: the turn it is at, moved on by a start
        # offset spread evenly over the users when staggered.
        position = i // users
        if staggered:
            position += (i % users) * CONVERSATION_LENGTH // users
        memories.append(
            Memory(
                memory_id=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                user_id=user,
                content=f"{user} note {i}: talked about {rng.choice(_TOPICS)} with the team",
                layer="working",
                kind="note",
                tags=("bench", f"t{i % 7}"),
                importance=round(rng.random(), 3),
                confidence=round(rng.random(), 3),
                conversation_id=(
                    f"{user}-{label}conv-{position // CONVERSATION_LENGTH}"
                    if conversations
                    else None
                ),
                session_id=f"{user}-{label}session-{position // SESSION_LENGTH}",
                embedding=vectors[i].tobytes(),
                metadata={"n": str(i)},
            )
        )
    return memories


def written(memory: Memory, occurred_at: int, event_id: str) -> MemoryEvent:
    """The input event that writes ``memory`` at ``occurred_at`` (epoch ms)."""
    return MemoryEvent(event_id, memory.user_id, occurred_at, MemoryWritten(memory), SOURCE)


def written_events(
    count: int,
    users: int,
    dim: int,
    seed: int = 11,
    base_time: int = BASE_TIME,
    conversations: bool = True,
) -> list[MemoryEvent]:
    """The throughput workload: one ``MemoryWritten`` per new memory, fixed ids and times
    (``conversations``: see :func:`new_memories`)."""
    rng = random.Random(seed + 1)
    memories = new_memories(count, users, dim, seed, conversations=conversations)
    return [
        written(memory, base_time + i, str(uuid.UUID(int=rng.getrandbits(128), version=4)))
        for i, memory in enumerate(memories)
    ]


def encoded_records(events: list[MemoryEvent]) -> list[tuple[bytes, bytes]]:
    """(key, value) records of ``events``, as a service publishes them (keyed by user)."""
    registry = codec.default_registry()
    return [(e.user_id.encode(), codec.encode_event(e, registry)) for e in events]
