"""What every embedder offers, so the pipeline can swap the model without touching callers.

An embedder turns texts into the contract's embedding form (packed little-endian float32,
``dim`` values, L2-normalised; see ``streams.kafka.codec.pack_embedding``) so its output can go
straight into ``Memory.embedding`` and a ``vector(N)`` column, and cosine similarity is a
plain dot product.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


class EmbedderUnavailable(RuntimeError):
    """An embedder cannot run here (a package or file is missing); the message says what to
    install. Never raised for a network problem: no embedder reaches for the network."""


@runtime_checkable
class Embedder(Protocol):
    """Texts in, one packed float32 vector of ``dim`` values per text out, in order."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[bytes]: ...
