"""The worker as a map: which topics it reads and writes, where its state lives, which agents
run. Read this file to know the worker; the logic lives in ``streams.ingest`` and
``streams.engine``.

    memory.events[p] ──ingest──▶ memory.consolidation[p]   (accepted: versioned ledger events)
      (batches of      ├─────▶ memory.state[p]            (the state entries it changed)
       ≤ 500 / 30 ms)  └─────▶ memory.deadletter          (rejected: original bytes + reason)

    state: per-user tables for the partitions this worker owns (``streams.user_states``),
    changelogged to the compacted memory.state[p] in the input's transaction
    (``streams.state_changelog``), checkpointed every second to a local RocksDB store
    (``streams.state_store``) and restored on assignment from it and the changelog's tail
    (``streams.state_restore``). At most MEMSTREAM_HOT_USERS users are in memory; the rest
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
record's output without the rest (``streams.transactional_output``; readers check it too,
``streams.engine.emissions``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

import faust
from faust.exceptions import ProducerSendError
from faust.types import TP

from memstream.settings import Settings
from streams import metrics
from streams.deadletter import source_headers
from streams.embedders.factory import embedder_for
from streams.engine import ledger as ledger_types
from streams.engine.engine import EngineConfig
from streams.engine.policy import builtin_profile, load_policy
from streams.engine.rules.due import next_due_at
from streams.engine.state import InMemoryUserState
from streams.engine.validation import Limits
from streams.fetch_wait import bound_fetch_wait
from streams.heap_trim import trim_heap
from streams.ingest import Emission, IngestProcessor, Input
from streams.llm import ChatClient, LLMJudge, LLMPatternWriter, LLMSettings
from streams.output_batch import OutputBatch, PartitionBatch
from streams.state_changelog import Entry
from streams.state_restore import (
    Restored,
    ensure_state_topic,
    load_user,
    restore_partition,
    state_topic,
)
from streams.state_store import LocalStateStore, StateCheckpoints
from streams.ticks import TickPublisher
from streams.transactional_output import TransactionalOutput
from streams.user_states import UserStates

log = logging.getLogger("memstream.worker")
CHECKPOINT_INTERVAL_SECONDS = 1.0  # local state checkpoints, right after a commit


@dataclass
class Worker:
    app: faust.App
    processor: IngestProcessor


def faust_app(settings: Settings, app_id: str) -> faust.App:
    """The Faust configuration of the worker, shared with the benchmark's pass-through
    baseline so the two are measured on the same footing. ``broker_credentials`` carries the
    Kafka security settings (SASL/TLS) to every aiokafka client Faust makes; a configured
    ``instance_id`` makes the worker a static group member, so a restart takes its
    partitions back at once instead of after the session timeout; the consumer's fetch wait
    is bounded (``streams/fetch_wait.py``); the producer's record batches hold
    ``producer_batch_bytes`` (a batch of inputs sends its ~2 KB records at once, and at
    Faust's 16 KiB each full batch made the next send wait for the broker)."""
    from memstream.kafka_security import faust_credentials

    app = faust.App(
        app_id,
        broker=f"kafka://{settings.kafka_bootstrap}",
        broker_credentials=faust_credentials(settings),
        store="memory://",
        datadir=str(settings.worker_data_dir / app_id),
        processing_guarantee="exactly_once",
        topic_partitions=settings.partitions,
        topic_replication_factor=1,
        broker_commit_interval=settings.commit_interval_seconds,
        consumer_auto_offset_reset="earliest",
        consumer_group_instance_id=settings.instance_id or None,
        broker_session_timeout=settings.session_timeout_seconds,
        web_enabled=False,
        producer_max_batch_size=settings.producer_batch_bytes,
    )
    bound_fetch_wait(app, settings.worker_fetch_wait_ms)
    return app


def raw_topic(app: faust.App, name: str, settings: Settings) -> faust.TopicT:
    """A topic of raw bytes: records are our own Avro single-object encoding."""
    return app.topic(
        name, partitions=settings.partitions, key_serializer="raw", value_serializer="raw"
    )


def build_app(settings: Settings) -> Worker:
    app = faust_app(settings, settings.app_id)
    ensure_state_topic(settings)
    store = LocalStateStore(
        settings.worker_data_dir / settings.app_id / "state" / (settings.instance_id or "local")
    )
    checkpoints = StateCheckpoints(store, CHECKPOINT_INTERVAL_SECONDS, time.monotonic)

    def after_commit() -> None:
        checkpoints.after_commit()
        metrics.state_checkpoint_pending.set(checkpoints.pending_entries())

    output = TransactionalOutput(
        app, settings.events_topic, after_commit=after_commit, on_lost=_stop_without_committing
    )
    events = raw_topic(app, settings.events_topic, settings)
    config = engine_config(settings)

    def due_of(state: InMemoryUserState) -> int | None:
        return next_due_at(state, config.policy)

    def new_states() -> UserStates:
        """Hot users bounded by MEMSTREAM_HOT_USERS; the others are read back from the
        local store when an input of theirs comes."""
        return UserStates(settings.hot_users, partial(load_user, store), due_of)

    states = new_states()
    processor = IngestProcessor(
        config,
        states,
        partitions=settings.partitions,
        dedupe_window_seconds=settings.dedupe_window_seconds,
        embedder=embedder_for(settings.embedder.lower(), settings.embedding_dim),
    )
    rebuilds = PartitionRebuilds(settings, states, store, new_states)

    def dirty(partition: int, user_id: str) -> bool:
        """Not all of the user's state is in the local store yet: sent but not checkpointed,
        or owed by a restore and not yet sent (after a ledger rebuild: all of it)."""
        return checkpoints.is_pending(partition, user_id) or rebuilds.owes_snapshot(partition)

    progress = _PartitionProgress(settings.events_topic)
    ticks = TickPublisher(settings, settings.events_topic)
    period = config.policy.triggers.periodic_seconds

    loads_seen = 0  # states.loads already counted in the metric
    unsent = False  # a batch is processed and not yet wholly sent

    @app.agent(events, name="ingest")
    async def ingest(stream: faust.StreamT) -> None:
        nonlocal unsent
        # Batches: an input's offset is acked once its whole batch is sent (take_events).
        batches = stream.take_events(  # type: ignore[attr-defined]  # not in StreamT
            settings.worker_batch_size, settings.worker_batch_ms / 1000
        )
        async for batch_events in batches:
            messages = [event.message for event in batch_events]
            await rebuilds.all_ready({m.partition for m in messages})
            inputs = [
                Input(m.key, m.value, source_headers(m.topic, m.partition, m.offset), m.partition)
                for m in messages
            ]
            batch = OutputBatch()
            unsent = True  # from here until every part is sent, evicting would lose work
            for message, emission in zip(messages, processor.process_batch(inputs), strict=True):
                if emission.ran_cycle:
                    metrics.consolidation_cycle.observe(emission.seconds)
                    _log_cycle(emission)
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
        metrics.user_loads.inc(states.loads - loads_seen)
        loads_seen = states.loads
        metrics.hot_users.set(states.hot_users())
        metrics.known_users.set(len(states))

    async def send_partition(part: PartitionBatch) -> None:
        """Send one partition's share of a batch atomically, then account for it."""
        try:
            deliveries = await output.send(part.partition, part.records(settings))
        except ProducerSendError as exc:
            if rebuilds.owns(part.partition):
                # Part of the batch may be in the open transaction, and Faust acks a batch
                # whose agent failed: no commit may follow (the output settles it too).
                _stop_without_committing(f"partition {part.partition}: {exc}")
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
        metrics.worker_batch_size.observe(len(part.emissions))
        for emission in part.emissions:
            _observe(emission)
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
        metrics.ticked_users.set(sum(len(users) for users in due.values()))
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
        for partition in lost:
            checkpoints.drop(partition)
        revoked_pending.clear()
        rebuilds.start({tp.partition for tp in assigned if tp.topic == settings.events_topic})
        metrics.partitions_assigned.set(len(owned))

    @app.on_partitions_revoked.connect  # type: ignore[arg-type]
    async def on_revoked(app: faust.App, revoked: set[TP], **_: Any) -> None:
        revoked_pending.update(tp.partition for tp in revoked if tp.topic == settings.events_topic)

    return Worker(app, processor)


class PartitionRebuilds:
    """Restores each newly assigned partition's state and lets the agent wait for it before
    it touches that partition's input.

    The state is read in a thread (``streams.state_restore``: the compacted state changelog,
    or the ledger when there is no changelog yet) into *private* state, which is installed on
    the event loop only if the partition is still assigned to this restore: a partition
    revoked and reassigned meanwhile cannot be overwritten by the older, slower read. A
    worker that cannot learn its state must not process input: after the retries it exits at
    once, without committing, so the partition is retried by a restarted (or another) worker.
    """

    ATTEMPTS = 5
    BACKOFF_SECONDS = 2.0

    def __init__(
        self,
        settings: Settings,
        states: UserStates,
        store: LocalStateStore | None = None,
        new_states: Callable[[], UserStates] = UserStates,
    ) -> None:
        self.settings = settings
        self.states = states
        self.store = store
        self.new_states = new_states
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.snapshots: dict[int, list[Entry]] = {}  # owed to the changelog after a rebuild

    def start(self, partitions: set[int]) -> None:
        for partition in partitions:
            if partition not in self.tasks:
                self.tasks[partition] = asyncio.ensure_future(self._rebuild(partition))

    def drop(self, partitions: set[int]) -> None:
        for partition in partitions:
            task = self.tasks.pop(partition, None)
            if task is not None:
                task.cancel()
            self.snapshots.pop(partition, None)
            self.states.drop_partition(partition)

    def take_snapshot(self, partition: int) -> list[Entry]:
        """The state entries a restore of ``partition`` still owes the changelog (once): all
        of them after a ledger rebuild, else those older workers wrote in another shape.
        If they are lost with an uncommitted transaction, the next owner owes them again."""
        return self.snapshots.pop(partition, [])

    async def ready(self, partition: int) -> None:
        if self._ready(partition):
            return  # the common case: no future to create
        while True:
            if partition not in self.tasks:  # assigned before our handler saw it
                self.start({partition})
            task = self.tasks[partition]
            try:
                await asyncio.shield(task)
                return
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # the agent itself is stopping
                # the rebuild was cancelled by a revoke; the partition is ours again: rebuild

    async def all_ready(self, partitions: set[int]) -> None:
        """Wait until every one of ``partitions`` is restored *at the same time*: waiting
        for one may let another be revoked and restored again, so check them all once more
        after the last wait (no await between that check and the caller's processing)."""
        while not all(self._ready(p) for p in partitions):
            for partition in partitions:
                await self.ready(partition)

    def _ready(self, partition: int) -> bool:
        task = self.tasks.get(partition)
        return task is not None and task.done() and not task.cancelled()

    def owns(self, partition: int) -> bool:
        return partition in self.tasks

    def ready_partitions(self) -> list[int]:
        """The owned partitions whose state is restored."""
        return [p for p in self.tasks if self._ready(p)]

    def owes_snapshot(self, partition: int) -> bool:
        """A restore's owed state entries are not sent yet (after a ledger rebuild its users
        are in no store)."""
        return partition in self.snapshots

    async def _rebuild(self, partition: int) -> None:
        loop = asyncio.get_running_loop()
        for attempt in range(1, self.ATTEMPTS + 1):
            started = time.perf_counter()
            try:
                restored = await loop.run_in_executor(
                    None,
                    restore_partition,
                    self.settings,
                    partition,
                    self.store,
                    self.new_states,
                )
            except Exception as exc:  # noqa: BLE001 - any failure: retry, then stop the worker
                log.warning(
                    "restoring partition %d failed (attempt %d/%d): %s",
                    partition,
                    attempt,
                    self.ATTEMPTS,
                    exc,
                )
                await asyncio.sleep(self.BACKOFF_SECONDS * attempt)
                continue
            if self.tasks.get(partition) is not asyncio.current_task():
                return  # revoked (and maybe reassigned) meanwhile: this read is stale
            self._install(partition, restored, time.perf_counter() - started)
            return
        _stop_without_committing(
            f"cannot restore partition {partition} from {state_topic(self.settings)} or "
            f"{self.settings.ledger_topic}; check the broker and that this worker's schemas "
            f"include the ledger's"
        )

    def _install(self, partition: int, restored: Restored, seconds: float) -> None:
        fresh = restored.states
        self.states.adopt_partition(partition, fresh)
        if restored.snapshot:
            self.snapshots[partition] = restored.snapshot
        metrics.state_rebuild.observe(seconds)
        metrics.state_restores.labels(restored.source).inc()
        if restored.source in ("checkpoint", "changelog"):
            metrics.state_restore_entries.inc(restored.records)
        else:
            metrics.state_rebuild_events.inc(restored.records)
        log.info(
            "partition %d: state of %d users restored from the %s (%d records, %.2f s)",
            partition,
            len(fresh.users_in(partition)),
            restored.source,
            restored.records,
            seconds,
        )
        if fresh.partial_events:
            metrics.state_rebuild_partial_events.inc(fresh.partial_events)
            log.warning(
                "partition %d: %d ledger events belong to inputs whose output is only "
                "partly in the ledger; those inputs will be processed again",
                partition,
                fresh.partial_events,
            )


def _stop_without_committing(reason: object) -> NoReturn:
    """Exit at once (code 70), committing nothing: a partition this worker owns cannot be
    restored, or output of inputs it owns did not land (committing would ack them without
    it). The open transactions are aborted when the partitions' producers are next
    initialised, and the inputs are processed again from the last commit, by a restarted
    worker or another one."""
    log.critical("%s: stopping the worker without committing", reason)
    os._exit(70)


def engine_config(settings: Settings) -> EngineConfig:
    """The deployment's policy (a TOML file, or a built-in profile) and contract limits."""
    policy = (
        load_policy(Path(settings.policy_file))
        if settings.policy_file
        else builtin_profile(settings.profile)
    )
    limits = Limits(settings.embedding_dim, settings.max_content_bytes)
    llm = LLMSettings.from_env()
    if llm is None:
        return EngineConfig(policy, limits)
    # The policy's retry rule (seed 000: 3 attempts, 5 s × attempt) governs the one step of
    # a cycle that can fail transiently: the call out to the model.
    llm = dataclasses.replace(
        llm, attempts=policy.retry.attempts, backoff_seconds=policy.retry.backoff_seconds
    )
    # Optional: an OpenAI-compatible model judges and writes patterns, falling back to the
    # built-in ones on any failure. Its verdicts are recorded in the ledger like any other.
    return EngineConfig(
        policy,
        limits,
        judge=LLMJudge(ChatClient(llm)),
        pattern_writer=LLMPatternWriter(ChatClient(llm), fallback=lambda contents: contents[0]),
    )


def _observe(emission: Emission) -> None:
    if emission.rejection is not None:
        metrics.events_rejected.labels(emission.rejection.reason).inc()
        return
    if emission.duplicate:
        metrics.events_duplicate.inc()
        return
    metrics.events_ingested.labels(emission.event_type or "unknown").inc()
    now = time.time()
    for decision in emission.ledger_events:
        metrics.ledger_events.labels(decision.event_type).inc()
        metrics.event_lag.observe(max(0.0, now - decision.occurred_at / 1000))
        _count_decision(decision.payload)


def _log_cycle(emission: Emission) -> None:
    """One line per cycle with its counts (seed 000's consolidation log)."""
    for decision in emission.ledger_events:
        report = decision.payload
        if isinstance(report, ledger_types.ConsolidationCompleted):
            log.info(
                "consolidation cycle %s (%s, profile %s) for user %s: processed=%d "
                "patterns=%d archived=%d contradictions=%d duplicates=%d links=%d decayed=%d "
                "warnings=%s",
                decision.cycle_id,
                decision.trigger,
                report.profile,
                decision.user_id,
                report.processed,
                report.patterns,
                report.archived,
                report.contradictions,
                report.duplicates_merged,
                report.links_created,
                report.decayed,
                list(report.warnings) or "none",
            )


def _count_decision(payload: object) -> None:
    """The SPEC §7 counters of consolidation decisions."""
    if isinstance(payload, ledger_types.MemoryPromoted):
        metrics.promotions.labels(payload.source_layer, payload.promoted.layer).inc()
    elif isinstance(payload, ledger_types.PatternDetected):
        metrics.patterns_extracted.inc()
        if payload.pattern.kind == "learning_pattern":
            metrics.insights_extracted.inc()
    elif isinstance(payload, ledger_types.ContradictionDetected):
        metrics.contradictions_found.inc()
    elif isinstance(payload, ledger_types.MemoryMerged):
        metrics.duplicates_merged.inc()
    elif isinstance(payload, ledger_types.MemoryArchived):
        metrics.memories_archived.inc()
        metrics.memories_retired.labels("archived", payload.reason).inc()
    elif isinstance(payload, ledger_types.MemoryDeleted):
        metrics.memories_retired.labels("deleted", payload.reason).inc()
    elif isinstance(payload, ledger_types.SessionClosed):
        metrics.sessions_closed.labels(payload.reason).inc()
    elif isinstance(payload, ledger_types.SessionConsolidated):
        metrics.sessions_consolidated.inc()
        metrics.session_compression.observe(payload.compression_ratio)
    elif isinstance(payload, ledger_types.EpisodesSummarized):
        metrics.episodes_summarized.inc(len(payload.episode_ids))
    elif isinstance(payload, ledger_types.IdentityDriftMeasured):
        metrics.identity_drift.labels(payload.level).inc()
    elif isinstance(payload, ledger_types.ProceduralSynthesized):
        metrics.profiles_synthesized.inc()
    elif isinstance(payload, ledger_types.ScopePromoted):
        metrics.scope_promotions.labels(payload.to_scope).inc()


class _PartitionProgress:
    """Last processed offset per input partition, to export consumer lag."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.next_offsets: dict[int, int] = {}

    def processed(self, partition: int, offset: int) -> None:
        self.next_offsets[partition] = offset + 1

    def report(self, app: faust.App) -> None:
        consumer = app.consumer
        for tp in consumer.assignment():
            if tp.topic != self.topic:
                continue
            highwater = consumer.highwater(tp)
            if highwater is None:
                continue
            done = self.next_offsets.get(tp.partition, highwater)
            metrics.consumer_lag.labels(tp.topic, str(tp.partition)).set(max(0, highwater - done))
