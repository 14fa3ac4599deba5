"""The worker's state as changelog entries (issue: worker state at scale): applying each
input's changed entries, last value per key, rebuilds exactly the state the ledger's fold
gives, for every profile; and an input's entries grow with its work, not with history."""

from __future__ import annotations

import pytest

from streams.engine.engine import EngineConfig, step
from streams.engine.ingest import Accepted
from streams.engine.model import MemoryEvent
from streams.engine.policy import builtin_profile, profile_names
from streams.engine.state import InMemoryUserState
from streams.state_changelog import (
    all_entries,
    apply_entry,
    changed_entries,
    split_key,
)
from tests.conversations import long_conversations
from tests.workloads import cycle_heavy_workload, mixed_workload


def workload() -> list[MemoryEvent]:
    events = [
        *mixed_workload(600, users=3, seed=3),
        *cycle_heavy_workload(400, users=2, seed=4),
        *long_conversations(users=1, sessions_per_user=4, seed=5).events,
    ]
    return sorted(events, key=lambda e: (e.occurred_at, e.event_id))


def run_workload(profile: str) -> tuple[dict[str, InMemoryUserState], dict[bytes, bytes]]:
    """The engine's state per user after the workload, and every input's changed entries
    kept as compaction keeps them (the last value per key)."""
    config = EngineConfig(policy=builtin_profile(profile))
    live: dict[str, InMemoryUserState] = {}
    changelog: dict[bytes, bytes] = {}
    for event in workload():
        state = live.setdefault(event.user_id, InMemoryUserState(event.user_id))
        outcome = step(state, event, config, key=event.user_id)
        if isinstance(outcome, Accepted):
            for entry in changed_entries(state, event.event_id, outcome.decisions):
                changelog[entry.key] = entry.value
    return live, changelog


def restore(entries: dict[bytes, bytes]) -> dict[str, InMemoryUserState]:
    users: dict[str, InMemoryUserState] = {}
    for key, value in entries.items():
        user, table, entry_id = split_key(key)
        state = users.setdefault(user, InMemoryUserState(user))
        apply_entry(state, table, entry_id, value)
    return users


@pytest.mark.parametrize("profile", profile_names())
def test_the_changed_entries_of_every_input_rebuild_the_folded_state(profile: str) -> None:
    """Given a mixed multi-user workload under a profile, when each input's changed entries
    are kept (last value per key, as compaction does) and applied to empty state, then the
    restored state equals the state the engine holds, user by user."""
    live, changelog = run_workload(profile)

    assert restore(changelog) == live


def test_a_snapshot_of_every_entry_restores_the_same_state() -> None:
    config = EngineConfig(policy=builtin_profile("default"))
    state = InMemoryUserState("user-0")
    for event in workload():
        if event.user_id == "user-0":
            step(state, event, config, key=event.user_id)

    snapshot = {e.key: e.value for e in all_entries(state)}

    assert restore(snapshot)["user-0"] == state


def test_an_input_writes_entries_for_what_it_changed_not_for_the_whole_user() -> None:
    """Given a user with hundreds of memories, when one more memory is written, then its
    entries are the memory, the input's seen id, its session and the user's small meta."""
    config = EngineConfig(policy=builtin_profile("default"))
    state = InMemoryUserState("user-0")
    events = [e for e in mixed_workload(2000, users=1, seed=9)]
    for event in events[:-1]:
        step(state, event, config, key=event.user_id)
    assert len(state.memories) > 500
    last = events[-1]

    outcome = step(state, last, config, key=last.user_id)

    assert isinstance(outcome, Accepted) and len(outcome.decisions) == 1
    tables = sorted(
        split_key(e.key)[1] for e in changed_entries(state, last.event_id, outcome.decisions)
    )
    assert len(tables) <= 4 and tables.count("m") <= 1


def test_entries_written_by_the_standard_json_encoder_still_restore_the_same_state() -> None:
    """Given every entry a mixed workload writes, re-encoded as workers before orjson wrote
    them (the standard library: compact, sorted keys, non-ASCII escaped), when restored,
    then the state equals the engine's: a changelog written by an older worker still
    restores."""
    import json

    live, changelog = run_workload("default")
    old_format = {
        key: json.dumps(json.loads(value), separators=(",", ":"), sort_keys=True).encode()
        if value[:1] == b"{"
        else value
        for key, value in changelog.items()
    }

    assert all(v.isascii() for v in old_format.values())  # non-ASCII escaped, as before
    assert restore(old_format) == live
