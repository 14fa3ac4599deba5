"""The worker's local checkpoints: written right after a commit, at most every interval, once
every record sent is delivered, holding the last value of each key sent since the last one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from streams.state.changelog import Entry
from streams.state.store import Checkpoint, LocalStateStore, StateCheckpoints

PARTITION = 3


@dataclass
class Delivered:
    """A changelog send the producer has settled: its last record landed at ``offset``."""

    offset: int
    settled: bool = True

    def delivered(self) -> bool:
        return self.settled

    def last_offset(self) -> int:
        return self.offset


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def new_checkpoints(tmp_path: Path) -> tuple[StateCheckpoints, LocalStateStore, Clock]:
    store = LocalStateStore(tmp_path)
    clock = Clock()
    return StateCheckpoints(store, 1.0, clock), store, clock


def test_a_key_sent_by_several_batches_is_written_once_with_its_last_value(
    tmp_path: Path,
) -> None:
    checkpoints, store, clock = new_checkpoints(tmp_path)
    meta, memory = b"u1\x1fu\x1f", b"u1\x1fm\x1fm-1"
    checkpoints.sent(PARTITION, [Entry(memory, b"v1"), Entry(meta, b"meta-1")], Delivered(10))
    checkpoints.sent(PARTITION, [Entry(meta, b"meta-2")], Delivered(11))
    checkpoints.sent(PARTITION, [Entry(meta, b"meta-3")], Delivered(12))

    assert checkpoints.pending_entries() == 2
    clock.now = 1.5
    checkpoints.after_commit()

    assert checkpoints.written == 2
    assert dict(store.entries(PARTITION)) == {memory: b"v1", meta: b"meta-3"}
    assert store.checkpoint(PARTITION) == Checkpoint(13, meta)
    assert not checkpoints.is_pending(PARTITION, "u1")


def test_a_tombstone_sent_after_a_value_deletes_the_key(tmp_path: Path) -> None:
    checkpoints, store, clock = new_checkpoints(tmp_path)
    seen = b"u1\x1fe\x1fevent-1"
    store.write(PARTITION, [Entry(seen, b"1")], Checkpoint(5, seen))
    checkpoints.sent(PARTITION, [Entry(seen, b"2")], Delivered(5))
    checkpoints.sent(PARTITION, [Entry(seen, None)], Delivered(6))

    clock.now = 1.5
    checkpoints.after_commit()

    assert dict(store.entries(PARTITION)) == {}
    assert store.checkpoint(PARTITION) == Checkpoint(7, seen)


def test_nothing_is_written_before_the_interval_has_passed(tmp_path: Path) -> None:
    checkpoints, store, clock = new_checkpoints(tmp_path)
    key = b"u1\x1fu\x1f"
    checkpoints.sent(PARTITION, [Entry(key, b"meta")], Delivered(8))

    clock.now = 0.5
    checkpoints.after_commit()

    assert store.checkpoint(PARTITION) is None
    assert checkpoints.is_pending(PARTITION, "u1")

    clock.now = 1.0
    checkpoints.after_commit()

    assert store.checkpoint(PARTITION) == Checkpoint(9, key)


def test_nothing_is_written_before_the_last_record_landed(tmp_path: Path) -> None:
    checkpoints, store, clock = new_checkpoints(tmp_path)
    key = b"u1\x1fu\x1f"
    in_flight = Delivered(8, settled=False)
    checkpoints.sent(PARTITION, [Entry(key, b"meta")], in_flight)

    clock.now = 1.5
    checkpoints.after_commit()

    assert store.checkpoint(PARTITION) is None
    assert checkpoints.is_pending(PARTITION, "u1")

    in_flight.settled = True
    clock.now = 3.0
    checkpoints.after_commit()

    assert dict(store.entries(PARTITION)) == {key: b"meta"}
    assert store.checkpoint(PARTITION) == Checkpoint(9, key)
