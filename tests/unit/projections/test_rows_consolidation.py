"""Row folding for the engine II decisions: sessions move forward only, narratives and
summaries carry their sources (summarized_into), the profile and the identity drift land in
user_profiles, scope copies link back to their original."""

from __future__ import annotations

import dataclasses

from projections.rows import RowBatch
from streams.engine import ledger
from streams.engine.model import Memory

USER = "u-1"
T0 = 1_717_000_000_000


def event(payload: object, n: int, trigger: str = "session_end") -> ledger.ConsolidationEvent:
    return ledger.ConsolidationEvent(
        f"00000000-0000-4000-8000-{n:012d}",
        USER,
        T0 + n,
        f"cause-{n}",
        payload,  # type: ignore[arg-type]
        trigger=trigger,  # type: ignore[arg-type]
    )


def fold(*events: ledger.ConsolidationEvent) -> RowBatch:
    batch = RowBatch()
    for offset, e in enumerate(events):
        batch.add(e, "memory.consolidation", 0, offset)
    return batch


def turn(memory_id: str, session: str = "s1") -> Memory:
    return Memory(memory_id, USER, f"turn {memory_id}", session_id=session, created_at=T0)


def test_joined_closed_and_consolidated_fold_into_one_session_row() -> None:
    narrative = Memory(
        "n1",
        USER,
        "Session of 2 turns",
        layer="episodic",
        kind="narrative",
        metadata={"char_ratio": "0.4"},
    )
    batch = fold(
        event(ledger.MemoryStored(turn("a"), 1), 0, trigger="ingest"),
        event(ledger.MemoryStored(turn("b"), 1), 1, trigger="ingest"),
        event(ledger.SessionClosed("s1", "c", T0, T0 + 60_000, 2, "inactivity", True), 2),
        event(ledger.SessionConsolidated("s1", narrative, 1, ("a", "b"), 2.0), 3),
        event(
            ledger.MemoryArchived(
                "a", "working", 2, "summarized_into_narrative", cold_storage=True, carried_by="n1"
            ),
            4,
        ),
    )

    row = batch.sessions[(USER, "s1")]
    assert (row.status, row.memory_count, row.joined_count) == ("consolidated", 2, 2)
    assert (row.narrative_id, row.compression_ratio, row.char_ratio) == ("n1", 2.0, 0.4)
    assert ("episodic", USER, "n1") in batch.upserts
    links = {(link[1], link[2], link[3]) for link in batch.links}
    assert links == {
        ("n1", "a", "derived_from"),
        ("n1", "b", "derived_from"),
        ("a", "n1", "summarized_into"),
    }
    assert batch.tables_touched()["sessions"] == 1


def test_a_session_never_moves_back() -> None:
    batch = fold(
        event(ledger.SessionClosed("s1", None, T0, T0 + 1, 3, "session_ended"), 0),
        event(ledger.MemoryStored(turn("late"), 1), 1, trigger="ingest"),
    )
    assert batch.sessions[(USER, "s1")].status == "ended"


def test_a_cycle_written_memory_does_not_join_its_session() -> None:
    batch = fold(event(ledger.MemoryStored(turn("n"), 1), 0, trigger="session_end"))
    assert batch.sessions == {}


def test_the_profile_and_the_drift_fold_into_user_profiles() -> None:
    profile = Memory("p", USER, "profile", layer="procedural", kind="behavioural_profile")
    anchor = bytes(4 * 3)
    batch = fold(
        event(ledger.ProceduralSynthesized(profile, 1, 4), 0),
        event(ledger.ProceduralSynthesized(profile, 2, 5), 1),
        event(ledger.IdentityDriftMeasured(anchor, 0.25, "warning"), 2),
    )
    row = batch.profiles[USER]
    assert (row.profile_memory_id, row.profile_version) == ("p", 2)
    assert (row.drift, row.drift_level) == (0.25, "warning")
    assert row.drift_measured_at is not None


def test_a_scope_copy_links_to_and_from_its_original() -> None:
    original = Memory("deploy", USER, "smoke tests", layer="procedural")
    copy = dataclasses.replace(original, memory_id="deploy-team", scope="team")
    batch = fold(event(ledger.ScopePromoted("deploy", copy, 1, "agent", "team"), 0))
    links = {(link[1], link[2], link[3]) for link in batch.links}
    assert links == {
        ("deploy", "deploy-team", "promoted_to"),
        ("deploy-team", "deploy", "derived_from"),
    }
    assert ("procedural", USER, "deploy-team") in batch.upserts


def test_an_invalidated_carried_turn_is_updated_in_its_own_layer() -> None:
    batch = fold(
        event(
            ledger.ContradictionDetected(
                "new", "old", 0.9, "conflicting_value", "x", "latest_wins", "old", 3, T0, "working"
            ),
            0,
        )
    )
    assert ("working", USER, "old") in batch.updates
