"""Similarity between memories: cosine of their embeddings, computed when absent.

An event's own embedding is used when it has one; otherwise the built-in hashing embedder
computes one from the content, so similarity never depends on anything outside the engine.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence

import numpy as np

from streams.engine.embedder import hashing_embedding
from streams.engine.memo import by_identity
from streams.engine.model import Memory

FLOAT32_BYTES = 4  # a packed embedding is little-endian float32


def vector_of(memory: Memory, dim: int) -> np.ndarray:
    """The memory's unit vector: its own embedding, or the hashing embedder's of its content."""
    if memory.embedding is None:
        return _hashed_unit_vector(memory.content, dim)
    return _unit_of_embedding(memory.embedding)


def matrix_of(memories: Sequence[Memory], dim: int) -> np.ndarray:
    """Unit vectors of ``memories`` as the rows of one matrix (``len × dim``), so a cycle
    compares many memories with one product instead of a Python loop over pairs.

    When every memory has its embedding (the common case: the worker records one for each),
    the matrix is made in one piece: the packed embeddings joined, widened to float64 and
    each row divided by its norm. The norms are one ``vecdot`` of the matrix with itself:
    the same dot product per row that :func:`vector_of` takes (``np.linalg.norm``), so the
    rows are bit for bit its vectors (and IEEE division per element whichever way it is
    done). They used to be memoised per embedding; with more live memories on a worker than
    the memo held, every cycle recomputed them one by one, and the memo's evictions grew
    slower as it churned: a sixth of the engine's time at 800 inputs per user
    (``python -m bench.engine_growth``)."""
    if not memories:
        return np.zeros((0, dim))
    size = dim * FLOAT32_BYTES
    embeddings = [m.embedding for m in memories]
    if None in embeddings or set(map(len, embeddings)) != {size}:  # type: ignore[arg-type]
        # some vectors are computed from the content (or an embedding is malformed, which
        # this path reports as before): row by row (np.array, not np.stack: the same
        # matrix without stack's per-row reshaping)
        return np.array([vector_of(m, dim) for m in memories])
    packed = b"".join(embeddings)  # type: ignore[arg-type]
    matrix = np.frombuffer(packed, dtype="<f4").reshape(len(memories), dim).astype(np.float64)
    norms = np.sqrt(np.vecdot(matrix, matrix))
    matrix /= np.where(norms == 0.0, 1.0, norms)[:, None]
    return matrix


@functools.lru_cache(maxsize=65536)
def _hashed_unit_vector(content: str, dim: int) -> np.ndarray:
    """Memoised: the hashing embedder is pure, and a cycle compares the same old memories
    again and again. The array is read-only so a caller cannot change the cached value."""
    vector = _unit(hashing_embedding(content, dim))
    vector.setflags(write=False)
    return vector


@by_identity(maxsize=8192)
def _unit_of_embedding(packed: bytes) -> np.ndarray:
    """Memoised by identity: a memory's embedding is one bytes object for as long as the
    state holds the memory, and every cycle compares it again. Read-only, like the above.
    Bounded low (≈ 4.5 KB an entry): the memo holds the bytes, and a worker's memory is
    meant to be bounded by its hot users, not by what it has seen."""
    vector = _unit(packed)
    vector.setflags(write=False)
    return vector


def _norm(vector: np.ndarray) -> float:
    return float(np.linalg.norm(vector))


def _unit(packed: bytes) -> np.ndarray:
    vector = np.frombuffer(packed, dtype="<f4").astype(np.float64)
    norm = _norm(vector)
    return vector / norm if norm else vector


def row_totals(memories: Sequence[Memory], dim: int) -> np.ndarray:
    """For each of ``memories``, the sum of its similarities to the others (each rounded to
    6 decimals, as the ledger records one): products a chunk of rows at a time, never a
    Python loop over the pairs (which took a cycle over 800 alike facts 2.2 s: 1.3 million
    calls), nor a whole ``n × n`` matrix (800 MB for a week of 10,000 alike facts)."""
    vectors = matrix_of(memories, dim)
    totals = np.zeros(len(memories))
    for start in range(0, len(memories), ROWS_PER_PRODUCT):
        chunk = np.round(vectors[start : start + ROWS_PER_PRODUCT] @ vectors.T, 6)
        totals[start : start + len(chunk)] = chunk.sum(axis=1) - np.diag(chunk, k=start)
    return totals


def mean_embedding(memories: Sequence[Memory], dim: int) -> bytes:
    """The packed unit mean of ``memories`` ' vectors: how a memory made of others (a session's
    narrative) is placed among them."""
    mean = matrix_of(memories, dim).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm if norm else mean).astype("<f4").tobytes()


ROWS_PER_PRODUCT = 1024  # bounds a product's memory: 1024 × 100k memories × 8 B = 0.8 GB


def similarity_rows(
    new: Sequence[Memory],
    candidates: Sequence[Memory],
    dim: int,
    at: Sequence[int] | None = None,
    others: np.ndarray | None = None,
) -> Iterator[tuple[int, Memory, np.ndarray]]:
    """(position, memory, its similarity to every candidate) for each of ``new``: one matrix
    product per chunk of new memories, never a Python loop over pairs.

    ``at``: where each of ``new`` is among ``candidates`` (the rules compare what is new
    with everything, new included), so its row is taken from the candidates' matrix rather
    than built again; ``others``: that matrix, when the caller built it. Either way the
    rows are bit for bit :func:`matrix_of`'s."""
    if others is None:
        others = matrix_of(candidates, dim)
    for start in range(0, len(new), ROWS_PER_PRODUCT):
        chunk = new[start : start + ROWS_PER_PRODUCT]
        if at is None:
            rows = matrix_of(chunk, dim)
        else:
            rows = others[list(at[start : start + ROWS_PER_PRODUCT])]
        products = rows @ others.T
        for offset, memory in enumerate(chunk):
            yield start + offset, memory, products[offset]
