"""The worker as a map: which topics it reads and writes, where its state lives, which agents
run. Read this file to know the worker; the logic lives in ``streams.ingest_processor`` and
``streams.engine``.

    memory.events[p] ──ingest──▶ memory.consolidation[p]   (accepted: versioned ledger events)
      (batches of      ├─────▶ memory.state[p]            (the state entries it changed)
       ≤ 500 / 30 ms)  └─────▶ memory.deadletter          (rejected: original bytes + reason)

    state: per-user tables for the partitions this worker owns (``streams.state.hot_users``),
    changelogged to the compacted memory.state[p] in the input's transaction
    (``streams.state.changelog``), checkpointed every second to a local RocksDB store
    (``streams.state.store``) and restored on assignment from it and the changelog's tail
    (``streams.state.restore``). At most MEMSTREAM_HOT_USERS users are in memory; the rest
    are read back from the store when an input of theirs comes.

    tables (changelog table code → what it holds):
      m  memories         one record per memory: content, layer, version, access count and
                          last access (salience is derived from them, never stored per cycle)
      s  sessions         event-time session windows closed by inactivity + grace (seed 002)
      e  seen input ids   a dedupe window in event time (MEMSTREAM_DEDUPE_WINDOW_SECONDS)
      p  flagged pairs    contradictions already reported
      c  conversations    messages per conversation since the user's last cycle (seed 000's
                          on-write trigger)
      u  per-user record  identity anchor, profile id, last maintenance, what changed since
                          the last cycle (its change epoch)

    derived tables (a function of the memories, so restored with them and rebuilt when a
    user is loaded; kept in step by the fold):
         occurrences      event-type occurrences and outcomes of live episodic memories, by
                          type and event time: procedural learning reads its 30-day window
                          (``streams.engine.occurrences``)
         facts            current facts, their blocking keys and who carries each key: what
                          contradiction checks pair on (``streams.engine.fact_index``)
         active sessions  the ids of the sessions still active, which every input reads

    timers: consumer lag and cold-user eviction (5 s); periodic consolidation ticks, only to
    users whose time-driven work is due (``streams.engine.rules.due``).

Runs with ``processing_guarantee="exactly_once"``: a record's ledger events (and dead
letter) and its input offset commit in one Kafka transaction, and never a part of a
record's output without the rest (``streams.kafka.transactional_output``; readers check it too,
``streams.engine.emissions``).

No input stops it: an input the worker fails on is a dead letter (``internal_error``) and
its user's state is rebuilt from the entries saved before it (``saved_entries`` below). If
the agent itself fails, or a requested stop outlasts ``SHUTDOWN_DEADLINE_SECONDS``, the
worker exits without committing (``streams.runtime.stopping``) rather than run on idle.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

import faust
from faust.exceptions import ProducerSendError
from faust.types import TP

from streams import worker_metrics
from streams.config.settings import Settings
from streams.engine.rules.due import next_due_at
from streams.engine.user_state import InMemoryUserState
from streams.erasure.sealing import EntryOpening, sealing_of
from streams.ingest_processor import IngestProcessor, Input
from streams.kafka.deadletter import source_headers
from streams.kafka.faust_app import faust_app, raw_topic
from streams.kafka.output_batch import OutputBatch, PartitionBatch
from streams.kafka.schema_registry import contract_registry, resolve_ids_waiting
from streams.kafka.transactional_output import TransactionalOutput
from streams.runtime.heap_trim import trim_heap
from streams.runtime.stopping import stop_if_it_fails, stop_without_committing
from streams.state.assignment import PartitionRebuilds
from streams.state.changelog import SEPARATOR, Entry
from streams.state.hot_users import UserStates
from streams.state.restore import ensure_state_topic, load_user, state_topic
from streams.state.store import LocalStateStore, StateCheckpoints
from streams.ticks import TickPublisher
from streams.worker_engine import engine_config, worker_embedder

log = logging.getLogger("memstream.worker")
CHECKPOINT_INTERVAL_SECONDS = 1.0  # local state checkpoints, right after a commit


@dataclass
class Worker:
    app: faust.App
    processor: IngestProcessor


def build_app(settings: Settings) -> Worker:
    app = faust_app(settings, settings.app_id)
    ensure_state_topic(settings)
    store = LocalStateStore(
        settings.worker_data_dir / settings.app_id / "state" / (settings.instance_id or "local")
    )
    checkpoints = StateCheckpoints(store, CHECKPOINT_INTERVAL_SECONDS, time.monotonic)

    def after_commit() -> None:
        checkpoints.after_commit()
        worker_metrics.state_checkpoint_pending.set(checkpoints.pending_entries())

    output = TransactionalOutput(
        app, settings.events_topic, after_commit=after_commit, on_lost=stop_without_committing
    )
    events = raw_topic(app, settings.events_topic, settings)
    embedder = worker_embedder(settings)
    config = engine_config(settings, embedder)
    # with a master key, personal fields are sealed on every topic and in the state (the keys
    # a batch makes are flushed once, at its end: IngestProcessor.process_batch)
    sealing = sealing_of(settings, deferred=True)

    def due_of(state: InMemoryUserState) -> int | None:
        return next_due_at(state, config.policy)

    def new_states() -> UserStates:
        """Hot users bounded by MEMSTREAM_HOT_USERS; the others are read back from the
        local store when an input of theirs comes."""
        open_value = EntryOpening(sealing) if sealing is not None else None
        return UserStates(
            settings.hot_users, partial(load_user, store, open_value=open_value), due_of
        )

    states = new_states()
    rebuilds = PartitionRebuilds(settings, states, store, new_states, sealing)

    def saved_entries(partition: int, user_id: str) -> list[Entry]:
        """The user's state entries as they stood before the batch in hand, oldest first:
        the local checkpoint's, then what a restore owes the changelog (all of them after a
        ledger rebuild), then what was sent since the checkpoint. What an input that failed
        midway is undone from (``IngestProcessor``)."""
        prefix = user_id.encode() + SEPARATOR.encode()
        entries = [Entry(key, value) for key, value in store.user_entries(partition, user_id)]
        entries += [e for e in rebuilds.snapshots.get(partition, ()) if e.key.startswith(prefix)]
        pending = checkpoints.pending.get(partition, {})
        entries += [e for key, e in pending.items() if key.startswith(prefix)]
        return entries

    # the Avro wire format it writes, and the Schema Registry ids it reads (both formats)
    registry = contract_registry(settings)
    processor = IngestProcessor(
        config,
        states,
        registry=registry,
        partitions=settings.partitions,
        dedupe_window_seconds=settings.dedupe_window_seconds,
        embedder=embedder,
        saved=saved_entries,
        sealing=sealing,
    )

    def dirty(partition: int, user_id: str) -> bool:
        """Not all of the user's state is in the local store yet: sent but not checkpointed,
        or owed by a restore and not yet sent (after a ledger rebuild: all of it)."""
        return checkpoints.is_pending(partition, user_id) or rebuilds.owes_snapshot(partition)

    progress = worker_metrics.PartitionProgress(settings.events_topic)
    ticks = TickPublisher(settings, settings.events_topic)
    period = config.policy.triggers.periodic_seconds

    loads_seen = 0  # states.loads already counted in the metric
    unsent = False  # a batch is processed and not yet wholly sent

    @app.agent(events, name="ingest")
    async def ingest(stream: faust.StreamT) -> None:
        # a failed agent would leave the worker running idle: it exits instead
        await stop_if_it_fails(ingest_batches(stream), "the ingest agent", lambda: app.should_stop)

    async def ingest_batches(stream: faust.StreamT) -> None:
        nonlocal unsent
        # Batches: an input's offset is acked once its whole batch is sent (take_events).
        batches = stream.take_events(  # type: ignore[attr-defined]  # not in StreamT
            settings.worker_batch_size, settings.worker_batch_ms / 1000
        )
        async for batch_events in batches:
            messages = [event.message for event in batch_events]
            await rebuilds.all_ready({m.partition for m in messages})
            await resolve_ids_waiting(registry, (m.value for m in messages))
            inputs = [
                Input(m.key, m.value, source_headers(m.topic, m.partition, m.offset), m.partition)
                for m in messages
            ]
            batch = OutputBatch()
            unsent = True  # from here until every part is sent, evicting would lose work
            for message, emission in zip(messages, processor.process_batch(inputs), strict=True):
                if emission.ran_cycle:
                    worker_metrics.consolidation_cycle.observe(emission.seconds)
                    worker_metrics.log_cycle(emission)
                snapshot = rebuilds.take_snapshot(message.partition)
                batch.add(message.partition, emission, message.offset, snapshot)
            try:
                for part in batch:
                    await send_partition(part)
            finally:
                unsent = False
            evict_cold_users()

    def evict_cold_users() -> None:
        """At a safe point (everything processed is sent), users whose state is all in the
        local checkpoint may go cold."""
        nonlocal loads_seen
        if unsent:
            return
        states.evict(dirty)
        worker_metrics.user_loads.inc(states.loads - loads_seen)
        loads_seen = states.loads
        worker_metrics.hot_users.set(states.hot_users())
        worker_metrics.known_users.set(len(states))

    async def send_partition(part: PartitionBatch) -> None:
        """Send one partition's share of a batch atomically, then account for it."""
        try:
            deliveries = await output.send(part.partition, part.records(settings))
        except ProducerSendError as exc:
            if rebuilds.owns(part.partition):
                # Part of the batch may be in the open transaction, and Faust acks a batch
                # whose agent failed: no commit may follow (the output settles it too).
                stop_without_committing(f"partition {part.partition}: {exc}")
            # Revoked while we worked: nothing of these inputs is committed here, and the
            # partition's next owner processes them again from the committed offset.
            log.info(
                "partition %d revoked mid-batch; %d inputs left to its next owner (%s)",
                part.partition,
                len(part.emissions),
                exc,
            )
            return
        state_entries = part.state_entries
        if state_entries:
            changelog = deliveries.of(state_topic(settings), part.partition)
            checkpoints.sent(part.partition, state_entries, changelog)
        worker_metrics.worker_batch_size.observe(len(part.emissions))
        for emission in part.emissions:
            worker_metrics.observe_emission(emission)
        progress.processed(part.partition, part.last_offset)

    @app.timer(interval=5.0)
    async def report_consumer_lag() -> None:
        progress.report(app)
        evict_cold_users()  # also when no input comes: checkpoints have made users clean
        trim_heap()  # what the evicted users and sent batches freed, back to the OS

    @app.timer(interval=float(period))
    async def periodic_consolidation() -> None:
        """Tick the users of the partitions this worker owns (and only those) whose
        time-driven work has come (``next_due_at``): idle users cost nothing."""
        now_ms = int(time.time() * 1000)
        due = {
            partition: states.due_users(partition, now_ms, due_of)
            for partition in rebuilds.ready_partitions()
        }
        worker_metrics.ticked_users.set(sum(len(users) for users in due.values()))
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, ticks.publish, due, period)

    revoked_pending: set[int] = set()  # revoked, not yet known to be lost or kept

    @app.on_partitions_assigned.connect  # type: ignore[arg-type]
    async def on_assigned(app: faust.App, assigned: set[TP], **_: Any) -> None:
        owned = {tp for tp in app.consumer.assignment() if tp.topic == settings.events_topic}
        kept = {tp.partition for tp in owned}
        # Only partitions this worker lost give up their state. A partition revoked and
        # assigned back (Faust's rebalance revokes everything first) keeps it: Faust keeps
        # its transactional producer and the open transaction, so the state must keep what
        # that transaction holds too (restoring from committed data would forget it and the
        # re-delivered inputs would be processed twice into the same transaction).
        lost = revoked_pending - kept
        rebuilds.drop(lost)
        progress.forget(lost)
        for partition in lost:
            checkpoints.drop(partition)
        revoked_pending.clear()
        rebuilds.start({tp.partition for tp in assigned if tp.topic == settings.events_topic})
        worker_metrics.partitions_assigned.set(len(owned))

    @app.on_partitions_revoked.connect  # type: ignore[arg-type]
    async def on_revoked(app: faust.App, revoked: set[TP], **_: Any) -> None:
        revoked_pending.update(tp.partition for tp in revoked if tp.topic == settings.events_topic)

    return Worker(app, processor)
