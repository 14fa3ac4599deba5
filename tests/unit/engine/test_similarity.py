"""A cycle's similarity matrix is made in one piece when every memory has its embedding; its
rows must still be bit for bit the unit vectors each memory has on its own, or the same
history could decide differently (a similarity on a threshold) depending on who else is
compared."""

from __future__ import annotations

import numpy as np
import pytest

from streams.engine import similarity
from streams.engine.model import Memory
from streams.engine.similarity import matrix_of, vector_of

DIM = 384


def embedded(n: int, seed: int = 7) -> list[Memory]:
    vectors = np.random.default_rng(seed).uniform(-1.0, 1.0, (n, DIM)).astype("<f4")
    return [Memory(f"m{i}", "u", f"note {i}", embedding=vectors[i].tobytes()) for i in range(n)]


def _no_row_by_row(memory: Memory, dim: int) -> np.ndarray:
    raise AssertionError("the matrix was built row by row")


def one_by_one(memories: list[Memory]) -> np.ndarray:
    return np.array([vector_of(m, DIM) for m in memories])


def test_rows_are_bit_for_bit_each_memory_s_own_unit_vector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memories = embedded(257)
    expected = one_by_one(memories)

    with monkeypatch.context() as patched:  # the matrix is made in one piece, not per row
        patched.setattr(similarity, "vector_of", _no_row_by_row)
        matrix = matrix_of(memories, DIM)

    assert matrix.dtype == np.float64
    assert matrix.shape == (257, DIM)
    assert np.array_equal(matrix, expected)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0)


def test_a_zero_embedding_stays_zero_rather_than_dividing_by_zero() -> None:
    memories = [*embedded(3), Memory("zero", "u", "nothing", embedding=bytes(4 * DIM))]

    matrix = matrix_of(memories, DIM)

    assert not matrix[3].any()
    assert np.array_equal(matrix, one_by_one(memories))


def test_memories_without_an_embedding_get_the_computed_vector_in_their_row() -> None:
    memories = [*embedded(4), Memory("plain", "u", "She keeps her notes in Obsidian.")]

    matrix = matrix_of(memories, DIM)

    assert np.array_equal(matrix, one_by_one(memories))
    assert np.array_equal(matrix[4], vector_of(memories[4], DIM))


def test_the_matrix_is_the_caller_s_to_change() -> None:
    memories = embedded(2)
    first = matrix_of(memories, DIM)
    first[:] = 0.0

    assert np.array_equal(matrix_of(memories, DIM), one_by_one(memories))


def test_an_embedding_of_the_wrong_size_is_refused_as_row_by_row_refuses_it() -> None:
    """Two wrong sizes that add up to the right total must not be read as two rows."""
    short = np.ones(DIM - 1, dtype="<f4").tobytes()
    long = np.ones(DIM + 1, dtype="<f4").tobytes()
    memories = [Memory("a", "u", "a", embedding=short), Memory("b", "u", "b", embedding=long)]

    with pytest.raises(ValueError):
        matrix_of(memories, DIM)


def test_new_rows_taken_from_the_candidates_matrix_give_the_same_similarities() -> None:
    """The rules pass where each new memory sits among the candidates, so its row is taken
    from the candidates' matrix instead of built again: the products must not change, for
    a mix of memories with and without an embedding too."""
    memories = embedded(40) + [Memory("plain", "u", "a note without an embedding")]
    at = [3, 17, 40, 39]
    new = [memories[i] for i in at]
    built = list(similarity.similarity_rows(new, memories, DIM))
    taken = list(similarity.similarity_rows(new, memories, DIM, at))
    given = list(similarity.similarity_rows(new, memories, DIM, at, matrix_of(memories, DIM)))
    assert [(p, m) for p, m, _ in built] == [(p, m) for p, m, _ in taken]
    for (_, _, a), (_, _, b), (_, _, c) in zip(built, taken, given, strict=True):
        assert np.array_equal(a, b) and np.array_equal(a, c)
