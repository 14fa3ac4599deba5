"""The facts index contradiction checks read: kept in step with the memories by every
change, read through a cycle's overlay without changing the state's, and built from a
fact's text once, not once per cycle."""

from __future__ import annotations

import random

import pytest

from streams.engine import fact_index
from streams.engine.fact_index import FactIndex, blocking_keys, is_current_fact
from streams.engine.model import Memory, claim_of
from streams.engine.oracle import replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from streams.engine.user_state import SUMMARIZED_INTO, MemoryRecord
from tests.conversations import long_conversations
from tests.record_walks import walk_records

TEXTS = (
    "I work at Hooli as an analyst",
    "I work at Umbrella Labs now",
    "Ana lives in Lisbon",
    "Ana moved to Porto",
    "My manager is Bruno",
    "The standup is at 9am",
    "Bruno prefers Zed",
)


def _record(rng: random.Random, memory_id: str) -> MemoryRecord:
    archived = rng.random() < 0.3
    memory = Memory(
        memory_id,
        "u",
        rng.choice(TEXTS),
        layer=rng.choice(("semantic", "semantic", "episodic")),
        kind=rng.choice(("fact", "fact", "narrative")),
        created_at=rng.randrange(0, 5) * 1_000,
        status="archived" if archived else "active",
        invalid_at=1 if rng.random() < 0.15 else None,
        metadata={SUMMARIZED_INTO: "n1"} if archived and rng.random() < 0.7 else {},
    )
    return MemoryRecord(memory, 1, forgotten=rng.random() < 0.05)


def _assert_matches(index: FactIndex, records: dict[str, MemoryRecord]) -> None:
    """``index`` says what a walk of ``records`` says: the facts in order, their keys and
    who carries each key."""
    facts = sorted(
        ((r.memory.created_at or 0, i) for i, r in records.items() if is_current_fact(r))
    )
    assert index.ordered_ids() == [i for _, i in facts]
    carrying: dict[str, set[str]] = {}
    for _, memory_id in facts:
        keys = blocking_keys(claim_of(records[memory_id].memory))
        assert index.keys_of(memory_id) == keys
        for key in keys:
            carrying.setdefault(key, set()).add(memory_id)
    for key, carriers in carrying.items():
        assert set(index.carrying(key)) == carriers
    assert all(not index.keys_of(i) for i, r in records.items() if not is_current_fact(r))


def _walk(rng: random.Random, index: FactIndex, records: dict[str, MemoryRecord]) -> None:
    walk_records(rng, index.move, _record, records, steps=1_500, ids=120)


def test_moves_keep_the_index_equal_to_a_walk_of_the_records() -> None:
    rng = random.Random(3)
    records: dict[str, MemoryRecord] = {}
    index = FactIndex(with_keys=True)
    _walk(rng, index, records)
    assert index.ordered_ids()  # the walk left facts behind
    _assert_matches(index, records)
    _assert_matches(FactIndex.of(records.values(), with_keys=True), records)


def test_an_overlay_sees_its_own_changes_and_leaves_the_base_as_it_was() -> None:
    rng = random.Random(4)
    records: dict[str, MemoryRecord] = {}
    base = FactIndex(with_keys=True)
    _walk(rng, base, records)
    before = dict(records)

    overlay = base.overlay()
    changed = dict(records)
    _walk(rng, overlay, changed)

    _assert_matches(overlay, changed)
    _assert_matches(base, before)


def test_the_state_keeps_its_index_equal_to_one_built_from_its_memories() -> None:
    workload = long_conversations(users=2, sessions_per_user=10, seed=5)
    run = replay(workload.events, EngineConfig(policy=builtin_profile("default")))
    for user in ("user-0", "user-1"):
        state = run.state(user)
        kept = state.fact_index(with_keys=True)
        assert kept.ordered_ids()
        _assert_matches(kept, state.memories)


def test_later_cycles_do_not_read_the_keys_of_old_facts_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Old facts' keys are read once, when they became facts: later cycles read only the
    texts of what is new, however many old facts there are (before, every cycle read every
    fact's keys, through a memo by text that a worker's many users would overflow)."""
    workload = long_conversations(users=1, sessions_per_user=12, seed=6)
    config = EngineConfig(policy=builtin_profile("default"))
    split = len(workload.events) * 3 // 4
    run = replay(workload.events[:split], config)
    state = run.state("user-0")
    old_texts = {state.memories[i].memory.content for i in state.fact_index(True).ordered_ids()}
    assert len(old_texts) > 20

    read: list[str] = []

    def counted(content: str) -> tuple[str, ...]:
        read.append(content)
        return blocking_keys(content)

    monkeypatch.setattr(fact_index, "blocking_keys", counted)
    for event in workload.events[split:]:
        run.feed(event, config)

    later_texts = {
        e.payload.memory.content for e in workload.events[split:] if hasattr(e.payload, "memory")
    }
    assert read  # new facts were indexed
    assert not (set(read) & old_texts) - later_texts
