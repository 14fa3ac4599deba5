"""MiniLM embeddings of the corpus's texts, kept on disk between runs.

Embedding ~6,000 texts is most of a run's time on two cores, and the vectors depend only on
the text and the model file (the embedder is deterministic byte for byte), so they are kept
in ``<cache dir>/recall_quality/minilm-<model digest>.npz`` keyed by the text's SHA-256. A
text not yet there is embedded in batches and added. ``--no-cache`` embeds everything anew.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.recall_quality.feed import Embed, embed_all
from streams.embedders.minilm import MODEL_SHA256

DIM = 384


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.vectors: dict[str, bytes] = {}
        self.added = 0
        if path is not None and path.is_file():
            try:
                with np.load(path) as stored:
                    keys, matrix = stored["keys"], stored["vectors"]
                self.vectors = {
                    str(k): matrix[i].astype("<f4").tobytes() for i, k in enumerate(keys)
                }
            except (OSError, KeyError, ValueError):
                self.vectors = {}  # unreadable: embed anew and overwrite it

    @classmethod
    def default(cls, cache_dir: Path) -> EmbeddingCache:
        return cls(cache_dir / "recall_quality" / f"minilm-{MODEL_SHA256[:16]}.npz")

    def embed(self, texts: Sequence[str], embed: Embed) -> list[bytes]:
        """Each text's vector, in order: from the cache, or embedded now."""
        keys = [_key(t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self.vectors))
        if missing:
            text_of = dict(zip(keys, texts, strict=True))
            for key, vector in zip(
                missing, embed_all([text_of[k] for k in missing], embed), strict=True
            ):
                self.vectors[key] = vector
            self.added += len(missing)
        return [self.vectors[k] for k in keys]

    def missing(self, texts: Sequence[str]) -> int:
        return len({_key(t) for t in texts} - self.vectors.keys())

    def save(self) -> None:
        if self.path is None or not self.added:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self.vectors)
        matrix = np.vstack([np.frombuffer(self.vectors[k], dtype="<f4") for k in keys])
        partial = self.path.with_suffix(f".{os.getpid()}.tmp.npz")
        np.savez(partial, keys=np.array(keys), vectors=matrix)
        partial.replace(self.path)
