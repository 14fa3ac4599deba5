"""Random changes to one user's memory records, told to a derived index as they happen: the
index tests compare what the index says afterwards with a walk of the records."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol, Self, TypeVar

import pytest

from streams.engine.user_state import MemoryRecord

Move = Callable[[MemoryRecord | None, MemoryRecord | None], None]
MakeRecord = Callable[[random.Random, str], MemoryRecord]


def walk_records(
    rng: random.Random,
    move: Move,
    make: MakeRecord,
    records: dict[str, MemoryRecord],
    steps: int,
    ids: int,
) -> None:
    """``steps`` changes to ``records`` (a new record, or one in ten a removal) among ``ids``
    memory ids, each passed to ``move(previous, current)`` before it is made."""
    for _ in range(steps):
        memory_id = f"m{rng.randrange(ids)}"
        current = None if rng.random() < 0.1 else make(rng, memory_id)
        move(records.get(memory_id), current)
        if current is None:
            records.pop(memory_id, None)
        else:
            records[memory_id] = current


class Index(Protocol):
    """A derived index of one user's records that a cycle copies."""

    def move(self, previous: MemoryRecord | None, current: MemoryRecord | None) -> None: ...

    def copy(self) -> Self: ...


IndexT = TypeVar("IndexT", bound=Index)


def walk_then_copy(
    rng: random.Random, index: IndexT, make: MakeRecord, steps: int, ids: int
) -> tuple[dict[str, MemoryRecord], IndexT, dict[str, MemoryRecord]]:
    """Walk ``index`` through ``steps`` changes, copy it, and walk the copy through as many
    more. Returns the records as the original last heard of them, the copy, and the records
    as the copy heard of them."""
    records: dict[str, MemoryRecord] = {}
    walk_records(rng, index.move, make, records, steps, ids)
    copy = index.copy()
    changed = dict(records)
    walk_records(rng, copy.move, make, changed, steps, ids)
    return records, copy, changed


def count_builds(monkeypatch: pytest.MonkeyPatch, cls: type) -> list[int]:
    """Patch ``cls.of`` (an index built from all of a user's records) to note each call in
    the list returned: what tells a test a cycle walked the user's history."""
    built: list[int] = []
    original = cls.of.__func__  # type: ignore[attr-defined]  # any index class

    def counted(owner: type, records: object) -> object:
        built.append(1)
        return original(owner, records)

    monkeypatch.setattr(cls, "of", classmethod(counted))
    return built
