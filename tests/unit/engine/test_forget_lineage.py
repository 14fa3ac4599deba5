"""Forgetting a memory forgets what consolidation made of it (issue 42), under every profile.

Given a generated dialog of two sessions, consolidated, when any memory is forgotten, then
no active memory quotes a sentence only it said, and none lists it as a source.
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams.engine import ledger
from streams.engine.ingest import Accepted
from streams.engine.model import ForgetRequested, MemoryEvent
from streams.engine.oracle import replay
from streams.engine.policy import builtin_profile, profile_names
from streams.engine.step import EngineConfig, step
from streams.engine.user_state import InMemoryUserState
from tests.dialogs import Turn, markers, scripted_sessions, write_dialog

KINDS = (
    "statement",
    "statement",
    "statement",
    "question",
    "answer",
    "phatic",
    "negation",
    "repeat",
)
turn = st.builds(Turn, st.sampled_from(KINDS), st.integers(0, 40))
session = st.lists(turn, min_size=1, max_size=9)
USER = "forgetter"


def _forget(
    state: InMemoryUserState, memory_id: str, config: EngineConfig, n: int
) -> tuple[ledger.ConsolidationEvent, ...]:
    """Forget ``memory_id`` a second after the user's last event; the decisions."""
    event_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"forget/{memory_id}/{n}"))
    last = max(state.seen_event_ids.values(), default=0)
    forget = MemoryEvent(event_id, USER, last + 1000, ForgetRequested(memory_id))
    outcome = step(state, forget, config)
    assert isinstance(outcome, Accepted), outcome
    return outcome.decisions


def _violations(state: InMemoryUserState, forgotten: str, quoted: set[str]) -> list[str]:
    """What still remembers ``forgotten``: an active memory quoting one of its ``quoted``
    markers, or naming it in its metadata (as a source, or any other way)."""
    found = []
    for record in state.memories.values():
        memory = record.memory
        if record.forgotten or memory.status != "active":
            continue
        if markers(memory.content) & quoted:
            found.append(f"{memory.kind} {memory.memory_id} quotes {quoted}: {memory.content!r}")
        named = [k for k, v in memory.metadata.items() if forgotten in v.split(",")]
        if named:
            found.append(f"{memory.kind} {memory.memory_id} lists it under {named}")
    return found


@pytest.mark.parametrize("profile", profile_names())
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    sessions=st.lists(session, min_size=2, max_size=2),
    layer=st.sampled_from(["working", "episodic", "semantic"]),
    importance=st.sampled_from([0.3, 0.9]),
    data=st.data(),
)
def test_after_any_memory_is_forgotten_nothing_active_quotes_or_lists_it(
    profile, sessions, layer, importance, data
):
    config = EngineConfig(policy=builtin_profile(profile))
    dialog = write_dialog(USER, sessions, layer, importance)
    state = replay(dialog.events, config).state(USER)
    candidates = sorted(m for m, r in state.memories.items() if not r.forgotten)
    target = data.draw(st.sampled_from(candidates), label="forgotten")
    quoted = dialog.unique_markers(target) if target in dialog.texts else set()

    _forget(state, target, config, 0)

    assert state.memories[target].forgotten
    assert _violations(state, target, quoted) == []


@pytest.mark.parametrize("profile", profile_names())
def test_forgetting_every_turn_one_by_one_leaves_nothing_of_them(profile):
    """The scenario of the issue: 43 turns of two sessions, each forgotten in turn; after
    each forget nothing active quotes a forgotten turn, and at the end no active memory
    made from them remains."""
    config = EngineConfig(policy=builtin_profile(profile))
    dialog = write_dialog(USER, scripted_sessions(43))
    state = replay(dialog.events, config).state(USER)
    made = {m for m, r in state.memories.items() if m not in dialog.texts and not r.forgotten}
    remaining = set(dialog.turn_ids)
    for n, turn_id in enumerate(dialog.turn_ids):
        quoted = dialog.unique_markers(turn_id, remaining)
        _forget(state, turn_id, config, n)
        remaining.discard(turn_id)
        assert _violations(state, turn_id, quoted) == [], f"after forgetting {turn_id}"
    active = [
        state.memories[m].memory
        for m in made
        if not state.memories[m].forgotten and state.memories[m].memory.status == "active"
    ]
    assert [(m.kind, m.content) for m in active] == []


def test_a_narrative_is_written_again_from_the_turns_that_remain():
    """Compress, never forget what is still true: the session's digest and the summary over
    it stay, written again without the forgotten turn, and the other turns' observations stay
    as they were."""
    config = EngineConfig(policy=builtin_profile("default"))
    dialog = write_dialog(USER, scripted_sessions(14))
    state = replay(dialog.events, config).state(USER)
    target = dialog.turn_ids[0]
    narratives = {
        m
        for m, r in state.memories.items()
        if r.memory.kind == "narrative" and target in r.memory.metadata["parents"]
    }
    observations = {
        m: r.memory.content for m, r in state.memories.items() if r.memory.kind == "observation"
    }
    assert narratives and observations

    decisions = _forget(state, target, config, 0)

    rewritten = {
        d.payload.memory.memory_id for d in decisions if isinstance(d.payload, ledger.MemoryStored)
    }
    assert narratives <= rewritten
    for narrative in narratives:
        record = state.memories[narrative]
        assert not record.forgotten
        assert target not in record.memory.metadata["parents"].split(",")
    kept = {m for m in observations if not state.memories[m].forgotten}
    assert kept and all(state.memories[m].memory.content == observations[m] for m in kept)
    assert all(target not in state.memories[m].memory.metadata["derived_from"] for m in kept)


def test_a_forget_replays_to_the_same_state():
    """The ledger holds what the forget decided: folding it again, with no writer run,
    reaches the same memories."""
    config = EngineConfig(policy=builtin_profile("default"))
    dialog = write_dialog(USER, scripted_sessions(20))
    run = replay(dialog.events, config)
    state = run.state(USER)
    decisions = list(run.decisions)
    for n, turn_id in enumerate(dialog.turn_ids[:6]):
        decisions.extend(_forget(state, turn_id, config, n))

    folded = InMemoryUserState(USER)
    for decision in decisions:
        folded.fold(decision)

    assert folded.memories == state.memories
