"""bench.sealing_cost's in-process phase against the stack's real PostgreSQL: every mode
processes the whole workload and opens all of its ledger."""

from __future__ import annotations

import base64
import os
from types import SimpleNamespace

import psycopg
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


def test_each_mode_is_measured_once_a_round_and_none_always_last() -> None:
    rounds = [sealing_cost.in_turn(r) for r in range(1, len(sealing_cost.MODES) + 1)]
    assert all(sorted(order) == sorted(sealing_cost.MODES) for order in rounds)
    assert {order[-1] for order in rounds} == set(sealing_cost.MODES)
    assert sealing_cost.in_turn(1) == sealing_cost.in_turn(len(sealing_cost.MODES) + 1)


def test_a_checkpoint_before_a_phase_runs_on_the_stacks_database(database: str) -> None:
    harness = SimpleNamespace(stack=SimpleNamespace(database_url=database))
    with psycopg.connect(database, autocommit=True) as conn:
        before = conn.execute("SELECT checkpoint_lsn FROM pg_control_checkpoint()").fetchone()
        sealing_cost.checkpoint(harness)  # type: ignore[arg-type]
        after = conn.execute("SELECT checkpoint_lsn FROM pg_control_checkpoint()").fetchone()
    assert before != after
