"""Restoring one partition's user states on assignment: from the local checkpoint plus the
state changelog's tail (``memory.state``), which costs what changed since the checkpoint;
from the whole compacted changelog when there is no valid checkpoint, which costs what is
live; from the ledger only when there is no changelog yet (a worker upgraded from before it,
or a lost topic), the disaster-recovery path, which costs the whole history.

Both read with ``isolation.level=read_committed`` up to the last stable offset, so state
never includes output of an aborted or still-open transaction. Blocking I/O: the worker
runs it in a thread.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import groupby, islice
from typing import Any, Literal

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from streams.config.kafka_security import confluent_config
from streams.config.settings import Settings
from streams.engine.ledger import ConsolidationEvent
from streams.engine.user_state import InMemoryUserState
from streams.erasure.sealing import EntryOpening, Sealing, Unreadable
from streams.state.changelog import (
    Entry,
    EntryOpener,
    all_entries,
    restored_user,
    split_key,
)
from streams.state.hot_users import UserStates
from streams.state.replay import read_committed, read_partition
from streams.state.store import Checkpoint, LocalStateStore

log = logging.getLogger("memstream.worker")
POLL_SECONDS = 0.5
STATE_TOPIC_CONFIG = {
    "cleanup.policy": "compact",
    "min.cleanable.dirty.ratio": "0.1",
    "segment.ms": "600000",  # roll segments so compaction can reclaim within minutes
}

Source = Literal["checkpoint", "changelog", "ledger", "empty"]


def state_topic(settings: Settings) -> str:
    return f"{settings.topic_prefix}memory.state"


@dataclass
class Restored:
    states: UserStates
    source: Source
    records: int  # changelog records (the tail, after a checkpoint) or ledger events read
    # entries to write to the changelog with the partition's next input: after a ledger
    # rebuild, every entry; after a restore, what older workers' entries lacked
    snapshot: list[Entry]


def ensure_state_topic(settings: Settings, timeout: float = 30.0) -> None:
    """Create the compacted state changelog, co-partitioned with the input, if missing."""
    admin = AdminClient(client_config(settings))
    metadata = admin.list_topics(timeout=timeout)
    name = state_topic(settings)
    if name in metadata.topics and metadata.topics[name].error is None:
        return
    replication = min(3, max(1, len(metadata.brokers)))
    futures = admin.create_topics(
        [NewTopic(name, settings.partitions, replication, config=STATE_TOPIC_CONFIG)]
    )
    for future in futures.values():
        try:
            future.result(timeout)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise


def restore_partition(
    settings: Settings,
    partition: int,
    store: LocalStateStore | None = None,
    new_states: Callable[[], UserStates] = UserStates,
    sealing: Sealing | None = None,
) -> Restored:
    """The partition's user states, by the cheapest valid path: the local checkpoint plus
    the changelog's tail; else the whole (compacted) changelog, which then becomes the local
    checkpoint; else a rebuild from the ledger.

    With a store, the changelog is written into the store first and users are then read
    back from it one at a time into ``new_states()``, which keeps as many hot as its
    capacity allows: a partition's state may be larger than memory.

    ``sealing``: sealed entries are opened (one sealed with an erased key counts as gone),
    ledger records too, and what the changelog is owed is sealed before it is sent."""
    restored = _restore(settings, partition, store, new_states, sealing)
    if sealing is None or not restored.snapshot:
        return restored
    return replace(restored, snapshot=[_sealed(sealing, entry) for entry in restored.snapshot])


def _sealed(sealing: Sealing, entry: Entry) -> Entry:
    user_id, _, _ = split_key(entry.key)
    [sealed] = sealing.seal_entries(user_id, [entry])
    return sealed


def _restore(
    settings: Settings,
    partition: int,
    store: LocalStateStore | None,
    new_states: Callable[[], UserStates],
    sealing: Sealing | None,
) -> Restored:
    open_value = EntryOpening(sealing) if sealing is not None else None
    topic = state_topic(settings)
    checkpoint = store.checkpoint(partition) if store is not None else None
    if store is not None and checkpoint is not None:
        if _committed(settings, topic, partition, checkpoint):
            tail = _Read()
            tail_entries = {  # the last value of each key: a tail is what changed lately
                entry.key: entry.value
                for entry in _entries(
                    read_committed(settings, topic, partition, start=checkpoint.next_offset), tail
                )
            }
            if tail.count:
                # The store now catches up with the changelog: checkpoints written from here
                # on only ever add what this owner sends (what an earlier owner sent, or this
                # worker sent before a revoke dropped it from its pending entries, is in the
                # tail and must be in the store before the checkpoint moves past it).
                caught_up = (Entry(k, v) for k, v in tail_entries.items())
                store.write(partition, caught_up, Checkpoint(tail.next_offset, tail.last_key))
            states, owed = _read_store(store, partition, new_states(), open_value)
            return Restored(states, "checkpoint", tail.count, owed)
        log.warning(
            "partition %d: the local checkpoint is not in the committed changelog "
            "(its last transaction aborted); restoring from the changelog",
            partition,
        )
        store.discard(partition)
    if store is not None:
        read = _changelog_into_store(store, partition, read_committed(settings, topic, partition))
        if read.count:
            states, owed = _read_store(store, partition, new_states(), open_value)
            return Restored(states, "changelog", read.count, owed)
        store.discard(partition)
    else:
        read = _Read()
        by_user: dict[str, list[tuple[bytes, bytes | None]]] = {}
        for entry in _entries(read_committed(settings, topic, partition), read):
            by_user.setdefault(split_key(entry.key)[0], []).append((entry.key, entry.value))
        if read.count:
            # one user at a time, in changelog order: a sealed user's memory keys are read in
            # one round trip per user (changelog.PrefetchingOpener)
            built = (restored_user(u, entries, open_value) for u, entries in by_user.items())
            states, owed = _installed(new_states(), partition, built)
            return Restored(states, "changelog", read.count, owed)
    states = new_states()
    ledger_events = read_partition(settings, settings.ledger_topic, partition)
    if sealing is not None:
        ledger_events = _opened(sealing, ledger_events)
    folded = states.rebuild_partition(partition, ledger_events)
    if not folded:
        return Restored(states, "empty", 0, [])
    log.warning(
        "partition %d: no state changelog in %s; rebuilt %d users from %d ledger events and "
        "will write them to the changelog with the next input",
        partition,
        topic,
        len(states.users_in(partition)),
        folded,
    )
    snapshot = [
        entry
        for user in sorted(states.users_in(partition))
        for entry in all_entries(states.user(user, partition))
    ]
    return Restored(states, "ledger", folded, snapshot)


STORE_WRITE_BATCH = 10_000  # changelog records per local-store write while restoring
OPENED_BATCH = 500  # ledger records whose memory keys a replay reads in one round trip


def _changelog_into_store(
    store: LocalStateStore,
    partition: int,
    records: Iterator[tuple[int, bytes | None, bytes | None]],
) -> _Read:
    """Write the whole changelog into an empty store, in batches (later records of a key
    overwrite earlier ones, a tombstone deletes), then set the checkpoint. A crash before
    the checkpoint leaves a store without one, which the next restore discards."""
    store.discard(partition)
    read = _Read()
    batch: list[Entry] = []
    for entry in _entries(records, read):
        batch.append(entry)
        if len(batch) >= STORE_WRITE_BATCH:
            store.write_entries(partition, batch)
            batch = []
    store.write_entries(partition, batch)
    if read.count:
        store.write(partition, (), Checkpoint(read.next_offset, read.last_key))
    return read


def _opened(sealing: Sealing, events: Iterable[ConsolidationEvent]) -> Iterator[ConsolidationEvent]:
    """The ledger records opened; those that do not open (their user is erased) left out. A
    record of a memory whose key is erased is kept with that memory's fields blank: its forget,
    or its version written anew, follows it in the ledger and lands on it as it did live. The
    memory keys of each :data:`OPENED_BATCH` records are read in one round trip, not one per
    memory."""
    records = iter(events)
    while batch := list(islice(records, OPENED_BATCH)):
        sealing.prefetch_ledger(batch)
        for event in batch:
            try:
                opened, _ = sealing.open_ledger_keeping(event)
            except Unreadable:
                continue
            yield opened


def _read_store(
    store: LocalStateStore,
    partition: int,
    states: UserStates,
    open_value: EntryOpener | None = None,
) -> tuple[UserStates, list[Entry]]:
    """Every user of the store's partition, read one at a time (entries come in key order,
    so a user's entries are consecutive) and installed into ``states``; and the entries
    the changelog owes them (written by an older worker in an older shape)."""
    restored = (
        restored_user(user_id, entries, open_value)
        for user_id, entries in groupby(store.entries(partition), key=_user_of)
    )
    return _installed(states, partition, restored)


def _installed(
    states: UserStates,
    partition: int,
    restored: Iterable[tuple[InMemoryUserState, list[Entry]]],
) -> tuple[UserStates, list[Entry]]:
    """``states`` with each restored user installed (one at a time: ``states`` may evict),
    and all that they owe the changelog."""
    owed: list[Entry] = []
    for state, owing in restored:
        states.install(partition, state)
        owed += owing
    return states, owed


def load_user(
    store: LocalStateStore,
    partition: int,
    user_id: str,
    open_value: EntryOpener | None = None,
) -> InMemoryUserState:
    """A cold user's state, read back from the local store (``open_value``: sealing on)."""
    state, _ = restored_user(user_id, store.user_entries(partition, user_id), open_value)
    return state  # what it owes the changelog was owed by the restore that stored it


def _user_of(item: tuple[bytes, bytes]) -> str:
    return split_key(item[0])[0]


@dataclass
class _Read:
    count: int = 0
    next_offset: int = 0
    last_key: bytes | None = None


def _entries(
    records: Iterator[tuple[int, bytes | None, bytes | None]], read: _Read
) -> Iterator[Entry]:
    """The state entries among changelog records, counting them and the position in ``read``."""
    for offset, key, value in records:
        if key is None:
            continue  # not a state entry (nothing memstream writes)
        read.count += 1
        read.next_offset, read.last_key = offset + 1, key
        yield Entry(key, value)


def _committed(settings: Settings, topic: str, partition: int, checkpoint: Checkpoint) -> bool:
    """Whether the checkpoint's last record is in the committed changelog."""
    if checkpoint.next_offset == 0:
        return True
    for offset, key, _ in read_committed(
        settings, topic, partition, start=checkpoint.next_offset - 1, limit=1
    ):
        return offset == checkpoint.next_offset - 1 and key == checkpoint.last_key
    return False


def client_config(settings: Settings) -> dict[str, Any]:
    """The Kafka client settings (bootstrap and security) every client of the worker shares."""
    return confluent_config(settings)


def reset_state_topic(settings: Settings, timeout: float = 30.0) -> None:
    """The disaster-recovery path: drop the state changelog and create it empty, so each
    worker rebuilds its partitions from the ledger at its next start (and writes them back).
    Every worker of the group must be stopped first: a running one would keep writing
    deltas to a changelog that no longer holds the rest of its state."""
    admin = AdminClient(client_config(settings))
    name = state_topic(settings)
    if name in admin.list_topics(timeout=timeout).topics:
        for future in admin.delete_topics([name], operation_timeout=timeout).values():
            future.result(timeout)
        deadline = time.monotonic() + timeout
        while name in admin.list_topics(timeout=timeout).topics:
            if time.monotonic() > deadline:
                raise KafkaException(f"{name} was not deleted within {timeout:.0f} s")
            time.sleep(0.2)
    ensure_state_topic(settings, timeout)
