"""`default` runs every rule together without conflicting decisions (issue: consolidation
engine II, done-when 4), on the oracle: a multi-user workload of long conversations mixed
with writes in every layer, accesses, pins and forgets (pure)."""

from __future__ import annotations

from collections import defaultdict
from functools import cache

from streams.engine import ledger
from streams.engine.model import MemoryEvent, MemoryPinned, MemoryUnpinned
from streams.engine.oracle import OracleRun, replay
from streams.engine.passing_index import PASSING
from streams.engine.policy import builtin_profile
from streams.engine.rules.observations import PASSED_REASON
from streams.engine.step import EngineConfig
from tests.conversations import long_conversations
from tests.workloads import mixed_workload

FATES = {
    ledger.MemoryPromoted: lambda p: p.source_memory_id if p.source_removed else None,
    ledger.MemoryMerged: lambda p: p.merged_memory_id,
    ledger.MemoryArchived: lambda p: p.memory_id,
    ledger.MemoryDeleted: lambda p: p.memory_id,
    ledger.MemoryForgotten: lambda p: p.memory_id,
}


@cache
def workload_and_run() -> tuple[list[MemoryEvent], OracleRun]:
    conversations = long_conversations(users=3, sessions_per_user=12, seed=11).events
    mixed = mixed_workload(1500, users=3, seed=5)
    events = sorted([*conversations, *mixed], key=lambda e: (e.occurred_at, e.event_id))
    return events, replay(events, EngineConfig(policy=builtin_profile("default")))


def test_every_kind_of_decision_happens_in_the_workload() -> None:
    _, run = workload_and_run()
    kinds = {type(d.payload) for d in run.decisions}
    assert {
        ledger.MemoryPromoted,
        ledger.SessionClosed,
        ledger.SessionConsolidated,
        ledger.MemoryArchived,
        ledger.IdentityDriftMeasured,
        ledger.ConsolidationCompleted,
    } <= kinds


def test_no_memory_meets_two_fates_in_one_cycle() -> None:
    """No memory is both merged and promoted (or archived, deleted, forgotten) in a cycle."""
    _, run = workload_and_run()
    fates: dict[tuple[str, str], list[str]] = defaultdict(list)
    for decision in run.decisions:
        subject = FATES.get(type(decision.payload), lambda p: None)(decision.payload)
        if decision.cycle_id is not None and subject is not None:
            fates[(decision.cycle_id, subject)].append(decision.event_type)
    assert {key: kinds for key, kinds in fates.items() if len(kinds) > 1} == {}


def test_no_pinned_memory_is_deleted_or_archived() -> None:
    events, run = workload_and_run()
    pinned: dict[tuple[str, str], bool] = {}
    for event in events:
        if isinstance(event.payload, MemoryPinned | MemoryUnpinned):
            key = (event.user_id, event.payload.memory_id)
            pinned[key] = isinstance(event.payload, MemoryPinned)
    still_pinned = {key for key, on in pinned.items() if on}
    removed = {
        (d.user_id, d.payload.memory_id)
        for d in run.decisions
        if isinstance(d.payload, ledger.MemoryDeleted | ledger.MemoryArchived)
    }
    assert still_pinned and not (still_pinned & removed)


def test_default_never_deletes_and_archives_only_what_something_else_carries() -> None:
    """Compress, never forget what is still true: in `default` a memory leaves active memory
    only when merged, superseded, invalidated or carried by a narrative/summary, or when it
    is an observation of a passing state whose period is over ("the gym has been a mess
    this week", weeks later: not known to be true any more); it is never deleted."""
    _, run = workload_and_run()
    archived = [d.payload for d in run.decisions if isinstance(d.payload, ledger.MemoryArchived)]
    assert not any(isinstance(d.payload, ledger.MemoryDeleted) for d in run.decisions)
    passed = [p for p in archived if p.reason == PASSED_REASON]
    assert archived and all(p.carried_by is not None for p in archived if p not in passed)
    for payload in passed:
        record = run.users[_user_of(run, payload.memory_id)].memories[payload.memory_id]
        assert record.memory.kind == "observation" and record.memory.metadata[PASSING] == "1"


def _user_of(run: OracleRun, memory_id: str) -> str:
    return next(user for user, state in run.users.items() if memory_id in state.memories)
