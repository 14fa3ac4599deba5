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
from dataclasses import dataclass
from typing import Any

import faust

from streams.deadletter import Headers


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
    app: faust.App, guard: EmissionGuard, after_commit: Callable[[], None] | None = None
) -> None:
    """Make ``app`` 's consumer wait for ``guard`` before every commit, and run
    ``after_commit`` once a commit is done, still holding the guard (no record is in flight
    then: everything sent is in a transaction that just committed or is still open).

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
        self, app: faust.App, input_topic: str, after_commit: Callable[[], None] | None = None
    ) -> None:
        self.app = app
        self.input_topic = input_topic
        self.guard = EmissionGuard()
        guard_commits(app, self.guard, after_commit)
        commit_partitions_together(app)

    def transactional_id(self, input_partition: int) -> str:
        """Faust's id for the producer whose transaction commits ``input_partition`` 's
        offsets (``TransactionManager.transactional_id_format``)."""
        group = self.app.assignor.group_for_topic(self.input_topic)
        return f"{self.app.conf.id}-{group}-{input_partition}"

    async def send(
        self, input_partition: int, records: Sequence[OutgoingRecord]
    ) -> list[Awaitable[Any]]:
        """Send ``records`` (all of one input's output) with no commit in between; returns
        each record's delivery future (its metadata once the producer has flushed).

        Raises Faust's ``ProducerSendError`` when the partition's transactional producer is
        gone (the partition was revoked meanwhile): the input is then not committed here and
        its next owner processes it again."""
        if not records:
            return []
        transactional_id = self.transactional_id(input_partition)
        producer = self.app.producer
        deliveries: list[Awaitable[Any]] = []
        async with self.guard.emitting():
            for record in records:
                delivery = await producer.send(
                    record.topic,
                    record.key,
                    record.value,
                    record.partition,
                    None,
                    record.headers,
                    transactional_id=transactional_id,
                )
                deliveries.append(delivery)
        return deliveries
