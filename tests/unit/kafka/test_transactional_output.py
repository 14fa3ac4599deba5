"""One input's output goes into the transaction that commits the input's offset, and no
commit lands between two of its records (issue: a SIGKILL during a consolidation cycle
commits part of the cycle). Faust's own ``send`` to a topic the worker does not consume
falls back to a non-transactional producer, and its commit timer can run between two
sends; these tests pin down both fixes without a broker."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka.errors import KafkaTimeoutError, ProducerFenced, TopicAuthorizationFailedError
from faust.exceptions import ProducerSendError

from streams.config.settings import Settings
from streams.kafka.faust_app import faust_app
from streams.kafka.transactional_output import (
    EmissionGuard,
    OutgoingRecord,
    OutputLost,
    TransactionalOutput,
    commit_partitions_together,
    guard_commits,
)


class RecordingBatch:
    """Stands in for aiokafka's batch builder: holds ``capacity`` records."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.values: list[bytes | None] = []
        self.closed = False

    def append(self, *, key: Any, value: Any, timestamp: Any, headers: Any) -> object | None:
        assert not self.closed
        if len(self.values) == self.capacity:
            return None
        self.values.append(value)
        return object()

    def close(self) -> None:
        self.closed = True


class RecordingProducer:
    """Stands in for the aiokafka producer Faust keeps per transaction (not for Kafka):
    records what is sent, and settles each batch at ``base_offset``."""

    def __init__(
        self, batch_capacity: int = 100, base_offset: int = 40, failure: Exception | None = None
    ) -> None:
        self.batch_capacity = batch_capacity
        self.base_offset = base_offset
        self.failure = failure  # raised by send_batch, as aiokafka raises a KafkaError
        self._max_request_size = 1_048_576  # aiokafka's default
        self.sent: list[tuple[str, int | None, list[bytes | None]]] = []
        self.on_send: Any = None  # run while a batch is queued (a rebalance meanwhile)
        self.refusal: Exception | None = None  # how the broker answers each batch, if it fails
        self._request_timeout_ms = 1_200_000  # Faust's producer_request_timeout

    def create_batch(self) -> RecordingBatch:
        return RecordingBatch(self.batch_capacity)

    async def send_batch(self, batch: RecordingBatch, topic: str, *, partition: int) -> Any:
        assert batch.closed, "a queued batch must be closed to further appends"
        if self.failure is not None:
            raise self.failure
        if self.on_send is not None:
            self.on_send()
        self.sent.append((topic, partition, batch.values))
        await asyncio.sleep(0)  # like the real one: a commit waiting on the lock may run here
        future = asyncio.get_running_loop().create_future()
        if self.refusal is not None:  # the broker refuses the batch for good
            future.set_exception(self.refusal)
        else:
            future.set_result(SimpleNamespace(offset=self.base_offset))
        self.base_offset += len(batch.values)
        return future

    async def send(self, topic: str, value: Any, *, key: Any, headers: Any) -> Any:
        self.sent.append((topic, None, [value]))
        await asyncio.sleep(0)
        future = asyncio.get_running_loop().create_future()
        future.set_result(SimpleNamespace(offset=0))
        return future


class FaustProducer:
    """Faust's producer as the output reaches into it: a producer and a lock per
    transactional id."""

    def __init__(self, producers: dict[str, RecordingProducer]) -> None:
        self._transaction_producers = producers
        self._trn_locks = {transactional_id: asyncio.Lock() for transactional_id in producers}


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


def test_the_output_is_settled_under_the_guard_before_every_commit() -> None:
    """Given the commit hooks, when Faust's commit runs, then the output is settled first,
    while the guard is held (no record can be sent between the settling and the commit),
    and the after-commit hook runs last."""

    async def scenario() -> list[str]:
        guard = EmissionGuard()
        app = faust_app(Settings(), "settle-test")
        order: list[str] = []

        async def settle() -> None:
            order.append(f"settled, guard held: {guard._lock.locked()}")

        guard_commits(app, guard, lambda: order.append("after commit"), before_commit=settle)
        await app.consumer.commit()
        return order

    assert asyncio.run(scenario()) == ["settled, guard held: True", "after commit"]


def test_the_guard_must_be_installed_before_faust_creates_its_consumer() -> None:
    app = faust_app(Settings(), "guard-test-late")
    _ = app.consumer

    with pytest.raises(RuntimeError, match="before the Faust consumer is created"):
        guard_commits(app, EmissionGuard())


def output_with(producers: dict[str, RecordingProducer], app_id: str) -> TransactionalOutput:
    app = faust_app(Settings(), app_id)
    output = TransactionalOutput(app, "memory.events")
    app.assignor._topic_groups = {"memory.events": 0}  # what the group leader assigns
    app.producer = FaustProducer(producers)  # type: ignore[assignment]
    return output


def test_every_record_of_an_input_goes_to_the_input_partition_s_transaction() -> None:
    """Given records for the ledger and the dead-letter topic (neither consumed by the worker),
    when they are sent for an input of partition 3,
    then each is sent by the producer of the transaction Faust commits partition 3's offsets
    with, the partitioned ones as one batch per topic partition in their order."""
    mine, other = RecordingProducer(), RecordingProducer()
    output = output_with({"tx-test-0-3": mine, "tx-test-0-4": other}, "tx-test")
    records = [
        OutgoingRecord("memory.consolidation", b"u", b"1", [], 3),
        OutgoingRecord("memory.state", b"u", b"s", [], 3),
        OutgoingRecord("memory.consolidation", b"u", b"2", [], 3),
        OutgoingRecord("memory.deadletter", b"u", b"x", []),
    ]

    asyncio.run(output.send(3, records))

    assert mine.sent == [
        ("memory.consolidation", 3, [b"1", b"2"]),
        ("memory.state", 3, [b"s"]),
        ("memory.deadletter", None, [b"x"]),
    ]
    assert other.sent == []


def test_a_full_batch_is_sent_and_the_rest_goes_in_the_next_with_the_last_offset_known() -> None:
    """Given more changelog records than a record batch holds, when they are sent, then they
    go in order over several batches, and the delivery says where the last one landed."""
    producer = RecordingProducer(batch_capacity=2, base_offset=100)
    output = output_with({"full-test-0-5": producer}, "full-test")
    records = [OutgoingRecord("memory.state", b"u", bytes([i]), [], 5) for i in range(5)]

    async def send() -> int:
        deliveries = await output.send(5, records)
        delivery = deliveries.of("memory.state", 5)
        assert delivery.delivered()
        return delivery.last_offset()

    last_offset = asyncio.run(send())

    assert producer.sent == [
        ("memory.state", 5, [b"\x00", b"\x01"]),
        ("memory.state", 5, [b"\x02", b"\x03"]),
        ("memory.state", 5, [b"\x04"]),
    ]
    assert last_offset == 104


def test_a_revoked_partition_s_output_is_refused_and_nothing_is_sent() -> None:
    """Given partition 3's transactional producer is gone (revoked while the batch was
    processed), when its output is sent, then Faust's ProducerSendError says so."""
    output = output_with({}, "gone-test")

    with pytest.raises(ProducerSendError, match="revoked"):
        asyncio.run(output.send(3, [OutgoingRecord("memory.consolidation", b"u", b"1", [], 3)]))


def test_a_kafka_error_while_sending_is_faust_s_producer_send_error() -> None:
    """Given the producer fails a send (here: no room within the request timeout), when a
    partition's output is sent, then the worker gets Faust's ProducerSendError, which it
    treats as a revoke if the partition is gone and as a failure if it is still its own."""
    failing = RecordingProducer(failure=KafkaTimeoutError())
    output = output_with({"fail-test-0-2": failing}, "fail-test")

    with pytest.raises(ProducerSendError, match="KafkaTimeoutError"):
        asyncio.run(output.send(2, [OutgoingRecord("memory.consolidation", b"u", b"1", [], 2)]))


def test_a_producer_stopped_by_a_rebalance_while_sending_refuses_the_output() -> None:
    """Given a rebalance stops the partition's producer while a batch is queued (Faust does
    not take the transaction's lock to stop it), when the send ends, then it is refused as a
    revoke instead of returning deliveries that would never settle."""
    producer = RecordingProducer()
    faust_side = {"stop-test-0-4": producer}
    output = output_with(faust_side, "stop-test")
    producer.on_send = lambda: faust_side.pop("stop-test-0-4")

    with pytest.raises(ProducerSendError, match="revoked"):
        asyncio.run(output.send(4, [OutgoingRecord("memory.state", b"u", b"s", [], 4)]))


def test_a_record_larger_than_a_request_is_refused_before_anything_is_queued() -> None:
    """Given a record larger than the producer's max_request_size (aiokafka's send refuses
    it; a batch builder would take it and the broker's refusal would fail only its batch),
    when it is sent, then the send fails and nothing is queued."""
    producer = RecordingProducer()
    output = output_with({"size-test-0-1": producer}, "size-test")
    records = [
        OutgoingRecord("memory.consolidation", b"u", b"small", [], 1),
        OutgoingRecord("memory.consolidation", b"u", b"x" * 1_100_000, [], 1),
    ]

    with pytest.raises(ProducerSendError, match="max_request_size"):
        asyncio.run(output.send(1, records))
    assert producer.sent == []


def test_a_commit_is_refused_when_a_batch_of_a_transaction_still_held_did_not_land() -> None:
    """Given the broker refused a batch for good (a write the ACLs no longer allow; aiokafka
    fails only that batch and keeps the transaction open), when the next commit settles the
    output, then it is refused: committing would ack the inputs without their records."""
    producer = RecordingProducer()
    producer.refusal = TopicAuthorizationFailedError("memory.consolidation")
    output = output_with({"acl-test-0-6": producer}, "acl-test")

    async def send_then_settle() -> None:
        await output.send(6, [OutgoingRecord("memory.consolidation", b"u", b"1", [], 6)])
        await output.settle()

    with pytest.raises(OutputLost, match="transaction acl-test-0-6 did not land .1 of 1 sends"):
        asyncio.run(send_then_settle())


def test_after_a_send_failed_part_way_every_commit_of_the_transaction_is_refused() -> None:
    """Given a send that queued the ledger batch and then failed (here: a dead letter the
    producer refused), so the agent stops and Faust acks its batch, when the next commits
    settle the output, then each is refused: the transaction may hold part of the output."""
    producer = RecordingProducer()
    output = output_with({"part-test-0-3": producer}, "part-test")
    records = [
        OutgoingRecord("memory.consolidation", b"u", b"1", [], 3),
        OutgoingRecord("memory.deadletter", b"u", b"x", []),
    ]

    async def fail_then_settle_twice() -> list[OutputLost]:
        lost: list[OutputLost] = []
        output.on_lost = lost.append

        async def refusing_send(*_: Any, **__: Any) -> Any:
            raise KafkaTimeoutError()

        producer.send = refusing_send  # type: ignore[method-assign]
        with pytest.raises(ProducerSendError):
            await output.send(3, records)
        await output.settle()
        await output.settle()
        return lost

    lost = asyncio.run(fail_then_settle_twice())

    assert producer.sent == [("memory.consolidation", 3, [b"1"])]
    assert len(lost) == 2
    assert "a send failed part-way: KafkaTimeoutError" in str(lost[0])


def test_a_replaced_producer_s_failed_batches_do_not_stop_the_commit() -> None:
    """Given a batch of partition 2 the broker refused, and partition 2 then revoked and
    assigned back (Faust made a new producer for it), when the commit settles the output,
    then the old producer's failure is not the new transaction's: the commit goes on."""
    old = RecordingProducer()
    old.refusal = TopicAuthorizationFailedError("memory.state")
    faust_side = {"swap-test-0-2": old}
    output = output_with(faust_side, "swap-test")
    lost: list[OutputLost] = []
    output.on_lost = lost.append

    async def send_swap_settle() -> None:
        await output.send(2, [OutgoingRecord("memory.state", b"u", b"s", [], 2)])
        faust_side["swap-test-0-2"] = RecordingProducer()
        await output.settle()

    asyncio.run(send_swap_settle())

    assert lost == []


def test_landed_or_fenced_output_lets_the_commit_go_on() -> None:
    """Given one partition's batches landed and another's producer was fenced by the
    partition's next owner (its transaction cannot commit anyway), when the commit settles
    the output, then nothing stops it, and what was settled is not waited for again."""
    landed, fenced = RecordingProducer(), RecordingProducer()
    fenced.refusal = ProducerFenced()
    output = output_with({"ok-test-0-1": landed, "ok-test-0-2": fenced}, "ok-test")
    lost: list[OutputLost] = []
    output.on_lost = lost.append

    async def send_then_settle() -> int:
        await output.send(1, [OutgoingRecord("memory.state", b"u", b"s", [], 1)])
        await output.send(2, [OutgoingRecord("memory.state", b"u", b"s", [], 2)])
        await output.settle()
        return len(output._sent)

    assert asyncio.run(send_then_settle()) == 0
    assert lost == []


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
