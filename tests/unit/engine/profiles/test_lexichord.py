"""Seed 001 (Lexichord) under profile `lexichord`, on the pure engine: its four Gherkin
scenarios, the report, the licence gate, and warnings instead of failures."""

from __future__ import annotations

import dataclasses

from streams.engine import ledger
from streams.engine.judge import Judgement
from streams.engine.oracle import OracleRun, replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from tests.scenarios import (
    DAY,
    NOW,
    Scenario,
    cluster,
    contradiction_and_stale_memory,
    episodes_of_testing_before_commits,
    postgres_then_mysql,
    random_unit,
    rest_duplicates,
    stale_memory,
    with_similarity,
)

LEXICHORD = EngineConfig(policy=builtin_profile("lexichord"))


def payloads(run: OracleRun, kind: type) -> list:
    return [d.payload for d in run.decisions if isinstance(d.payload, kind)]


def test_scenario_extract_patterns_from_episodic_memories():
    """Given 10 episodic memories about testing before commits,
    when a cycle extracts patterns,
    then a semantic memory "User runs tests before committing" is created from them."""
    s = episodes_of_testing_before_commits("lex-1")

    run = replay(s.events, LEXICHORD)

    (pattern,) = payloads(run, ledger.PatternDetected)
    assert pattern.pattern.layer == "semantic"
    assert pattern.pattern.content == "User runs tests before committing"
    assert len(pattern.evidence_ids) == 10


def test_scenario_detect_contradictions():
    """Given "Project uses PostgreSQL" and "Project uses MySQL" (similar, not duplicates),
    when a cycle detects contradictions, then one is found and the memories are linked;
    the latest wins by invalidating the older, which is kept."""
    s = postgres_then_mysql("lex-2")

    run = replay(s.events, LEXICHORD)

    (found,) = payloads(run, ledger.ContradictionDetected)
    assert {found.memory_id, found.other_memory_id} == {"pg", "my"}
    assert found.confidence > 0.7
    assert found.resolution == "latest_wins"
    assert found.invalidated_memory_id == "pg"
    older = run.state("lex-2").memories["pg"].memory
    assert older.invalid_at == NOW - DAY  # the newer fact's valid_at
    assert older.content == "Project uses PostgreSQL"  # never deleted


def test_scenario_merge_duplicates():
    """Given "API uses REST" and "The API is RESTful" with similarity > 0.95,
    when a cycle merges duplicates, then one supersedes the other with the union of tags."""
    s = rest_duplicates("lex-3")

    run = replay(s.events, LEXICHORD)

    (merged,) = payloads(run, ledger.MemoryMerged)
    assert merged.survivor.memory_id == "a"  # the higher salience survives
    assert merged.merged_memory_id == "b"
    assert merged.survivor.tags == ("api", "style")
    assert run.state("lex-3").memories["b"].memory.status == "superseded"


def test_scenario_archive_stale_memories():
    """Given a memory with salience 0.05 last accessed 30 days ago,
    when a cycle runs with archival threshold 0.1, then the memory is archived."""
    s = stale_memory("lex-4")

    run = replay(s.events, LEXICHORD)

    (archived,) = payloads(run, ledger.MemoryArchived)
    assert archived.memory_id == "stale"
    assert archived.salience < 0.1
    assert run.state("lex-4").memories["stale"].memory.status == "archived"


def test_every_cycle_ends_with_a_report_of_what_it_did():
    s = Scenario("lex-5")
    base = random_unit(8)
    s.write("a", "API uses REST", layer="semantic", embedding=with_similarity(base, 1.0, 5))
    s.write("b", "The API is RESTful", layer="semantic", embedding=with_similarity(base, 0.97, 6))
    s.consolidate()

    run = replay(s.events, LEXICHORD)

    last = run.decisions[-1]
    assert isinstance(last.payload, ledger.ConsolidationCompleted)
    assert last.trigger == "manual"
    assert last.payload.processed == 2
    assert last.payload.duplicates_merged == 1
    assert last.payload.links_created == 1
    assert last.payload.warnings == ()
    assert {d.cycle_id for d in run.decisions if d.trigger != "ingest"} == {last.cycle_id}


def test_a_failing_step_becomes_a_warning_and_the_cycle_goes_on():
    def broken_judge(first: str, second: str) -> Judgement:
        raise RuntimeError("judge unavailable")

    s = contradiction_and_stale_memory("lex-6")

    run = replay(s.events, dataclasses.replace(LEXICHORD, judge=broken_judge))

    report = payloads(run, ledger.ConsolidationCompleted)[-1]
    assert report.warnings == ("detect_contradictions: RuntimeError: judge unavailable",)
    assert report.archived == 1  # the step after the failing one still ran


def test_a_tenant_without_automatic_consolidation_gets_manual_cycles_only():
    """001's licence gate: automatic triggers do nothing, a manual request still runs."""
    policy = dataclasses.replace(
        builtin_profile("memorykit"), manual_only_users=frozenset({"gated"})
    )
    s = Scenario("gated")
    for i in range(20):
        s.write(f"m{i}", f"message {i}", conversation_id="c1", importance=0.9)
    automatic_only = replay(s.events, EngineConfig(policy=policy))
    s.consolidate()
    with_manual = replay(s.events, EngineConfig(policy=policy))

    assert payloads(automatic_only, ledger.ConsolidationCompleted) == []
    assert len(payloads(with_manual, ledger.ConsolidationCompleted)) == 1


def test_a_request_can_override_the_profile():
    s = Scenario("lex-7")
    s.write("m", "Important note", importance=0.9)
    s.consolidate(profile="memorykit")

    run = replay(s.events, LEXICHORD)  # lexichord has no promotion; memorykit does

    assert len(payloads(run, ledger.MemoryPromoted)) == 1
    assert payloads(run, ledger.ConsolidationCompleted)[0].profile == "memorykit"


def test_an_unknown_profile_override_is_rejected():
    s = Scenario("lex-8")
    s.consolidate(profile="nope")

    run = replay(s.events, LEXICHORD)

    assert [r.reason for _, r in run.rejections] == ["unknown_profile"]


def test_the_same_events_give_the_same_decisions():
    s = Scenario("lex-9")
    base = random_unit(10)
    for i, vector in enumerate(cluster(base, 4, pairwise=0.9, seed=70)):
        s.write(f"e{i}", f"Episode {i}", layer="episodic", embedding=vector)
    s.consolidate()

    assert replay(s.events, LEXICHORD).decisions == replay(s.events, LEXICHORD).decisions


def test_a_pattern_writer_gets_the_group_most_central_first_and_writes_the_statement():
    """With an LLM pattern writer configured, the pattern's text is its answer; it receives
    the group's contents with the extractive choice first (its fallback)."""
    seen: list[list[str]] = []

    def writer(contents: list[str]) -> str:
        seen.append(contents)
        return "User always tests before committing"

    s = Scenario("lex-10")
    base = random_unit(5)
    s.write(
        "e0",
        "User runs tests before committing",
        layer="episodic",
        embedding=with_similarity(base, 0.99, seed=49),
    )
    for i, vector in enumerate(cluster(base, 3, pairwise=0.9, seed=60), start=1):
        s.write(f"e{i}", f"Ran tests #{i}", layer="episodic", embedding=vector)
    s.consolidate()

    run = replay(s.events, dataclasses.replace(LEXICHORD, pattern_writer=writer))

    (pattern,) = payloads(run, ledger.PatternDetected)
    assert pattern.pattern.content == "User always tests before committing"
    assert seen[0][0] == "User runs tests before committing"
    assert len(seen[0]) == 4


def test_a_periodic_tick_with_nothing_to_do_leaves_no_trace_in_the_ledger():
    """Salience is derived, not written back (docs/consolidation.md, the decision ladder: decay), so
    ticks over a fresh, important fact find nothing to do and add nothing to the ledger, however
    many there are; a manual cycle over the same state still reports."""
    s = Scenario("lex-quiet")
    s.write("m", "A fresh, important fact", layer="semantic", importance=0.9)
    first = s.consolidate(trigger="periodic")
    second = s.consolidate(trigger="periodic")
    manual = s.consolidate()

    run = replay(s.events, LEXICHORD)

    causes = {d.causation_id for d in run.decisions}
    assert first not in causes
    assert second not in causes
    assert manual in causes
    assert len(payloads(run, ledger.ConsolidationCompleted)) == 1
    assert not payloads(run, ledger.SalienceDecayed)


def test_a_periodic_tick_with_work_runs_a_periodic_cycle():
    s = stale_memory("lex-tick")
    s.events.pop()  # drop the manual request
    s.consolidate(trigger="periodic")

    run = replay(s.events, LEXICHORD)

    (report,) = [d for d in run.decisions if isinstance(d.payload, ledger.ConsolidationCompleted)]
    assert report.trigger == "periodic"
    assert report.payload.archived == 1
