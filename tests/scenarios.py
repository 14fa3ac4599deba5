"""Building blocks for seed scenarios: events at chosen event times, embeddings with a chosen
similarity. Shared by the engine-level (oracle) tests and the end-to-end tests."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np

from streams import codec
from streams.engine.model import (
    ConsolidationRequested,
    Memory,
    MemoryAccessed,
    MemoryEvent,
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
