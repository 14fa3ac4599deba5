"""Seed 004 (Engram) under its profile, on the oracle: episodes compress into semantic
summaries (8:1), ONE procedural profile per user that a new synthesis replaces, and facts
and negations extracted on write (pure)."""

from __future__ import annotations

from streams.engine import ledger
from streams.engine.oracle import OracleRun, replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from streams.engine.text.facts import missing_terms
from tests.scenarios import NOW, Scenario, eighty_episodes_in_ten_sessions, semantic_preferences

ENGRAM = EngineConfig(policy=builtin_profile("engram"))


def payloads(run: OracleRun, kind: type) -> list:
    return [d.payload for d in run.decisions if isinstance(d.payload, kind)]


def test_eighty_episodes_become_semantic_summaries_at_eight_to_one() -> None:
    """Given 80 episodes in 10 sessions, when each session ends, then all unsummarized
    episodes become ONE semantic summary: 10 summaries, 8:1, each episode summarized into
    exactly one, every fact term kept."""
    scenario = eighty_episodes_in_ten_sessions("engram-1")
    run = replay(scenario.events, ENGRAM)

    summaries = payloads(run, ledger.EpisodesSummarized)
    episodes = [e.payload.memory for e in scenario.events if hasattr(e.payload, "memory")]
    assert len(episodes) / len(summaries) >= 8
    covered = [i for s in summaries for i in s.episode_ids]
    assert sorted(covered) == sorted(m.memory_id for m in episodes)
    by_id = {m.memory_id: m.content for m in episodes}
    for summary in summaries:
        assert summary.summary.layer == "semantic" and summary.summary.kind == "summary"
        sources = [by_id[i] for i in summary.episode_ids]
        assert missing_terms(sources, summary.summary.content) == frozenset()
    state = run.users["engram-1"]
    assert all(state.memories[i].memory.metadata.get("summarized_into") for i in covered)


def test_a_large_backlog_is_map_reduced_into_one_summary() -> None:
    """Given 35 unsummarized episodes and chunks of 10, when a manual cycle runs, then they
    become ONE summary (map-reduce) that keeps every fact term."""
    s = Scenario("engram-2")
    for i in range(35):
        s.write(
            f"e{i}",
            f"Shipped build {1000 + i} to Oslo on March {1 + i % 28}.",
            layer="episodic",
            at=NOW + i,
        )
    s.consolidate(at=NOW + 100)
    run = replay(s.events, ENGRAM)

    [summary] = payloads(run, ledger.EpisodesSummarized)
    assert len(summary.episode_ids) == 35
    contents = [e.payload.memory.content for e in s.events if hasattr(e.payload, "memory")]
    assert missing_terms(contents, summary.summary.content) == frozenset()


def test_exactly_one_procedural_profile_per_user_after_two_syntheses() -> None:
    """Given semantic memories and two `memstream procedural` requests, then the user has
    exactly one procedural profile: the second synthesis replaced the first (a new version
    of the same memory) and saw the memory written in between."""
    run = replay(semantic_preferences("engram-3").events, ENGRAM)

    syntheses = payloads(run, ledger.ProceduralSynthesized)
    assert [s.version for s in syntheses] == [1, 2]
    assert len({s.profile.memory_id for s in syntheses}) == 1
    profiles = [
        r
        for r in run.users["engram-3"].memories.values()
        if r.memory.kind == "behavioural_profile" and r.is_live
    ]
    assert len(profiles) == 1
    assert syntheses[-1].source_count == syntheses[0].source_count + 1
    assert "Rust" in profiles[0].memory.content


def test_facts_and_negations_are_extracted_on_write_apart_from_summaries() -> None:
    """Given an episode that states an email, a phone number and a negation, when it is
    written, then three semantic facts derived from it are written with it."""
    s = Scenario("engram-4")
    s.write(
        "e",
        "I don't use Jira anymore. Mail me at mia@example.org or +1 555 010 4477.",
        layer="episodic",
        at=NOW,
    )
    run = replay(s.events, ENGRAM)

    facts = [
        r.memory for r in run.users["engram-4"].memories.values() if r.memory.layer == "semantic"
    ]
    assert sorted(m.subtype for m in facts) == ["email", "negation", "phone"]
    assert all(m.metadata["extracted_from"] == "e" for m in facts)
    assert any("does not use Jira" in m.content for m in facts)


def test_forgetting_an_episode_forgets_the_facts_extracted_from_it() -> None:
    s = Scenario("engram-5")
    s.write("e", "Mail me at mia@example.org.", layer="episodic", at=NOW)
    s.forget("e", at=NOW + 1)
    run = replay(s.events, ENGRAM)

    assert all(r.forgotten for r in run.users["engram-5"].memories.values())
