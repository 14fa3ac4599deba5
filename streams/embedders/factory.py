"""Choosing an embedder by name, the way a setting or a command-line flag names it.

The model is expensive to load, so every ``embedder_for("minilm")`` of a process shares one
instance (and so one loaded model per thread count).
"""

from __future__ import annotations

from functools import cache

from streams.embedders.base import Embedder
from streams.embedders.hashing import HashingEmbedder
from streams.embedders.minilm import DIM as MINILM_DIM
from streams.embedders.minilm import MiniLMEmbedder

EMBEDDERS = ("minilm", "hashing")


def embedder_for(name: str, dim: int = 384, *, threads: int = 1) -> Embedder:
    """The embedder called ``name`` (``"minilm"`` or ``"hashing"``) producing ``dim`` values.

    ``minilm`` only produces 384 values: another ``dim`` is refused here, before a single
    vector of the wrong size can reach a ``vector(N)`` column. ``threads`` is minilm's
    onnxruntime thread count (the hashing embedder has no use for it)."""
    key = name.strip().lower()
    if key == "hashing":
        return HashingEmbedder(dim)
    if key == "minilm":
        if dim != MINILM_DIM:
            raise ValueError(
                f"the minilm embedder produces {MINILM_DIM} values, not {dim}: set "
                f"MEMSTREAM_EMBEDDING_DIM={MINILM_DIM}, or choose the 'hashing' embedder, "
                f"which produces any dimension"
            )
        return _shared_minilm(threads)
    raise ValueError(f"unknown embedder {name!r}: choose one of {', '.join(EMBEDDERS)}")


@cache
def _shared_minilm(threads: int) -> MiniLMEmbedder:
    return MiniLMEmbedder(threads=threads)
