"""No input stops the worker, end to end through Kafka and PostgreSQL (issue 37).

An input the worker fails on is dead-lettered (``internal_error``) and the rest of its batch
lands; two users' writes sharing an event id keep their own embeddings and ledger ids; a
cycle rule that raises leaves none of its decisions in the ledger, and the stream still
equals the batch oracle run with the same rule."""

from __future__ import annotations

import uuid

import pytest

from memstream.processes import start_command
from memstream.waiting import wait_until
from streams.embedders.hashing import HashingEmbedder
from streams.engine import cycle, ledger
from streams.engine.model import Memory, MemoryAccessed, MemoryEvent, MemoryWritten
from streams.kafka import codec
from tests import input_faults
from tests.integration.rule_faults import faulty_steps, worker_env
from tests.scenarios import (
    contradiction_and_stale_memory,
)
from tests.support import quiet_profile
from tests.workloads import BASE_TIME, expected_rows

pytestmark = pytest.mark.integration

SHARED_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "issue-37/integration/shared"))


def eid(n: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"issue-37/integration/{n}"))


def write(user: str, memory_id: str, text: str, event_id: str, **fields: object) -> MemoryEvent:
    memory = Memory(memory_id, user, text).evolve(**fields)
    return MemoryEvent(event_id, user, BASE_TIME, MemoryWritten(memory), source="test")


def test_an_input_the_worker_fails_on_is_dead_lettered_and_the_rest_of_the_batch_lands(
    pipeline, tmp_path
):
    """Given a worker whose engine fails on one input after changing the user's state (an
    access to m-poison: no valid input makes the engine raise any more, so the fault is
    injected, see input_faults), among other users' inputs and two users' writes sharing one
    event id,
    when they are published together,
    then the access is dead-lettered as internal_error with the state as before it, the
    worker keeps running, every other input reaches PostgreSQL, and each shared-id write has
    its own embedding."""
    pipeline.processes["worker"] = start_command(
        "worker",
        ["worker"],
        pipeline.settings,
        pipeline.workdir / "logs",
        worker_env(tmp_path / "hook", input_faults.__name__),
    )
    pipeline.start("projector")
    setup = write("poisoned", input_faults.POISON, "a note the fault is about", eid(1))
    poison = MemoryEvent(
        eid(2),
        "poisoned",
        BASE_TIME + 1,
        MemoryAccessed(input_faults.POISON, BASE_TIME + 1),
        source="test",
    )
    texts = {"carol": "Carol keeps bees in Porto", "dave": "Dave sails on Sundays"}
    batch = [
        setup,
        poison,
        write("poisoned", "m-after", "the user's next note", eid(3)),
        write("bystander", "m-1", "another user's note", eid(4)),
        *(write(user, "m-shared", text, SHARED_ID) for user, text in texts.items()),
    ]
    for event in batch:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()

    [letter] = pipeline.read_topic(pipeline.settings.deadletter_topic, expected=1)
    headers = {name: value.decode() for name, value in letter.headers()}
    assert headers["reason"] == "internal_error"
    assert headers["error.type"] == "ValueError"
    assert letter.value() == codec.encode_event(poison)

    pipeline.wait_for_log_count(len(batch) - 1)
    rows = pipeline.memory_rows()
    assert rows[("working", "poisoned", input_faults.POISON)][:2] == (1, 0)  # rolled back
    for key in [("working", "poisoned", "m-after"), ("working", "bystander", "m-1")]:
        assert key in rows
    stored = {
        d.user_id: d.payload.memory
        for d in map(codec.decode_ledger, (m.value() for m in _ledger(pipeline, len(batch) - 1)))
        if isinstance(d.payload, ledger.MemoryStored) and d.payload.memory.memory_id == "m-shared"
    }
    for user, text in texts.items():
        assert stored[user].embedding == HashingEmbedder().embed([text])[0]
    ids = pipeline.query("SELECT event_id FROM consolidation_log")
    assert len(ids) == len(batch) - 1  # no two users' ledger events share an id

    assert (
        pipeline.metrics("worker")[
            ("memstream_events_rejected_total", (("reason", "internal_error"),))
        ]
        == 1
    )
    after = write("bystander", "m-2", "written after the dead letter", eid(5))
    pipeline.publisher.publish(after)
    pipeline.publisher.flush()
    pipeline.wait_for_log_count(len(batch))
    assert pipeline.processes["worker"].alive()


def _ledger(pipeline, expected: int) -> list:
    return pipeline.read_topic(pipeline.settings.ledger_topic, expected=expected)


def test_a_rule_that_raises_mid_cycle_leaves_no_decision_and_the_stream_equals_the_oracle(
    stack, tmp_path_factory, monkeypatch
):
    """Given a worker whose contradiction check raises after reporting a pair,
    when a cycle runs that the check would report a contradiction in,
    then the ledger holds no contradiction, the report names the failed rule, the rule
    after it still archived, the failure is counted by rule, and the read models equal the
    batch oracle's run with the same engine."""
    from tests.support import Pipeline

    workdir = tmp_path_factory.mktemp("rule-fault")
    pipeline = Pipeline.create(stack, workdir, policy_toml=quiet_profile("lexichord"))
    try:
        pipeline.processes["worker"] = start_command(
            "worker", ["worker"], pipeline.settings, workdir / "logs", worker_env(workdir / "hook")
        )
        pipeline.start("projector")
        events = contradiction_and_stale_memory("fault", "issue-37").events
        monkeypatch.setitem(cycle.OPERATIONS, "full", faulty_steps())
        oracle = pipeline.oracle(events)
        assert not [
            d for d in oracle.decisions if isinstance(d.payload, ledger.ContradictionDetected)
        ]

        for event in events:
            pipeline.publisher.publish(event)
        pipeline.publisher.flush()
        pipeline.wait_for_log_count(len(oracle.decisions))

        logged = pipeline.query("SELECT event_id FROM consolidation_log")
        assert {event_id for (event_id,) in logged} == {d.event_id for d in oracle.decisions}
        [(warnings, archived)] = pipeline.query(
            "SELECT warnings, archived FROM consolidation_reports"
        )
        assert any(w.startswith("detect_contradictions: RuntimeError") for w in warnings)
        assert archived == 1
        assert pipeline.memory_rows() == expected_rows(oracle)
        wait_until(
            lambda: (
                pipeline.metrics("worker").get(
                    ("memstream_cycle_rule_failures_total", (("rule", "detect_contradictions"),))
                )
                == 1
            ),
            timeout=30,
            what="the rule failure counted",
        )
    finally:
        pipeline.close()
