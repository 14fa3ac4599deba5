"""A cycle compares what is new against ALL of the user's memories (issue: worker state at
scale): nothing is left out of comparison because the user has many (pure)."""

from __future__ import annotations

from streams.engine import ledger
from streams.engine.oracle import replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from tests.scenarios import DAY, NOW, Scenario, random_unit, with_similarity


def test_a_new_memory_meets_the_oldest_of_five_thousand_memories() -> None:
    """Given a user with 5,000 semantic memories, the two oldest about the API and the
    database, when a duplicate of the first and a correction of the second arrive and a
    cycle runs, then the duplicate is merged and the contradiction detected, against the
    oldest memories, though the cycle's own bound is 1,000 memories."""
    api, db = random_unit(901), random_unit(902)
    s = Scenario("big-user")
    s.write(
        "oldest-api",
        "The API uses REST",
        layer="semantic",
        embedding=with_similarity(api, 1.0, 1),
        at=NOW - 400 * DAY,
    )
    s.write(
        "oldest-db",
        "The project uses PostgreSQL",
        layer="semantic",
        embedding=with_similarity(db, 1.0, 2),
        at=NOW - 399 * DAY,
    )
    for i in range(4998):
        s.write(
            f"m{i}",
            f"Unrelated fact number {i}",
            layer="semantic",
            embedding=with_similarity(random_unit(10_000 + i % 50), 0.5, 3 + i),
            at=NOW - 300 * DAY + i * 1000,
        )
    s.consolidate(at=NOW - DAY)
    s.write(
        "new-api",
        "The API is RESTful",
        layer="semantic",
        embedding=with_similarity(api, 0.97, 7_001),
        at=NOW,
    )
    s.write(
        "new-db",
        "The project uses MySQL",
        layer="semantic",
        embedding=with_similarity(db, 0.85, 7_002),
        at=NOW,
    )
    s.consolidate(at=NOW + 1)

    run = replay(s.events, EngineConfig(policy=builtin_profile("lexichord")))

    merged = [d.payload for d in run.decisions if isinstance(d.payload, ledger.MemoryMerged)]
    contradictions = [
        d.payload for d in run.decisions if isinstance(d.payload, ledger.ContradictionDetected)
    ]
    assert {(m.survivor.memory_id, m.merged_memory_id) for m in merged} & {
        ("new-api", "oldest-api"),
        ("oldest-api", "new-api"),
    }
    assert [(c.memory_id, c.other_memory_id) for c in contradictions] == [("new-db", "oldest-db")]
