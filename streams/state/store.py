"""The worker's local state checkpoint: one RocksDB (``rocksdict``) per owned partition.

It holds the partition's state-changelog entries as of a changelog offset, so a restart
reads the local checkpoint plus the changelog's tail, not the whole changelog (and never the
ledger). Correctness rests on one rule: a checkpoint is written only right after a Kafka
commit, under the emission guard (``streams.kafka.transactional_output``), when every record the
worker sent is committed and the worker's state is exactly the changelog up to its end. A
checkpoint written then stays valid forever: the changelog only grows after it, so a later
restore (after a crash, or on a worker the partition comes back to) applies the tail from
the checkpoint's offset. A store that cannot be read is deleted and the partition restores
from the changelog.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from rocksdict import BlockBasedOptions, Cache, Options, Rdict, WriteBatch

from streams.state.changelog import SEPARATOR, Entry

CHECKPOINT_KEY = b"\x00checkpoint"  # entries' keys start with a user id: never \x00


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Where a partition's checkpoint stands: the changelog's next offset, and the key of the
    record just before it, to check on restore that this record was committed (a checkpoint
    taken while its last transaction was open is worthless once that transaction aborted)."""

    next_offset: int
    last_key: bytes | None


class LocalStateStore:
    """Per-partition RocksDB stores under ``directory``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._open: dict[int, Rdict] = {}
        self._cache = Cache(BLOCK_CACHE_BYTES)  # shared by all the partitions' stores

    def checkpoint(self, partition: int) -> Checkpoint | None:
        """The partition's checkpoint (None: none, or unreadable and discarded)."""
        if not self._path(partition).exists():
            return None
        try:
            raw = self._db(partition).get(CHECKPOINT_KEY)
            if raw is None:
                return None
            data = json.loads(raw)
            last_key = None if data["last_key"] is None else bytes.fromhex(data["last_key"])
            return Checkpoint(int(data["next_offset"]), last_key)
        except Exception:  # noqa: BLE001 - an unreadable store is a missing store
            self.discard(partition)
            return None

    def entries(self, partition: int) -> Iterator[tuple[bytes, bytes]]:
        db = self._db(partition)
        for key, value in db.items():
            if key != CHECKPOINT_KEY and isinstance(key, bytes) and isinstance(value, bytes):
                yield key, value

    def user_entries(self, partition: int, user_id: str) -> Iterator[tuple[bytes, bytes]]:
        """One user's entries: a range read, since every key starts with ``user id␟``."""
        prefix = user_id.encode() + SEPARATOR.encode()
        for key, value in self._db(partition).items(from_key=prefix):
            if not (isinstance(key, bytes) and key.startswith(prefix)):
                return
            if isinstance(value, bytes):
                yield key, value

    def write_entries(self, partition: int, entries: Iterable[Entry]) -> None:
        """Apply ``entries`` without moving the checkpoint (a restore writing in batches)."""
        batch, _ = _batch_of(entries)
        self._db(partition).write(batch)

    def write(self, partition: int, entries: Iterable[Entry], checkpoint: Checkpoint) -> int:
        """Apply ``entries`` (a tombstone deletes) and move the checkpoint, atomically.
        Returns how many entries were written."""
        db = self._db(partition)
        batch, written = _batch_of(entries)
        last_key = None if checkpoint.last_key is None else checkpoint.last_key.hex()
        marker = {"next_offset": checkpoint.next_offset, "last_key": last_key}
        batch.put(CHECKPOINT_KEY, json.dumps(marker).encode())
        db.write(batch)
        return written

    def discard(self, partition: int) -> None:
        db = self._open.pop(partition, None)
        if db is not None:
            with contextlib.suppress(Exception):
                db.close()
        shutil.rmtree(self._path(partition), ignore_errors=True)

    def close(self) -> None:
        for partition in list(self._open):
            with contextlib.suppress(Exception):
                self._open.pop(partition).close()

    def _db(self, partition: int) -> Rdict:
        db = self._open.get(partition)
        if db is None:
            self._path(partition).parent.mkdir(parents=True, exist_ok=True)
            db = self._open[partition] = Rdict(str(self._path(partition)), _options(self._cache))
        return db

    def _path(self, partition: int) -> Path:
        return self.directory / f"partition-{partition}"


def _batch_of(entries: Iterable[Entry]) -> tuple[WriteBatch, int]:
    """A RocksDB write batch of ``entries`` (a tombstone deletes), and how many there are."""
    batch = WriteBatch()
    count = 0
    for entry in entries:
        if entry.value is None:
            batch.delete(entry.key)
        else:
            batch.put(entry.key, entry.value)
        count += 1
    return batch, count


WRITE_BUFFER_BYTES = 4 * 2**20
BLOCK_CACHE_BYTES = 16 * 2**20


def _options(cache: Cache) -> Options:
    """Bounded memory whatever the state's size.

    - Small memtables: RocksDB's default (64 MB, per partition store) let a worker owning
      12 partitions hold hundreds of MB of written state in memory, the very state the
      hot-user bound keeps out of it. Checkpoint writes are batched, so small buffers cost
      little.
    - One block cache for all the worker's stores, holding the index and filter blocks too:
      by default each store has its own 32 MB cache and keeps every table's index and
      filter outside any cache, so what it held grew with the partitions owned and with the
      state on disk. Blocks are read when a cold user is loaded back, once per load."""
    options = Options()
    options.create_if_missing(True)
    options.set_write_buffer_size(WRITE_BUFFER_BYTES)
    options.set_max_write_buffer_number(2)
    table = BlockBasedOptions()
    table.set_block_cache(cache)
    table.set_cache_index_and_filter_blocks(True)
    options.set_block_based_table_factory(table)
    return options


class Delivery(Protocol):
    """Where the last of a send's changelog records landed, once the producer knows."""

    def delivered(self) -> bool: ...

    def last_offset(self) -> int: ...


class StateCheckpoints:
    """Moves each owned partition's local checkpoint forward, right after Kafka commits.

    The worker reports each input's state entries with the delivery of the last one
    (:meth:`sent`); :meth:`after_commit` (run by the consumer after a commit, under the
    emission guard) writes what accumulated, at most every ``interval_seconds``, with the
    changelog offset and key of the last delivered record as the checkpoint.

    What accumulates is kept as the last entry per key: a user's ``meta`` entry and a
    session's window are sent again with every batch that touches them (~30 batches a
    second at 1,000 inputs/s), and only the last value of a key is ever read back."""

    def __init__(
        self, store: LocalStateStore, interval_seconds: float, clock: Callable[[], float]
    ) -> None:
        self.store = store
        self.interval_seconds = interval_seconds
        self.clock = clock
        self.pending: dict[int, dict[bytes, Entry]] = {}  # partition → key → last entry
        self.pending_users: dict[int, set[str]] = {}  # whose entries are not in the store yet
        self.last_delivery: dict[int, tuple[Delivery, bytes | None]] = {}
        self.last_written = clock()
        self.written = 0

    def sent(self, partition: int, entries: list[Entry], delivery: Delivery) -> None:
        """``entries`` were sent; ``delivery`` says when and where the last of them landed."""
        if not entries:
            return
        pending = self.pending.setdefault(partition, {})
        for entry in entries:
            pending[entry.key] = entry
        self.pending_users.setdefault(partition, set()).update(
            entry.key.split(SEPARATOR.encode(), 1)[0].decode() for entry in entries
        )
        self.last_delivery[partition] = (delivery, entries[-1].key)

    def is_pending(self, partition: int, user_id: str) -> bool:
        """Whether some of the user's state is sent but not yet in the local store."""
        return user_id in self.pending_users.get(partition, ())

    def after_commit(self) -> None:
        if self.clock() - self.last_written < self.interval_seconds:
            return
        self.last_written = self.clock()
        for partition in list(self.pending):
            delivery, last_key = self.last_delivery[partition]
            if not delivery.delivered():
                continue  # not flushed yet: next time
            offset = delivery.last_offset()
            self.written += self.store.write(
                partition,
                self.pending.pop(partition).values(),
                Checkpoint(offset + 1, last_key),
            )
            del self.last_delivery[partition]
            self.pending_users.pop(partition, None)

    def pending_entries(self) -> int:
        return sum(len(entries) for entries in self.pending.values())

    def drop(self, partition: int) -> None:
        """A revoked partition: what is pending is no longer ours to checkpoint."""
        self.pending.pop(partition, None)
        self.pending_users.pop(partition, None)
        self.last_delivery.pop(partition, None)
