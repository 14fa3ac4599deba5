"""One input's output goes into the transaction that commits the input's offset, and no
commit lands between two of its records (issue: a SIGKILL during a consolidation cycle
commits part of the cycle). Faust's own ``send`` to a topic the worker does not consume
falls back to a non-transactional producer, and its commit timer can run between two
sends; these tests pin down both fixes without a broker."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from memstream.settings import Settings
from streams.app import faust_app
from streams.transactional_output import (
    EmissionGuard,
    OutgoingRecord,
    TransactionalOutput,
    commit_partitions_together,
    guard_commits,
)


class RecordingProducer:
    """Stands in for Faust's producer object (not for Kafka): records what is sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, int | None, str | None]] = []

    async def send(
        self,
        topic: str,
        key: Any,
        value: Any,
        partition: Any,
        timestamp: Any,
        headers: Any,
        *,
        transactional_id: str | None = None,
    ) -> None:
        self.sent.append((topic, partition, transactional_id))
        await asyncio.sleep(0)  # like the real one: a commit waiting on the lock may run here


def test_a_commit_waits_for_the_emission_in_flight_and_then_runs() -> None:
    """Given the agent is sending one input's records,
    when Faust's commit timer fires,
    then the commit does not start until the last record is sent."""

    async def scenario() -> list[str]:
        guard = EmissionGuard()
        app = faust_app(Settings(), "guard-test")
        guard_commits(app, guard)
        consumer = app.consumer
        order: list[str] = []
        async with guard.emitting():
            commit = asyncio.ensure_future(consumer.commit())
            commit.add_done_callback(lambda _: order.append("committed"))
            for _ in range(20):  # the commit task gets every chance to run
                await asyncio.sleep(0)
            order.append("last record sent")
        await commit
        return order

    assert asyncio.run(scenario()) == ["last record sent", "committed"]


def test_the_guard_must_be_installed_before_faust_creates_its_consumer() -> None:
    app = faust_app(Settings(), "guard-test-late")
    _ = app.consumer

    with pytest.raises(RuntimeError, match="before the Faust consumer is created"):
        guard_commits(app, EmissionGuard())


def test_every_record_of_an_input_goes_to_the_input_partition_s_transaction() -> None:
    """Given records for the ledger and the dead-letter topic (neither consumed by the worker),
    when they are sent for an input of partition 3,
    then each is sent with the transactional id Faust commits partition 3's offsets with."""
    app = faust_app(Settings(), "tx-test")
    output = TransactionalOutput(app, "memory.events")
    app.assignor._topic_groups = {"memory.events": 0}  # what the group leader assigns
    producer = RecordingProducer()
    app.producer = producer  # type: ignore[assignment]
    records = [
        OutgoingRecord("memory.consolidation", b"u", b"1", [], 3),
        OutgoingRecord("memory.consolidation", b"u", b"2", [], 3),
        OutgoingRecord("memory.deadletter", b"u", b"x", []),
    ]

    asyncio.run(output.send(3, records))

    assert producer.sent == [
        ("memory.consolidation", 3, "tx-test-0-3"),
        ("memory.consolidation", 3, "tx-test-0-3"),
        ("memory.deadletter", None, "tx-test-0-3"),
    ]


def test_the_partitions_transactions_are_committed_together_each_on_its_own() -> None:
    """Given three partitions' transactions to commit (Faust commits them one after another,
    each a few broker round trips), when the worker's producer commits them, then each goes
    through Faust's commit with only its own offsets, and all three are in flight at once."""
    app = faust_app(Settings(), "commit-test")
    base = app.transport.Producer
    faust_commit = base.commit_transactions
    calls: list[dict[str, Any]] = []
    all_started = asyncio.Event()

    async def recording_commit(self: Any, offsets: Any, group_id: str, **_: Any) -> None:
        calls.append(dict(offsets))
        if len(calls) == 3:
            all_started.set()
        # one after another, the first commit would wait here for ever: fail instead
        await asyncio.wait_for(all_started.wait(), timeout=5)

    base.commit_transactions = recording_commit  # what the subclass calls
    try:
        commit_partitions_together(app)
        producer = app.transport.Producer.__new__(app.transport.Producer)
        offsets = {f"commit-test-0-{p}": {p: 10 * p} for p in range(3)}
        asyncio.run(producer.commit_transactions(offsets, "commit-test"))
    finally:
        base.commit_transactions = faust_commit

    assert sorted(calls, key=repr) == sorted(({t: o} for t, o in offsets.items()), key=repr)
