"""Sends everything one input produces inside the Kafka transaction that commits the input's
offset, and never lets a commit split it.

Two things in Faust (faust-streaming 0.15) stand between ``processing_guarantee=
"exactly_once"`` and an atomic output, both found by reading its code and the ledger:

1. **Sends to a topic the worker does not consume are not transactional.** Faust's
   ``TransactionManager.send`` picks the transactional producer from
   ``consumer.key_partition(topic, ...)``, which answers ``None`` for a topic missing from the
   consumer's metadata (the ledger and dead-letter topics: the worker only subscribes to
   ``memory.events``). It then falls back to the plain producer, so ledger records were
   written outside any transaction (the ledger partitions had no transaction markers) and
   became visible before, and independently of, the input's offset commit.
   :class:`TransactionalOutput` sends through the transactional producer of the *input*
   partition (``{app id}-{group}-{partition}``, Faust's own id scheme), the one whose
   transaction Faust commits together with that partition's offsets.
2. **A commit can land between two sends of one input.** Faust commits on a timer, in its own
   task, and its transactional ``Producer.send`` takes and releases a per-transaction lock
   around each record, so a waiting commit runs between two records of the same input: the
   transaction holds a prefix of the input's output but not its offset (the input is not
   acked yet). :class:`EmissionGuard` closes that window: the output is sent while holding
   it, and the worker's consumer (:func:`guard_commits`) takes it before every commit.

An input wholly sent but not yet acked can still be committed without its offset; on restart
its complete emission in the ledger marks it processed, so it is not redone. Readers also
check completeness themselves (``streams.engine.emissions``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import faust
from aiokafka.errors import KafkaError, MessageSizeTooLargeError, ProducerClosed, ProducerFenced
from aiokafka.record.default_records import DefaultRecordBatchBuilder
from faust.exceptions import ProducerSendError

from streams.kafka.deadletter import Headers


class EmissionGuard:
    """Mutual exclusion between "sending one input's records" and "committing"."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()

    @asynccontextmanager
    async def emitting(self) -> AsyncIterator[None]:
        """Hold while sending everything one input produced."""
        async with self._lock:
            yield

    @asynccontextmanager
    async def committing(self) -> AsyncIterator[None]:
        """Held by the consumer around each commit of offsets + transaction."""
        async with self._lock:
            yield


def guard_commits(
    app: faust.App,
    guard: EmissionGuard,
    after_commit: Callable[[], None] | None = None,
    before_commit: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Make ``app`` 's consumer wait for ``guard`` before every commit, run ``before_commit``
    once it holds the guard, and ``after_commit`` once a commit is done, still holding the
    guard (no record is in flight then: everything sent is in a transaction that just
    committed or is still open).

    Every commit path in Faust (the commit timer, ``commit_every``, rebalances, shutdown)
    goes through ``Consumer.commit``, so guarding that one method guards them all. Must be
    called before the app creates its consumer (i.e. right after the app is built)."""
    if app._consumer is not None:  # the consumer is created lazily by Faust
        raise RuntimeError("guard_commits must run before the Faust consumer is created")
    transport = app.transport
    base: Any = transport.Consumer

    class EmissionGuardedConsumer(base):
        async def commit(self, topics: Any = None, start_new_transaction: bool = True) -> bool:
            async with guard.committing():
                if before_commit is not None:
                    await before_commit()
                result: bool = await super().commit(
                    topics, start_new_transaction=start_new_transaction
                )
                if after_commit is not None:
                    after_commit()
                return result

    transport.Consumer = EmissionGuardedConsumer  # type: ignore[misc]


def commit_partitions_together(app: faust.App) -> None:
    """Commit the partitions' transactions concurrently instead of one after another.

    Faust's ``Producer.commit_transactions`` commits each input partition's transaction in
    turn (offsets, then EndTxn, then a new transaction: several broker round trips each),
    and the worker's emission guard stalls the agent for the whole loop: with 12 partitions
    that was most of a commit's 0.1-0.5 s. Each partition has its own transactional producer
    and lock, and each transaction is atomic on its own (its records with its offsets), so
    committing them together changes no guarantee. Must be called before the producer is
    created (right after the app is built)."""
    if app._producer is not None:  # created lazily by Faust
        raise RuntimeError("commit_partitions_together must run before the producer exists")
    transport = app.transport  # the one whose create_producer makes app.producer
    base: Any = transport.Producer

    class ConcurrentlyCommittingProducer(base):
        async def commit_transactions(
            self,
            tid_to_offset_map: Mapping[str, Mapping[Any, int]],
            group_id: str,
            start_new_transaction: bool = True,
        ) -> None:
            commit = super().commit_transactions
            await asyncio.gather(
                *(
                    commit({tid: offsets}, group_id, start_new_transaction=start_new_transaction)
                    for tid, offsets in tid_to_offset_map.items()
                )
            )

    transport.Producer = ConcurrentlyCommittingProducer  # type: ignore[misc]


@dataclass(frozen=True, slots=True)
class OutgoingRecord:
    topic: str
    key: bytes | None
    value: bytes | None  # None: a tombstone, on a compacted topic
    headers: Headers
    partition: int | None = None  # None: by key, with the producer's partitioner


class TransactionalOutput:
    """Sends one input's records in the transaction of the input's partition, atomically."""

    def __init__(
        self,
        app: faust.App,
        input_topic: str,
        after_commit: Callable[[], None] | None = None,
        on_lost: Callable[[OutputLost], None] | None = None,
    ) -> None:
        """``on_lost``: what to do when a record of a transaction this worker still holds
        did not land (:meth:`settle`); the default raises :class:`OutputLost` in the commit,
        and the worker stops without committing instead (``streams.runtime.stopping``)."""
        self.app = app
        self.input_topic = input_topic
        self.guard = EmissionGuard()
        self.on_lost = on_lost
        self._sent: dict[str, _Sent] = {}  # per transactional id, since the last commit
        guard_commits(app, self.guard, after_commit, before_commit=self.settle)
        commit_partitions_together(app)

    async def settle(self) -> None:
        """Before a commit (under the guard): wait until everything sent since the last
        commit has landed, and refuse the commit if a send of a transaction this worker
        still holds failed.

        aiokafka fails only the batch the broker refused for good (a record too large for
        the topic, a write the ACLs no longer allow, a batch that expired): the transaction
        stays open and commits without it, with the offsets of the inputs that produced it.
        A send that failed part-way (the agent then stops, and Faust acks its batch) may
        have left some of its records in the transaction. Waiting costs nothing a commit
        does not pay anyway: it flushes every batch first, and waits as long (the
        producer's request timeout: Faust's 1,200 s). Deliveries of a producer fenced or
        stopped by a rebalance are left alone: its transaction cannot commit, and the
        partition's next owner processes the inputs."""
        held = {tid: sent for tid, sent in self._sent.items() if self._holds(tid, sent.producer)}
        futures = [future for sent in held.values() for future in sent.futures]
        if futures:
            timeout = max(s.producer._request_timeout_ms for s in held.values()) / 1000 + 5.0
            await asyncio.wait(futures, timeout=timeout)
        # only now (a commit cancelled while waiting leaves them to the next one), and what
        # failed stays: every later commit of that transaction is refused too
        self._sent = {}
        for tid, sent in held.items():
            reasons = sent.failures()
            if not reasons or not self._holds(tid, sent.producer):
                continue  # landed, or revoked while its records were landing
            self._sent[tid] = sent
            error = OutputLost(
                f"sends in transaction {tid} did not land ({'; '.join(reasons)}): not "
                f"committing its inputs"
            )
            if self.on_lost is None:
                raise error
            self.on_lost(error)

    def _sending(self, transactional_id: str, producer: Any) -> _Sent:
        sent = self._sent.get(transactional_id)
        if sent is None or sent.producer is not producer:  # a new producer: the old one's
            sent = self._sent[transactional_id] = _Sent(producer)  # transaction cannot commit
        return sent

    def _holds(self, transactional_id: str, producer: Any) -> bool:
        faust_producer: Any = self.app.producer
        return faust_producer._transaction_producers.get(transactional_id) is producer

    def transactional_id(self, input_partition: int) -> str:
        """Faust's id for the producer whose transaction commits ``input_partition`` 's
        offsets (``TransactionManager.transactional_id_format``)."""
        group = self.app.assignor.group_for_topic(self.input_topic)
        return f"{self.app.conf.id}-{group}-{input_partition}"

    async def send(self, input_partition: int, records: Sequence[OutgoingRecord]) -> Deliveries:
        """Send ``records`` (a whole batch of one input partition's output) with no commit in
        between; returns where they landed once the producer has flushed them.

        Records with a partition go as one record batch per topic partition (in their
        order), built here and handed to the producer whole: a record sent alone costs
        ~20 µs in Faust's and aiokafka's send path (a lock, a metadata check and a future
        each), appended to a batch ~7 µs, and a batch of inputs sends thousands of them.
        Records without one (dead letters, partitioned by key) are sent alone.

        Raises Faust's ``ProducerSendError`` when the partition's transactional producer is
        gone (the partition was revoked meanwhile): the input is then not committed here and
        its next owner processes it again."""
        deliveries = Deliveries()
        if not records:
            return deliveries
        transactional_id = self.transactional_id(input_partition)
        faust_producer: Any = self.app.producer
        lock = faust_producer._trn_locks.get(transactional_id)
        if lock is None:  # never began (its producer failed to start) or already forgotten
            raise _revoked(transactional_id, input_partition)
        # Faust's lock for this transaction (its begin, commit and abort take it too), inside
        # the emission guard as in a commit
        async with self.guard.emitting(), lock:
            producer = faust_producer._transaction_producers.get(transactional_id)
            if producer is None:
                raise _revoked(transactional_id, input_partition)
            sent = self._sending(transactional_id, producer)
            try:
                for (topic, partition), batch in _by_topic_partition(records).items():
                    await _send_batched(producer, topic, partition, batch, deliveries, sent)
                for record in records:
                    if record.partition is None:
                        sent.track(
                            await producer.send(
                                record.topic, record.value, key=record.key, headers=record.headers
                            )
                        )
            except KafkaError as exc:  # as Faust's own send: the caller decides what it means
                sent.broken = f"a send failed part-way: {exc!r}"
                raise ProducerSendError(f"sending to {transactional_id}: {exc!r}") from exc
            if not self._holds(transactional_id, producer):
                # Stopped by a rebalance (Faust stops it without the lock) while a batch waited
                # for the one before it: aiokafka may have queued that batch after its last
                # flush, so its delivery would never settle.
                raise _revoked(transactional_id, input_partition)
        return deliveries


@dataclass
class _Sent:
    """What one transaction's producer sent since the last commit."""

    producer: Any
    futures: list[asyncio.Future[Any]] = field(default_factory=list)
    broken: str | None = None  # a send failed part-way: some of its records may be queued

    def track(self, future: asyncio.Future[Any]) -> None:
        # read the outcome even when nobody else will (a revoked producer's batches), so
        # asyncio does not report a failure as never retrieved
        future.add_done_callback(_retrieve)
        self.futures.append(future)

    def failures(self) -> list[str]:
        lost = [reason for future in self.futures if (reason := _why_lost(future)) is not None]
        reasons = sorted(set(lost))
        if lost:
            reasons.insert(0, f"{len(lost)} of {len(self.futures)} sends")
        return [self.broken, *reasons] if self.broken else reasons


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


class OutputLost(Exception):
    """Records sent in a transaction the worker still holds did not land: committing it
    would commit their inputs' offsets without them."""


# The transaction cannot commit after these (EndTxn fails, or the producer is gone): its
# inputs are processed again, so a batch lost with them is not lost output.
_ENDS_THE_TRANSACTION = (ProducerFenced, ProducerClosed)


def _why_lost(future: asyncio.Future[Any]) -> str | None:
    """None when the records landed (or cannot matter: see ``_ENDS_THE_TRANSACTION``)."""
    if not future.done():
        return "not delivered in time"
    if future.cancelled():
        return "cancelled"
    error = future.exception()
    if error is None or isinstance(error, _ENDS_THE_TRANSACTION):
        return None
    return repr(error)


def _revoked(transactional_id: str, input_partition: int) -> ProducerSendError:
    return ProducerSendError(
        f"no transactional producer {transactional_id}: partition {input_partition} was revoked"
    )


def _by_topic_partition(
    records: Sequence[OutgoingRecord],
) -> dict[tuple[str, int], list[OutgoingRecord]]:
    grouped: dict[tuple[str, int], list[OutgoingRecord]] = {}
    for record in records:
        if record.partition is not None:
            grouped.setdefault((record.topic, record.partition), []).append(record)
    return grouped


async def _send_batched(
    producer: Any,
    topic: str,
    partition: int,
    records: list[OutgoingRecord],
    deliveries: Deliveries,
    sent: _Sent,
) -> None:
    """Append ``records`` to record batches of the producer's batch size, and send each."""
    builder, in_builder = producer.create_batch(), 0
    for record in records:
        _check_size(producer, record)
        # full: send it and start the next, which takes any first record
        while (
            builder.append(
                key=record.key, value=record.value, timestamp=None, headers=record.headers
            )
            is None
        ):
            await _send_builder(producer, builder, topic, partition, in_builder, deliveries, sent)
            builder, in_builder = producer.create_batch(), 0
        in_builder += 1
    await _send_builder(producer, builder, topic, partition, in_builder, deliveries, sent)


def _check_size(producer: Any, record: OutgoingRecord) -> None:
    """aiokafka's ``send`` refuses a record larger than a request; a batch builder takes any
    first record, and the broker's refusal would fail only that batch's delivery, which a
    commit does not check (aiokafka does not fail the transaction for it)."""
    size = DefaultRecordBatchBuilder.estimate_size_in_bytes(
        record.key, record.value, record.headers
    )
    if size > producer._max_request_size:
        raise MessageSizeTooLargeError(
            f"a {size}-byte record for {record.topic} is larger than the producer's "
            f"max_request_size ({producer._max_request_size})"
        )


async def _send_builder(
    producer: Any,
    builder: Any,
    topic: str,
    partition: int,
    count: int,
    deliveries: Deliveries,
    sent: _Sent,
) -> None:
    builder.close()  # nothing else may be appended to it once it is queued
    future = await producer.send_batch(builder, topic, partition=partition)
    sent.track(future)
    deliveries.last[(topic, partition)] = BatchDelivery(future, count)


@dataclass(frozen=True, slots=True)
class BatchDelivery:
    """A record batch's delivery: its future settles with the batch's first offset."""

    future: asyncio.Future[Any]
    records: int

    def delivered(self) -> bool:
        future = self.future
        return future.done() and not future.cancelled() and future.exception() is None

    def last_offset(self) -> int:
        """Where the batch's last record landed (once :meth:`delivered`)."""
        return int(self.future.result().offset) + self.records - 1


@dataclass
class Deliveries:
    """Where a send's records go: the last batch sent to each topic partition."""

    last: dict[tuple[str, int], BatchDelivery] = field(default_factory=dict)

    def of(self, topic: str, partition: int) -> BatchDelivery:
        return self.last[(topic, partition)]
