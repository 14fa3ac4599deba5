"""A memory's life across consolidation: updates keep what the pipeline owns, forgetting
reaches every copy, uses of a promoted memory follow it (on the pure engine)."""

from __future__ import annotations

import dataclasses

from streams.engine import ledger
from streams.engine.oracle import OracleRun, replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from streams.engine.user_state import MemoryRecord
from tests.scenarios import DAY, MINUTE, NOW, Scenario, cluster, random_unit

DEFAULT = EngineConfig(policy=builtin_profile("default"))
MEMORYKIT = EngineConfig(policy=builtin_profile("memorykit"))


def records(run: OracleRun, user: str) -> dict[str, MemoryRecord]:
    return run.state(user).memories


def copy_of(run: OracleRun, user: str, source: str) -> MemoryRecord:
    (copy,) = [
        r for r in records(run, user).values() if r.memory.metadata.get("promoted_from") == source
    ]
    return copy


def decisions(run: OracleRun, kind: type) -> list:
    return [d.payload for d in run.decisions if isinstance(d.payload, kind)]


def test_forgetting_a_promoted_memory_forgets_its_semantic_copy():
    """Given a working memory promoted to a semantic fact, when the user forgets it, then
    the copy (which holds the same content) is forgotten too."""
    s = Scenario("forget-copy")
    s.write("w", "my card PIN is 4321", importance=0.9)
    s.consolidate(at=NOW + MINUTE)
    s.forget("w", at=NOW + 2 * MINUTE)

    run = replay(s.events, DEFAULT)

    tombstones = {p.memory_id: p.reason for p in decisions(run, ledger.MemoryForgotten)}
    (promotion,) = decisions(run, ledger.MemoryPromoted)
    copy_id = promotion.promoted.memory_id
    assert set(tombstones) == {"w", copy_id}
    assert tombstones[copy_id] == "derived from forgotten memory w"
    assert all(r.forgotten for r in records(run, "forget-copy").values())


def test_forgetting_evidence_forgets_the_pattern_that_quotes_it():
    s = Scenario("forget-pattern")
    for i, vector in enumerate(cluster(random_unit(1), 3, pairwise=0.9, seed=3)):
        s.write(f"f{i}", f"Orders coffee at 9am #{i}", layer="semantic", embedding=vector)
    s.consolidate()
    s.forget("f1", at=NOW + MINUTE)

    run = replay(s.events, DEFAULT)

    (pattern,) = decisions(run, ledger.PatternDetected)
    assert records(run, "forget-pattern")[pattern.pattern.memory_id].forgotten
    assert not records(run, "forget-pattern")["f0"].forgotten  # other evidence stays


def test_a_pattern_does_not_supersede_its_own_evidence():
    """The pattern quotes its most central member (similarity 1.0); that is derivation,
    not duplication."""
    s = Scenario("pattern-dupes")
    for i, vector in enumerate(cluster(random_unit(2), 3, pairwise=0.9, seed=4)):
        s.write(f"f{i}", f"Runs tests #{i}", layer="semantic", embedding=vector)
    s.consolidate()

    run = replay(s.events, DEFAULT)

    assert len(decisions(run, ledger.PatternDetected)) == 1
    assert decisions(run, ledger.MemoryMerged) == []


def test_an_access_to_a_promoted_memory_counts_on_its_copy():
    s = Scenario("follow")
    s.write("w", "Deadline is Friday", importance=0.9)
    s.consolidate(at=NOW + MINUTE)
    s.access("w", at=NOW + 2 * MINUTE)
    s.pin("w", at=NOW + 3 * MINUTE)

    run = replay(s.events, DEFAULT)

    copy = copy_of(run, "follow", "w")
    assert copy.memory.access_count == 1
    assert copy.memory.pinned
    assert run.rejections == []


def test_an_update_keeps_the_pin_and_a_pinned_memory_is_never_archived():
    """Given a pinned memory, when its producer updates the content, then it stays pinned
    and a later cycle does not archive it, however stale."""
    s = Scenario("pinned")
    s.write(
        "m",
        "Old trivia",
        layer="semantic",
        importance=0.05,
        created_at=NOW - 40 * DAY,
        at=NOW - 40 * DAY,
    )
    s.pin("m", at=NOW - 40 * DAY)
    s.write("m", "Old trivia, corrected", layer="semantic", importance=0.05, at=NOW - 39 * DAY)
    s.consolidate()

    run = replay(s.events, EngineConfig(policy=builtin_profile("lexichord")))

    memory = records(run, "pinned")["m"].memory
    assert memory.pinned
    assert memory.status == "active"
    assert decisions(run, ledger.MemoryArchived) == []


def test_new_content_is_a_new_fact_valid_from_the_update():
    s = Scenario("valid")
    s.write("m", "Standup is at 9am", layer="semantic", at=NOW - DAY)
    s.write("m", "Standup is at 11am", layer="semantic", at=NOW)

    run = replay(s.events, DEFAULT)

    memory = records(run, "valid")["m"].memory
    assert memory.valid_at == NOW
    assert memory.created_at == NOW - DAY


def test_a_rewritten_promoted_memory_is_promoted_again_into_a_newer_copy():
    """Given a working memory already promoted, when the producer rewrites it and a cycle
    runs, then its semantic copy is updated with a higher version (never version 1 again)."""
    s = Scenario("again")
    s.write("w", "User lives in Paris", importance=0.9)
    s.consolidate(at=NOW + MINUTE)
    s.write("w", "User moved to Berlin", importance=0.9, at=NOW + 2 * MINUTE)
    s.consolidate(at=NOW + 3 * MINUTE)

    run = replay(s.events, DEFAULT)

    first, second = decisions(run, ledger.MemoryPromoted)
    assert second.promoted.memory_id == first.promoted.memory_id
    assert second.promoted_version > first.promoted_version
    copy = copy_of(run, "again", "w")
    assert copy.memory.content == "User moved to Berlin"
    assert copy.version >= second.promoted_version


def test_a_capped_cycle_consolidates_the_newest_memories():
    policy = dataclasses.replace(builtin_profile("default"), max_memories_per_cycle=3)
    s = Scenario("capped")
    for i in range(5):
        s.write(f"old{i}", f"Old note {i}", layer="semantic", at=NOW - 30 * DAY)
    for i, vector in enumerate(cluster(random_unit(3), 3, pairwise=0.9, seed=5)):
        s.write(f"new{i}", f"New habit {i}", layer="semantic", embedding=vector, at=NOW)
    s.consolidate()

    run = replay(s.events, EngineConfig(policy=policy))

    (pattern,) = decisions(run, ledger.PatternDetected)
    assert sorted(pattern.evidence_ids) == ["new0", "new1", "new2"]


def test_memorykit_promotes_the_same_working_memory_once():
    s = Scenario("once")
    s.write("w", "Deadline is Friday", importance=0.9)
    s.consolidate(at=NOW + MINUTE)
    s.consolidate(at=NOW + 2 * MINUTE)

    run = replay(s.events, MEMORYKIT)

    assert len(decisions(run, ledger.MemoryPromoted)) == 1
