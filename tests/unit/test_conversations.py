"""The long-conversation workload generator (``tests/conversations.py``) keeps its promises:
session shapes, months of event time, facts stated once, asked later and sometimes corrected,
and the same workload for the same seed."""

from __future__ import annotations

from collections import defaultdict
from functools import cache

import pytest

from streams.engine.model import Memory, MemoryWritten
from streams.engine.text.facts import fact_terms
from tests.conversations import (
    AGENT_ACKNOWLEDGEMENTS,
    AGENT_DEFERRALS,
    AGENT_FILLER,
    BASE_TIME,
    DAY_MS,
    USER_FILLER,
    ConversationWorkload,
    long_conversations,
    says,
)

USERS, SESSIONS, SEED = 4, 25, 11
INACTIVITY_MS = 30 * 60 * 1000


@cache
def workload() -> ConversationWorkload:
    return long_conversations(users=USERS, sessions_per_user=SESSIONS, seed=SEED)


def memories() -> dict[str, Memory]:
    found: dict[str, Memory] = {}
    for event in workload().events:
        assert isinstance(event.payload, MemoryWritten)
        found[event.payload.memory.memory_id] = event.payload.memory
    return found


def derived_sessions() -> list[list[Memory]]:
    """Each user's turns cut where 30 minutes pass without one, as the engine cuts them."""
    by_user: dict[str, list[Memory]] = defaultdict(list)
    for memory in memories().values():
        by_user[memory.user_id].append(memory)
    sessions: list[list[Memory]] = []
    for turns in by_user.values():
        turns.sort(key=lambda m: (m.created_at or 0, m.memory_id))
        current = [turns[0]]
        for before, after in zip(turns, turns[1:], strict=False):
            if (after.created_at or 0) - (before.created_at or 0) > INACTIVITY_MS:
                sessions.append(current)
                current = []
            current.append(after)
        sessions.append(current)
    return sessions


def session_index(memory_id: str) -> int:
    return int(memory_id.rsplit("-s", 1)[1].split("-", 1)[0])


def test_given_the_workload_when_cut_by_inactivity_then_the_sessions_are_the_generated_ones() -> (
    None
):
    """Given the workload, when each user's turns are cut at 30 minutes of inactivity, then
    the sessions are exactly the generator's, so the engine sees the intended sessions."""
    # Given / When
    derived = [tuple(m.memory_id for m in s) for s in derived_sessions()]

    # Then
    assert sorted(derived) == sorted(workload().sessions)
    assert len(derived) == USERS * SESSIONS


def test_given_the_sessions_when_counted_then_each_has_15_to_40_alternating_turns() -> None:
    """Given every session, when its turns are counted, then there are 15 to 40, the user and
    the agent taking turns, the user first."""
    # Given / When
    sessions = derived_sessions()

    # Then
    for turns in sessions:
        assert 15 <= len(turns) <= 40
        assert [m.created_by for m in turns] == [
            "user" if i % 2 == 0 else "agent" for i in range(len(turns))
        ]


def test_given_the_event_times_when_compared_then_they_span_months_in_the_stated_steps() -> None:
    """Given the event times, when compared, then each user's chat starts at the fixed base
    time (within an hour), sessions are 1 to 6 days apart, turns 30 to 180 s apart, and the
    whole chat spans months."""
    # Given
    sessions = derived_sessions()
    by_user: dict[str, list[list[Memory]]] = defaultdict(list)
    for turns in sessions:
        by_user[turns[0].user_id].append(turns)

    # When / Then
    for user_sessions in by_user.values():
        times = [[m.created_at or 0 for m in s] for s in user_sessions]
        assert BASE_TIME <= times[0][0] <= BASE_TIME + 3_600_000
        for turn_times in times:
            gaps = [b - a for a, b in zip(turn_times, turn_times[1:], strict=False)]
            assert all(30_000 <= gap <= 180_000 for gap in gaps)
        for before, after in zip(times, times[1:], strict=False):
            assert DAY_MS <= after[0] - before[-1] <= 7 * DAY_MS
        assert times[-1][-1] - times[0][0] >= 60 * DAY_MS


def test_given_the_events_when_read_then_they_are_working_messages_in_time_order() -> None:
    """Given the events, when read, then they are written in time order, from "tests", and
    each memory is a working-layer chat message of its user's conversation, without session
    id or embedding, with importance in [0.2, 0.9] and valence in [-1, 1]."""
    # Given
    events = workload().events

    # When / Then
    assert [e.occurred_at for e in events] == sorted(e.occurred_at for e in events)
    assert len({e.event_id for e in events}) == len(events)
    for event in events:
        assert event.source == "tests"
        assert isinstance(event.payload, MemoryWritten)
        memory = event.payload.memory
        assert memory.user_id == event.user_id
        assert memory.created_at == event.occurred_at
        assert (memory.layer, memory.kind) == ("working", "message")
        assert memory.conversation_id == f"{memory.user_id}-chat"
        assert memory.session_id is None and memory.embedding is None
        assert 0.2 <= memory.importance <= 0.9 and -1.0 <= memory.valence <= 1.0


def test_given_the_stated_facts_when_read_then_their_terms_are_in_their_stating_turn() -> None:
    """Given every stated fact, when its stating turn is read, then the fact's value terms are
    there, non-empty, and said by the user."""
    # Given
    by_id = memories()

    # When / Then
    for fact in workload().facts:
        stating = by_id[fact.memory_id]
        assert fact.terms
        assert all(says(stating.content, term) for term in fact.terms)
        assert (stating.user_id, stating.created_by) == (fact.user_id, "user")


def test_given_the_agent_turns_when_read_then_the_agent_never_repeats_a_fact() -> None:
    """Given the agent's turns and all filler, when their terms are read, then there are
    none: a fact is stated once, by the user, and survives only if consolidation keeps it."""
    # Given
    agent_turns = [m.content for m in memories().values() if m.created_by == "agent"]

    # When / Then
    for content in [*agent_turns, *USER_FILLER, *AGENT_FILLER]:
        assert fact_terms(content) == frozenset(), content
    assert {*AGENT_ACKNOWLEDGEMENTS, *AGENT_DEFERRALS} >= {
        c for c in agent_turns if c not in AGENT_FILLER
    }


def test_given_the_questions_when_matched_to_facts_then_at_least_30_percent_are_asked_later() -> (
    None
):
    """Given the questions, when matched to the facts they ask about, then at least 30 % of
    the first statements of a fact are asked about at least three sessions later, and each
    question names its subject but not the value."""
    # Given
    facts = workload().facts
    by_id = memories()
    firsts: dict[tuple[str, str], str] = {}
    for fact in facts:
        firsts.setdefault((fact.user_id, fact.key), fact.memory_id)

    # When
    asked = {
        (q.user_id, q.key)
        for q in workload().questions
        if session_index(q.memory_id) - session_index(firsts[(q.user_id, q.key)]) >= 3
    }

    # Then
    assert len(asked) >= 0.3 * len(firsts)
    for question in workload().questions:
        expected = next(f for f in facts if f.memory_id == question.expected_memory_id)
        assert expected.key == question.key
        assert not any(says(by_id[question.memory_id].content, t) for t in expected.terms)


def test_given_the_corrections_when_read_then_they_replace_the_value_under_the_same_key() -> None:
    """Given the corrected facts, when their corrections are read, then some facts were
    corrected, each later in the chat, under the same key, with a different value, and only
    the newest version of a fact is still true."""
    # Given
    facts = workload().facts
    by_memory = {f.memory_id: f for f in facts}

    # When
    corrected = [f for f in facts if f.corrected_by_memory_id is not None]

    # Then
    assert len(corrected) >= 0.1 * len(facts)
    for old in corrected:
        assert old.corrected_by_memory_id is not None
        new = by_memory[old.corrected_by_memory_id]
        assert not old.still_true
        assert (new.user_id, new.key) == (old.user_id, old.key)
        assert new.terms != old.terms
        assert session_index(new.memory_id) > session_index(old.memory_id)
    assert all(f.still_true for f in facts if f.corrected_by_memory_id is None)


def test_given_the_same_seed_when_generated_twice_then_the_workloads_are_equal() -> None:
    """Given one seed, when the workload is generated twice, then it is the same; another seed
    gives another workload."""
    # Given / When
    first = long_conversations(users=2, sessions_per_user=6, seed=5)
    second = long_conversations(users=2, sessions_per_user=6, seed=5)
    other = long_conversations(users=2, sessions_per_user=6, seed=6)

    # Then
    assert first == second
    assert other.events != first.events


@pytest.mark.parametrize("sessions_per_user", [1, 3])
def test_given_few_sessions_when_generated_then_nothing_is_asked_too_early(
    sessions_per_user: int,
) -> None:
    """Given fewer sessions than a question needs to be "much later", when generated, then
    there are facts but no questions."""
    # Given / When
    generated = long_conversations(users=1, sessions_per_user=sessions_per_user, seed=2)

    # Then
    assert generated.facts
    assert generated.questions == []
