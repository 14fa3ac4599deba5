"""The streaming run (Kafka → Faust → ledger → projector) and the batch oracle reach the same
decisions and the same read models, on generated multi-user workloads (issue 3)."""

from __future__ import annotations

import itertools
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams.engine.model import (
    ConsolidationRequested,
    ForgetRequested,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryPinned,
    MemoryWritten,
    SessionEnded,
)
from streams.engine.oracle import replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from tests.scenarios import MINUTE, NOW, random_unit, with_similarity
from tests.workloads import LINK_QUERY, cycle_heavy_workload, expected_links, expected_rows

pytestmark = pytest.mark.integration

EXAMPLE = itertools.count()
WORDS = ["project", "uses", "postgresql", "mysql", "likes", "tea", "runs", "tests", "deploys"]
LAYERS = ["working", "episodic", "semantic", "procedural"]
BASES = [random_unit(100 + i) for i in range(3)]

op = st.one_of(
    st.tuples(
        st.just("write"),
        st.sampled_from(LAYERS),
        st.floats(0, 1),
        st.lists(st.sampled_from(WORDS), min_size=2, max_size=5),
        st.sampled_from([None, "c1", "c2"]),
        st.tuples(st.integers(0, 2), st.floats(0.8, 1.0)),
        st.sampled_from([None, 0.0, 0.7, 1.0]),
        st.sampled_from([None, None, "s1", "s2"]),  # explicit session, or derived by the engine
    ),
    st.tuples(st.just("late"), st.integers(1, 40), st.sampled_from(["c1", "c2"])),
    st.tuples(st.just("end_session"), st.sampled_from(["s1", "s2"])),
    st.tuples(st.just("access"), st.integers(0, 50)),
    st.tuples(st.just("forget"), st.integers(0, 50)),
    st.tuples(st.just("pin"), st.integers(0, 50)),
    st.tuples(st.just("rewrite"), st.integers(0, 50), st.sampled_from(WORDS)),
    st.tuples(st.just("consolidate")),
)
workload = st.lists(st.tuples(st.integers(0, 2), st.integers(1, 90), op), min_size=5, max_size=40)


def _events(example: int, steps) -> list[MemoryEvent]:
    """Turn generated steps into events for three users of this example."""
    ns = uuid.uuid5(uuid.NAMESPACE_URL, f"oracle-property/{example}")
    written: dict[str, list[str]] = {}
    events, at = [], NOW
    for n, (user_index, gap_minutes, action) in enumerate(steps):
        user = f"p{example}-u{user_index}"
        at += gap_minutes * MINUTE
        event_id = str(uuid.uuid5(ns, str(n)))
        mine = written.setdefault(user, [])
        stamped = at
        if action[0] == "write":
            _, layer, importance, words, conversation, (base, cosine), success, session = action
            memory_id = f"{user}-m{n}"
            mine.append(memory_id)
            memory = Memory(
                memory_id=memory_id,
                user_id=user,
                content=" ".join(words),
                layer=layer,
                importance=round(importance, 3),
                conversation_id=conversation,
                session_id=session,
                success=success,
                kind="k",
                embedding=with_similarity(BASES[base], round(cosine, 3), seed=n),
            )
            payload = MemoryWritten(memory)
        elif action[0] == "late":
            # a late event: stamped before the latest event time, inside or past the grace
            stamped = at - action[1] * MINUTE
            memory_id = f"{user}-m{n}"
            mine.append(memory_id)
            payload = MemoryWritten(
                Memory(
                    memory_id,
                    user,
                    f"late note {n}",
                    layer="working",
                    conversation_id=action[2],
                    kind="k",
                )
            )
        elif action[0] == "end_session":
            payload = SessionEnded(action[1])
        elif action[0] in ("access", "forget", "pin") and mine:
            target = mine[action[1] % len(mine)]
            payload = {"access": MemoryAccessed, "forget": ForgetRequested, "pin": MemoryPinned}[
                action[0]
            ](target)
        elif action[0] == "rewrite" and mine:
            target = mine[action[1] % len(mine)]
            payload = MemoryWritten(
                Memory(
                    memory_id=target,
                    user_id=user,
                    content=f"rewritten {action[2]}",
                    layer="working",
                    importance=0.9,
                    kind="k",
                )
            )
        else:
            payload = ConsolidationRequested()
        events.append(MemoryEvent(event_id, user, stamped, payload))
    return events


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=workload)
def test_stream_and_oracle_agree_on_generated_workloads(pipeline, steps):
    if not pipeline.processes:
        pipeline.start_all()
    example = next(EXAMPLE)
    events = _events(example, steps)
    oracle = replay(events, EngineConfig(policy=builtin_profile("default")))
    users = {e.user_id for e in events}
    before = pipeline.scalar("SELECT count(*) FROM consolidation_log")

    for event in events:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()
    pipeline.wait_for_log_count(before + len(oracle.decisions))

    rows = {k: v for k, v in pipeline.memory_rows().items() if k[1] in users}
    assert rows == expected_rows(oracle)
    ledger_ids = {
        row[0]
        for row in pipeline.query(
            "SELECT event_id FROM consolidation_log WHERE user_id = ANY(%s)", (list(users),)
        )
    }
    assert ledger_ids == {d.event_id for d in oracle.decisions}
    sessions = {
        (user, session): (status, narrative)
        for user, session, status, narrative in pipeline.query(
            "SELECT user_id, session_id, status, narrative_id FROM sessions "
            "WHERE user_id = ANY(%s)",
            (list(users),),
        )
    }
    assert sessions == {
        (user, window.session_id): (window.status, window.narrative_id)
        for user, state in oracle.users.items()
        for window in state.facets.sessions.values()
    }


def test_stream_and_oracle_agree_with_forgets_in_a_cycle_heavy_workload(pipeline):
    """Forgets mixed into conversations that consolidate all the time (issue 42): what a
    forget rewrites or forgets of the derived memories reaches the same read models and
    links in the stream as in the oracle."""
    pipeline.start_all()
    events = cycle_heavy_workload(600, users=3, seed=13, forgets=0.08)
    oracle = replay(events, EngineConfig(policy=builtin_profile("default")))
    rewritten = [
        d
        for d in oracle.decisions
        if d.trigger == "ingest"
        and getattr(d.payload, "version", 1) > 1
        and getattr(getattr(d.payload, "memory", None), "kind", "") == "narrative"
    ]
    assert rewritten, "the workload should make forgets rewrite consolidated memories"

    for event in events:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()
    pipeline.wait_for_log_count(len(oracle.decisions))

    assert pipeline.memory_rows() == expected_rows(oracle)
    assert sorted(pipeline.query(LINK_QUERY), key=repr) == expected_links(oracle)
