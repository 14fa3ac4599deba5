"""Recall's choice of memories that say different things (maximal marginal relevance,
``projections.diversity``): a repeat gives its place to the next thing the question needs, the
ranking's order stands where nothing repeats, and 0 is the ranking's order exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from projections.diversity import DEFAULT_DIVERSITY, diversified_order

X, Y, Z = np.eye(3)


def near(vector: np.ndarray, other: np.ndarray, weight: float = 0.1) -> np.ndarray:
    return vector + weight * other


def test_a_repeat_of_a_chosen_memory_gives_its_place_to_the_next_thing():
    """Ranked: a fact, the same fact said again, another fact. The restatement is more relevant
    than the other fact but says nothing new: the other fact takes its place in the top two."""
    order = diversified_order([0.80, 0.79, 0.70], [X, near(X, Y), Z], k=2)

    assert order == [0, 2]


def test_the_rankings_order_stands_when_nothing_repeats():
    order = diversified_order([0.9, 0.8, 0.7, 0.6], [X, Y, Z, -X], k=4)

    assert order == [0, 1, 2, 3]


def test_a_repeat_still_comes_back_after_the_others_when_k_asks_for_all():
    order = diversified_order([0.80, 0.79, 0.70], [X, near(X, Y), Z], k=3)

    assert order == [0, 2, 1]


def test_zero_diversity_is_the_rankings_order():
    order = diversified_order([0.80, 0.79, 0.70], [X, X, Z], k=3, diversity=0.0)

    assert order == [0, 1, 2]


def test_the_order_follows_the_ranking_not_the_similarities():
    """A hybrid ranking may put first a memory found by its words, less similar by meaning:
    the first place stays the ranking's."""
    order = diversified_order([0.3, 0.9, 0.8], [X, Y, Z], k=3)

    assert order == [0, 1, 2]


def test_a_memory_without_an_embedding_repeats_nothing():
    order = diversified_order([0.8, 0.79, 0.7], [X, None, near(X, Y, 0.01)], k=2)

    assert order == [0, 1]


def test_a_redundant_but_far_more_relevant_memory_keeps_its_place():
    """Diversity trades relevance against repetition; it does not forbid two alike memories
    when the second is still far more relevant than anything else."""
    order = diversified_order([0.9, 0.88, 0.2], [X, near(X, Y, 0.8), Z], k=2)

    assert order == [0, 1]


@pytest.mark.parametrize("diversity", [-0.1, 1.5, float("nan")])
def test_a_diversity_outside_0_to_1_is_refused(diversity):
    with pytest.raises(ValueError, match="between 0 and 1"):
        diversified_order([0.5], [X], k=1, diversity=diversity)


def test_one_vector_per_candidate_is_required():
    with pytest.raises(ValueError, match="one vector"):
        diversified_order([0.5, 0.4], [X], k=2)


@given(
    st.lists(
        st.tuples(
            st.floats(-1, 1),
            st.lists(st.floats(-1, 1), min_size=3, max_size=3),
        ),
        max_size=12,
    ),
    st.integers(0, 15),
    st.floats(0, 1),
)
def test_every_order_is_k_distinct_candidates_led_by_the_rankings_first(candidates, k, diversity):
    similarities = sorted((s for s, _ in candidates), reverse=True)
    vectors = [np.array(v) for _, v in candidates]

    order = diversified_order(similarities, vectors, k, diversity)

    assert len(order) == min(k, len(candidates)) == len(set(order))
    assert all(0 <= i < len(candidates) for i in order)
    if order:
        assert order[0] == 0
    assert diversified_order(similarities, vectors, k, DEFAULT_DIVERSITY) == diversified_order(
        similarities, vectors, k
    )
