"""The insight extractor's topics: what a cluster of narratives shares."""

from __future__ import annotations

import numpy as np

from streams.engine import ledger
from streams.engine.oracle import replay
from streams.engine.step import EngineConfig
from tests.scenarios import NOW, Scenario


def _alike_narratives(name: str, texts: list[str]) -> Scenario:
    """A week of narratives alike in direction, one of each of ``texts``."""
    rng = np.random.default_rng(3)
    direction = rng.standard_normal(384)
    s = Scenario(name)
    for n, text in enumerate(texts):
        vector = direction / np.linalg.norm(direction) + 0.3 * rng.standard_normal(384) / 20
        s.write(
            f"narrative-{n}",
            text,
            embedding=(vector / np.linalg.norm(vector)).astype("<f4").tobytes(),
            at=NOW + n * 1000,
            layer="episodic",
            kind="narrative",
        )
    return s


def _learning_patterns(s: Scenario) -> list[ledger.PatternDetected]:
    s.consolidate(at=NOW + 10_000, force=True)  # forced: a maintenance pass
    run = replay(s.events, EngineConfig())
    return [
        d.payload
        for d in run.decisions
        if isinstance(d.payload, ledger.PatternDetected)
        and d.payload.pattern.kind == "learning_pattern"
    ]


def test_narratives_that_share_no_topic_make_no_insight() -> None:
    """Given narratives alike in direction whose words are all different, when clustered,
    then no learning pattern is written: it would name no topic (issue 38, RealMem:
    "Recurring across 7 sessions (ontological): a theme."). The same week with a shared
    topic makes one."""
    texts = ["Kenta: train, feels.", "Kenta: blog.", "Kenta: garden, paragraph.", "Kenta: time."]
    assert _learning_patterns(_alike_narratives("insight-none", texts)) == []
    texts = [f"{text[:-1]}, budget." for text in texts]
    [insight] = _learning_patterns(_alike_narratives("insight-budget", texts))
    assert insight.pattern.content.endswith("): budget.")


def test_the_conversation_s_parties_are_never_a_recurring_topic() -> None:
    """Given a week of alike narratives of sessions with an assistant, each naming the user
    and the agent, when a maintenance pass clusters them, then the insight lists what they
    are about and not the parties every session has by construction (issue 38, RealMem:
    "Recurring across 7 sessions (behavioural): agent, chest.")."""
    texts = [
        f"Session {n}: the agent planned chest presses and the user logged the workout."
        for n in range(4)
    ]
    [insight] = _learning_patterns(_alike_narratives("insight-parties", texts))
    topics = insight.pattern.content.split(": ", 1)[1]
    assert "chest" in topics and "workout" in topics
    assert "agent" not in topics and "user" not in topics
