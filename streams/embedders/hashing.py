"""The built-in hashing embedder behind the :class:`~streams.embedders.base.Embedder`
interface, so callers can choose it or the model by name.

It needs no model, no package and no I/O, and is what the engine falls back to when an
event carries no embedding (``streams/engine/embedder.py``); this adapter adds nothing to
it, so vectors from either path are byte-identical.
"""

from __future__ import annotations

from collections.abc import Sequence

from streams.engine.embedder import hashing_embedding


class HashingEmbedder:
    """Deterministic feature hashing of words and word bigrams into ``dim`` buckets."""

    name = "hashing"

    def __init__(self, dim: int = 384) -> None:
        if dim < 1:
            raise ValueError(f"the embedding dimension must be at least 1, got {dim}")
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """Packed little-endian float32 vectors (the contract's embedding form), in order."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one str: wrap it in a list")
        return [hashing_embedding(text, self._dim) for text in texts]
