"""The projector process: memory.consolidation → PostgreSQL read models, exactly once.

decode → fold into a :class:`RowBatch` → write rows + offsets in one transaction → repeat.
Kafka offsets are never committed to Kafka: the position lives in ``projection_offsets``,
written with the rows, and the consumer seeks to it whenever partitions are assigned. What
goes wrong is handled by kind (:mod:`projections.failures`):

- Postgres unavailable: the batch is retried with backoff; if it still fails, the consumer is
  rewound to the stored position so nothing past unapplied work is ever considered done.
- A record whose rows cannot be built or stored: exactly that record is dead-lettered
  (``ledger_unprojectable``) and skipped, the rest of its partition flows
  (:mod:`projections.poison`).
- Corrupt bytes: dead-lettered (``ledger_undecodable``) and skipped.
- A schema this projector does not know: the ledger is trusted, so the projector is older than
  the worker. It stops with a clear message and a non-zero exit, skipping nothing.
- A batch built before a rebalance: dropped, never written (``on_revoke``, and the writer's
  check against the stored position), and the consumer seeks to the stored position.

**Write-behind.** Batch k is written by a writer thread while the main thread consumes,
decodes, folds and formats batch k + 1, so the database's share of a batch (about a third of
its time, measured) no longer stalls the decoding. At most one batch is in flight, and batch
k + 1 is handed over only once batch k is finished, so transactions stay in offset order.
The main thread touches the database only when no batch is in flight (rewinds, assignment,
dead letters, poison isolation). A failed write is handled when it is collected, as a
synchronous one would be: a poison record is isolated (the batch written again, then in
halves), unless the batch's partitions were revoked meanwhile; a stale batch or an outage
rewinds to the stored offsets, dropping the batch that was read past it. The writer thread
needs the GIL little: the COPY data comes formatted by the main thread
(``projections.writer.format_copies``), so it hands bytes to libpq and runs the few
statements that are not COPYs.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

import psycopg
from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    Message,
    Producer,
    TopicPartition,
)
from psycopg.adapt import AdaptersMap

from projections import projector_metrics
from projections.complete_emissions import Consumed, HoldBacks, split_at_open_emissions
from projections.failures import (
    BUILD_ERRORS,
    DeadLetterUnavailable,
    ProjectorOutdated,
    is_poison,
    is_transient,
    one_line,
    outdated_message,
    stops_the_projector,
)
from projections.poison import Rejected, apply_isolating, fold
from projections.rows import RowBatch
from projections.startup import database_name, migrate_when_reachable
from projections.writer import (
    StaleBatch,
    VacuumHeldBack,
    format_copies,
    prepare_connection,
    stored_offsets,
    vacuum_owed_for,
    vacuum_pending,
    write_batch,
)
from streams.config.kafka_security import confluent_config
from streams.config.settings import Settings
from streams.engine.ledger import ConsolidationEvent, UserErased
from streams.erasure.sealing import KeysUnavailable, Unreadable, sealing_of
from streams.kafka import codec
from streams.kafka.deadletter import letter_headers, source_headers
from streams.kafka.schema_registry import RegistryUnavailable, contract_registry, with_retries
from streams.runtime.collector import tune_collector

log = logging.getLogger("memstream.projector")
LAG_REPORT_SECONDS = 5.0
# Another projector holds the vacuum: ask again after this. A vacuum that fails is asked
# again after twice as long each time, up to VACUUM_RETRY_MAX_SECONDS.
VACUUM_RETRY_SECONDS = 5.0
VACUUM_RETRY_MAX_SECONDS = 300.0
# How often a projector looks for debts other projectors wrote down and did not pay (one that
# stopped for good): the erasure delay, within these bounds.
DEBT_CHECK_BOUNDS_SECONDS = (5.0, 60.0)
DEAD_LETTER_TIMEOUT_SECONDS = 10.0
# How often (s) the main thread offers the GIL to a waiting thread (Python's default: 5 ms).
# The writer thread needs it briefly after every round trip to PostgreSQL; at 5 ms it waited
# longer for the GIL than for the server, and the write-behind gained nothing.
WRITER_SWITCH_INTERVAL_SECONDS = 0.0001
# What formatting a batch's COPY data can raise on a record's bad value.
FORMAT_ERRORS: tuple[type[Exception], ...] = (*BUILD_ERRORS, psycopg.Error)
T = TypeVar("T")
Position = tuple[str, int, int]  # (topic, partition, offset)


@dataclass
class Consumption:
    """One ``consume()`` call's records, with what is needed to dead-letter any of them."""

    records: list[Consumed] = field(default_factory=list)
    messages: dict[Position, Message] = field(default_factory=dict)
    undecodable: dict[Position, codec.DecodeError] = field(default_factory=dict)

    def partitions(self) -> set[tuple[str, int]]:
        return _partitions_of(self.records)


class RevokedInFlight(Exception):
    """The batch in flight failed on a record the database refuses, and some of its
    partitions were revoked meanwhile: it is dropped, not isolated."""

    def __init__(self, partitions: set[tuple[str, int]]) -> None:
        super().__init__(
            "a batch refused by the database held records of revoked partitions "
            f"{sorted(p for _, p in partitions)}: dropped"
        )


@dataclass
class InFlight:
    """The batch the writer thread is writing, with what handling its failure needs."""

    future: Future[None]
    ready: list[Consumed]
    consumed: Consumption
    events: int


@dataclass(frozen=True)
class Finished:
    """What finishing a batch did: ``events`` applied (``None``: there was no batch), and
    whether the consumer was rewound (so anything read since is dropped)."""

    events: int | None = None
    rewound: bool = False

    def __add__(self, other: Finished) -> Finished:
        if self.events is None or other.events is None:
            events = self.events if other.events is None else other.events
        else:
            events = self.events + other.events
        return Finished(events, self.rewound or other.rewound)


class VacuumDebt:
    """When the vacuum owed for erasures falls due (``time.monotonic()`` seconds).

    A user's erasure is due at once; forgotten memories ``delay`` seconds after the first
    erasure not vacuumed yet, so the forgets of that window share one rewrite. Written by the
    writer thread (a batch's erasure), read by the main one (an idle projector pays too)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self._due: float | None = None
        self._failures = 0
        self._lock = threading.Lock()

    def owed(self, age: float = 0.0, at_once: bool = False) -> None:
        """An erasure ``age`` seconds old waits for its vacuum."""
        due = time.monotonic() + (0.0 if at_once else max(0.0, self.delay - age))
        with self._lock:
            if self._due is None or due < self._due:
                self._due = due

    def found(self, age: float) -> None:
        """The database holds a debt ``age`` seconds old (another projector's, maybe): owed
        like this projector's own, unless a vacuum is already planned (a backoff stands)."""
        with self._lock:
            if self._due is None:
                self._due = time.monotonic() + max(0.0, self.delay - age)

    def due(self) -> bool:
        with self._lock:
            return self._due is not None and time.monotonic() >= self._due

    def settle(self) -> None:
        """The vacuum is starting: what it covers is no longer owed."""
        with self._lock:
            self._due = None

    def retry_in(self, seconds: float) -> None:
        with self._lock:
            self._due = time.monotonic() + seconds

    def failed(self) -> float:
        """The vacuum failed: it is due again after a backoff (returned) that doubles with
        each failure in a row, so a vacuum the database keeps refusing is not a busy loop."""
        with self._lock:
            self._failures += 1
            wait = min(VACUUM_RETRY_SECONDS * 2 ** (self._failures - 1), VACUUM_RETRY_MAX_SECONDS)
            self._due = time.monotonic() + wait
            return wait

    def paid(self) -> None:
        with self._lock:
            self._failures = 0


class Projector:
    def __init__(self, settings: Settings, name: str | None = None) -> None:
        self.settings = settings
        self.name = name or settings.projector_group
        self.topic = settings.ledger_topic
        # both wire formats; Confluent ids resolved through the Schema Registry, once each
        self.registry = contract_registry(settings)
        # with a master key, the ledger's personal fields are sealed; a record whose user's
        # key is erased is skipped (its offset advances), never dead-lettered or fatal
        self.sealing = sealing_of(settings)
        self.erased_records = 0
        self._conn: psycopg.Connection | None = None
        self._copy_adapters: AdaptersMap | None = None  # a prepared connection's dumpers
        self._last_lag_report = 0.0
        self.consumer = Consumer(
            {
                **confluent_config(settings),
                "group.id": self.name,
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
                "fetch.wait.max.ms": 50,
                "session.timeout.ms": int(settings.session_timeout_seconds * 1000),
                # static membership: a restarted projector takes its partitions back at once
                **({"group.instance.id": settings.instance_id} if settings.instance_id else {}),
            }
        )
        self._deadletter: Producer | None = None
        self._revoked: set[tuple[str, int]] = set()
        self._holds = HoldBacks()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="projector-writer")
        self._in_flight: InFlight | None = None
        self._vacuum = VacuumDebt(settings.erasure_vacuum_delay_seconds)
        self._vacuuming: Future[None] | None = None
        low, high = DEBT_CHECK_BOUNDS_SECONDS
        self._debt_check_seconds = min(max(settings.erasure_vacuum_delay_seconds, low), high)
        self._next_debt_check = 0.0

    # -- connection ---------------------------------------------------------------------------

    def connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            conn = psycopg.connect(self.settings.database_url)
            prepare_connection(conn)
            self._conn = conn
            self._copy_adapters = conn.adapters
        return self._conn

    def _drop_connection(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
        self._conn = None

    # -- assignment ---------------------------------------------------------------------------

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """Seek each assigned partition to the offset stored with the rows."""
        self._wait_for_write()
        stored = self._with_retries(
            lambda: stored_offsets(self.connection(), self.name, self.topic), forever=True
        )
        for tp in partitions:
            tp.offset = stored.get(tp.partition, OFFSET_BEGINNING)
        consumer.assign(partitions)
        log.info("assigned %s", {tp.partition: tp.offset for tp in partitions})

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """Remember revoked partitions: a batch holding their records is never written. The
        batch in flight is let finish first, so the partitions' next owner most likely
        starts after it (either way, whichever of the two writes second finds itself
        stale and writes nothing)."""
        self._wait_for_write()
        self._revoked.update((tp.topic, tp.partition) for tp in partitions)
        log.info("revoked %s", sorted(tp.partition for tp in partitions))

    def _rewind(self, partitions: Iterable[tuple[str, int]]) -> None:
        """Go back to the stored position of every (still assigned) partition given."""
        stored = self._with_retries(
            lambda: stored_offsets(self.connection(), self.name, self.topic), forever=True
        )
        assigned = {(tp.topic, tp.partition) for tp in self.consumer.assignment()}
        for topic, partition in sorted(set(partitions) & assigned):
            offset = stored.get(partition, OFFSET_BEGINNING)
            self.consumer.seek(TopicPartition(topic, partition, offset))

    # -- the loop -----------------------------------------------------------------------------

    def run(
        self, stop: threading.Event | None = None, on_batch: Callable[[int], None] | None = None
    ) -> None:
        """Project until ``stop`` is set. Raises :class:`ProjectorOutdated` when the ledger
        holds a record of a schema this projector does not know (nothing is skipped).

        ``on_batch`` gets the ledger events applied each time a write is collected: a
        batch's count arrives one ``consume()`` after the batch was read (it is written
        meanwhile), sometimes summed with a batch applied synchronously, and the last
        batch's when ``stop`` ends the loop. Rewound batches report 0."""
        stop = stop or threading.Event()
        self.consumer.subscribe([self.topic], on_assign=self._on_assign, on_revoke=self._on_revoke)
        try:
            while not stop.is_set():
                self._revoked.clear()
                messages = self.consumer.consume(
                    self.settings.projector_batch_size, self.settings.projector_batch_ms / 1000
                )
                finished = self._project(self._decode(messages))
                if finished.events is not None and on_batch is not None:
                    on_batch(finished.events)
                self._vacuum_when_due()
                self._report_lag()
            finished = self._finish_write()
            if finished.events is not None and on_batch is not None:
                on_batch(finished.events)
        finally:
            self._wait_for_write(stopping=True)
            # a vacuum not started yet waits for the next projector (its debt is written down)
            self._writer.shutdown(cancel_futures=True)
            self.consumer.close()
            self._drop_connection()
            if self._deadletter is not None:
                self._deadletter.flush(DEAD_LETTER_TIMEOUT_SECONDS)

    def _project(self, consumed: Consumption) -> Finished:
        """Start writing what one ``consume()`` returned, after finishing the batch in flight;
        what finished in this call (the events of the batch in flight, mostly)."""
        revoked = consumed.partitions() & self._revoked
        if revoked:
            log.info("dropping a batch of revoked partitions %s", sorted(p for _, p in revoked))
            finished = self._finish_write()
            self._rewind(consumed.partitions())
            return finished
        ready = self._hold_back_open_emissions(consumed.records)
        if not ready:
            return self._finish_write()
        batch, copies = self._prepare(ready)
        finished = self._finish_write()
        if finished.rewound:
            # ``ready`` was read past the position rewound to: dropped, and its partitions
            # (the batch in flight may not have held them all) go back to their stored offsets
            self._rewind(_partitions_of(ready))
            return finished
        if batch is None:
            return finished + self._apply(ready, consumed)
        started = self._guarded(
            _partitions_of(ready), lambda: self._dead_letter_undecodables(ready, consumed)
        )
        if started.rewound:
            return finished + started
        self._in_flight = InFlight(
            self._writer.submit(self._write, batch, copies), ready, consumed, len(batch)
        )
        return finished

    def _prepare(self, ready: list[Consumed]) -> tuple[RowBatch | None, dict[str, bytes]]:
        """The batch's rows and its COPY data; no batch when a record's rows cannot be built
        or formatted: the batch is then applied synchronously by ``_apply``, which sets such
        a record aside (or retries and rewinds, when the error was not the record's)."""
        folded = fold(ready)
        if folded.rejected:
            return None, {}
        adapters = self._copy_adapters
        if adapters is None:  # no connection yet: the writer formats the rows itself
            return folded.batch, {}
        try:
            return folded.batch, format_copies(adapters, folded.batch)
        except FORMAT_ERRORS:
            return None, {}

    def _finish_write(self) -> Finished:
        """Wait for the batch in flight and handle its outcome as a synchronous write's."""
        in_flight, self._in_flight = self._in_flight, None
        if in_flight is None:
            return Finished()
        return self._guarded(_partitions_of(in_flight.ready), lambda: self._outcome(in_flight))

    def _outcome(self, in_flight: InFlight) -> int:
        try:
            in_flight.future.result()
        except Exception as exc:
            if not is_poison(exc):
                raise
            revoked = _partitions_of(in_flight.ready) & self._revoked
            if revoked:
                # Isolating the record would write to partitions another instance now owns:
                # it finds the record itself, from the stored offsets.
                raise RevokedInFlight(revoked) from exc
            # A record the database refuses: find it as a synchronous write does (the batch
            # again, then in halves).
            return self._write_isolating(in_flight.ready, in_flight.consumed)
        return in_flight.events

    def _wait_for_write(self, stopping: bool = False) -> None:
        """Let the batch in flight finish, so the connection is free for the calling
        thread. Its outcome is handled later by the loop, unless the projector is
        ``stopping`` on an error: then a failed write is only logged (its transaction
        rolled back, so its records are read again after a restart)."""
        if self._in_flight is None:
            return
        try:
            self._in_flight.future.result()
        except Exception as exc:  # noqa: BLE001 - handled by _finish_write, or logged below
            if stopping:
                log.warning(
                    "the batch being written when the projector stopped was not applied "
                    "(%s: %s); it is read again from the stored offsets",
                    type(exc).__name__,
                    one_line(exc),
                )

    def _hold_back_open_emissions(self, records: list[Consumed]) -> list[Consumed]:
        """The records to apply now; an input's output that the batch cuts in half is
        consumed again, and a partial one its writer abandoned is skipped."""
        split = split_at_open_emissions(records, self._holds)
        for topic, partition in split.oversized:
            log.warning(
                "one input's output in %s[%d] is larger than a batch "
                "(MEMSTREAM_PROJECTOR_BATCH_SIZE); it is applied across batches",
                topic,
                partition,
            )
        if split.abandoned:
            projector_metrics.projector_partial_emission_events.inc(split.abandoned)
            log.warning(
                "skipped %d ledger events of partial emissions (an input's output that was "
                "committed in part and then emitted again whole)",
                split.abandoned,
            )
        for (topic, partition), offset in split.resume_at.items():
            projector_metrics.projector_held_back.inc()
            self.consumer.seek(TopicPartition(topic, partition, offset))
        return split.ready

    def _decode(self, messages: list[Message]) -> Consumption:
        """Decode the ledger records; corrupt ones are kept as skips, to be dead-lettered
        with the batch. A schema this projector does not know stops it."""
        consumed = Consumption()
        for message in messages:
            error = message.error()
            if error is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    log.warning("consumer error: %s", error)
                continue
            position = _position(message)
            consumed.messages[position] = message
            try:
                event = self._decode_one(message.value() or b"")
            except codec.DecodeError as exc:
                if stops_the_projector(exc.reason):
                    fingerprint = codec.peek_fingerprint(message.value() or b"")
                    raise ProjectorOutdated(outdated_message(position, fingerprint, exc)) from None
                consumed.undecodable[position] = exc
                event = None
            consumed.records.append(Consumed(*position, event))
        if self.sealing is not None:
            self._open_all(consumed)
        return consumed

    def _open_all(self, consumed: Consumption) -> None:
        """Open the batch's records: the keys of the memories they carry read in one round
        trip first (a key store that cannot be read is waited for). The records were decoded
        here and nothing else holds them, so most memories are opened in place, not copied
        (``Sealing.open_decoded``)."""
        assert self.sealing is not None
        sealing = self.sealing
        sealing.new_batch()
        events = [r.event for r in consumed.records if r.event is not None]
        self._waiting_for_keys(lambda: sealing.prefetch_ledger(events))
        for index, record in enumerate(consumed.records):
            event = record.event
            if event is None:
                continue
            if isinstance(event.payload, UserErased):
                # the user's key is gone: what follows is sealed with a new one
                sealing.forget_cached(event.user_id)
            elif sealing.open_decoded(event):  # this batch's own record: opened in place
                continue
            opened = self._opened(event)
            if opened is not event:  # the constructor: a third of ``replace``'s cost
                consumed.records[index] = Consumed(
                    record.topic, record.partition, record.offset, opened
                )

    def _opened(self, event: ConsolidationEvent) -> ConsolidationEvent | None:
        """The record with its sealed fields opened; None when its user's key is erased (the
        record is then skipped as erased: its user's rows are gone or going). A record of a
        memory whose key is erased is kept, that memory's fields blank, and counted: its
        forget or its version written anew follows it. A key store that cannot be read is
        waited for: the ledger is never skipped for an outage."""
        assert self.sealing is not None
        sealing = self.sealing
        try:
            opened, erased = self._waiting_for_keys(lambda: sealing.open_ledger_keeping(event))
        except Unreadable:
            self.erased_records += 1
            return None
        if erased:
            self.erased_records += 1
        return opened

    def _waiting_for_keys(self, action: Callable[[], T]) -> T:
        attempt = 0
        while True:
            try:
                return action()
            except KeysUnavailable as exc:
                attempt += 1
                pause = self.settings.retry_backoff_seconds * min(attempt, 6)
                log.warning("%s; retrying in %.1f s", exc, pause)
                time.sleep(pause)

    def _decode_one(self, value: bytes) -> ConsolidationEvent:
        """One ledger record. A Schema Registry id not cached yet while the registry is down
        is waited for (retried with backoff): the ledger is never skipped."""
        try:
            return codec.decode_ledger(value, self.registry)
        except RegistryUnavailable:
            return with_retries(
                lambda: codec.decode_ledger(value, self.registry),
                float("inf"),
                f"resolving the ledger's schema id {codec.peek_schema_id(value)}",
            )

    def _apply(self, ready: list[Consumed], consumed: Consumption) -> Finished:
        """Write ``ready`` now, dead-lettering what cannot be decoded, built or stored; on a
        database outage or a stale batch, rewind to the stored offsets instead."""

        def apply() -> int:
            self._dead_letter_undecodables(ready, consumed)
            return self._write_isolating(ready, consumed)

        return self._guarded(_partitions_of(ready), apply)

    def _guarded(
        self, partitions: Iterable[tuple[str, int]], action: Callable[[], int]
    ) -> Finished:
        """Run ``action`` (it returns the events applied); on a stale batch or a database
        outage that outlasted the retries, rewind ``partitions`` to the stored offsets."""
        try:
            return Finished(action())
        except StaleBatch as exc:
            projector_metrics.projector_stale_batches.inc()
            log.warning("stale batch dropped (%s); seeking to the stored offsets", exc)
        except RevokedInFlight as exc:
            log.info("%s; seeking the partitions still assigned to the stored offsets", exc)
        except Exception as exc:
            if not is_transient(exc):
                raise
            log.error(
                "batch not applied after %d attempts (%s); rewinding",
                self.settings.retry_attempts,
                one_line(exc),
            )
        self._rewind(partitions)
        return Finished(0, rewound=True)

    def _dead_letter_undecodables(self, ready: list[Consumed], consumed: Consumption) -> int:
        for record in ready:
            error = consumed.undecodable.get((record.topic, record.partition, record.offset))
            if error is not None:
                self._dead_letter_undecodable(consumed.messages, record, error)
        return 0

    def _write_isolating(self, ready: list[Consumed], consumed: Consumption) -> int:
        applied = apply_isolating(
            ready, self._write, lambda r: self._dead_letter_unprojectable(consumed.messages, r)
        )
        return applied.events

    def _write(self, batch: RowBatch, copies: dict[str, bytes] | None = None) -> None:
        """One transaction (retried while the database is unavailable), then its metrics.
        Runs in the writer thread for a batch written behind, in the main one otherwise."""
        started = time.perf_counter()
        sealing = self.sealing if batch.key_erasures else None
        if sealing is not None:
            # before the batch's position commits: a crash in between erases them again
            self._waiting_for_keys(lambda: sealing.erase_memory_keys(batch.key_erasures))
        # the erased users' and forgotten memories' rows, and the destroyed memory keys (a
        # wrapped one opens with its user's living key), must not stay readable in dead
        # tuples for long (docs/security.md): the batch writes the vacuum it owes down
        erasing = bool(batch.erased) or sealing is not None
        self._with_retries(
            lambda: write_batch(self.connection(), batch, self.name, copies, erasing=erasing)
        )
        if erasing:
            log.info(
                "erased %d user(s) and %d memory key range(s)",
                len(batch.erased),
                len(batch.key_erasures),
            )
            self._vacuum.owed(at_once=bool(batch.erased))
            self._pay_vacuum()
        projector_metrics.projector_batch.observe(time.perf_counter() - started)
        for table, rows in batch.tables_touched().items():
            projector_metrics.projector_rows.labels(table).inc(rows)
        for event_type, events in batch.actions().items():
            projector_metrics.projector_events.labels(event_type).inc(events)
        if batch.last_event_time_ms is not None:
            projector_metrics.projector_lag.set(
                max(0.0, time.time() - batch.last_event_time_ms / 1000)
            )

    def _vacuum_when_due(self) -> None:
        """Queue the vacuum owed behind the batch in flight (the writer thread runs both, so
        a rewrite never waits on this projector's own transaction), once it is due. Every
        little while (and first at start), look for debts in the database: one a projector
        wrote down and never paid, having stopped for good, is paid by the others."""
        if self._vacuuming is not None and not self._vacuuming.done():
            return
        now = time.monotonic()
        if now >= self._next_debt_check:
            self._next_debt_check = now + self._debt_check_seconds
            try:
                owed_for = vacuum_owed_for(self.settings.database_url)
            except psycopg.Error as exc:
                owed_for = None  # asked again at the next check
                log.debug("could not read the vacuum owed (%s)", one_line(exc))
            if owed_for is not None:
                self._vacuum.found(owed_for)
        if self._vacuum.due():
            self._vacuuming = self._writer.submit(self._pay_vacuum)

    def _pay_vacuum(self) -> None:
        """Vacuum the erasures' tables if the debt is due (``projections.writer.
        vacuum_pending``); on a database error, a transaction older than the erasure that kept
        dead rows, or while another projector vacuums, ask again later. Runs in the writer
        thread, on connections of its own."""
        if not self._vacuum.due():
            return
        self._vacuum.settle()
        started = time.perf_counter()
        try:
            covered = vacuum_pending(
                self.settings.database_url,
                self.settings.erasure_vacuum == "FULL",
                self.settings.keys_database_url or None,
            )
        except (psycopg.Error, VacuumHeldBack) as exc:
            wait = self._vacuum.failed()
            log.warning(
                "the vacuum owed for erasures failed (%s); trying again in %.0fs",
                one_line(exc),
                wait,
            )
            return
        if covered is None:
            self._vacuum.retry_in(VACUUM_RETRY_SECONDS)  # another projector is vacuuming
            return
        self._vacuum.paid()
        if covered:
            log.info(
                "vacuumed the tables of %d erasing batch(es) in %.1fs",
                covered,
                time.perf_counter() - started,
            )

    def _with_retries(self, action: Callable[[], T], forever: bool = False) -> T:
        """Run ``action``; on a database error wait ``backoff × attempt`` and try again."""
        attempt = 0
        while True:
            attempt += 1
            try:
                return action()
            except psycopg.Error as exc:
                if not is_transient(exc):
                    raise  # the data's fault: retrying cannot help
                self._drop_connection()
                projector_metrics.projector_retries.inc()
                if not forever and attempt >= self.settings.retry_attempts:
                    raise
                delay = min(self.settings.retry_backoff_seconds * attempt, 60.0)
                log.warning(
                    "database error (%s); attempt %d, retrying in %.1fs",
                    one_line(exc),
                    attempt,
                    delay,
                )
                time.sleep(delay)

    def _dead_letter_undecodable(
        self, messages: dict[Position, Message], record: Consumed, exc: codec.DecodeError
    ) -> None:
        projector_metrics.projector_undecodable.inc()
        log.error(
            "undecodable ledger record at %s[%d]@%d, skipped and dead-lettered: %s",
            record.topic,
            record.partition,
            record.offset,
            exc,
        )
        self._dead_letter(messages, record, f"ledger_{exc.reason}", exc.detail)

    def _dead_letter_unprojectable(
        self, messages: dict[Position, Message], rejected: Rejected
    ) -> None:
        record = rejected.record
        detail = f"{type(rejected.error).__name__}: {one_line(rejected.error)}"
        projector_metrics.projector_unprojectable.inc()
        log.error(
            "ledger record at %s[%d]@%d cannot be projected, skipped and dead-lettered: %s",
            record.topic,
            record.partition,
            record.offset,
            detail,
        )
        self._dead_letter(messages, record, "ledger_unprojectable", detail)

    def _dead_letter(
        self, messages: dict[Position, Message], record: Consumed, reason: str, detail: str
    ) -> None:
        """Send the original record with why and where it came from, and wait for Kafka to
        have it: only then may the transaction that skips it commit."""
        message = messages[(record.topic, record.partition, record.offset)]
        if self._deadletter is None:
            self._deadletter = Producer(confluent_config(self.settings))
        source = source_headers(record.topic, record.partition, record.offset)
        headers: list[tuple[str, str | bytes | None]] = [*letter_headers(reason, detail, source)]
        self._deadletter.produce(
            self.settings.deadletter_topic,
            key=message.key(),
            value=message.value() or b"",
            headers=headers,
        )
        if self._deadletter.flush(DEAD_LETTER_TIMEOUT_SECONDS) > 0:
            raise DeadLetterUnavailable(
                f"{self.settings.deadletter_topic} did not acknowledge the dead letter of "
                f"{record.topic}[{record.partition}]@{record.offset}"
            )

    def _report_lag(self) -> None:
        """Records behind each partition's high watermark, from what the consumer already
        knows: librdkafka updates the cached high watermark with every fetch response. Asking
        the broker instead took ~35 ms per partition, a 0.4 s stall of the projecting loop
        every report on 12 partitions."""
        now = time.monotonic()
        if now - self._last_lag_report < LAG_REPORT_SECONDS:
            return
        self._last_lag_report = now
        try:
            positions = self.consumer.position(self.consumer.assignment())
        except Exception:  # noqa: BLE001 - lag is best effort, never stops projecting
            return
        for tp in positions:
            try:
                _, high = self.consumer.get_watermark_offsets(tp, cached=True)
            except Exception:  # noqa: BLE001
                continue
            if high < 0:  # nothing fetched from this partition yet
                continue
            done = tp.offset if tp.offset >= 0 else 0
            projector_metrics.consumer_lag.labels(tp.topic, str(tp.partition)).set(
                max(0, high - done)
            )


def _partitions_of(records: Iterable[Consumed]) -> set[tuple[str, int]]:
    return {(r.topic, r.partition) for r in records}


def _position(message: Message) -> Position:
    """(topic, partition, offset) of a consumed record; librdkafka sets all three on data."""
    topic, partition, offset = message.topic(), message.partition(), message.offset()
    assert topic is not None and partition is not None and offset is not None
    return topic, partition, offset


def run_projector(settings: Settings) -> None:
    """Process entry point: metrics endpoint, migrations, then project until signalled.
    Expected failures end the process with one line and a non-zero exit code."""
    import signal

    from prometheus_client import start_http_server

    logging.basicConfig(
        level=logging.INFO, format="[%(asctime)s] %(levelname)s %(name)s: %(message)s"
    )
    migrate_when_reachable(settings)
    start_http_server(settings.projector_metrics_port, addr=settings.metrics_bind)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(
        f"memstream projector: {settings.ledger_topic} -> {database_name(settings.database_url)} "
        f"(metrics {settings.metrics_bind}:{settings.projector_metrics_port}/metrics)",
        flush=True,
    )
    tune_collector()
    sys.setswitchinterval(WRITER_SWITCH_INTERVAL_SECONDS)
    try:
        Projector(settings).run(stop)
    except ProjectorOutdated as exc:
        raise SystemExit(f"memstream projector stopped: {exc}") from None
