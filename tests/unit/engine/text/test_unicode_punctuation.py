"""Every text writer takes typographic punctuation as it takes ASCII (issue 37).

Real conversations are typed on phones and pasted from editors: curly quotes and apostrophes,
en and em dashes, an ellipsis character, no-break spaces. ``_stating_words`` once raised
``StopIteration`` on "They’ve" (its search compared a curly-apostrophe token with the
straight-apostrophe word the word lists hold), which aborted a whole session's observations
in a real conversation. Each writer is run on the same sentences in both spellings: none may
raise, and the observation writer must keep or drop a sentence alike in both."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams.engine.text.changes import states_a_change
from streams.engine.text.dates import grounded
from streams.engine.text.facts import extract_facts, fact_terms
from streams.engine.text.narrative import (
    NarrativeSource,
    write_narrative,
    write_profile,
    write_summary,
)
from streams.engine.text.observation import (
    Turn,
    content_words,
    is_phatic,
    write_digest,
    write_observations,
)
from streams.engine.text.prose import third_person

T0 = 1_683_504_000_000  # 2023-05-08 UTC
NBSP = "\u00a0"

TYPOGRAPHIC = {"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "…": "...", NBSP: " "}
"""Each typographic character and the ASCII a plain keyboard types for it."""

SENTENCES = (
    "They’ve!",
    "They’ve moved to Lisbon last week.",
    "I’m happy — we’re finally home.",
    "‘Neovim’ is what I use now…",
    "She said “I’ll call you on Friday” and didn’t.",
    "The trip ran 3–5 May, with Jon.",
    f"My sister Alice lives in Leeds{NBSP}now.",
    "Wow, Mel’s!",
    "Don’t…",
    "“Thanks!”",
    "Caroline’s dog – a beagle – is called Max.",
    f"Oh{NBSP}—{NBSP}I’ve started pottery classes.",
)


def ascii_of(text: str) -> str:
    for typographic, plain in TYPOGRAPHIC.items():
        text = text.replace(typographic, plain)
    return text


def turns_of(texts: list[str]) -> list[Turn]:
    speakers = ("Caroline", "Melanie")
    return [Turn(f"m-{i}", text, speakers[i % 2], T0 + i * 60_000) for i, text in enumerate(texts)]


def run_every_writer(texts: list[str]) -> None:
    """Each writer of ``streams.engine.text`` over ``texts``; raises what a writer raises."""
    turns = turns_of(texts)
    write_observations(turns)
    write_digest(turns)
    write_narrative(
        [
            NarrativeSource(t.memory_id, t.text, "message", ("user", "agent")[i % 2], 0.0, t.at)
            for i, t in enumerate(turns)
        ]
    )
    write_summary(texts)
    write_profile(texts)
    for text in texts:
        is_phatic(text, frozenset({"caroline", "melanie"}))
        content_words(text)
        extract_facts(text)
        fact_terms(text)
        states_a_change(text)
        grounded(text, T0)
        third_person(text, "Caroline", me="Caroline", you="Melanie")


@pytest.mark.parametrize("sentence", SENTENCES)
def test_no_writer_raises_on_typographic_punctuation(sentence: str) -> None:
    run_every_writer([sentence, "And I’ve been to Porto.", sentence])


def test_a_curly_apostrophe_alone_is_read_as_a_straight_one() -> None:
    # given the sentence of the real conversation whose observations a cycle lost
    sentence = "They’ve!"

    # when it is judged, then it is judged as its ASCII spelling, without raising
    assert is_phatic(sentence) == is_phatic(ascii_of(sentence))


@pytest.mark.parametrize("sentence", SENTENCES)
def test_observations_keep_the_same_sentences_in_either_spelling(sentence: str) -> None:
    typographic = write_observations(turns_of([sentence]))
    plain = write_observations(turns_of([ascii_of(sentence)]))

    assert len(typographic) == len(plain)


PUNCTUATION = st.sampled_from([*TYPOGRAPHIC, "'", '"', "-", ".", "!", "?", ",", " "])
WORDS = st.sampled_from(
    ["they", "ve", "I", "m", "Lisbon", "Mel", "moved", "to", "my", "sister", "Jon", "now", "s"]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.one_of(WORDS, PUNCTUATION), max_size=14), min_size=1, max_size=4))
def test_no_writer_raises_on_any_mix_of_words_and_punctuation(
    pieces: list[list[str]],
) -> None:
    texts = ["".join(piece) for piece in pieces]

    run_every_writer(texts)
