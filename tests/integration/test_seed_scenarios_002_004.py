"""Seeds 002 (astra), 003 (rulebook) and 004 (engram) end to end: publish → Kafka → worker →
ledger → projector → PostgreSQL under their profiles, compared with the batch oracle, and
the success metrics each seed names checked on the read models."""

from __future__ import annotations

import pytest

from streams.engine.text.facts import missing_terms
from tests.integration.test_seed_scenarios import _links, _run
from tests.scenarios import (
    NOW,
    Scenario,
    access_team_copy,
    decayed_with_pins,
    drifting_identity,
    eighty_episodes_in_ten_sessions,
    fifty_message_session,
    rulebook_exclusions,
    semantic_preferences,
    well_used_procedure,
)

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("profile_pipeline", ["astra"], indirect=True)
def test_astra_sessions_narratives_pruning_and_identity_end_to_end(profile_pipeline):
    """A 50-message session becomes ONE narrative (≥ 10:1) holding every entity, number and
    date; pinned and belief-referenced memories survive the pruner; drift warns at 0.2 and
    is critical at 0.4."""
    p = profile_pipeline
    session = fifty_message_session("astra-session")
    pins = decayed_with_pins("astra-pins")
    drift = drifting_identity("astra-drift")
    _run(p, session.events + pins.events + drift.events, "astra")

    # Session -> narrative (sessions row consolidated, sources carried, links)
    [(narrative_id, content)] = p.query(
        "SELECT memory_id, content FROM episodic_events "
        "WHERE user_id = 'astra-session' AND kind = 'narrative'"
    )
    turns = [e.payload.memory.content for e in session.events if hasattr(e.payload, "memory")]
    assert missing_terms(turns, content) == frozenset()
    status, count, ratio, chars = p.query(
        "SELECT status, memory_count, compression_ratio, char_ratio FROM sessions "
        "WHERE user_id = 'astra-session'"
    )[0]
    assert (status, count) == ("consolidated", 50) and ratio >= 10 and chars < 0.6
    carried = {s for s, t in _links(p, "summarized_into") if t == narrative_id}
    assert len(carried) == 50
    assert (
        p.scalar(
            "SELECT count(*) FROM working_memories WHERE user_id = 'astra-session' "
            "AND status = 'archived'"
        )
        == 50
    )
    # Pruner: only the unprotected, decayed memories are deleted
    survivors = {
        row[0]
        for row in p.query("SELECT memory_id FROM episodic_events WHERE user_id = 'astra-pins'")
    }
    assert survivors == {"pinned", "belief", "emotional", "joyful"}
    # Identity: drift levels reach warning and critical; the profile row holds the last
    level, drift_value = p.query(
        "SELECT drift_level, drift FROM user_profiles WHERE user_id = 'astra-drift'"
    )[0]
    assert level == "critical" and drift_value > 0.4


@pytest.mark.parametrize("profile_pipeline", ["engram"], indirect=True)
def test_engram_summaries_profile_and_extraction_end_to_end(profile_pipeline):
    """80 episodes → semantic summaries at ≥ 8:1; exactly one procedural profile per user
    after two syntheses; facts extracted on write."""
    p = profile_pipeline
    episodes = eighty_episodes_in_ten_sessions("engram-episodes")
    prefs = semantic_preferences("engram-prefs")
    extraction = Scenario("engram-facts")
    extraction.write(
        "e", "I don't use Jira anymore, mail me at mia@example.org.", layer="episodic", at=NOW
    )
    _run(p, episodes.events + prefs.events + extraction.events, "engram")

    summaries = p.scalar(
        "SELECT count(*) FROM semantic_facts WHERE user_id = 'engram-episodes' AND kind = 'summary'"
    )
    assert 80 / summaries >= 8
    assert (
        p.scalar(
            "SELECT count(*) FROM episodic_events WHERE user_id = 'engram-episodes' "
            "AND status = 'archived'"
        )
        == 80
    )
    profiles = p.query(
        "SELECT memory_id, version FROM procedural_patterns WHERE user_id = 'engram-prefs' "
        "AND kind = 'behavioural_profile'"
    )
    assert len(profiles) == 1 and profiles[0][1] == 2
    assert (
        p.scalar("SELECT profile_memory_id FROM user_profiles WHERE user_id = 'engram-prefs'")
        == profiles[0][0]
    )
    assert {
        r[0] for r in p.query("SELECT subtype FROM semantic_facts WHERE user_id = 'engram-facts'")
    } == {"email", "negation"}


@pytest.mark.parametrize("profile_pipeline", ["engram"], indirect=True)
def test_memstream_procedural_synthesizes_one_profile_from_the_cli(profile_pipeline):
    p = profile_pipeline
    prefs = Scenario("engram-cli")
    prefs.write("p1", "The user prefers tabs over spaces.", layer="semantic", at=NOW)
    _run(p, prefs.events, "engram")

    for _ in range(2):
        done = p.cli("procedural", "--user", "engram-cli", "--wait", "--timeout", "90")
        assert done.returncode == 0, done.stderr
        assert "procedural profile synthesis done for engram-cli" in done.stdout
    rows = p.query(
        "SELECT version FROM procedural_patterns WHERE user_id = 'engram-cli' "
        "AND kind = 'behavioural_profile'"
    )
    assert rows == [(2,)]


@pytest.mark.parametrize("profile_pipeline", ["rulebook"], indirect=True)
def test_rulebook_scope_promotion_and_exclusions_end_to_end(profile_pipeline):
    """Scope promotion at 5 and 10 accesses; each 003 exclusion blocks archival."""
    p = profile_pipeline
    procedure = well_used_procedure("rule-scope")
    from streams.engine import ledger

    first = p.oracle(procedure.events)
    [team] = [d.payload for d in first.decisions if isinstance(d.payload, ledger.ScopePromoted)]
    access_team_copy(procedure, team.copy.memory_id, times=10)
    exclusions = rulebook_exclusions("rule-exclusions")
    _run(p, procedure.events + exclusions.events, "rulebook")

    scopes = dict(
        p.query(
            "SELECT scope, count(*) FROM procedural_patterns WHERE user_id = 'rule-scope' "
            "GROUP BY scope"
        )
    )
    assert scopes == {"agent": 1, "team": 1, "global": 1}
    assert {t for s, t in _links(p, "promoted_to") if s == "deploy"} == {team.copy.memory_id}
    archived = {
        row[0]
        for row in p.query(
            "SELECT memory_id FROM episodic_events WHERE user_id = 'rule-exclusions' "
            "AND status = 'archived' UNION SELECT memory_id FROM semantic_facts "
            "WHERE user_id = 'rule-exclusions' AND status = 'archived'"
        )
    }
    assert archived == {"unprotected"}
