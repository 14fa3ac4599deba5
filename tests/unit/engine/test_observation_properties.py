"""The observation writer on any session of turns: it never fails, and what it writes is
well formed (property tests; the writer runs inside the worker's batch, where one odd turn
must not stop the others)."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from streams.engine.text.observation import Turn, write_observations

MAY_8 = int(datetime(2023, 5, 8, 14, 0, tzinfo=UTC).timestamp() * 1000)

# Words that steer the writer's rules: questions, answers, pronouns that refer back, dates,
# words of address, set phrases, names of the participants and of others.
_WORDS = (
    *("yes", "no", "yeah", "nope", "maybe", "probably", "for sure", "i don't think so", "did"),
    *("you", "it", "she", "he", "they", "that", "this", "there", "what", "which", "where"),
    *("when", "since when", "how much", "how's it going", "anything", "or", "any", "kinda"),
    *("jobs", "my sister", "lived in Tokyo", "loved the food", "dude", "bro", "time flies"),
    *("last friday", "on the 15th", "in the spring", "the week before last", "12 shows in"),
    *("3 weeks", "moved to Boston", "Ana", "Ben", "Cleo", "Mel", "Oscar", "my guinea pig"),
    *("$180 for 6 weeks", "hey", "thanks", "lol", "haha", "omg", "I", "we", "got", "went"),
)
_MARKS = ("", ".", "!", "?", "??", ",", "!!!", "\n")
# Whole sentences of the shapes the rules look for: news, questions that name nothing or
# refer back, follow-ups, answers that refer back, fragments, yes and no.
_SENTENCES = (
    *("My sister lived in Tokyo for two years.", "I moved to Boston last month."),
    *("Did she like it?", "She loved it, she still talks about the food.", "Since when?"),
    *("Since June!", "How much is it?", "What kinda jobs are you thinking of?", "Love it!"),
    *("Anything that stands out?", "Yeah, sunflowers were my mom's favorite.", "For sure!"),
    *("I don't think so, he has work.", "Dude.", "Time flies.", "How's it going?"),
    *("Which hospital?", "St. Mary's.", "Does it mean something?", "It was great."),
)


@st.composite
def _texts(draw: st.DrawFn) -> str:
    sentences = []
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        if draw(st.booleans()):
            sentences.append(draw(st.sampled_from(_SENTENCES)))
            continue
        pieces = draw(
            st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_MARKS)), max_size=10)
        )
        sentences.append(" ".join(word + mark for word, mark in pieces))
    text = " ".join(sentences)
    return draw(st.sampled_from((text, text.capitalize(), text.upper())))


@st.composite
def _sessions(draw: st.DrawFn) -> list[Turn]:
    speakers = draw(st.sampled_from((("Ana", "Ben"), ("Ana", "Ben", "Cleo"), ("Mel", "the agent"))))
    count = draw(st.integers(min_value=0, max_value=8))
    turns = []
    for i in range(count):
        speaker = draw(st.sampled_from(speakers))
        turns.append(
            Turn(f"t{i}", draw(_texts()), speaker, MAY_8 + i * 60_000, speaker == "the agent")
        )
    return turns


@settings(max_examples=400, deadline=None)
@given(turns=_sessions(), max_chars=st.sampled_from((120, 400, 1000)))
def test_any_session_gives_well_formed_observations(turns: list[Turn], max_chars: int) -> None:
    """Each observation fits ``max_chars`` and names turns of the session as its sources,
    each once, in time order (the turn it states last), and is said by a participant."""
    observations = write_observations(turns, max_chars)
    ids = [turn.memory_id for turn in turns]
    speakers = {turn.speaker for turn in turns}
    for observation in observations:
        assert 0 < len(observation.content) <= max_chars
        assert observation.source_ids
        assert set(observation.source_ids) <= set(ids)
        positions = [ids.index(source) for source in observation.source_ids]
        assert positions == sorted(set(positions))  # once each, in time order
        assert observation.speaker in speakers
