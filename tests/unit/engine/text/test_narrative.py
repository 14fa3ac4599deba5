"""The built-in consolidation writers (``streams.engine.text.narrative``): session → narrative
(seed 002), narratives → semantic summary and memories → behavioural profile (seed 004).

The hard rule is tested as a property on random input: no writer loses a fact term."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams.engine.model import MemoryWritten
from streams.engine.text.budget import largest_fitting
from streams.engine.text.facts import fact_terms, missing_terms
from streams.engine.text.narrative import (
    Narrative,
    NarrativeSource,
    Speaker,
    profile_cues,
    write_narrative,
    write_profile,
    write_summary,
)
from streams.engine.text.observation import digest_header
from streams.engine.text.profile import SupersessionMemo
from tests.conversations import AGENT_FILLER, USER_FILLER, long_conversations

REPO = Path(__file__).resolve().parents[4]
INACTIVITY_MS = 30 * 60 * 1000


def turn(
    content: str,
    speaker: Speaker = "user",
    at: int = 0,
    kind: str = "message",
    valence: float = 0.0,
) -> NarrativeSource:
    return NarrativeSource(f"m-{at}", content, kind, speaker, valence, at)


def session(*contents: str, start: int = 0) -> list[NarrativeSource]:
    """Turns alternating user / agent, one minute apart."""
    return [
        turn(content, "user" if i % 2 == 0 else "agent", start + i * 60_000)
        for i, content in enumerate(contents)
    ]


def workload_sessions(users: int, sessions_per_user: int, seed: int) -> list[list[NarrativeSource]]:
    """The generator's chats cut into sessions by 30 minutes of inactivity, as the engine does."""
    by_user: dict[str, list[NarrativeSource]] = defaultdict(list)
    for event in long_conversations(users, sessions_per_user, seed).events:
        assert isinstance(event.payload, MemoryWritten)
        m = event.payload.memory
        by_user[m.user_id].append(
            NarrativeSource(
                m.memory_id, m.content, m.kind, m.created_by, m.valence, event.occurred_at
            )
        )
    sessions: list[list[NarrativeSource]] = []
    for turns in by_user.values():
        current = [turns[0]]
        for before, after in zip(turns, turns[1:], strict=False):
            if after.at - before.at > INACTIVITY_MS:
                sessions.append(current)
                current = []
            current.append(after)
        sessions.append(current)
    return sessions


# --- strategies: random sessions ---------------------------------------------------------------

FRAGMENTS = (
    "Alice",
    "New York",
    "$1,200",
    "12%",
    "3pm",
    "3 p.m.",
    "10:30",
    "March 14",
    "14 March 2026",
    "the 5th of June",
    "2026-03-04",
    "alice@example.com",
    "+1 (555) 123-4567",
    "https://x.example.com/a",
    "5 km",
    "3 kids",
    "AWS",
    "Monday",
    "iPhone",
    "Alice's",
    "-0.30",
    "€30",
    "ok",
    "thanks",
    "the",
    "and",
    "lives in",
    "is on",
    "my sister",
    "I",
    "we",
    "you",
    "my",
    "don't",
    "I'm",
    "Where",
    "User:",
    "Agent:",
    "Session of 3 turns:",
    "Unresolved:",
    "Emotional arc:",
    "Open items:",
    "The user said",
    " | ",
    "TODO",
    "need to",
    "will check",
    "remind me",
    "let me check",
    "km",
    "%",
    "@",
    "-",
)
SEPARATORS = ("", " ", " ", " ", ", ", ". ", "? ", "! ", "; ", "\n", ",", ".", ":", "\t")
texts = st.lists(
    st.tuples(
        st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=5)), st.sampled_from(SEPARATORS)
    ),
    max_size=12,
).map(lambda pairs: "".join(a + b for a, b in pairs))
sources = st.builds(
    NarrativeSource,
    memory_id=st.text(max_size=3),
    content=texts,
    kind=st.sampled_from(["message", "occurrence", "task_execution", "note"]),
    speaker=st.sampled_from(["user", "agent", "system"]),
    valence=st.floats(-1.0, 1.0, allow_nan=False),
    at=st.integers(0, 10**13),
)
FACTS = (
    "My sister Alice lives in Lisbon.",
    "Our budget for the Atlas offsite is 12000 euros.",
    "The launch is on March 14.",
    "I switched to Neovim last week.",
    "Bob's number is +1 (555) 201-3344.",
    "The design doc is at https://docs.example.com/atlas-7.",
    "My one-on-one with Priya is at 10:30 on Tuesdays.",
    "I have 3 kids.",
)
realistic = (
    st.tuples(
        st.lists(st.sampled_from(FACTS), unique=True, min_size=1, max_size=12),  # each said once
        st.lists(st.sampled_from(USER_FILLER + AGENT_FILLER), min_size=10, max_size=20),
    )
    .flatmap(lambda parts: st.permutations(parts[0] + parts[1]))
    .filter(lambda contents: sum(not fact_terms(c) for c in contents) * 2 >= len(contents))
    # the header and arc lines cost ~80 characters and fact lines are kept whole: compression
    # is claimed for sessions of realistic length where talk outweighs facts (as in the
    # long-conversation workload), not for ten turns of "ok" around eight facts
    .filter(lambda contents: sum(len(c) for c in contents) >= 400)
    .filter(
        lambda contents: (
            sum(len(c) for c in contents if not fact_terms(c))
            >= 2 * sum(len(c) for c in contents if fact_terms(c))
        )
    )
)

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


# --- write_narrative: what is kept -------------------------------------------------------------


def test_given_chit_chat_and_one_fact_when_narrated_then_only_the_fact_is_a_key_interaction() -> (
    None
):
    """Given a session of chit-chat around one fact, when it is narrated, then the fact is the
    only key interaction: turns without fact terms are dropped."""
    # Given
    turns = session("hi!", "Hello, how can I help?", "My sister Alice lives in Lisbon.", "ok")

    # When
    narrative = write_narrative(turns)

    # Then
    assert narrative.key_interactions == ("User: My sister Alice lives in Lisbon.",)


def test_given_turns_of_both_parties_when_narrated_then_each_line_names_its_speaker() -> None:
    """Given facts stated by the user and by the agent, when narrated, then each line says who
    said it ("User: …", "Agent: …"): who said what survives."""
    # Given
    turns = session("The launch is on March 14.", "Then the Atlas demo is on March 10.")

    # When
    narrative = write_narrative(turns)

    # Then
    assert narrative.key_interactions == (
        "User: The launch is on March 14.",
        "Agent: Then the Atlas demo is on March 10.",
    )


def test_given_a_turn_with_filler_clauses_when_narrated_then_they_are_trimmed() -> None:
    """Given a turn whose fact sits between filler clauses, when narrated, then the turn is
    cut down to the clause that carries the fact."""
    # Given
    turns = session("Oh nice, by the way, my sister Alice lives in Lisbon, haha.")

    # When
    narrative = write_narrative(turns)

    # Then
    assert narrative.key_interactions == ("User: my sister Alice lives in Lisbon",)


def test_given_a_clause_between_two_fact_clauses_when_narrated_then_it_stays() -> None:
    """Given an inserted clause without facts between clauses with facts, when narrated, then
    it stays: only leading and trailing filler is cut, so the sentence keeps its sense."""
    # Given
    turns = session("Carmen, my aunt, lives in Lyon.")

    # When
    narrative = write_narrative(turns)

    # Then
    assert narrative.key_interactions == ("User: Carmen, my aunt, lives in Lyon.",)


def test_given_priority_kinds_when_narrated_then_they_come_first_and_the_rest_in_time() -> None:
    """Given a late occurrence among earlier messages, when narrated, then the occurrence
    leads (seed 002's priority kinds) and the other turns follow in time order."""
    # Given
    turns = [
        turn("Bob joined the Atlas team.", at=1),
        turn("Carol moved to Oslo.", at=2),
        turn("The Atlas deploy failed at 3pm.", at=3, kind="occurrence"),
    ]

    # When
    narrative = write_narrative(turns)

    # Then
    assert narrative.key_interactions == (
        "User: The Atlas deploy failed at 3pm.",
        "User: Bob joined the Atlas team.",
        "User: Carol moved to Oslo.",
    )


def test_given_a_session_when_narrated_then_the_first_line_counts_turns_and_names_topics() -> None:
    """Given a session, when narrated, then the content opens with one line giving the number
    of turns and the most mentioned names, and no date or clock of the session itself."""
    # Given
    turns = session("Alice lives in Lisbon.", "ok", "Alice works at Globex.", "Bob too.")

    # When
    first_line = write_narrative(turns).content.split("\n")[0]

    # Then
    assert first_line == "Session of 4 turns: topics Alice, Lisbon, Globex."


def test_given_the_same_session_on_another_day_when_narrated_then_the_text_is_the_same() -> None:
    """Given one session replayed at another time, when narrated, then the narrative is the
    same: event times order the turns but are never written."""
    # Given
    earlier = session("Alice lives in Lisbon.", "Noted.", "ok", start=0)
    later = session("Alice lives in Lisbon.", "Noted.", "ok", start=1_790_000_000_000)

    # When / Then
    assert write_narrative(earlier).content == write_narrative(later).content


# --- write_narrative: unresolved threads -------------------------------------------------------


def test_given_an_unanswered_question_when_narrated_then_it_is_an_unresolved_thread() -> None:
    """Given a question about a named thing that the agent does not answer, when narrated,
    then it is an unresolved thread, attributed, listed on the "Unresolved:" line."""
    # Given
    turns = session("Where does Alice live again?", "Sounds good!")

    # When
    narrative = write_narrative(turns)

    # Then
    assert narrative.unresolved_threads == ("User: Where does Alice live again?",)
    assert "Unresolved: User: Where does Alice live again?" in narrative.content.split("\n")


def test_given_a_question_the_agent_answers_when_narrated_then_nothing_is_unresolved() -> None:
    """Given a question the agent's next turn answers (it names what was asked about), when
    narrated, then there is no unresolved thread."""
    # Given
    turns = session("Where does Alice live again?", "Alice lives in Lisbon.")

    # When
    narrative = write_narrative(turns)

    # Then
    assert narrative.unresolved_threads == ()


def test_given_a_question_the_agent_puts_off_when_narrated_then_only_the_question_is_open() -> None:
    """Given a question the agent puts off ("let me check"), when narrated, then the question
    is one unresolved thread and the agent's "let me check" is not a thread of its own."""
    # Given
    turns = session("Where do I work again?", "Let me check my notes on that.")

    # When
    narrative = write_narrative(turns)

    # Then
    assert narrative.unresolved_threads == ("User: Where do I work again?",)


@pytest.mark.parametrize(
    "content",
    [
        "TODO: send the Atlas invoice.",
        "I need to renew my passport.",
        "I will check the Orion logs.",
        "Remind me to call Bob.",
    ],
)
def test_given_an_open_item_when_narrated_then_it_is_an_unresolved_thread(content: str) -> None:
    """Given a turn with an open item ("TODO", "need to", "will check", "remind me"), when
    narrated, then it is an unresolved thread, even without fact terms."""
    # Given / When
    narrative = write_narrative(session(content))

    # Then
    assert narrative.unresolved_threads == (f"User: {content}",)


# --- write_narrative: emotional arc ------------------------------------------------------------


def test_given_valences_rising_when_narrated_then_the_arc_is_start_middle_end_means() -> None:
    """Given a session whose mood rises, when narrated, then the emotional arc is the mean
    valence of its first, middle and last third, rounded to 2 decimals, also in the text."""
    # Given
    turns = [turn("ok", at=i, valence=v) for i, v in enumerate([-1.0, -0.5, 0.0, 0.1, 0.9, 1.0])]

    # When
    narrative = write_narrative(turns)

    # Then
    assert narrative.emotional_arc == (-0.75, 0.05, 0.95)
    assert narrative.content.split("\n")[-1] == "Emotional arc: -0.75 → 0.05 → 0.95."


def test_given_two_turns_when_narrated_then_the_arc_has_one_bucket_per_turn() -> None:
    """Given fewer turns than buckets, when narrated, then each turn is its own bucket."""
    # Given / When
    narrative = write_narrative([turn("ok", at=0, valence=0.25), turn("ok", at=1, valence=-0.5)])

    # Then
    assert narrative.emotional_arc == (0.25, -0.5)


def test_given_no_turns_when_narrated_then_the_narrative_says_so_and_has_no_arc() -> None:
    """Given an empty session, when narrated, then the narrative is one line and empty parts."""
    # Given / When
    narrative = write_narrative([])

    # Then
    assert narrative == Narrative("Session of 0 turns: no named topics.", (), (), ())


@pytest.mark.parametrize(
    ("speaker", "valence"), [("robot", 0.0), ("user", 1.5), ("user", float("nan"))]
)
def test_given_a_bad_speaker_or_valence_when_building_a_source_then_it_is_refused(
    speaker: str, valence: float
) -> None:
    """Given an unknown speaker or a valence outside [-1, 1], when building a source, then it
    is refused with a ValueError."""
    # Given / When / Then
    with pytest.raises(ValueError):
        NarrativeSource("m", "x", "message", speaker, valence, 0)  # type: ignore[arg-type]


# --- write_narrative: the guarantees -----------------------------------------------------------


@PROPERTY
@given(st.lists(sources, max_size=12))
def test_given_any_session_when_narrated_then_no_fact_term_is_lost(
    turns: list[NarrativeSource],
) -> None:
    """Given any session, however odd its text, when narrated, then every fact term of every
    turn is in the narrative (the hard rule)."""
    # Given / When
    narrative = write_narrative(turns)

    # Then
    assert missing_terms([t.content for t in turns], narrative.content) == frozenset()


@PROPERTY
@given(realistic)
def test_given_a_realistic_session_when_narrated_then_it_is_shorter(contents: list[str]) -> None:
    """Given a realistic session (10 or more turns, at least half of them filler, each fact
    said once), when narrated, then the narrative has fewer characters than the turns
    together."""
    # Given
    turns = session(*contents)

    # When
    narrative = write_narrative(turns)

    # Then
    assert len(narrative.content) < sum(len(t.content) for t in turns)


def test_given_the_generated_workload_when_narrated_then_each_session_shrinks_by_half() -> None:
    """Given the long-conversation workload (5 users x 25 sessions), when every session is
    narrated, then none loses a term, each is shorter than its turns, and all together take
    less than half the characters (measured: about 0.40)."""
    # Given
    sessions = workload_sessions(users=5, sessions_per_user=25, seed=1)

    # When
    narratives = [write_narrative(turns) for turns in sessions]

    # Then
    session_chars = [sum(len(t.content) for t in turns) for turns in sessions]
    narrative_chars = [len(n.content) for n in narratives]
    assert all(n < s for n, s in zip(narrative_chars, session_chars, strict=True))
    assert sum(narrative_chars) / sum(session_chars) < 0.5
    for turns, narrative in zip(sessions, narratives, strict=True):
        assert missing_terms([t.content for t in turns], narrative.content) == frozenset()


def test_given_the_same_session_twice_when_narrated_then_the_narratives_are_equal() -> None:
    """Given the same session twice, when narrated, then the narratives are equal."""
    # Given
    turns = workload_sessions(users=1, sessions_per_user=3, seed=4)[2]

    # When / Then
    assert write_narrative(turns) == write_narrative(list(turns))


# --- write_summary -----------------------------------------------------------------------------


def test_given_first_person_memories_when_summarised_then_they_read_in_the_third_person() -> None:
    """Given memories in the first person, when summarised, then they speak of "the user"."""
    # Given / When
    summary = write_summary(["I live in Lisbon.", "My sister Alice works at Globex."])

    # Then
    assert summary == "The user lives in Lisbon. The user's sister Alice works at Globex."


def test_given_narrative_lines_when_summarised_then_statements_keep_their_speaker() -> None:
    """Given narrative lines of the user and the agent, when summarised, then the user's words
    are about the user and the agent's are reported as said by the agent."""
    # Given
    narrative = "User: I switched to Neovim last week.\nAgent: The Atlas demo is on March 10."

    # When
    summary = write_summary([narrative])

    # Then
    assert summary == (
        "The user switched to Neovim last week. The agent said the Atlas demo is on March 10."
    )


def test_given_a_fact_repeated_across_narratives_when_summarised_then_it_is_stated_once() -> None:
    """Given two narratives stating the same thing, and the agent echoing it, when summarised,
    then it is stated once: a statement another one states in full is dropped."""
    # Given
    first = "User: my sister Alice lives in Lisbon."
    second = "User: my sister Alice lives in Lisbon.\nAgent: Alice lives in Lisbon."

    # When
    summary = write_summary([first, second])

    # Then
    assert summary == "The user's sister Alice lives in Lisbon."


def test_given_a_statement_and_its_negation_when_summarised_then_both_are_kept() -> None:
    """Given a statement and, later, its negation, when summarised, then both are kept: a
    negation is never taken for a repetition."""
    # Given / When
    summary = write_summary(["I use AWS.", "I do not use AWS anymore."])

    # Then
    assert summary == "The user uses AWS. The user does not use AWS anymore."


def test_given_consecutive_agent_statements_when_summarised_then_they_share_one_said() -> None:
    """Given several statements in a row by the agent, when summarised, then they are one
    sentence with one "The agent said"."""
    # Given
    narrative = "Agent: Bob leads Atlas.\nAgent: Carol leads Orion."

    # When
    summary = write_summary([narrative])

    # Then
    assert summary == "The agent said Bob leads Atlas; Carol leads Orion."


def test_given_narratives_when_summarised_then_sizes_arcs_and_open_items_are_gathered() -> None:
    """Given narratives with their bookkeeping lines, when summarised, then the episode
    sizes, the emotional arcs and the open items each become one line after the statements,
    and an open question that a statement answers is dropped."""
    # Given
    first = write_narrative(
        session("My sister Alice lives in Lisbon.", "Noted.", "Where does Bob live?", "Hmm.")
    ).content
    second = write_narrative(session("Where does Alice live again?", "Let me check.")).content

    # When
    lines = write_summary([first, second]).split("\n")

    # Then
    assert lines == [
        "The user's sister Alice lives in Lisbon.",
        "Open items: The user asked: where does Bob live?",
        "Episodes of 4 turns, 2 turns.",
        "Emotional arcs: 0.00 → 0.00 → 0.00; 0.00 → 0.00.",
    ]


def test_given_session_digests_when_summarised_then_their_topic_lines_are_left_out() -> None:
    """Given the digests of sessions whose observations carry the facts ("day, people:
    topics."), when summarised, then the summary keeps their open items and not their
    headers: ten headers naming the person ten times were a third of the 2,000-character
    context of most questions of a conversation with an assistant (issue 38, conversation
    15), and a list of topic words answers none. With nothing else to say, it says whose
    sessions it summarises and when, in map-reduce too."""
    # Given
    digests = [
        "4 March 2025, Niamh and the agent: declan, kitchen, galway.\n"
        "Unresolved: The agent asked: how big is the kitchen?",
        "18 March 2025, Niamh and the agent.",
        "2 April 2025, Niamh and the agent: corolla, car, dealer.",
    ]

    # When
    summary = write_summary(digests)
    bare = write_summary(digests[1:])
    reduced = write_summary([*digests[1:], "9 April 2025, Niamh and the agent: tiles."], 2)

    # Then
    assert summary == "Open items: The agent asked: how big is the kitchen?"
    assert bare == "Sessions of Niamh and the agent from 18 March 2025 to 2 April 2025."
    assert reduced == "Sessions of Niamh and the agent from 18 March 2025 to 9 April 2025."
    assert write_summary(digests[1:2]) == "Sessions of Niamh and the agent on 18 March 2025."
    assert write_summary(["8 May 2023, Gwen and Tomasz: cat.", "9 May 2023, Tomasz and Gwen."]) == (
        "Sessions of Gwen and Tomasz from 8 May 2023 to 9 May 2023."
    )


def test_given_more_texts_than_a_chunk_when_summarised_then_the_summary_is_map_reduced() -> None:
    """Given more texts than the chunk size, when summarised, then the result is the summary
    of the chunk summaries (map-reduce), and it keeps every fact term."""
    # Given
    texts = [f"My colleague Person{i} lives in City{i}." for i in range(7)]

    # When
    summary = write_summary(texts, chunk_size=3)

    # Then
    chunks = [write_summary(texts[i : i + 3], 3) for i in range(0, 7, 3)]
    assert summary == write_summary(chunks, 3)
    assert missing_terms(texts, summary) == frozenset()


def test_given_a_chunk_size_below_two_when_summarising_then_it_is_refused() -> None:
    """Given a chunk size below 2 (the map-reduce would never end), when summarising, then it
    is refused."""
    # Given / When / Then
    with pytest.raises(ValueError, match="chunk_size"):
        write_summary(["a", "b"], chunk_size=1)


@PROPERTY
@given(st.lists(texts, max_size=8), st.integers(2, 4))
def test_given_any_texts_when_summarised_then_no_fact_term_is_lost(
    memories: list[str], chunk_size: int
) -> None:
    """Given any texts, when summarised (map-reduce in small chunks), then every fact term of
    every text is in the summary, but for a line shaped like a session digest's header, which
    a summary leaves to its session's observations (``write_summary``)."""
    # Given / When
    summary = write_summary(memories, chunk_size)

    # Then
    said = [
        "\n".join(line for line in memory.split("\n") if digest_header(line.strip()) is None)
        for memory in memories
    ]
    assert missing_terms(said, summary) == frozenset()


def test_a_summary_of_summaries_reads_no_digest_header() -> None:
    """A partial summary leaves headers out, so a statement it ended with a full stop ("14
    March 2026, Alice" → "14 March 2026, Alice.") is no header in the next step (Hypothesis
    found the day lost)."""
    assert write_summary(["", "Alice", "14 March 2026, Alice"], 2) == "14 March 2026, Alice."


@PROPERTY
@given(st.lists(st.lists(sources, max_size=6), max_size=6), st.integers(2, 3))
def test_given_random_sessions_when_narrated_then_summarised_then_no_term_is_lost(
    sessions: list[list[NarrativeSource]], chunk_size: int
) -> None:
    """Given random sessions, when each is narrated and the narratives summarised, then the
    summary holds every fact term of every turn."""
    # Given
    narratives = [write_narrative(turns).content for turns in sessions]

    # When
    summary = write_summary(narratives, chunk_size)

    # Then
    turns = [t.content for s in sessions for t in s]
    assert missing_terms(turns, summary) == frozenset()


def test_given_a_users_narratives_when_summarised_then_it_is_shorter_and_keeps_all() -> None:
    """Given all the narratives of a generated user, when summarised, then the summary keeps
    every fact term and is shorter than the narratives together."""
    # Given
    narratives = [
        write_narrative(turns).content
        for turns in workload_sessions(users=1, sessions_per_user=25, seed=1)
    ]

    # When
    summary = write_summary(narratives)

    # Then
    assert missing_terms(narratives, summary) == frozenset()
    assert len(summary) < sum(len(n) for n in narratives)


# --- write_profile -----------------------------------------------------------------------------


def test_given_preferences_when_profiled_then_each_goes_to_its_section() -> None:
    """Given statements about communication, tools, work and family, when profiled, then
    each lands in its section, in the sections' order, as prose about the user."""
    # Given
    memories = [
        "I prefer concise answers with bullet points.",
        "I switched to Neovim last week.",
        "I usually have meetings on Monday mornings.",
        "My sister Alice lives in Lisbon.",
    ]

    # When
    profile = write_profile(memories)

    # Then
    assert profile.split("\n") == [
        "Behavioural profile of the user.",
        "Communication preferences: The user prefers concise answers with bullet points.",
        "Technical preferences: The user switched to Neovim last week.",
        "Work patterns: The user usually has meetings on Monday mornings.",
        "Personal context: The user's sister Alice lives in Lisbon.",
    ]


def test_given_several_habits_in_a_section_when_profiled_then_they_are_one_sentence() -> None:
    """Given several things the user does in one section, when profiled, then they are one
    sentence ("The user …, … and …"): a description, not a list."""
    # Given
    memories = ["I prefer short answers.", "I like bullet points.", "I hate emoji in replies."]

    # When
    profile = write_profile(memories)

    # Then
    assert profile.split("\n")[1] == (
        "Communication preferences: The user prefers short answers, likes bullet points and "
        "hates emoji in replies."
    )


def test_given_one_off_facts_when_profiled_then_they_are_not_behaviour() -> None:
    """Given a budget and a deadline (work facts that name no habit or preference), when
    profiled, then they are not used: the profile describes behaviour."""
    # Given
    memories = ["Our budget for the Atlas offsite is 12000 euros.", "The launch is on March 14."]

    # When
    profile = write_profile(memories)

    # Then
    assert profile == "Behavioural profile of the user: no preferences or habits stated yet."


def test_given_pasted_text_among_the_newest_memories_when_profiled_then_it_hides_no_habit() -> None:
    """Given habits, then a text the user pasted (one "sentence" of a thousand characters
    that uses a habit's words), then a memory that says nothing, when the profile is written
    from the newest memories that fit one memory (as the synthesis rule writes it), then the
    habits are in it and the pasted text is not: it is no habit, and one near the newest had
    left the profile empty (issue 38, RealMem)."""
    # Given
    advert = ", ".join(f"skill {number} we use daily" for number in range(60))
    memories = [
        "8 May 2023, Kenta: I usually study every night.",
        "8 May 2023, Kenta: I prefer short answers.",
        f"9 May 2023, Kenta: Please use this job advert: {advert}.",
        "10 May 2023, Kenta: OK.",
    ]

    # When
    _, profile = largest_fitting(len(memories), lambda n: write_profile(memories[-n:]), 1000)

    # Then
    assert "studies every night" in profile and "short answers" in profile
    assert "advert" not in profile


def test_given_a_reply_to_an_answer_when_profiled_then_only_the_user_s_words_are_used() -> None:
    """Given an observation of the user's reply and the assistant's answer it replies to,
    when profiled, then only the reply is read: the answer's habits are not the user's."""
    # Given
    memories = [
        "9 May 2023, Kenta: I usually study every night. Replying to the agent: The agent "
        "prefers short answers and usually works at Sony on Mondays."
    ]

    # When
    profile = write_profile(memories)

    # Then
    assert "studies every night" in profile
    assert "Sony" not in profile and "short answers" not in profile


def test_given_the_assistant_s_own_observations_when_profiled_then_they_are_not_the_user_s() -> (
    None
):
    """Given observations of what the assistant said, headed by it ("day, the agent: …", or
    "day: the agent …" when its sentence starts with it), and one of the user's, when
    profiled, then only the user's is read, without its header: the assistant's "I" is not
    the user (issue 38, RealMem: an answer about sorting plastics was the user's "Personal
    context")."""
    # Given
    memories = [
        "21 June 2026, the agent: I usually recommend sorting HDPE at home every week.",
        "4 May 2026: The agent is here, ready and waiting for your family's times.",
        "9 May 2023, Kenta: I usually study every night.",
    ]

    # When
    profile = write_profile(memories)

    # Then
    assert "HDPE" not in profile and "waiting" not in profile
    assert "The user usually studies every night." in profile
    assert "Kenta:" not in profile and "2023" not in profile


def test_given_what_other_people_like_when_profiled_then_it_is_not_the_user_s() -> None:
    """Given the user's own habit and what other people the user talks about like or want
    ("Opal says he likes numbers and short decks": the VP's taste, which Naomi reported), when
    profiled, then only the user's habit is there (a person's conversation with an assistant,
    issue 38: the VP's taste was the user's "Communication preferences")."""
    # Given
    memories = [
        "27 July 2024, Naomi: Opal says he likes numbers and short decks.",
        "27 July 2024, Naomi: she prefers short updates on Slack.",
        "27 July 2024, Naomi: And they always book the earliest flight.",
        "27 July 2024, Naomi: I prefer short answers.",
        "28 July 2024, Naomi: Marcus says he always cooks on Sundays, I usually do the dishes.",
    ]

    # When
    profile = write_profile(memories)

    # Then
    assert "decks" not in profile and "Slack" not in profile and "flight" not in profile
    assert "The user prefers short answers" in profile
    assert "dishes" in profile  # the user is in it


def test_given_a_speaker_named_in_the_third_person_when_profiled_then_it_is_the_user() -> None:
    """Given an observation that names its own speaker as the subject ("Evan says he …" is
    someone else; "Evan prefers …" by Evan is Evan), when profiled, then it is the user's."""
    # Given
    memories = ["8 May 2023, Evan: Evan prefers concise answers with bullet points."]

    # When
    profile = write_profile(memories)

    # Then
    assert "concise answers with bullet points" in profile


def test_given_like_as_a_comparison_when_profiled_then_it_names_no_preference() -> None:
    """Given "like" that compares or gives an example ("sounds like a plan", "slogans like
    #5") and "like" as the verb, when profiled, then only the verb is a preference: the
    comparisons filled RealMem's profiles with reactions ("Okay, this sounds like a solid
    plan!")."""
    # Given
    memories = [
        "9 May 2023, Kenta: Okay, this sounds like a solid plan!",
        "9 May 2023, Kenta: More slogans like #5 please.",
        "9 May 2023, Kenta: I really like bullet points.",
        "9 May 2023, Kenta: I'd like answers in Japanese.",
    ]

    # When
    profile = write_profile(memories)

    # Then
    assert "solid plan" not in profile and "slogans" not in profile
    assert "likes bullet points" in profile and "Japanese" in profile


def test_given_a_summary_and_a_learning_pattern_when_profiled_then_they_are_no_statements() -> None:
    """Given a summary that carries its sessions' digests ("day, Naomi and the agent: topics")
    and a learning pattern of the built-in insight writer, when profiled, then neither is read
    as something the user said: their lines are topic words (issue 38, conversations 10 and
    11: "3 April 2024, Naomi and the agent: marcus, start, want, iceland." was the user's
    "Personal context")."""
    # Given
    memories = [
        "3 April 2024, Naomi and the agent: marcus, trip, want, iceland. "
        "9 May 2024, Naomi and the agent: party, dad, saturday, bowling.",
        "Recurring across 11 sessions (ontological): rafting, trip.",
        "9 May 2024, Naomi: my dad lives in Erie.",
    ]

    # When
    profile = write_profile(memories)

    # Then
    assert "iceland" not in profile and "rafting" not in profile
    assert "The user's dad lives in Erie." in profile


def test_given_a_later_correction_when_profiled_then_it_supersedes_the_earlier_fact() -> None:
    """Given a fact and a later correction of it, when profiled, then only the correction is
    used."""
    # Given
    memories = ["My cousin Keiko lives in Toronto.", "Keiko lives in Kyoto now."]

    # When
    profile = write_profile(memories)

    # Then
    assert "Kyoto" in profile
    assert "Toronto" not in profile


def test_given_a_restated_habit_when_profiled_then_the_restatement_replaces_it() -> None:
    """Given a weekly meeting and its later restatement at another time, when profiled, then
    the restatement replaces it even though it does not repeat "weekly"."""
    # Given
    memories = [
        "My weekly one-on-one with Nadia is at 10:00 on Tuesdays.",
        "My one-on-one with Nadia is at 13:00 on Thursdays now.",
    ]

    # When
    profile = write_profile(memories)

    # Then
    assert profile.split("\n")[1:] == [
        "Work patterns: The user's one-on-one with Nadia is at 13:00 on Thursdays now."
    ]


def test_given_the_sentences_a_profile_uses_when_profiled_then_their_terms_are_kept() -> None:
    """Given habits stated with numbers, times and names, when profiled, then every fact term
    of those statements is in the profile."""
    # Given
    memories = [
        "I run 5 km every Saturday at 7am.",
        "I always reply to Bob by email before 9:30.",
        "I work at Globex on Mondays and Fridays.",
    ]

    # When
    profile = write_profile(memories)

    # Then
    assert missing_terms(memories, profile) == frozenset()


def test_given_the_cue_lexicons_when_loaded_then_they_come_from_the_package_json() -> None:
    """Given the profile lexicons, when loaded, then they are the JSON file next to the code,
    in its section order."""
    # Given
    path = REPO / "streams" / "engine" / "text" / "profile_cues.json"
    document = json.loads(path.read_text(encoding="utf-8"))

    # When
    cues = profile_cues()

    # Then
    assert [s.name for s in cues.sections] == [s["name"] for s in document["sections"]]
    assert [s.name for s in cues.sections] == [
        "Communication preferences",
        "Technical preferences",
        "Work patterns",
        "Personal context",
    ]


# --- determinism ---------------------------------------------------------------------------------

PIPELINE = """
import sys
from collections import defaultdict
from streams.engine.text.narrative import (
    NarrativeSource, write_narrative, write_profile, write_summary,
)
from tests.conversations import long_conversations
turns = defaultdict(list)
for e in long_conversations(2, 6, seed=9).events:
    m = e.payload.memory
    turns[m.user_id].append(
        NarrativeSource(m.memory_id, m.content, m.kind, m.created_by, m.valence, e.occurred_at)
    )
out = []
for user in sorted(turns):
    chunks = [turns[user][i : i + 20] for i in range(0, len(turns[user]), 20)]
    narratives = [write_narrative(chunk).content for chunk in chunks]
    summary = write_summary(narratives, chunk_size=3)
    out += narratives + [summary, write_profile([summary])]
sys.stdout.write("\\n=====\\n".join(out))
"""


def run_pipeline(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", PIPELINE], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_given_two_processes_with_different_hash_seeds_when_writing_then_the_text_is_equal() -> (
    None
):
    """Given the whole pipeline (narratives, summary, profile) run in two processes with
    different string hashing, when the texts are compared, then they are equal: nothing
    depends on set order, the clock or randomness."""
    # Given / When
    first, second = run_pipeline("1"), run_pipeline("2")

    # Then
    assert first == second
    assert first.count("=====") > 4


def test_given_a_memo_when_statements_are_added_then_the_profile_equals_one_written_afresh() -> (
    None
):
    """Given a user's profile written with a memo, when later syntheses add statements (and
    one drops an old one), then each profile equals the one written without a memo: resuming
    the supersession walk at the first new statement changes no result."""
    # Given
    history = [
        "My cousin Keiko lives in Toronto.",
        "I prefer concise answers with bullet points.",
        "My weekly one-on-one with Nadia is at 10:00 on Tuesdays.",
        "I usually deploy on Fridays.",
        "Keiko lives in Kyoto now.",
        "I prefer long answers now.",
        "One-on-one with Nadia is at 13:00 on Thursdays now.",
        "I no longer deploy on Fridays; I deploy on Mondays instead.",
    ]
    memo = SupersessionMemo()

    # When / Then: growing, then with an old statement gone (the memo starts over)
    for texts in [history[:2], history[:4], history[:6], history, history[1:]]:
        assert write_profile(texts, memo) == write_profile(texts)
    assert "Kyoto" in write_profile(history, memo)
    assert "Toronto" not in write_profile(history, memo)
