"""Partition state rebuilds in the worker: a slow, stale rebuild never overwrites a newer
one, and the agent waits for the partition's state before processing it."""

from __future__ import annotations

import asyncio
import threading

import pytest

from streams.config.settings import Settings
from streams.engine import ledger
from streams.engine.model import Memory
from streams.state import assignment
from streams.state.hot_users import UserStates
from streams.state.restore import Restored


def stored(version: int) -> ledger.ConsolidationEvent:
    memory = Memory("m1", "u1", f"v{version}")
    return ledger.ConsolidationEvent(
        f"e{version}", "u1", version, f"c{version}", ledger.MemoryStored(memory, version)
    )


@pytest.fixture
def rebuilds(monkeypatch: pytest.MonkeyPatch) -> tuple[assignment.PartitionRebuilds, dict]:
    """PartitionRebuilds over a fake restore (a fold of the ledger given for each read); the
    first read of a partition can be held until the test releases it."""
    control: dict = {
        "ledgers": [],
        "hold_first": threading.Event(),
        "first_done": threading.Event(),
        "reads": 0,
    }
    control["hold_first"].set()

    def restore_partition(
        settings: Settings, partition: int, store: object = None, new_states: object = None
    ) -> Restored:
        control["reads"] += 1
        ledger_events = control["ledgers"][control["reads"] - 1]
        if control["reads"] == 1:
            control["hold_first"].wait(5)
            control["first_done"].set()
        states = UserStates()
        folded = states.rebuild_partition(partition, iter(ledger_events))
        return Restored(states, "ledger", folded, [])

    monkeypatch.setattr(assignment, "restore_partition", restore_partition)
    return assignment.PartitionRebuilds(Settings(), UserStates()), control


def test_the_agent_sees_the_state_folded_from_the_ledger(rebuilds):
    partitions, control = rebuilds
    control["ledgers"] = [[stored(1), stored(2)]]

    async def scenario() -> None:
        partitions.start({0})
        await partitions.ready(0)

    asyncio.run(scenario())

    assert partitions.states.user("u1", 0).memories["m1"].version == 2


def test_a_stale_rebuild_of_a_revoked_partition_does_not_overwrite_the_newer_one(rebuilds):
    """Given a slow rebuild of partition 0 (an older ledger view), when the partition is
    revoked and reassigned and the new rebuild finishes first, then the old read finishing
    later is discarded."""
    partitions, control = rebuilds
    control["ledgers"] = [[stored(1)], [stored(1), stored(2), stored(3)]]
    control["hold_first"].clear()

    async def scenario() -> None:
        partitions.start({0})
        await asyncio.sleep(0)
        partitions.drop({0})
        partitions.start({0})
        await partitions.ready(0)
        control["hold_first"].set()  # the stale read completes now
        assert await asyncio.to_thread(control["first_done"].wait, 5)
        for _ in range(3):  # let anything the stale read scheduled run
            await asyncio.sleep(0)

    asyncio.run(scenario())

    assert partitions.states.user("u1", 0).memories["m1"].version == 3


def test_ready_rebuilds_a_partition_it_has_not_seen_assigned(rebuilds):
    partitions, control = rebuilds
    control["ledgers"] = [[stored(1)]]

    asyncio.run(partitions.ready(5))

    assert partitions.states.users_in(5) == {"u1"}
