"""The answer-ceiling measure (bench/recall_quality/answer_ceiling.py): the fewest sentences
of an answer that hold half a point's key words (pure)."""

from __future__ import annotations

from bench.recall_quality.answer_ceiling import fewest_units, units
from bench.recall_quality.scoring import point_words

ANSWER = """Great choice! Here is the plan.
- Instructor: Jean-Luc Dubois, heli-skiing preparation.
- Dates: March 24th to March 30th, 2026.
I hope you enjoy the trip, it will be wonderful."""


def test_an_answer_is_cut_into_its_sentences_and_list_lines() -> None:
    assert units(ANSWER) == [
        "Great choice!",
        "Here is the plan.",
        "- Instructor: Jean-Luc Dubois, heli-skiing preparation.",
        "- Dates: March 24th to March 30th, 2026.",
        "I hope you enjoy the trip, it will be wonderful.",
    ]


def test_the_fewest_units_holding_half_the_points_words_are_chosen() -> None:
    """Given a point about the instructor and the dates, then the two list lines are kept
    (half of its words), and not the greeting or the wish."""
    words = point_words("Jean-Luc Dubois booked as instructor, March 24th to March 30th 2026.")

    chosen = fewest_units(ANSWER, words)

    assert chosen is not None and set(chosen) <= set(units(ANSWER)[2:4])


def test_a_point_the_answer_does_not_hold_has_no_units() -> None:
    assert fewest_units(ANSWER, point_words("Kenta booked a ryokan in Hakone for May")) is None
