"""The built-in embedder: deterministic feature hashing, no model, no I/O.

Tokens and token bigrams are hashed (blake2b, stable across processes, unlike ``hash``) into
``dim`` signed buckets and L2-normalised, so texts sharing words have high cosine similarity.
It is the default when an event carries no embedding; a real sentence-embedding model can be
plugged in as an extra.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
from array import array

_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def hashing_embedding(text: str, dim: int = 384) -> bytes:
    """Packed little-endian float32 (the contract's embedding form) of ``text``."""
    vector = [0.0] * dim
    words = tokens(text)
    features = words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
    for feature in features:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dim
        sign = 1.0 if digest[4] & 1 else -1.0
        vector[bucket] += sign
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    packed = array("f", (v / norm for v in vector))
    if packed.itemsize != 4:  # pragma: no cover - every CPython platform has 4-byte floats
        raise RuntimeError("float32 arrays are required")
    if sys.byteorder != "little":  # pragma: no cover
        packed.byteswap()
    return packed.tobytes()
