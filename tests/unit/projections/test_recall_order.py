"""Recall's order among a ranking's candidates (``projections.recall_order``): a stated change
comes before the older statement it is alike to; a repeat gives its place to the next thing the
question needs (maximal marginal relevance); where neither applies the ranking's order stands."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from projections.recall_order import DEFAULT_DIVERSITY, Candidate, recall_order

X, Y, Z = np.eye(3)


def near(vector: np.ndarray, other: np.ndarray, weight: float = 0.1) -> np.ndarray:
    return vector + weight * other


def candidates(*pairs: tuple[float, np.ndarray | None]) -> list[Candidate]:
    """Candidates said by nobody in particular, none stating a change."""
    return [Candidate(s, v, None, 0.0, False) for s, v in pairs]


# --- diversity: a repeat gives its place ------------------------------------------------------


def test_a_repeat_of_a_chosen_memory_gives_its_place_to_the_next_thing():
    """Ranked: a fact, the same fact said again, another fact. The restatement is more relevant
    than the other fact but says nothing new: the other fact takes its place in the top two."""
    order = recall_order(candidates((0.80, X), (0.79, near(X, Y)), (0.70, Z)), k=2)

    assert order == [0, 2]


def test_the_rankings_order_stands_when_nothing_repeats():
    order = recall_order(candidates((0.9, X), (0.8, Y), (0.7, Z), (0.6, -X)), k=4)

    assert order == [0, 1, 2, 3]


def test_a_repeat_still_comes_back_after_the_others_when_k_asks_for_all():
    order = recall_order(candidates((0.80, X), (0.79, near(X, Y)), (0.70, Z)), k=3)

    assert order == [0, 2, 1]


def test_zero_diversity_keeps_repeats_in_the_rankings_order():
    order = recall_order(candidates((0.80, X), (0.79, X), (0.70, Z)), k=3, diversity=0.0)

    assert order == [0, 1, 2]


def test_the_order_follows_the_ranking_not_the_similarities():
    """A hybrid ranking may put first a memory found by its words, less similar by meaning:
    the first place stays the ranking's."""
    order = recall_order(candidates((0.3, X), (0.9, Y), (0.8, Z)), k=3)

    assert order == [0, 1, 2]


def test_a_memory_without_an_embedding_repeats_nothing():
    order = recall_order(candidates((0.8, X), (0.79, None), (0.7, near(X, Y, 0.01))), k=2)

    assert order == [0, 1]


def test_a_redundant_but_far_more_relevant_memory_keeps_its_place():
    """Diversity trades relevance against repetition; it does not forbid two alike memories
    when the second is still far more relevant than anything else."""
    order = recall_order(candidates((0.9, X), (0.88, near(X, Y, 0.8)), (0.2, Z)), k=2)

    assert order == [0, 1]


# --- a stated change comes before what it changes ---------------------------------------------

STANDUP = near(X, Y, 0.5)  # "we have standup at 10:30 sharp"
MOVED = near(X, Z, 0.6)  # "standup moved to 9:15": alike to it (cosine 0.77)


def said(similarity, vector, speaker="Priya", at=0.0, change=False) -> Candidate:
    return Candidate(similarity, vector, speaker, at, change)


@pytest.mark.parametrize("diversity", [0.0, DEFAULT_DIVERSITY])
def test_a_newer_stated_change_of_the_same_speaker_comes_before_what_it_changes(diversity):
    stale = said(0.8, STANDUP, at=1.0)
    correction = said(0.77, MOVED, at=2.0, change=True)
    other = said(0.78, Y, at=3.0)

    order = recall_order([stale, other, correction], k=3, diversity=diversity)

    assert order.index(2) < order.index(0)
    assert order[0] == 2


def test_with_diversity_the_changed_statement_falls_behind_the_next_thing():
    """Once the change is chosen, the statement it changes repeats it: the next relevant
    memory comes before it."""
    stale = said(0.8, STANDUP, at=1.0)
    correction = said(0.77, MOVED, at=2.0, change=True)
    other = said(0.78, Y, at=3.0)

    assert recall_order([stale, other, correction], k=3) == [2, 1, 0]


@pytest.mark.parametrize(
    ("why", "speaker", "correction"),
    [
        ("another speaker's", "Priya", said(0.77, MOVED, speaker="Ana", at=2.0, change=True)),
        ("said before it", "Priya", said(0.77, MOVED, at=0.5, change=True)),
        ("stating no change", "Priya", said(0.77, MOVED, at=2.0, change=False)),
        ("not alike to it", "Priya", said(0.77, Z, at=2.0, change=True)),
        ("far less relevant", "Priya", said(0.7, MOVED, at=2.0, change=True)),
        ("said by nobody named", None, said(0.77, MOVED, speaker=None, at=2.0, change=True)),
    ],
)
def test_a_statement_moves_ahead_only_as_a_newer_change_of_the_same_speaker(
    why, speaker, correction
):
    stale = said(0.8, STANDUP, speaker=speaker, at=1.0)

    assert recall_order([stale, correction], k=2, diversity=0.0) == [0, 1], why


def test_several_changes_of_one_statement_come_newest_first():
    stale = said(0.9, STANDUP, at=1.0)
    first = said(0.88, MOVED, at=2.0, change=True)
    second = said(0.86, near(MOVED, Y, 0.05), at=3.0, change=True)

    assert recall_order([stale, first, second], k=3, diversity=0.0) == [2, 1, 0]


# --- bad arguments and invariants --------------------------------------------------------------


@pytest.mark.parametrize("diversity", [-0.1, 1.5, float("nan")])
def test_a_diversity_outside_0_to_1_is_refused(diversity):
    with pytest.raises(ValueError, match="between 0 and 1"):
        recall_order(candidates((0.5, X)), k=1, diversity=diversity)


@given(
    st.lists(
        st.tuples(
            st.floats(-1, 1),
            st.lists(st.floats(-1, 1), min_size=3, max_size=3),
            st.sampled_from([None, "Ana", "Priya"]),
            st.integers(0, 5),
            st.booleans(),
        ),
        max_size=12,
    ),
    st.integers(0, 15),
    st.floats(0, 1),
)
def test_every_order_is_k_distinct_candidates(rows, k, diversity):
    similarities = sorted((row[0] for row in rows), reverse=True)
    found = [
        Candidate(similarity, np.array(vector), speaker, float(at), change)
        for similarity, (_, vector, speaker, at, change) in zip(similarities, rows, strict=True)
    ]

    order = recall_order(found, k, diversity)

    assert len(order) == min(k, len(found)) == len(set(order))
    assert all(0 <= i < len(found) for i in order)
    if order and not any(c.states_change for c in found):
        assert order[0] == 0  # nothing moves ahead of the ranking's first but a change
