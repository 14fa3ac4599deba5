"""Periodic ticks go only to users with time-driven work due (issue: worker state at scale):
a per-user next-due time in event time, None for a user with nothing that time alone can
change (pure)."""

from __future__ import annotations

from streams.engine.model import MemoryEvent
from streams.engine.policy import builtin_profile
from streams.engine.rules.due import next_due_at
from streams.engine.rules.maintenance import HOUR_MS, window_start
from streams.engine.step import EngineConfig, step
from streams.engine.user_state import InMemoryUserState
from tests.scenarios import DAY, MINUTE, NOW, Scenario


def state_after(events: list[MemoryEvent], profile: str) -> InMemoryUserState:
    config = EngineConfig(policy=builtin_profile(profile))
    state = InMemoryUserState(events[0].user_id)
    for event in events:
        step(state, event, config, key=event.user_id)
    return state


def test_a_user_with_nothing_time_can_change_is_never_due() -> None:
    """Given a user whose only memory is a semantic fact under memorykit (no sessions, no
    maintenance, nothing working to promote), then no tick is due."""
    s = Scenario("due-1")
    s.write("f", "The user likes tea", layer="semantic", at=NOW)

    assert next_due_at(state_after(s.events, "memorykit"), builtin_profile("memorykit")) is None


def test_an_open_session_is_due_when_it_times_out() -> None:
    s = Scenario("due-2")
    s.write("a", "Note about Oslo", layer="working", conversation_id="c", at=NOW)
    s.write("b", "Note about Bergen", layer="working", conversation_id="c", at=NOW + MINUTE)
    policy = builtin_profile("astra")

    due = next_due_at(state_after(s.events, "astra"), policy)

    wait = (policy.triggers.session_inactivity_seconds + policy.sessions.grace_seconds) * 1000
    assert due == NOW + MINUTE + wait + 1


def test_a_working_memory_is_due_for_promotion_by_age() -> None:
    s = Scenario("due-3")
    s.write("w", "Working note", layer="working", importance=0.2, at=NOW)
    policy = builtin_profile("memorykit")

    assert next_due_at(state_after(s.events, "memorykit"), policy) == (
        NOW + policy.promotion.max_age_seconds * 1000 + 1
    )


def test_a_memory_is_due_when_its_salience_falls_below_the_archive_threshold() -> None:
    """Under lexichord, a memory of importance 0.8 halves every 7 days: it falls below 0.1
    after three half-lives, and that is when a tick has work."""
    s = Scenario("due-4")
    s.write("m", "A fact", layer="semantic", importance=0.8, created_at=NOW, at=NOW)
    policy = builtin_profile("lexichord")

    due = next_due_at(state_after(s.events, "lexichord"), policy)

    assert due is not None and abs(due - (NOW + 3 * 7 * DAY)) <= 1


def test_the_maintenance_window_makes_a_user_with_memories_due_once_a_day() -> None:
    s = Scenario("due-5")
    s.write("e", "A fact outside any session", layer="semantic", at=NOW)
    policy = builtin_profile("astra")

    due = next_due_at(state_after(s.events, "astra"), policy)

    assert due is not None and window_start(due, policy) == due
    assert due - NOW < DAY and (due % DAY) == 2 * HOUR_MS
