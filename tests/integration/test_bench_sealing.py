"""bench.sealing_cost's in-process phase against the stack's real PostgreSQL: every mode
processes the whole workload and opens all of its ledger."""

from __future__ import annotations

import base64
import os

import pytest

from bench import sealing_cost
from bench.workload import written_events
from streams.config.settings import Settings
from streams.engine.model import MemoryWritten

pytestmark = pytest.mark.integration


def test_the_in_process_phase_measures_every_mode_on_users_of_its_own(database: str) -> None:
    settings = Settings.from_env({"MEMSTREAM_DATABASE_URL": database})
    events = written_events(60, 3, settings.embedding_dim)
    master = base64.b64encode(os.urandom(32)).decode("ascii")
    rates = sealing_cost.in_process(settings, master, events, rounds=1)
    assert set(rates) == set(sealing_cost.MODES)
    for mode, got in rates.items():
        assert got["worker"] > 0 and got["opened"] > 0, (mode, got)


def test_real_conversations_go_through_every_mode_in_one_process(database: str) -> None:
    settings = Settings.from_env({"MEMSTREAM_DATABASE_URL": database})
    events = sealing_cost.real_conversations(40, 1)
    assert any(not isinstance(e.payload, MemoryWritten) for e in events)  # session ends
    written = [e.payload for e in events if isinstance(e.payload, MemoryWritten)]
    assert written and all(w.memory.embedding for w in written)
    master = base64.b64encode(os.urandom(32)).decode("ascii")
    rates = sealing_cost.in_process(settings, master, events, rounds=1)
    for mode, got in rates.items():
        assert got["worker"] > 0 and got["opened"] > 0, (mode, got)


def test_a_workload_written_as_other_users_keeps_its_memories() -> None:
    events = written_events(4, 2, 8)
    renamed = sealing_cost._as_users(events, "-x")
    for before, after in zip(events, renamed, strict=True):
        assert after.user_id == before.user_id + "-x"
        assert isinstance(after.payload, MemoryWritten)
        assert isinstance(before.payload, MemoryWritten)
        assert after.payload.memory.user_id == after.user_id
        assert after.payload.memory.content == before.payload.memory.content
