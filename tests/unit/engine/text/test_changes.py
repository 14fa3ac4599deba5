"""Which statements say something changed (``streams.engine.text.changes``): the cue the
contradictions rule and recall's order read."""

from __future__ import annotations

import pytest

from streams.engine.text.changes import states_a_change


@pytest.mark.parametrize(
    "text",
    [
        "standup moved to 9:15",
        "Kai took over as team lead",
        "we're in Lisbon now",
        "the launch slipped to May 2nd",
        "Correction: the budget is 40k",
        "I don't drink coffee anymore",
        "Samuel is a paramedic these days",
        "we switched CI to Buildkite",
    ],
)
def test_a_change_stated_in_words_is_read(text):
    assert states_a_change(text)


@pytest.mark.parametrize(
    "text",
    [
        "we have standup at 10:30 sharp",
        "there is nowhere to park",  # "now" inside a word
        "Felix is leading our team",
        "I know the way",
    ],
)
def test_a_statement_without_such_words_is_not(text):
    assert not states_a_change(text)
