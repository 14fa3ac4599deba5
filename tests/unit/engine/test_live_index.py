"""The live memories a cycle walks, oldest first: kept with the user's state by every change,
copied for a cycle without the cycle changing the state's, and built from the user's
records once (when first asked for, or after a restore), not at every cycle's start."""

from __future__ import annotations

import random

import pytest

from streams.engine import live_index
from streams.engine.live_index import LiveIndex
from streams.engine.model import LAYERS, Memory
from streams.engine.oracle import replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from streams.engine.user_state import MemoryRecord
from tests.conversations import long_conversations
from tests.record_walks import count_builds, walk_records, walk_then_copy


def _record(rng: random.Random, memory_id: str) -> MemoryRecord:
    memory = Memory(
        memory_id,
        "u",
        "a note",
        layer=rng.choice(LAYERS),
        created_at=rng.randrange(0, 8) * 1_000,  # ties: ordered by id
        status=rng.choice(("active", "active", "active", "archived", "superseded")),
    )
    return MemoryRecord(memory, 1, forgotten=rng.random() < 0.05)


def _walked(records: dict[str, MemoryRecord]) -> dict[str | None, list[str]]:
    """What a walk of ``records`` says the lists are: every live id oldest first, under None
    and under its layer."""
    live = sorted((r for r in records.values() if r.is_live), key=lambda r: r.memory.age_order)
    lists: dict[str | None, list[str]] = {None: [r.memory.memory_id for r in live]}
    for record in live:
        lists.setdefault(record.memory.layer, []).append(record.memory.memory_id)
    return lists


def _ids(index: LiveIndex) -> dict[str | None, list[str]]:
    layers = (None, *LAYERS)
    return {
        layer: [r.memory.memory_id for r in index.records(layer)]
        for layer in layers
        if index.records(layer)
    }


def test_moves_keep_the_lists_equal_to_a_walk_of_the_records() -> None:
    rng = random.Random(11)
    records: dict[str, MemoryRecord] = {}
    index = LiveIndex()
    walk_records(rng, index.move, _record, records, steps=2_000, ids=150)

    assert len(index.records()) > 50  # the walk left live records behind
    assert _ids(index) == _walked(records)
    assert index == LiveIndex.of(records.values())


def test_a_copy_takes_its_own_changes_and_leaves_the_original_as_it_was() -> None:
    original = LiveIndex()
    before, copy, changed = walk_then_copy(random.Random(12), original, _record, 600, 80)

    assert _ids(copy) == _walked(changed)
    assert _ids(original) == _walked(before)


@pytest.mark.parametrize("profile", ["default", "memorykit", "engram"])
def test_the_state_keeps_its_lists_equal_to_ones_built_from_its_memories(profile: str) -> None:
    """Under profiles that promote, age, merge, archive and summarise, the lists the fold
    kept since the user's first cycle are the ones a walk of the final memories gives."""
    workload = long_conversations(users=2, sessions_per_user=10, seed=7)
    run = replay(workload.events, EngineConfig(policy=builtin_profile(profile)))
    for user in ("user-0", "user-1"):
        state = run.state(user)
        assert state._live is not None  # kept by the fold since the first cycle asked
        assert state.live_index().records()
        assert state.live_index() == LiveIndex.of(state.memories.values())


def test_cycles_after_the_first_do_not_walk_the_users_records_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The lists are built from the records once per user; every later cycle starts from
    the kept lists, however much history (archived memories included) the user has."""
    workload = long_conversations(users=1, sessions_per_user=12, seed=8)
    config = EngineConfig(policy=builtin_profile("default"))
    built = count_builds(monkeypatch, live_index.LiveIndex)
    run = replay(workload.events, config)

    cycles = {d.cycle_id for d in run.decisions if d.cycle_id is not None}
    assert len(cycles) > 10
    assert len(built) == 1
