"""Building blocks for seed scenarios: events at chosen event times, embeddings with a chosen
similarity. Shared by the engine-level (oracle) tests and the end-to-end tests."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np

from streams import codec
from streams.engine.model import (
    ConsolidationRequested,
    ForgetRequested,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryPinned,
    MemoryWritten,
)

NOW = 1_795_000_000_000  # event time of the scenarios (2026-11-17)
MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR
DIM = 384


class Scenario:
    """Events for one user, with deterministic ids."""

    def __init__(self, user_id: str, namespace: str = "scenario") -> None:
        self.user_id = user_id
        self.events: list[MemoryEvent] = []
        self._ns = uuid.uuid5(uuid.NAMESPACE_URL, f"{namespace}/{user_id}")

    def _id(self) -> str:
        return str(uuid.uuid5(self._ns, str(len(self.events))))

    def write(self, memory_id: str, content: str, *, at: int = NOW, **fields: Any) -> Memory:
        for name in ("tags", "trigger_conditions"):
            if name in fields:
                fields[name] = tuple(fields[name])
        memory = Memory(memory_id=memory_id, user_id=self.user_id, content=content, **fields)
        self.events.append(MemoryEvent(self._id(), self.user_id, at, MemoryWritten(memory)))
        return memory

    def access(self, memory_id: str, *, at: int = NOW) -> None:
        self.events.append(MemoryEvent(self._id(), self.user_id, at, MemoryAccessed(memory_id)))

    def forget(self, memory_id: str, *, at: int = NOW) -> None:
        payload = ForgetRequested(memory_id)
        self.events.append(MemoryEvent(self._id(), self.user_id, at, payload))

    def pin(self, memory_id: str, *, at: int = NOW) -> None:
        self.events.append(MemoryEvent(self._id(), self.user_id, at, MemoryPinned(memory_id)))

    def consolidate(self, *, at: int = NOW, **options: Any) -> str:
        event_id = self._id()
        payload = ConsolidationRequested(**options)
        self.events.append(MemoryEvent(event_id, self.user_id, at, payload))
        return event_id


def unit(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)


def random_unit(seed: int) -> np.ndarray:
    return unit(np.random.default_rng(seed).standard_normal(DIM))


def with_similarity(base: np.ndarray, cosine: float, seed: int) -> bytes:
    """A packed embedding whose cosine with ``base`` is exactly ``cosine``."""
    noise = np.random.default_rng(seed).standard_normal(DIM)
    noise = unit(noise - np.dot(noise, base) * base)  # orthogonal to base
    vector = cosine * base + np.sqrt(1 - cosine**2) * noise
    return codec.pack_embedding(vector)


def cluster(base: np.ndarray, count: int, pairwise: float, seed: int) -> list[bytes]:
    """``count`` embeddings whose pairwise cosine is about ``pairwise`` (each has cosine
    sqrt(pairwise) with ``base``, and their noises are nearly orthogonal in 384 dims)."""
    return [with_similarity(base, float(np.sqrt(pairwise)), seed + i) for i in range(count)]


# --- seed 001's Gherkin scenarios, shared by the oracle and the end-to-end tests -------------


def episodes_of_testing_before_commits(user: str) -> Scenario:
    """Given 10 episodic memories about testing before commits (pairwise similarity ~0.9;
    the first is the most central)."""
    s = Scenario(user)
    base = random_unit(5)
    vectors = cluster(base, 10, pairwise=0.9, seed=50)
    s.write(
        "e0",
        "User runs tests before committing",
        layer="episodic",
        kind="workflow",
        embedding=with_similarity(base, 0.99, seed=49),
        at=NOW - DAY,
    )
    for i in range(1, 10):
        s.write(
            f"e{i}",
            f"Ran the test suite before commit #{i}",
            layer="episodic",
            kind="workflow",
            embedding=vectors[i],
            at=NOW - DAY + i,
        )
    s.consolidate()
    return s


DATABASE_TOPIC = random_unit(6)


def postgres_then_mysql(user: str) -> Scenario:
    """Given "Project uses PostgreSQL" (older) and "Project uses MySQL" (newer), similar
    (0.85) but not duplicates."""
    s = Scenario(user)
    s.write(
        "pg",
        "Project uses PostgreSQL",
        layer="semantic",
        embedding=with_similarity(DATABASE_TOPIC, 1.0, 1),
        at=NOW - 2 * DAY,
    )
    s.write(
        "my",
        "Project uses MySQL",
        layer="semantic",
        embedding=with_similarity(DATABASE_TOPIC, 0.85, 2),
        at=NOW - DAY,
    )
    s.consolidate()
    return s


API_TOPIC = random_unit(7)


def rest_duplicates(user: str, request_cycle: bool = True) -> Scenario:
    """Given "API uses REST" and "The API is RESTful" with similarity 0.97 (> 0.95)."""
    s = Scenario(user)
    s.write(
        "a",
        "API uses REST",
        layer="semantic",
        tags=["api"],
        importance=0.9,
        embedding=with_similarity(API_TOPIC, 1.0, 3),
    )
    s.write(
        "b",
        "The API is RESTful",
        layer="semantic",
        tags=["style"],
        importance=0.4,
        embedding=with_similarity(API_TOPIC, 0.97, 4),
    )
    if request_cycle:
        s.consolidate()
    return s


def stale_memory(user: str, request_cycle: bool = True) -> Scenario:
    """Given a memory of salience 0.05 last accessed 30 days ago, and a fresh one."""
    s = Scenario(user)
    s.write(
        "stale",
        "Old trivia",
        layer="semantic",
        importance=0.05,
        created_at=NOW - 31 * DAY,
        last_accessed=NOW - 30 * DAY,
        at=NOW - 30 * DAY,
    )
    s.write("fresh", "Current project", layer="semantic", importance=0.8, at=NOW)
    if request_cycle:
        s.consolidate()
    return s
