"""The worker's state as changelog entries (issue: worker state at scale): applying each
input's changed entries, last value per key, rebuilds exactly the state the ledger's fold
gives, for every profile; and an input's entries grow with its work, not with history."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

import orjson
import pytest

from streams.engine.ingest import Accepted
from streams.engine.ledger import ConsolidationEvent, MemoryStored, SessionClosed
from streams.engine.model import Memory, MemoryEvent, MemoryWritten
from streams.engine.policy import builtin_profile, profile_names
from streams.engine.step import EngineConfig, step
from streams.engine.user_state import InMemoryUserState, MemoryRecord, apply_outcome
from streams.state.changelog import (
    CONVERSATION,
    MEMBER,
    MEMORY,
    META,
    SESSION,
    all_entries,
    before_input,
    changed_entries,
    decode_memory_record,
    encode_member,
    encode_memory_record,
    encode_meta,
    encode_session,
    entry_key,
    member_key,
    restored_user,
    split_key,
)
from tests.conversations import long_conversations
from tests.workloads import cycle_heavy_workload, mixed_workload

T0 = 1_717_000_000_000


def workload() -> list[MemoryEvent]:
    events = [
        *mixed_workload(600, users=3, seed=3),
        *cycle_heavy_workload(400, users=2, seed=4),
        *long_conversations(users=1, sessions_per_user=4, seed=5).events,
    ]
    return sorted(events, key=lambda e: (e.occurred_at, e.event_id))


def run_workload(profile: str) -> tuple[dict[str, InMemoryUserState], dict[bytes, bytes | None]]:
    """The engine's state per user after the workload, and every input's changed entries
    kept as compaction keeps them (the last value per key)."""
    config = EngineConfig(policy=builtin_profile(profile))
    live: dict[str, InMemoryUserState] = {}
    changelog: dict[bytes, bytes | None] = {}
    for event in workload():
        state = live.setdefault(event.user_id, InMemoryUserState(event.user_id))
        before = before_input(state)
        outcome = step(state, event, config, key=event.user_id)
        if isinstance(outcome, Accepted):
            for entry in changed_entries(state, event.event_id, outcome.decisions, before):
                changelog[entry.key] = entry.value
    return live, changelog


def restore(entries: Mapping[bytes, bytes | None]) -> dict[str, InMemoryUserState]:
    by_user: dict[str, list[tuple[bytes, bytes | None]]] = {}
    for key, value in entries.items():
        by_user.setdefault(split_key(key)[0], []).append((key, value))
    return {user: restored_user(user, items)[0] for user, items in by_user.items()}


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
    entries are the memory, the input's seen id, its session membership and the user's
    small meta: one of each at most."""
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
    assert len(tables) <= 4 and len(set(tables)) == len(tables)


def test_an_input_s_entries_do_not_grow_with_the_conversations_since_the_last_cycle() -> None:
    """Given a user who opens a new conversation with every message (1,200 in 20 minutes,
    before any cycle), when each is written, then the last input's entries are no larger
    than the second's: its conversation's counter is an entry of its own, not part of the
    meta entry every input re-sends (which grew to 21 KB per input at 1,500)."""
    config = EngineConfig(policy=builtin_profile("default"))
    state = InMemoryUserState("user-0")
    sizes = []
    for i in range(1200):
        memory = Memory(f"m-{i:04d}", "user-0", f"message {i}", layer="episodic")
        memory = memory.evolve(conversation_id=f"conversation-{i}")
        event = MemoryEvent(
            str(uuid.UUID(int=i + 1)), "user-0", T0 + i * 1000, MemoryWritten(memory)
        )
        before = before_input(state)
        outcome = step(state, event, config, key=event.user_id)
        assert isinstance(outcome, Accepted) and not any(d.cycle_id for d in outcome.decisions)
        entries = changed_entries(state, event.event_id, outcome.decisions, before)
        sizes.append(sum(len(e.value or b"") for e in entries))
    assert len(state.conversation_messages) == 1200
    assert sizes[-1] <= sizes[1] + 16  # the ids' digits


def test_conversation_counters_an_older_worker_kept_in_the_meta_entry_restore_and_are_owed() -> (
    None
):
    """Given a changelog whose meta entries hold the conversation counters (as workers
    before counter entries wrote them), when restored, then the state is the same and the
    restore owes a counter entry for each: sent before the next meta entry (which holds
    none), no count is lost."""
    live, changelog = run_workload("default")
    legacy = {k: v for k, v in changelog.items() if split_key(k)[1] != CONVERSATION}
    for user, state in live.items():
        meta = orjson.loads(encode_meta(state))
        meta["conversation_messages"] = state.conversation_messages
        legacy[entry_key(user, META)] = orjson.dumps(meta)

    for user, state in live.items():
        items = [(k, v) for k, v in legacy.items() if split_key(k)[0] == user]
        restored, owed = restored_user(user, items)
        assert restored == state
        counters = {
            split_key(e.key)[2]: e.value for e in owed if split_key(e.key)[1] == CONVERSATION
        }
        assert counters == {c: str(n).encode() for c, n in state.conversation_messages.items()}

        upgraded = {**dict(items), **{e.key: e.value for e in owed}}
        upgraded[entry_key(user, META)] = encode_meta(restored)  # a newer worker's next input
        assert restored_user(user, upgraded.items())[0] == state
    assert any(state.conversation_messages for state in live.values())


def test_entries_written_by_the_standard_json_encoder_still_restore_the_same_state() -> None:
    """Given every entry a mixed workload writes, re-encoded as workers before orjson wrote
    them (the standard library: compact, sorted keys, non-ASCII escaped), when restored,
    then the state equals the engine's: a changelog written by an older worker still
    restores."""
    import json

    live, changelog = run_workload("default")
    old_format = {
        key: json.dumps(json.loads(value), separators=(",", ":"), sort_keys=True).encode()
        if value is not None and value[:1] == b"{"
        else value
        for key, value in changelog.items()
    }

    # non-ASCII escaped, as before
    assert all(v.isascii() for v in old_format.values() if v is not None)
    assert restore(old_format) == live


def _written_in_session(i: int) -> MemoryEvent:
    at = T0 + i * 60_000  # a minute apart: one session, never inactive for long
    memory = Memory(
        f"m-{i:04d}",
        "user-0",
        f"Note {i}: the tomatoes in bed {i} need water.",
        session_id="s-1",
        created_at=at,
    )
    return MemoryEvent(str(uuid.UUID(int=i + 1)), "user-0", at, MemoryWritten(memory))


def test_a_memory_written_into_a_long_session_adds_one_small_entry() -> None:
    """Given a session of hundreds of memories, when one more is written into it, then the
    input's session entries are one member entry, as small as in the session's second input:
    not the session's whole member list, which made every input's cost grow with the
    session."""
    config = EngineConfig(policy=builtin_profile("default"))
    state = InMemoryUserState("user-0")
    session_bytes = []
    for i in range(400):
        event = _written_in_session(i)
        before = before_input(state)
        outcome = step(state, event, config, key="user-0")
        assert isinstance(outcome, Accepted)
        entries = changed_entries(state, event.event_id, outcome.decisions, before)
        session_bytes.append(
            [len(e.value or b"") for e in entries if split_key(e.key)[1] in (SESSION, MEMBER)]
        )

    assert len(state.facets.sessions["s-1"].member_ids) == 400
    assert len(session_bytes[399]) == 1  # the member; the session's own entry is unchanged
    assert session_bytes[399][0] <= session_bytes[1][0] + 4  # longer numbers, nothing more


def test_a_consolidated_session_leaves_no_member_entries() -> None:
    """Given months of conversations whose sessions get narratives, when each input's entries
    are compacted, then no member entry is left for a consolidated session (its members are
    dropped from the state, so their entries must go too) and the others' members restore."""
    live, changelog = run_workload("default")

    consolidated = {
        (user, s)
        for user, state in live.items()
        for s, w in state.facets.sessions.items()
        if w.status == "consolidated"
    }
    members_left = {
        (split_key(key)[0], orjson.loads(value)["session_id"])
        for key, value in changelog.items()
        if split_key(key)[1] == MEMBER and value is not None
    }
    assert consolidated  # the workload consolidates sessions
    assert members_left  # and has sessions still open
    assert not members_left & consolidated
    assert restore(changelog) == live


def test_sessions_written_with_their_members_by_older_workers_still_restore() -> None:
    """Given a changelog whose session entries list their first members (as workers before
    member entries wrote them) and whose later members are entries of their own (written
    after an upgrade), when restored, then each session has all its members in order."""
    live, changelog = run_workload("default")
    upgraded: dict[bytes, bytes | None] = {
        k: v for k, v in changelog.items() if split_key(k)[1] != MEMBER
    }
    for user, state in live.items():
        for session_id, window in state.facets.sessions.items():
            half = len(window.member_ids) // 2
            old = orjson.loads(encode_session(window))
            old["member_ids"] = list(window.member_ids[:half])
            upgraded[entry_key(user, SESSION, session_id)] = orjson.dumps(old)
            for position in range(half, len(window.member_ids)):
                member = window.member_ids[position]
                upgraded[member_key(user, session_id, member)] = encode_member(
                    session_id, member, position, window.last_event_at
                )

    assert any(len(w.member_ids) > 1 for s in live.values() for w in s.facets.sessions.values())
    assert restore(upgraded) == live


def test_memories_written_between_two_cycles_do_not_grow_each_input_s_entries() -> None:
    """Given a user writing hundreds of memories outside conversations (no on-write cycle
    runs), when each input's entries are measured, then the last input's are no larger than
    the tenth's: the memories changed since the last cycle are marked in their own entries
    (the change epoch), not listed in the user's meta entry, which every input re-sends (4 KB
    per input, on average, by 200 writes per user in the plain bench workload)."""
    config = EngineConfig(policy=builtin_profile("default"))
    state = InMemoryUserState("user-0")
    sizes = []
    for i in range(300):
        memory = Memory(f"m-{i:04d}", "user-0", f"Fact {i}: shelf {i} holds jars.", created_at=T0)
        event = MemoryEvent(str(uuid.UUID(int=i + 1)), "user-0", T0 + i, MemoryWritten(memory))
        before = before_input(state)
        outcome = step(state, event, config, key="user-0")
        assert isinstance(outcome, Accepted)
        entries = changed_entries(state, event.event_id, outcome.decisions, before)
        sizes.append(
            sum(len(e.key) + len(e.value or b"") for e in entries if split_key(e.key)[1] != MEMORY)
        )

    assert len(state.facets.changed_ids) == 300  # no cycle took them
    assert max(sizes[10:]) <= sizes[10] + 16


def test_changed_ids_an_older_worker_kept_in_the_meta_entry_restore_and_are_owed() -> None:
    """Given a changelog whose meta entries list the changed ids (as workers before change
    epochs wrote them, with memory entries unmarked), when restored, then the state is the
    same, and the restore owes the changelog the entries of those memories, marked: sent
    before the next meta entry (which no longer lists them), nothing is lost."""
    live, changelog = run_workload("default")
    legacy: dict[bytes, bytes | None] = {}
    for key, value in changelog.items():
        if value is not None and split_key(key)[1] == MEMORY:
            record = orjson.loads(value)
            del record["_changed"]
            value = orjson.dumps(record)
        legacy[key] = value
    for user, state in live.items():
        meta = orjson.loads(encode_meta(state))
        del meta["change_epoch"]
        meta["changed_ids"] = sorted(state.facets.changed_ids)
        legacy[entry_key(user, META)] = orjson.dumps(meta)

    for user, state in live.items():
        items = [(k, v) for k, v in legacy.items() if split_key(k)[0] == user]
        restored, owed = restored_user(user, items)
        assert restored == state
        assert {split_key(e.key)[2] for e in owed} == state.facets.changed_ids

        upgraded = {**dict(items), **{e.key: e.value for e in owed}}
        upgraded[entry_key(user, META)] = encode_meta(restored)  # a newer worker's next input
        assert restored_user(user, upgraded.items())[0] == state
    assert any(state.facets.changed_ids for state in live.values())


def test_a_session_an_older_worker_listed_keeps_its_members_after_it_closes() -> None:
    """Given a session whose entry lists its members (an older worker's, no member entries),
    when restored and then closed without a narrative by a newer worker (whose session entry
    lists none), then with the entries the restore owed sent first, as the worker does, the
    members survive another restore; and once sent, nothing is owed any more."""
    live = InMemoryUserState("u")
    for i, memory_id in enumerate(("a", "b")):
        memory = Memory(memory_id, "u", "x", session_id="s", created_at=T0 + i)
        stored = ConsolidationEvent(f"in{i}", "u", T0, f"in{i}", MemoryStored(memory, 1))
        apply_outcome(live, f"in{i}", T0 + i, [stored])
    changelog: dict[bytes, bytes | None] = {}
    for entry in all_entries(live):
        table = split_key(entry.key)[1]
        if table == SESSION:
            old = orjson.loads(entry.value or b"")
            old["member_ids"] = ["a", "b"]
            changelog[entry.key] = orjson.dumps(old)
        elif table != MEMBER:
            changelog[entry.key] = entry.value

    restored, owed = restored_user("u", changelog.items())
    assert restored == live
    changelog.update((e.key, e.value) for e in owed)
    before = before_input(restored)
    closed = ConsolidationEvent(
        "in9", "u", T0, "in9", SessionClosed("s", None, T0, T0 + 5, 2, "session_ended")
    )
    apply_outcome(restored, "in9", T0 + 5, [closed])
    changelog.update((e.key, e.value) for e in changed_entries(restored, "in9", [closed], before))

    again, owed_again = restored_user("u", changelog.items())
    assert again.facets.sessions["s"].member_ids == ("a", "b")
    assert again == restored
    assert owed_again == []


def test_a_session_s_members_are_a_sequence_whose_versions_never_change() -> None:
    """Members grow by appending to a list their versions share: an older version (a copy
    that went its own way) must keep what it held, and growing it must not disturb the
    newer one."""
    from streams.engine.user_state import Members

    first = Members(("a",)).plus("b")
    newer = first.plus("c")
    other = first.plus("x")  # grows an older version: copies, leaves `newer` alone

    assert tuple(first) == ("a", "b") and len(first) == 2 and first[-1] == "b"
    assert newer == ("a", "b", "c") and other == ("a", "b", "x")
    assert newer[1:] == ("b", "c") and list(other) == ["a", "b", "x"] and newer != ["a", "b", "c"]
    assert Members() == () and Members(("a",)) != ("b",) and hash(newer) == hash(("a", "b", "c"))


@pytest.mark.parametrize("speaker", ["Caroline", None])
def test_a_memory_s_speaker_survives_a_restore(speaker: str | None) -> None:
    """Given a memory written with or without a speaker, when the worker's state is restored
    from the entries the write produced, then the memory names the same speaker."""
    config = EngineConfig(policy=builtin_profile("default"))
    state = InMemoryUserState("user-0")
    memory = Memory("m-1", "user-0", "I went to a support group yesterday.", speaker=speaker)
    event = MemoryEvent(str(uuid.UUID(int=1)), "user-0", T0, MemoryWritten(memory))
    before = before_input(state)
    outcome = step(state, event, config, key="user-0")
    assert isinstance(outcome, Accepted)
    entries = changed_entries(state, event.event_id, outcome.decisions, before)

    restored, _ = restored_user("user-0", ((e.key, e.value) for e in entries))

    assert restored.memories["m-1"].memory.speaker == speaker
    assert restored == state


def test_a_memory_entry_written_before_speaker_existed_restores_without_one() -> None:
    """A changelog entry an older worker wrote has no ``speaker`` key: the memory restores
    with ``speaker`` None (``created_by`` says who), everything else as written."""
    memory = Memory("m-1", "user-0", "the launch is on Friday", created_by="user", created_at=T0)
    record = MemoryRecord(memory.evolve(speaker="Caroline"), 3, False)
    entry = orjson.loads(encode_memory_record(record, 2))
    assert entry["speaker"] == "Caroline"
    del entry["speaker"]

    restored, epoch = decode_memory_record(orjson.dumps(entry))

    assert restored == MemoryRecord(memory, 3, False)
    assert epoch == 2
