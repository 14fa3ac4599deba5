"""The index of a user's active sessions, which every input reads: kept in step with the
sessions by the fold, by a restore and in a cycle's copy, however many sessions the user
has had."""

from __future__ import annotations

from dataclasses import fields, replace

from streams.engine.oracle import replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from streams.engine.user_state import SessionWindow, UserFacets
from streams.state.changelog import UserStateBuilder, all_entries, split_key
from tests.conversations import long_conversations


def _active_by_walk(facets: UserFacets) -> set[str]:
    return {s for s, w in facets.sessions.items() if w.status == "active"}


def _active(facets: UserFacets) -> set[str]:
    return {w.session_id for w in facets.active_sessions()}


def test_the_fold_keeps_the_active_sessions_of_months_of_conversations() -> None:
    workload = long_conversations(users=2, sessions_per_user=12, seed=9)
    config = EngineConfig(policy=builtin_profile("default"))
    split = len(workload.events) // 2
    run = replay(workload.events[:split], config)
    for user in ("user-0", "user-1"):
        _active(run.state(user).facets)  # indexed from here on, kept by the fold
    for event in workload.events[split:]:
        run.feed(event, config)

    for user in ("user-0", "user-1"):
        facets = run.state(user).facets
        assert len(facets.sessions) > 5  # many sessions, most of them consolidated
        assert _active(facets) == _active_by_walk(facets)
        assert len(_active(facets)) < len(facets.sessions)


def test_a_restored_user_indexes_the_sessions_its_entries_bring() -> None:
    workload = long_conversations(users=1, sessions_per_user=6, seed=10)
    run = replay(workload.events, EngineConfig(policy=builtin_profile("default")))
    original = run.state("user-0")

    builder = UserStateBuilder("user-0")
    _active(builder.state.facets)  # an index taken before the entries arrive is kept by them
    for entry in all_entries(original):
        _, table, entry_id = split_key(entry.key)
        builder.apply(table, entry_id, entry.value)
    restored = builder.build()

    assert _active(restored.facets) == _active_by_walk(original.facets)


def test_a_copy_and_its_original_keep_their_own_index() -> None:
    facets = UserFacets()
    facets.put_session(SessionWindow("a", "c", 1, 2))
    facets.put_session(SessionWindow("b", "c", 3, 4))
    _active(facets)
    copy = facets.copy()

    copy.put_session(replace(copy.sessions["a"], status="ended", ended_at=5))
    facets.drop_session("b")

    assert _active(copy) == {"b"}
    assert _active(facets) == {"a"}


def test_a_new_member_keeps_every_other_field_of_the_session() -> None:
    """``with_member`` builds the window field by field: one it forgot would be reset to its
    default. Every other field holds a distinct object here, so any field not carried is seen."""
    changed = {"member_ids", "started_at", "last_event_at"}
    kept = {f.name: object() for f in fields(SessionWindow) if f.name not in changed}
    window = SessionWindow(**kept, started_at=100, last_event_at=200)  # type: ignore[arg-type]

    grown = window.with_member("m-1", 50)

    assert (list(grown.member_ids), grown.started_at, grown.last_event_at) == (["m-1"], 50, 200)
    for name, value in kept.items():
        assert getattr(grown, name) is value, name
