"""The narratives the insight rule reads a week of: kept with the user's state by every
change, archived ones included, copied for a cycle without the cycle changing the state's,
and read by time rather than by a walk of the user's history."""

from __future__ import annotations

import random

import pytest

from streams.engine import narrative_index
from streams.engine.model import Memory
from streams.engine.narrative_index import NarrativeIndex
from streams.engine.oracle import replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from streams.engine.user_state import MemoryRecord
from tests.conversations import long_conversations
from tests.record_walks import count_builds, walk_records, walk_then_copy

DAY = 86_400_000


def _record(rng: random.Random, memory_id: str) -> MemoryRecord:
    memory = Memory(
        memory_id,
        "u",
        "a session",
        layer="episodic",
        kind=rng.choice(("narrative", "narrative", "note")),
        created_at=rng.randrange(0, 20) * DAY // 2,  # ties: ordered by id
        status=rng.choice(("active", "archived")),
    )
    return MemoryRecord(memory, 1, forgotten=rng.random() < 0.1)


def _walked(records: dict[str, MemoryRecord], since: int) -> list[str]:
    """What a walk of ``records`` says: the narratives created since ``since``, oldest first."""
    found = [
        r.memory
        for r in records.values()
        if r.memory.kind == "narrative" and not r.forgotten and (r.memory.created_at or 0) >= since
    ]
    return [m.memory_id for m in sorted(found, key=lambda m: m.age_order)]


@pytest.mark.parametrize("since", [0, 3 * DAY, 7 * DAY, 20 * DAY])
def test_moves_keep_the_index_equal_to_a_walk_of_the_records(since: int) -> None:
    rng = random.Random(21)
    records: dict[str, MemoryRecord] = {}
    index = NarrativeIndex()
    walk_records(rng, index.move, _record, records, steps=1_500, ids=120)

    assert index.narratives_since(0)  # the walk left narratives behind
    assert index.narratives_since(since) == _walked(records, since)
    assert NarrativeIndex.of(records.values()).narratives_since(since) == _walked(records, since)


def test_a_copy_takes_its_own_changes_and_leaves_the_original_as_it_was() -> None:
    original = NarrativeIndex()
    before, copy, changed = walk_then_copy(random.Random(22), original, _record, 500, 60)
    added = _record(random.Random(1), "added-after-the-copy")
    original.move(None, added)

    assert copy.narratives_since(0) == _walked(changed, 0)
    assert added.memory.memory_id not in copy.narratives_since(0)
    assert original.narratives_since(0) == _walked({**before, added.memory.memory_id: added}, 0)


@pytest.mark.parametrize("profile", ["default", "astra"])
def test_the_state_keeps_its_index_equal_to_one_built_from_its_memories(profile: str) -> None:
    workload = long_conversations(users=2, sessions_per_user=10, seed=9)
    run = replay(workload.events, EngineConfig(policy=builtin_profile(profile)))
    for user in ("user-0", "user-1"):
        state = run.state(user)
        kept = state.narrative_index()
        assert kept.narratives_since(0)  # sessions became narratives
        rebuilt = NarrativeIndex.of(state.memories.values())
        assert kept.narratives_since(0) == rebuilt.narratives_since(0)
        assert kept.narratives_since(0) == _walked(state.memories, 0)


def test_cycles_read_the_narratives_without_walking_the_users_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The index is built from the records once per user; the cycles that write narratives
    (and so look for insights) read it, however much history the user has."""
    workload = long_conversations(users=1, sessions_per_user=12, seed=10)
    built = count_builds(monkeypatch, narrative_index.NarrativeIndex)
    run = replay(workload.events, EngineConfig(policy=builtin_profile("default")))

    narratives = [d for d in run.decisions if type(d.payload).__name__ == "SessionConsolidated"]
    assert len(narratives) > 5
    assert len(built) == 1
