"""Seed 002 (Astra) under its profile, on the oracle: sessions close into ONE narrative that
keeps every fact, the pruner keeps what 002 says it must, the identity anchor drifts and
warns (pure: the engine over a list of events)."""

from __future__ import annotations

from streams.engine import ledger
from streams.engine.oracle import OracleRun, replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from streams.engine.text.facts import fact_terms, missing_terms
from tests.scenarios import (
    DAY,
    MINUTE,
    NOW,
    Scenario,
    decayed_with_pins,
    drifting_identity,
    fifty_message_session,
)

ASTRA = EngineConfig(policy=builtin_profile("astra"))


def payloads(run: OracleRun, kind: type) -> list:
    return [d.payload for d in run.decisions if isinstance(d.payload, kind)]


def test_a_fifty_message_session_becomes_one_narrative_that_keeps_every_fact() -> None:
    """Given a 50-message session with names, numbers, dates and times among chit-chat,
    when it ends, then it becomes ONE episodic narrative (≥ 10:1 in memories), substantially
    shorter in characters, holding every fact term of the session."""
    scenario = fifty_message_session("astra-1")
    run = replay(scenario.events, ASTRA)

    [consolidated] = payloads(run, ledger.SessionConsolidated)
    narrative = consolidated.narrative
    turns = [e.payload.memory.content for e in scenario.events if hasattr(e.payload, "memory")]
    assert narrative.layer == "episodic" and narrative.kind == "narrative"
    assert len(consolidated.source_ids) / 1 >= 10
    assert consolidated.compression_ratio == 50
    assert missing_terms(turns, narrative.content) == frozenset()
    assert len(narrative.content) < 0.6 * sum(len(t) for t in turns)
    assert consolidated.emotional_arc[0] < consolidated.emotional_arc[-1]  # valence rose


def test_the_sources_are_archived_carried_by_the_narrative_and_stay_searchable() -> None:
    scenario = fifty_message_session("astra-2")
    run = replay(scenario.events, ASTRA)

    [consolidated] = payloads(run, ledger.SessionConsolidated)
    state = run.users["astra-2"]
    sources = [state.memories[i].memory for i in consolidated.source_ids]
    assert {m.status for m in sources} == {"archived"}
    assert {m.metadata["summarized_into"] for m in sources} == {consolidated.narrative.memory_id}
    assert all(m.content for m in sources)  # archived, not erased
    [closed] = payloads(run, ledger.SessionClosed)
    assert (closed.reason, closed.consolidated, closed.memory_count) == ("session_ended", True, 50)


def test_a_session_closes_by_inactivity_and_a_late_event_inside_the_grace_joins_it() -> None:
    """Given four memories in a conversation without a session id, then one stamped 33
    minutes after the last (past the 30-minute timeout: a new session, but inside the
    5-minute grace, so the first session stays open), when a late event stamped inside the
    first session's timeout arrives, then it joins the first session; and an event a day
    later closes both sessions by inactivity, the first with five memories."""
    s = Scenario("astra-3")
    for i in range(4):
        s.write(
            f"m{i}",
            f"Note {i} about Helsinki trip on May {i + 1}",
            layer="working",
            conversation_id="c",
            at=NOW + i * MINUTE,
        )
    s.write(
        "other", "A note about Oslo", layer="working", conversation_id="c", at=NOW + 36 * MINUTE
    )
    s.write(
        "late",
        "Booked the Helsinki hotel for 3 nights",
        layer="working",
        conversation_id="c",
        at=NOW + 20 * MINUTE,
    )
    s.write("next", "A new day about Bergen", layer="working", conversation_id="c", at=NOW + DAY)
    run = replay(s.events, ASTRA)

    memories = run.users["astra-3"].memories
    first = memories["m0"].memory.session_id
    assert memories["late"].memory.session_id == first
    assert memories["other"].memory.session_id != first
    closed = {c.session_id: c for c in payloads(run, ledger.SessionClosed)}
    assert set(closed) == {first, memories["other"].memory.session_id}
    assert (closed[first].reason, closed[first].memory_count) == ("inactivity", 5)
    narratives = {n.session_id: n for n in payloads(run, ledger.SessionConsolidated)}
    assert "Helsinki" in narratives[first].narrative.content


def test_a_late_event_inside_the_grace_joins_its_session() -> None:
    """Given a session whose last event is at t, when an event stamped t - 1 min arrives
    after events of t + 10 min, then it joins the same session (event time, not arrival)."""
    s = Scenario("astra-4")
    s.write("a", "Met Ines at 10:00", layer="working", conversation_id="c", at=NOW)
    s.write(
        "b", "Lunch with Ines at 12:30", layer="working", conversation_id="c", at=NOW + 10 * MINUTE
    )
    s.write("late", "Booked room 4B", layer="working", conversation_id="c", at=NOW - MINUTE)
    run = replay(s.events, ASTRA)

    memories = run.users["astra-4"].memories
    assert memories["late"].memory.session_id == memories["a"].memory.session_id


def test_a_session_shorter_than_a_minute_is_closed_without_a_narrative() -> None:
    s = Scenario("astra-5")
    s.write(
        "a", "Quick note on Zurich", layer="working", conversation_id="c", session_id="s", at=NOW
    )
    s.write(
        "b",
        "Another on Geneva",
        layer="working",
        conversation_id="c",
        session_id="s",
        at=NOW + 20_000,
    )
    s.end_session("s", at=NOW + 30_000)
    run = replay(s.events, ASTRA)

    [closed] = payloads(run, ledger.SessionClosed)
    assert not closed.consolidated
    assert payloads(run, ledger.SessionConsolidated) == []
    assert run.users["astra-5"].memories["a"].memory.status == "active"


def test_pinned_and_belief_referenced_memories_survive_the_pruner() -> None:
    """Given decayed, unused memories, some pinned (permanent or referenced by a belief),
    one emotional (> 0.5), one of the minimum emotional set (valence > 0.7), when a
    maintenance pass runs in the 02:00-05:00 window, then only the unprotected ones are
    pruned (deleted: no narrative carries them)."""
    run = replay(decayed_with_pins("astra-6").events, ASTRA)

    deleted = {p.memory_id for p in payloads(run, ledger.MemoryDeleted)}
    assert deleted == {"plain-1", "plain-2"}
    statuses = {i: r.memory.status for i, r in run.users["astra-6"].memories.items()}
    assert statuses["pinned"] == statuses["belief"] == "active"
    assert statuses["emotional"] == statuses["joyful"] == "active"
    [report] = payloads(run, ledger.ConsolidationCompleted)
    assert [d.trigger for d in run.decisions if d.cycle_id][-1] == "maintenance"
    assert report is not None


def test_no_pruning_outside_the_maintenance_window() -> None:
    s = decayed_with_pins("astra-7")
    s.events[-1] = s.events[-1].__class__(
        s.events[-1].event_id, s.events[-1].user_id, NOW + 12 * 3_600_000, s.events[-1].payload
    )
    run = replay(s.events, ASTRA)

    assert payloads(run, ledger.MemoryDeleted) == []


def test_identity_drift_warns_above_0_2_and_is_critical_above_0_4() -> None:
    """Given a first session about one topic and then ten about an unrelated one, when each
    session's narrative moves the anchor 10 % of the way, then drift from the origin rises
    and is reported ok, then warning (> 0.2), then critical (> 0.4); the origin stays."""
    run = replay(drifting_identity("astra-8").events, ASTRA)

    measured = payloads(run, ledger.IdentityDriftMeasured)
    drifts = [m.drift for m in measured]
    levels = [m.level for m in measured]
    assert drifts == sorted(drifts) and drifts[0] == 0.0
    assert levels[0] == "ok" and "warning" in levels and levels[-1] == "critical"
    assert all(lvl == "warning" for d, lvl in zip(drifts, levels, strict=True) if 0.2 < d <= 0.4)
    assert all(lvl == "critical" for d, lvl in zip(drifts, levels, strict=True) if d > 0.4)
    assert not any(m.origin_reset for m in measured)


def test_an_operator_reset_makes_the_current_anchor_the_origin() -> None:
    s = drifting_identity("astra-9")
    s.events.append(
        s.events[0].__class__(
            "9b0f5b8e-3c1d-4a4e-8f00-000000000001",
            "astra-9",
            NOW + 30 * DAY,
            __import__("streams.engine.model", fromlist=["x"]).ConsolidationRequested(
                trigger="identity_reset"
            ),
        )
    )
    run = replay(s.events, ASTRA)

    last = payloads(run, ledger.IdentityDriftMeasured)[-1]
    state = run.users["astra-9"].facets.identity
    assert last.origin_reset and last.drift == 0.0
    assert state is not None and state.origin == state.live


def test_narrative_terms_include_every_named_entity_of_the_session() -> None:
    scenario = fifty_message_session("astra-10")
    run = replay(scenario.events, ASTRA)
    [consolidated] = payloads(run, ledger.SessionConsolidated)
    for name in ("Alice", "Lisbon", "Atlas", "Equinor", "Stripe", "Berlin", "Kyoto"):
        assert name.casefold() in fact_terms(consolidated.narrative.content)
