"""Similarity between memories: cosine of their embeddings, computed when absent.

An event's own embedding is used when it has one; otherwise the built-in hashing embedder
computes one from the content, so similarity never depends on anything outside the engine.
"""

from __future__ import annotations

import numpy as np

from streams.engine.embedder import hashing_embedding
from streams.engine.model import Memory


def vector_of(memory: Memory, dim: int) -> np.ndarray:
    packed = (
        memory.embedding if memory.embedding is not None else hashing_embedding(memory.content, dim)
    )
    vector = np.frombuffer(packed, dtype="<f4").astype(np.float64)
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


class SimilarityIndex:
    """Unit vectors of a set of memories, computed once per cycle."""

    def __init__(self, memories: list[Memory], dim: int) -> None:
        self._vectors = {m.memory_id: vector_of(m, dim) for m in memories}

    def similarity(self, a: str, b: str) -> float:
        return round(float(np.dot(self._vectors[a], self._vectors[b])), 6)
