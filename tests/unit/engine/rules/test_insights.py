"""The insight extractor's topics: what a cluster of narratives shares."""

from __future__ import annotations

import numpy as np

from streams.engine import ledger
from streams.engine.oracle import replay
from streams.engine.step import EngineConfig
from tests.scenarios import NOW, Scenario


def test_the_conversation_s_parties_are_never_a_recurring_topic() -> None:
    """Given a week of alike narratives of sessions with an assistant, each naming the user
    and the agent, when a maintenance pass clusters them, then the insight lists what they
    are about and not the parties every session has by construction (issue 38, RealMem:
    "Recurring across 7 sessions (behavioural): agent, chest.")."""
    # Given
    rng = np.random.default_rng(3)
    direction = rng.standard_normal(384)
    s = Scenario("insight-parties")
    for n in range(4):
        vector = direction / np.linalg.norm(direction) + 0.3 * rng.standard_normal(384) / 20
        s.write(
            f"narrative-{n}",
            f"Session {n}: the agent planned chest presses and the user logged the workout.",
            embedding=(vector / np.linalg.norm(vector)).astype("<f4").tobytes(),
            at=NOW + n * 1000,
            layer="episodic",
            kind="narrative",
        )

    # When
    s.consolidate(at=NOW + 10_000, force=True)  # forced: a maintenance pass
    run = replay(s.events, EngineConfig())

    # Then
    [insight] = [
        d.payload
        for d in run.decisions
        if isinstance(d.payload, ledger.PatternDetected)
        and d.payload.pattern.kind == "learning_pattern"
    ]
    topics = insight.pattern.content.split(": ", 1)[1]
    assert "chest" in topics and "workout" in topics
    assert "agent" not in topics and "user" not in topics
