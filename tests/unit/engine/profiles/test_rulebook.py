"""Seed 003 (the rulebook) under its profile, on the oracle: scope promotion at 5 and 10
accesses, every exclusion blocking archival, the duplicate rule, verbose episodes, the
index-overflow trigger and the 50-per-run bound (pure)."""

from __future__ import annotations

from streams.engine import ledger
from streams.engine.oracle import OracleRun, replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from streams.engine.text.facts import fact_terms
from tests.scenarios import (
    DAY,
    NOW,
    Scenario,
    access_team_copy,
    random_unit,
    rulebook_exclusions,
    well_used_procedure,
    with_similarity,
)

RULEBOOK = EngineConfig(policy=builtin_profile("rulebook"))


def payloads(run: OracleRun, kind: type) -> list:
    return [d.payload for d in run.decisions if isinstance(d.payload, kind)]


def test_a_procedure_used_5_times_is_copied_to_team_and_its_team_copy_used_10_times_to_global():
    """Given a procedural memory accessed 5 times, when a cycle runs, then a team copy is
    made (tagged promoted, original kept); when the team copy is accessed 10 times, then a
    global copy follows."""
    s = well_used_procedure("rule-1")
    first = replay(s.events, RULEBOOK)
    [team] = payloads(first, ledger.ScopePromoted)
    assert (team.from_scope, team.to_scope) == ("agent", "team")
    assert "promoted" in team.copy.tags and team.copy.scope_id == "team"
    assert first.users["rule-1"].memories["deploy"].memory.status == "active"

    access_team_copy(s, team.copy.memory_id, times=9)
    assert len(payloads(replay(s.events, RULEBOOK), ledger.ScopePromoted)) == 1  # 9 < 10
    access_team_copy(s, team.copy.memory_id, times=1)
    promotions = payloads(replay(s.events, RULEBOOK), ledger.ScopePromoted)
    assert [(p.from_scope, p.to_scope) for p in promotions] == [
        ("agent", "team"),
        ("team", "global"),
    ]


def test_each_exclusion_blocks_archival_of_a_stale_memory():
    """Given never-accessed old memories, one per 003 exclusion (critical, permanent,
    protected, user-created without consent, a semantic decision, younger than 7 days) and
    one unprotected, when a cycle runs, then only the unprotected one is archived (stale)."""
    run = replay(rulebook_exclusions("rule-2").events, RULEBOOK)

    archived = {p.memory_id: p.reason for p in payloads(run, ledger.MemoryArchived)}
    assert archived == {"unprotected": "stale"}


def test_at_most_50_memories_are_archived_per_run():
    s = Scenario("rule-3")
    for i in range(60):
        s.write(
            f"m{i}",
            f"Old note {i}",
            layer="episodic",
            created_at=NOW - 40 * DAY,
            at=NOW - 40 * DAY + i,
        )
    s.consolidate(at=NOW)
    run = replay(s.events, RULEBOOK)

    assert len(payloads(run, ledger.MemoryArchived)) == 50


def test_duplicates_need_same_type_and_subtype_tag_overlap_and_similar_content():
    """Given pairs with content similarity 0.9: one of the same type/subtype with the same
    tags (merged, keeping the newer), one of another subtype, one without shared tags."""
    base = random_unit(77)
    s = Scenario("rule-4")
    common = {"layer": "semantic", "kind": "fact", "subtype": "tooling"}
    s.write(
        "old",
        "CI runs on GitHub Actions",
        tags=["ci", "infra"],
        at=NOW - DAY,
        embedding=with_similarity(base, 1.0, 1),
        **common,
    )
    s.write(
        "new",
        "The CI is GitHub Actions",
        tags=["ci", "infra"],
        at=NOW,
        embedding=with_similarity(base, 0.9, 2),
        **common,
    )
    s.write(
        "other-subtype",
        "CI is on GitHub Actions",
        tags=["ci", "infra"],
        at=NOW,
        embedding=with_similarity(base, 0.9, 3),
        layer="semantic",
        kind="fact",
        subtype="process",
    )
    s.write(
        "other-tags",
        "GitHub Actions runs the CI",
        tags=["misc"],
        at=NOW,
        embedding=with_similarity(base, 0.9, 4),
        **common,
    )
    s.consolidate(at=NOW + 1)
    run = replay(s.events, RULEBOOK)

    merges = payloads(run, ledger.MemoryMerged)
    assert [(m.survivor.memory_id, m.merged_memory_id) for m in merges] == [("new", "old")]
    assert merges[0].survivor.metadata["supersedes"] == "old"


def test_a_verbose_old_episode_is_summarized_keeping_its_timeline_ends_and_facts():
    lines = [
        f"Met Kofi in Accra about invoice {5000 + i}."
        if i % 10 == 0
        else "we went over the approach again at some length and agreed to look at it later"
        for i in range(200)
    ]
    s = Scenario("rule-5")
    s.write("log", "\n".join(lines), layer="episodic", created_at=NOW - 40 * DAY, at=NOW - 40 * DAY)
    s.access("log", at=NOW - DAY)  # used: not stale
    s.consolidate(at=NOW)
    run = replay(s.events, RULEBOOK)

    memory = run.users["rule-5"].memories["log"].memory
    assert "summarized" in memory.tags and len(memory.content) < len("\n".join(lines))
    kept = memory.content.splitlines()
    assert kept[:3] == lines[:3] and kept[-3:] == lines[-3:]
    assert fact_terms("\n".join(lines)) <= fact_terms(memory.content)


def test_more_than_100_entries_in_one_layer_trigger_a_cycle():
    s = Scenario("rule-6")
    for i in range(102):
        s.write(f"m{i}", f"Entry {i}", layer="episodic", at=NOW + i)
    run = replay(s.events, RULEBOOK)

    triggers = {d.trigger for d in run.decisions if d.cycle_id}
    assert triggers == {"index_overflow"}
