"""Random changes to one user's memory records, told to a derived index as they happen: the
index tests compare what the index says afterwards with a walk of the records."""

from __future__ import annotations

import random
from collections.abc import Callable

from streams.engine.state import MemoryRecord

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
