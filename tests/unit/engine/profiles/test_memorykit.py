"""Seed 000 (MemoryKit) under profile `memorykit`, on the pure engine (the batch oracle):
its three operations and its on-write trigger."""

from __future__ import annotations

from dataclasses import replace

import pytest

from streams.engine import ledger
from streams.engine.occurrences import Occurrences
from streams.engine.oracle import OracleRun, replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from tests.scenarios import DAY, HOUR, MINUTE, NOW, Scenario, cluster, random_unit

MEMORYKIT = EngineConfig(policy=builtin_profile("memorykit"))


def payloads(run: OracleRun, kind: type) -> list:
    return [d.payload for d in run.decisions if isinstance(d.payload, kind)]


def live(run: OracleRun, user: str, layer: str) -> dict[str, object]:
    return {
        r.memory.memory_id: r.memory
        for r in run.state(user).live_memories()
        if r.memory.layer == layer
    }


def test_op1_working_memories_that_qualify_become_semantic_facts():
    """Given working memories: important, accessed 3 times, older than 15 min, and one that
    is none of these, when a cycle runs, then the first three are promoted to semantic facts
    with confidence = importance + 0.25 and provenance metadata, and leave working memory."""
    s = Scenario("kit-1")
    s.write("important", "Deadline is Friday", importance=0.72, at=NOW - MINUTE)
    s.write("accessed", "Uses tabs", importance=0.3, at=NOW - 2 * MINUTE)
    for _ in range(3):
        s.access("accessed", at=NOW - MINUTE)
    s.write("old", "Met Ana", importance=0.2, created_at=NOW - 16 * MINUTE, at=NOW - 16 * MINUTE)
    s.write("fresh", "Said hello", importance=0.2, at=NOW - MINUTE)
    s.consolidate(at=NOW)

    run = replay(s.events, MEMORYKIT)

    promoted = {p.source_memory_id: p for p in payloads(run, ledger.MemoryPromoted)}
    assert set(promoted) == {"important", "accessed", "old"}
    fact = promoted["important"].promoted
    assert fact.layer == "semantic"
    assert fact.kind == "working_promotion"
    assert fact.confidence == pytest.approx(0.97)
    assert fact.metadata["source"] == "working_memory"
    assert fact.metadata["original_importance"] == "0.72"
    assert fact.metadata["promoted_at"] == str(NOW)
    assert promoted["accessed"].promoted.metadata["access_count"] == "3"
    assert all(p.source_removed for p in promoted.values())
    assert set(live(run, "kit-1", "working")) == {"fresh"}
    assert len(live(run, "kit-1", "semantic")) == 3


def test_op1_confidence_is_capped_at_one():
    s = Scenario("kit-cap")
    s.write("m", "Very important", importance=0.9)
    s.consolidate()

    (promotion,) = payloads(replay(s.events, MEMORYKIT), ledger.MemoryPromoted)

    assert promotion.promoted.confidence == 1.0


def test_op2_confident_old_facts_become_episodic_events_and_are_soft_deleted():
    """Given a semantic fact with confidence 0.9 written 3 h ago, when a cycle runs, then an
    episodic event `<fact_type>_pattern_detected` is created from it and the fact keeps a
    promoted_to_episodic marker (soft delete: still there)."""
    s = Scenario("kit-2")
    s.write(
        "fact",
        "Prefers dark mode",
        layer="semantic",
        kind="preference",
        confidence=0.9,
        created_at=NOW - 3 * HOUR,
        at=NOW - 3 * HOUR,
    )
    s.write(
        "young", "Likes tea", layer="semantic", kind="preference", confidence=0.9, at=NOW - HOUR
    )
    s.consolidate()

    run = replay(s.events, MEMORYKIT)

    (aged,) = [p for p in payloads(run, ledger.MemoryPromoted) if p.rule == "semantic_to_episodic"]
    assert aged.source_memory_id == "fact"
    assert aged.promoted.layer == "episodic"
    assert aged.promoted.kind == "preference_pattern_detected"
    assert aged.promoted.metadata["promoted_from_id"] == "fact"
    assert not aged.source_removed
    fact = run.state("kit-2").memories["fact"].memory
    assert fact.metadata["promoted_to_episodic"] == str(NOW)


def test_op2_three_similar_facts_within_seven_days_are_a_pattern():
    """Given 3 semantic facts of one fact_type with pairwise similarity about 0.9 in the last
    7 days, when a cycle runs, then a `<fact_type>_pattern_detected` episodic event is
    created with the three as evidence; a fourth, dissimilar fact is not evidence."""
    s = Scenario("kit-3")
    base = random_unit(1)
    for i, vector in enumerate(cluster(base, 3, pairwise=0.9, seed=10)):
        s.write(
            f"f{i}",
            f"Orders coffee at 9am (day {i})",
            layer="semantic",
            kind="habit",
            confidence=0.5,
            embedding=vector,
            at=NOW - (i + 1) * DAY,
        )
    s.write(
        "other",
        "Owns a bike",
        layer="semantic",
        kind="habit",
        confidence=0.5,
        embedding=cluster(random_unit(2), 1, 0.9, seed=99)[0],
        at=NOW - DAY,
    )
    s.consolidate()

    run = replay(s.events, MEMORYKIT)

    (pattern,) = payloads(run, ledger.PatternDetected)
    assert sorted(pattern.evidence_ids) == ["f0", "f1", "f2"]
    assert pattern.pattern.layer == "episodic"
    assert pattern.pattern.kind == "habit_pattern_detected"
    assert pattern.support == 3
    assert 0.85 < pattern.consistency < 0.95


def test_op2_facts_older_than_the_window_make_no_pattern():
    s = Scenario("kit-4")
    for i, vector in enumerate(cluster(random_unit(3), 3, pairwise=0.9, seed=20)):
        s.write(
            f"f{i}",
            f"Old habit {i}",
            layer="semantic",
            kind="habit",
            confidence=0.5,
            embedding=vector,
            at=NOW - 8 * DAY,
            created_at=NOW - 8 * DAY,
        )
    s.consolidate()

    assert payloads(replay(s.events, MEMORYKIT), ledger.PatternDetected) == []


def test_op3_a_successful_recurring_event_type_becomes_a_learned_procedure():
    """Given 3 'deploy' episodes in 30 days with success 1, 1 and 0.5 (average 0.83 > 0.6),
    when a cycle runs, then procedural `deploy_learned_pattern` holds the latest response,
    the union of trigger conditions, success/failure counts (ROUND as in SQL: 3 and 1 →
    2.5 rounds to 3) and the episodes are marked consolidated_to_procedural."""
    s = Scenario("kit-5")
    outcomes = [1.0, 1.0, 0.5]
    for i, success in enumerate(outcomes):
        s.write(
            f"d{i}",
            f"Deployed with blue/green, attempt {i}",
            layer="episodic",
            kind="deploy",
            success=success,
            trigger_conditions=[f"release-{i}"],
            at=NOW - (3 - i) * DAY,
        )
    s.consolidate()

    run = replay(s.events, MEMORYKIT)

    procedures = live(run, "kit-5", "procedural")
    (procedure,) = procedures.values()
    assert procedure.kind == "deploy_learned_pattern"
    assert procedure.content == "Deployed with blue/green, attempt 2"
    assert procedure.trigger_conditions == ("release-0", "release-1", "release-2")
    assert procedure.metadata["occurrence_count"] == "3"
    assert procedure.metadata["success_count"] == "3"  # ROUND(3 * 0.8333) = ROUND(2.5) = 3
    assert procedure.metadata["failure_count"] == "1"  # ROUND(3 * 0.1667) = ROUND(0.5) = 1
    for i in range(3):
        assert "consolidated_to_procedural" in run.state("kit-5").memories[f"d{i}"].memory.metadata


def test_op3_reads_every_occurrence_in_the_window_however_many_newer_memories_there_are():
    """Given 3 successful 'deploy' episodes and, after them, more episodic memories than a
    cycle takes as new, when a cycle runs, then the procedure is still learned (the window
    table holds every occurrence; the cap bounds new memories, not what is looked back at),
    and the state's table equals one rebuilt from its memories, also after one is forgotten."""
    config = EngineConfig(policy=replace(MEMORYKIT.policy, max_memories_per_cycle=3))
    s = Scenario("kit-window")
    for i in range(3):
        s.write(
            f"d{i}",
            f"Deployed {i}",
            layer="episodic",
            kind="deploy",
            success=1.0,
            at=NOW - (9 - i) * DAY,
        )
    for i in range(5):
        s.write(f"n{i}", f"Noted {i}", layer="episodic", kind="note", at=NOW - (5 - i) * DAY)
    s.consolidate()
    learned = replay(s.events, config)
    s.forget("d0", at=NOW + MINUTE)  # a forgotten occurrence leaves the table
    s.consolidate(at=NOW + 2 * MINUTE)

    run = replay(s.events, config)

    (procedure,) = live(learned, "kit-window", "procedural").values()
    assert procedure.metadata["evidence"] == "d0,d1,d2"
    state = run.state("kit-window")
    table, rebuilt = state.occurrences(), Occurrences.of(state.memories.values())
    assert table.event_types() == rebuilt.event_types() == ["deploy"]
    assert table.since("deploy", 0) == rebuilt.since("deploy", 0) == ["d1", "d2"]


def test_op3_low_average_success_learns_nothing():
    s = Scenario("kit-6")
    for i, success in enumerate([1.0, 0.5, 0.3]):  # average 0.6 is not > 0.6
        s.write(f"d{i}", f"Tried {i}", layer="episodic", kind="retry", success=success)
    s.consolidate()

    assert live(replay(s.events, MEMORYKIT), "kit-6", "procedural") == {}


def _conversation(messages: int) -> list:
    s = Scenario(f"kit-trigger-{messages}")
    for i in range(messages):
        s.write(f"m{i}", f"message {i}", importance=0.9, conversation_id="c1", at=NOW + i * 1000)
    return s.events


def test_19_messages_in_a_conversation_start_no_cycle():
    run = replay(_conversation(19), MEMORYKIT)

    assert payloads(run, ledger.ConsolidationCompleted) == []


def test_the_20th_message_in_a_conversation_starts_an_on_write_cycle():
    run = replay(_conversation(20), MEMORYKIT)

    (report,) = [d for d in run.decisions if isinstance(d.payload, ledger.ConsolidationCompleted)]
    assert report.trigger == "on_write"
    assert report.payload.profile == "memorykit"
    assert len(payloads(run, ledger.MemoryPromoted)) == 20


def test_the_counter_restarts_after_a_cycle():
    run = replay(_conversation(39), MEMORYKIT)

    assert len(payloads(run, ledger.ConsolidationCompleted)) == 1


def test_more_working_memories_than_the_limit_starts_an_on_write_cycle():
    """Seed 000's second on-write trigger (> 1000 working items), with a limit of 5: the
    5th working write starts nothing, the 6th starts a cycle."""
    import dataclasses

    policy = builtin_profile("memorykit")
    small = dataclasses.replace(
        policy, triggers=dataclasses.replace(policy.triggers, max_working_items=5)
    )
    s = Scenario("kit-many")
    for i in range(6):
        s.write(f"m{i}", f"note {i}", importance=0.1, at=NOW + i)
    five = replay(s.events[:5], EngineConfig(policy=small))
    six = replay(s.events, EngineConfig(policy=small))

    assert payloads(five, ledger.ConsolidationCompleted) == []
    (report,) = [d for d in six.decisions if isinstance(d.payload, ledger.ConsolidationCompleted)]
    assert report.trigger == "on_write"
    assert report.causation_id == s.events[5].event_id
