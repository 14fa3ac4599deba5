"""A partition's state on assignment: restored in a thread, installed only if the partition is
still this restore's, and waited for by the agent before it touches the partition's input.

The restore itself (checkpoint + changelog tail, the whole changelog, or the ledger) is
``streams.state.restore``; this module is its life cycle on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from functools import partial

from streams import worker_metrics
from streams.config.settings import Settings
from streams.erasure.sealing import Sealing
from streams.runtime.stopping import stop_without_committing
from streams.state.changelog import Entry
from streams.state.hot_users import UserStates
from streams.state.restore import Restored, restore_partition, state_topic
from streams.state.store import LocalStateStore

log = logging.getLogger("memstream.worker")


class PartitionRebuilds:
    """Restores each newly assigned partition's state and lets the agent wait for it before
    it touches that partition's input.

    The state is read in a thread (``streams.state.restore``: the compacted state changelog,
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
        sealing: Sealing | None = None,
    ) -> None:
        """``sealing``: opens the sealed state entries restored and seals what is owed."""
        self.sealing = sealing
        self.settings = settings
        self.states = states
        self.store = store
        self.new_states = new_states
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.snapshots: dict[int, list[Entry]] = {}  # owed to the changelog after a rebuild

    def start(self, partitions: set[int]) -> None:
        if self.sealing is not None and partitions - set(self.tasks):
            # another worker may have made generations of these users' memory keys while it
            # owned them: what this one remembers of them is read again
            self.sealing.new_batch()
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
                restore = (
                    restore_partition
                    if self.sealing is None
                    else partial(restore_partition, sealing=self.sealing)
                )
                restored = await loop.run_in_executor(
                    None, restore, self.settings, partition, self.store, self.new_states
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
        stop_without_committing(
            f"cannot restore partition {partition} from {state_topic(self.settings)} or "
            f"{self.settings.ledger_topic}; check the broker and that this worker's schemas "
            f"include the ledger's"
        )

    def _install(self, partition: int, restored: Restored, seconds: float) -> None:
        fresh = restored.states
        self.states.adopt_partition(partition, fresh)
        if restored.snapshot:
            self.snapshots[partition] = restored.snapshot
        worker_metrics.state_rebuild.observe(seconds)
        worker_metrics.state_restores.labels(restored.source).inc()
        if restored.source in ("checkpoint", "changelog"):
            worker_metrics.state_restore_entries.inc(restored.records)
        else:
            worker_metrics.state_rebuild_events.inc(restored.records)
        log.info(
            "partition %d: state of %d users restored from the %s (%d records, %.2f s)",
            partition,
            len(fresh.users_in(partition)),
            restored.source,
            restored.records,
            seconds,
        )
        if fresh.partial_events:
            worker_metrics.state_rebuild_partial_events.inc(fresh.partial_events)
            log.warning(
                "partition %d: %d ledger events belong to inputs whose output is only "
                "partly in the ledger; those inputs will be processed again",
                partition,
                fresh.partial_events,
            )
