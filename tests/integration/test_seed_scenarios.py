"""Seeds 000 and 001 end to end: publish → Kafka → worker → ledger → projector → PostgreSQL,
under their profiles, compared with the batch oracle (issue 3)."""

from __future__ import annotations

import psycopg
import pytest

from memstream.waiting import wait_until
from projections.queries import contradictions, lineage, nearest_memories
from tests.scenarios import (
    API_TOPIC,
    DAY,
    HOUR,
    MINUTE,
    NOW,
    Scenario,
    episodes_of_testing_before_commits,
    postgres_then_mysql,
    rest_duplicates,
    stale_memory,
    with_similarity,
)
from tests.support import Pipeline
from tests.workloads import expected_rows

pytestmark = pytest.mark.integration


def _run(pipeline: Pipeline, events, profile: str):
    """Publish ``events``, wait until every decision the oracle predicts is projected, and
    check the read models equal the oracle's. Returns the oracle run."""
    oracle = pipeline.oracle(events)
    for event in events:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()
    pipeline.wait_for_log_count(len(oracle.decisions))
    assert pipeline.memory_rows() == expected_rows(oracle)
    logged = {row[0] for row in pipeline.query("SELECT event_id FROM consolidation_log")}
    assert logged == {d.event_id for d in oracle.decisions}
    return oracle


def _links(pipeline: Pipeline, link_type: str) -> set[tuple[str, str]]:
    rows = pipeline.query(
        "SELECT source_id, target_id FROM memory_links WHERE link_type = %s", (link_type,)
    )
    return {(source, target) for source, target in rows}


@pytest.mark.parametrize("profile_pipeline", ["lexichord"], indirect=True)
def test_lexichord_scenarios_end_to_end(profile_pipeline):
    """Seed 001's four Gherkin scenarios, each for its own user, in one run."""
    p = profile_pipeline
    patterns = episodes_of_testing_before_commits("lex-patterns")
    contradiction = postgres_then_mysql("lex-contra")
    duplicates = rest_duplicates("lex-dupes")
    stale = stale_memory("lex-old")
    _run(p, patterns.events + contradiction.events + duplicates.events + stale.events, "lexichord")

    # Scenario: extract patterns from episodic memories
    (pattern_id,) = [
        r[0]
        for r in p.query(
            "SELECT memory_id FROM semantic_facts WHERE user_id = 'lex-patterns' "
            "AND content = 'User runs tests before committing'"
        )
    ]
    assert {t for s, t in _links(p, "derived_from") if s == pattern_id} == {
        f"e{i}" for i in range(10)
    }
    # Scenario: detect contradictions (linked; the latest wins, the older is kept, invalid)
    assert _links(p, "contradicts") == {("my", "pg")}
    invalid_at = p.scalar("SELECT invalid_at FROM semantic_facts WHERE memory_id = 'pg'")
    assert invalid_at is not None
    # Scenario: merge duplicates
    assert _links(p, "supersedes") == {("a", "b")}
    assert p.scalar("SELECT status FROM semantic_facts WHERE memory_id = 'b'") == "superseded"
    assert p.scalar("SELECT tags FROM semantic_facts WHERE memory_id = 'a'") == ["api", "style"]
    # Scenario: archive stale memories
    assert p.scalar("SELECT status FROM semantic_facts WHERE memory_id = 'stale'") == "archived"
    # The read helpers see the same: contradictions, lineage, current-only nearest memories
    with psycopg.connect(p.settings.database_url) as conn:
        assert [(c.source_id, c.target_id) for c in contradictions(conn, "lex-contra")] == [
            ("my", "pg")
        ]
        assert {link.target_id for link in lineage(conn, "lex-patterns", pattern_id)} == {
            f"e{i}" for i in range(10)
        }
        near = nearest_memories(conn, "lex-dupes", with_similarity(API_TOPIC, 1.0, 3), k=5)
        assert [m.memory_id for m in near] == ["a"]  # "b" is superseded
        history = nearest_memories(
            conn, "lex-dupes", with_similarity(API_TOPIC, 1.0, 3), k=5, include_inactive=True
        )
        assert [m.memory_id for m in history] == ["a", "b"]
    # Every cycle reported
    reports = p.query("SELECT user_id, trigger, profile FROM consolidation_reports ORDER BY 1")
    assert reports == [
        ("lex-contra", "manual", "lexichord"),
        ("lex-dupes", "manual", "lexichord"),
        ("lex-old", "manual", "lexichord"),
        ("lex-patterns", "manual", "lexichord"),
    ]


@pytest.mark.parametrize("profile_pipeline", ["memorykit"], indirect=True)
def test_memorykit_operations_and_on_write_trigger_end_to_end(profile_pipeline):
    """Seed 000: 19 messages start no cycle; the 20th does (working → semantic); aged
    confident facts become episodic events; a successful recurring event type becomes a
    learned procedure (the last two via a manual cycle)."""
    p = profile_pipeline
    chat = Scenario("kit-chat")
    for i in range(19):
        chat.write(f"m{i}", f"message {i}", importance=0.9, conversation_id="c1", at=NOW + i * 1000)
    _run(p, chat.events, "memorykit")
    assert p.scalar("SELECT count(*) FROM consolidation_reports") == 0
    assert p.scalar("SELECT count(*) FROM working_memories") == 19

    chat.write("m19", "message 19", importance=0.9, conversation_id="c1", at=NOW + 19_000)
    _run(p, chat.events, "memorykit")
    assert p.query("SELECT trigger FROM consolidation_reports") == [("on_write",)]
    assert p.scalar("SELECT count(*) FROM working_memories") == 0
    assert p.scalar("SELECT count(*) FROM semantic_facts WHERE kind = 'working_promotion'") == 20
    assert len(_links(p, "promoted_to")) == 20
    worker = p.metrics("worker")
    assert (
        worker[
            ("memstream_promotions_total", (("from_layer", "working"), ("to_layer", "semantic")))
        ]
        == 20
    )
    assert worker[("memstream_consolidation_cycle_seconds_count", ())] == 1

    history = Scenario("kit-history")
    history.write(
        "fact",
        "Prefers dark mode",
        layer="semantic",
        kind="preference",
        confidence=0.9,
        created_at=NOW - 3 * HOUR,
        at=NOW - 3 * HOUR,
    )
    for i, success in enumerate([1.0, 1.0, 0.5]):
        history.write(
            f"d{i}",
            f"Deployed with blue/green #{i}",
            layer="episodic",
            kind="deploy",
            success=success,
            at=NOW - (3 - i) * DAY,
        )
    history.consolidate(at=NOW + MINUTE)
    _run(p, chat.events + history.events, "memorykit")
    assert (
        p.scalar("SELECT count(*) FROM episodic_events WHERE kind = 'preference_pattern_detected'")
        == 1
    )
    assert p.scalar(
        "SELECT metadata->>'promoted_to_episodic' FROM semantic_facts WHERE memory_id = 'fact'"
    ) == str(NOW + MINUTE)
    assert p.query("SELECT kind, metadata->>'success_count' FROM procedural_patterns") == [
        ("deploy_learned_pattern", "3")
    ]


@pytest.mark.parametrize("profile_pipeline", ["memorykit"], indirect=True)
def test_a_manual_cycle_from_the_cli(profile_pipeline):
    """`memstream consolidate --user U` publishes a request; the worker runs a manual cycle."""
    p = profile_pipeline
    s = Scenario("kit-cli")
    s.write("important", "Deadline is Friday", importance=0.8)
    _run(p, s.events, "memorykit")

    done = p.cli("consolidate", "--user", "kit-cli")

    assert done.returncode == 0, done.stderr
    assert "consolidation requested for kit-cli" in done.stdout
    wait_until(
        lambda: p.query("SELECT trigger FROM consolidation_reports") == [("manual",)],
        timeout=60,
        what="the manual cycle's report",
    )
    wait_until(
        lambda: p.scalar("SELECT count(*) FROM semantic_facts") == 1,
        timeout=30,
        what="the promotion",
    )


@pytest.mark.parametrize("profile_pipeline", ["lexichord"], indirect=True)
def test_an_all_users_cycle_prints_the_aggregate_report(profile_pipeline):
    """Seed 001's ConsolidateAllAsync: `memstream consolidate --all --wait` runs a cycle for
    every known user and prints users processed and totals."""
    p = profile_pipeline
    first = rest_duplicates("all-1", request_cycle=False)
    second = stale_memory("all-2", request_cycle=False)
    _run(p, first.events + second.events, "lexichord")

    done = p.cli("consolidate", "--all", "--wait")

    assert done.returncode == 0, done.stderr
    assert "users processed: 2" in done.stdout
    assert "archived 1" in done.stdout
    assert "duplicates_merged 1" in done.stdout
