"""The pure ingest step (docs/consolidation.md, 'One input, step by step'): one input event against
one user's state gives versioned ledger decisions with deterministic ids, or a rejection, or a
duplicate; and one user's events never change another user's state."""

from __future__ import annotations

import random
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streams.engine import ledger
from streams.engine.ingest import Accepted, Duplicate, ingest
from streams.engine.model import (
    ConsolidationRequested,
    ForgetRequested,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryPinned,
    MemoryUnpinned,
    MemoryWritten,
    SessionEnded,
)
from streams.engine.oracle import replay
from streams.engine.user_state import InMemoryUserState, apply_outcome
from streams.engine.validation import Limits, Rejection
from streams.kafka import codec

LIMITS = Limits()
USER = "alice"
T0 = 1_717_000_000_000


def eid(n: int, user: str = USER) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_OID, f"{user}/{n}"))


def event(n: int, payload: object, at: int | None = None, user: str = USER) -> MemoryEvent:
    occurred_at = T0 + n * 1000 if at is None else at
    return MemoryEvent(eid(n, user), user, occurred_at, payload)  # type: ignore[arg-type]


def write(n: int, memory_id: str = "m1", user: str = USER, **fields: object) -> MemoryEvent:
    memory = Memory(memory_id, user, fields.pop("content", f"note {n}"), **fields)  # type: ignore[arg-type]
    return event(n, MemoryWritten(memory), user=user)


def accepted(state: InMemoryUserState, ev: MemoryEvent) -> Accepted:
    """Ingest ``ev``, require it to be accepted and apply it, as the oracle does."""
    outcome = ingest(state, ev, LIMITS, key=ev.user_id)
    assert isinstance(outcome, Accepted), outcome
    apply_outcome(state, ev.event_id, ev.occurred_at, outcome.decisions)
    return outcome


def only_decision(outcome: Accepted) -> ledger.ConsolidationEvent:
    assert len(outcome.decisions) == 1
    return outcome.decisions[0]


def stored_state(*events: MemoryEvent) -> InMemoryUserState:
    state = InMemoryUserState(USER)
    for ev in events:
        accepted(state, ev)
    return state


# --- writes ----------------------------------------------------------------------------------


def test_given_no_memory_when_written_then_one_memory_stored_at_version_1() -> None:
    state = InMemoryUserState(USER)

    outcome = accepted(state, write(1))

    decision = only_decision(outcome)
    assert isinstance(decision.payload, ledger.MemoryStored)
    assert decision.payload.version == 1
    assert decision.payload.previous_layer is None
    assert decision.payload.memory.content == "note 1"
    assert state.memories["m1"].version == 1


def test_a_new_memory_without_created_at_is_created_at_the_event_time_and_valid_from_then() -> None:
    ev = write(1)

    memory = only_decision(accepted(InMemoryUserState(USER), ev)).payload.memory

    assert memory.created_at == ev.occurred_at
    assert memory.valid_at == memory.created_at


def test_a_new_memory_with_an_explicit_created_at_keeps_it_and_is_valid_from_it() -> None:
    payload = only_decision(accepted(InMemoryUserState(USER), write(1, created_at=T0 - 99))).payload

    assert payload.memory.created_at == T0 - 99
    assert payload.memory.valid_at == T0 - 99


def test_an_explicit_valid_at_at_the_epoch_is_kept() -> None:
    """0 is a real time (1970-01-01T00:00Z), not "absent": only None means absent."""
    decision = only_decision(accepted(InMemoryUserState(USER), write(1, valid_at=0)))

    assert decision.payload.memory.valid_at == 0


def test_given_a_memory_when_written_again_then_version_2_keeps_created_at() -> None:
    state = stored_state(write(1))
    created_at = state.memories["m1"].memory.created_at

    decision = only_decision(accepted(state, write(2, content="updated")))

    assert decision.payload.version == 2
    assert decision.payload.memory.content == "updated"
    assert decision.payload.memory.created_at == created_at
    assert state.memories["m1"].version == 2


def test_given_an_accessed_memory_when_rewritten_then_the_access_count_is_kept() -> None:
    state = stored_state(write(1), event(2, MemoryAccessed("m1")), event(3, MemoryAccessed("m1")))

    decision = only_decision(accepted(state, write(4, content="rewritten")))

    assert decision.payload.version == 4
    assert decision.payload.memory.access_count == 2
    assert decision.payload.memory.last_accessed == T0 + 3000


def test_a_rewrite_into_another_layer_names_the_previous_layer() -> None:
    state = stored_state(write(1, layer="working"))

    decision = only_decision(accepted(state, write(2, layer="semantic")))

    assert decision.payload.memory.layer == "semantic"
    assert decision.payload.previous_layer == "working"


def test_a_rewrite_in_the_same_layer_has_no_previous_layer() -> None:
    state = stored_state(write(1, layer="episodic"))

    decision = only_decision(accepted(state, write(2, layer="episodic")))

    assert decision.payload.previous_layer is None


# --- accesses --------------------------------------------------------------------------------


def test_an_access_records_version_plus_one_and_access_count_plus_one() -> None:
    state = stored_state(write(1))

    outcome = accepted(state, event(2, MemoryAccessed("m1", accessed_at=T0 + 1500)))

    payload = only_decision(outcome).payload
    assert isinstance(payload, ledger.MemoryAccessRecorded)
    assert (payload.memory_id, payload.layer) == ("m1", "working")
    assert payload.version == 2
    assert payload.access_count == 1
    assert payload.accessed_at == T0 + 1500
    assert state.memories["m1"].memory.last_accessed == T0 + 1500
    assert state.memories["m1"].memory.access_count == 1
    assert state.memories["m1"].version == 2


def test_an_access_to_a_memory_at_the_largest_count_is_recorded_at_that_count() -> None:
    """The contract's count is a 32-bit int: one more would not fit the ledger record, and
    every later access of the memory was refused (issue 37's poison input)."""
    state = stored_state(write(1, access_count=2**31 - 1))

    for n in (2, 3):
        payload = only_decision(accepted(state, event(n, MemoryAccessed("m1")))).payload
        assert isinstance(payload, ledger.MemoryAccessRecorded)
        assert payload.access_count == 2**31 - 1
        assert payload.version == n
    assert codec.encode_ledger(only_decision(accepted(state, event(4, MemoryAccessed("m1")))))


def test_an_access_without_a_time_happened_at_the_event_time() -> None:
    state = stored_state(write(1))
    ev = event(2, MemoryAccessed("m1"))

    payload = only_decision(accepted(state, ev)).payload

    assert payload.accessed_at == ev.occurred_at
    assert state.memories["m1"].memory.last_accessed == ev.occurred_at


def test_an_access_at_the_epoch_is_recorded_at_the_epoch() -> None:
    """accessed_at=0 is a time that was given; only None means "use occurred_at"."""
    state = stored_state(write(1))

    payload = only_decision(accepted(state, event(2, MemoryAccessed("m1", accessed_at=0)))).payload

    assert payload.accessed_at == 0


def test_repeated_accesses_keep_counting() -> None:
    state = stored_state(write(1))

    for n in range(2, 6):
        accepted(state, event(n, MemoryAccessed("m1")))

    assert state.memories["m1"].memory.access_count == 4
    assert state.memories["m1"].version == 5


@pytest.mark.parametrize(
    "payload",
    [
        MemoryAccessed("ghost"),
        ForgetRequested("ghost"),
        MemoryPinned("ghost"),
        MemoryUnpinned("ghost"),
    ],
    ids=["access", "forget", "pin", "unpin"],
)
def test_acting_on_an_unknown_memory_is_rejected_as_unknown_memory(payload: object) -> None:
    state = stored_state(write(1, memory_id="m1"))

    outcome = ingest(state, event(2, payload), LIMITS)

    assert isinstance(outcome, Rejection)
    assert outcome.reason == "unknown_memory"


# --- forget ----------------------------------------------------------------------------------


def test_forget_emits_a_tombstone_and_erases_the_stored_memory() -> None:
    state = stored_state(write(1, layer="semantic", embedding=b"\x00" * 4 * 384, tags=("x",)))

    outcome = accepted(state, event(2, ForgetRequested("m1", reason="gdpr")))

    assert only_decision(outcome).payload == ledger.MemoryForgotten("m1", "semantic", 2, "gdpr")
    record = state.memories["m1"]
    assert record.forgotten is True
    assert record.version == 2
    assert record.memory.content == ""
    assert record.memory.embedding is None
    assert record.memory.tags == ()
    assert record.memory.memory_id == "m1"
    assert not state.memories["m1"].is_live


def test_given_a_forgotten_memory_when_accessed_then_unknown_memory() -> None:
    state = stored_state(write(1), event(2, ForgetRequested("m1")))

    outcome = ingest(state, event(3, MemoryAccessed("m1")), LIMITS)

    assert isinstance(outcome, Rejection)
    assert outcome.reason == "unknown_memory"


def test_given_a_forgotten_memory_when_forgotten_again_then_unknown_memory() -> None:
    state = stored_state(write(1), event(2, ForgetRequested("m1")))

    outcome = ingest(state, event(3, ForgetRequested("m1")), LIMITS)

    assert isinstance(outcome, Rejection)
    assert outcome.reason == "unknown_memory"


def test_given_a_forgotten_memory_when_rewritten_then_its_version_continues() -> None:
    state = stored_state(write(1), event(2, ForgetRequested("m1")))

    decision = only_decision(accepted(state, write(3, content="back again")))

    assert decision.payload.version == 3
    assert decision.payload.memory.content == "back again"
    assert state.memories["m1"].is_live


# --- pin / unpin -----------------------------------------------------------------------------


def test_pin_stores_the_memory_again_pinned() -> None:
    state = stored_state(write(1, content="keep me"))

    payload = only_decision(accepted(state, event(2, MemoryPinned("m1")))).payload

    assert isinstance(payload, ledger.MemoryStored)
    assert payload.memory.pinned is True
    assert payload.memory.content == "keep me"
    assert payload.version == 2


def test_unpin_stores_the_memory_again_unpinned() -> None:
    state = stored_state(write(1), event(2, MemoryPinned("m1")))

    payload = only_decision(accepted(state, event(3, MemoryUnpinned("m1")))).payload

    assert isinstance(payload, ledger.MemoryStored)
    assert payload.memory.pinned is False
    assert payload.version == 3
    assert state.memories["m1"].memory.pinned is False


# --- duplicates, sessions, manual triggers ---------------------------------------------------


def test_a_repeated_event_id_is_a_duplicate() -> None:
    first = write(1)
    state = stored_state(first)

    outcome = ingest(state, first, LIMITS)

    assert outcome == Duplicate(first.event_id)
    assert state.memories["m1"].version == 1


def test_a_different_event_reusing_a_seen_event_id_is_a_duplicate() -> None:
    state = stored_state(write(1))
    replayed = MemoryEvent(eid(1), USER, T0 + 50_000, MemoryAccessed("m1"))

    assert isinstance(ingest(state, replayed, LIMITS), Duplicate)


@pytest.mark.parametrize(
    "payload",
    [SessionEnded("sess-1", "conv-1"), ConsolidationRequested("conv-1", force=True)],
    ids=["SessionEnded", "ConsolidationRequested"],
)
def test_session_end_and_manual_requests_are_accepted_without_decisions(payload: object) -> None:
    state = InMemoryUserState(USER)
    ev = event(1, payload)

    outcome = accepted(state, ev)

    assert outcome == Accepted(())
    assert state.has_seen(ev.event_id)


def test_a_session_end_seen_twice_is_a_duplicate() -> None:
    ev = event(1, SessionEnded("sess-1"))
    state = stored_state(ev)

    assert isinstance(ingest(state, ev, LIMITS), Duplicate)


def test_an_invalid_event_is_rejected_before_the_state_is_consulted() -> None:
    bad = MemoryEvent("not-a-uuid", USER, T0, MemoryWritten(Memory("m1", USER, "x")))

    outcome = ingest(InMemoryUserState(USER), bad, LIMITS)

    assert isinstance(outcome, Rejection)
    assert outcome.reason == "invalid_event_id"


# --- ledger ids ------------------------------------------------------------------------------


def history() -> list[MemoryEvent]:
    return [
        write(1),
        event(2, MemoryAccessed("m1")),
        event(3, MemoryPinned("m1")),
        write(4, memory_id="m2"),
        event(5, ForgetRequested("m1")),
        write(6),
    ]


def test_the_same_input_gives_the_same_ledger_events_and_ids() -> None:
    first = replay(history(), LIMITS).decisions
    second = replay(history(), LIMITS).decisions

    assert [d.event_id for d in first] == [d.event_id for d in second]
    assert first == second


def test_every_decision_gets_its_own_ledger_event_id() -> None:
    decisions = replay(history(), LIMITS).decisions

    ids = [d.event_id for d in decisions]
    assert len(ids) == len(history())
    assert len(set(ids)) == len(ids)
    assert all(str(uuid.UUID(i)) == i for i in ids)


def test_each_decision_is_caused_by_and_timed_as_its_input_event() -> None:
    events = history()

    decisions = replay(events, LIMITS).decisions

    assert [d.causation_id for d in decisions] == [e.event_id for e in events]
    assert [d.occurred_at for d in decisions] == [e.occurred_at for e in events]
    assert all(d.user_id == USER and d.trigger == "ingest" for d in decisions)
    assert all(d.event_id != d.causation_id for d in decisions)


def test_a_ledger_event_id_is_derived_from_the_cause_the_action_and_the_subject() -> None:
    decision = only_decision(accepted(InMemoryUserState(USER), write(1)))

    assert decision.event_id == ledger.derived_event_id(USER, eid(1), "stored", "m1")
    assert ledger.derived_event_id(USER, eid(1), "stored", "m1") != ledger.derived_event_id(
        USER, eid(1), "accessed", "m1"
    )
    assert ledger.derived_event_id(USER, eid(1), "stored", "m1") != ledger.derived_event_id(
        USER, eid(1), "stored", "m2"
    )
    assert ledger.derived_event_id(USER, eid(1), "stored", "m1") != ledger.derived_event_id(
        "another-user", eid(1), "stored", "m1"
    )


# --- properties: versions and isolation ------------------------------------------------------

OPS = st.lists(
    st.tuples(
        st.sampled_from(["write", "access", "forget", "pin", "unpin", "session"]),
        st.sampled_from(["m1", "m2", "m3"]),
    ),
    max_size=30,
)


def to_events(ops: list[tuple[str, str]], user: str, first: int = 0) -> list[MemoryEvent]:
    payloads = {
        "access": MemoryAccessed,
        "forget": ForgetRequested,
        "pin": MemoryPinned,
        "unpin": MemoryUnpinned,
    }
    events = []
    for n, (op, memory_id) in enumerate(ops, start=first):
        if op == "write":
            events.append(
                write(n, memory_id=memory_id, user=user, layer=("working", "semantic")[n % 2])
            )
        elif op == "session":
            events.append(event(n, SessionEnded("s1"), user=user))
        else:
            events.append(event(n, payloads[op](memory_id), user=user))
    return events


def version_of(decision: ledger.ConsolidationEvent) -> tuple[str, int]:
    payload = decision.payload
    if isinstance(payload, ledger.MemoryStored):
        return payload.memory.memory_id, payload.version
    return payload.memory_id, payload.version  # type: ignore[union-attr]


@given(ops=OPS)
def test_each_memory_s_versions_go_up_by_exactly_one_per_accepted_change(
    ops: list[tuple[str, str]],
) -> None:
    run = replay(to_events(ops, USER), LIMITS)

    last: dict[str, int] = {}
    for decision in run.decisions:
        memory_id, version = version_of(decision)
        assert version == last.get(memory_id, 0) + 1
        last[memory_id] = version
    state = run.users.get(USER)
    for memory_id, version in last.items():
        assert state is not None
        assert state.memories[memory_id].version == version


@given(ops=OPS)
def test_rejections_are_only_for_memories_that_are_not_live(ops: list[tuple[str, str]]) -> None:
    run = replay(to_events(ops, USER), LIMITS)

    assert {r.reason for _, r in run.rejections} <= {"unknown_memory"}
    assert run.accepted + len(run.rejections) == len(ops)
    assert run.duplicates == 0


@given(ops_a=OPS, ops_b=OPS, order=st.randoms(use_true_random=False))
def test_one_user_s_events_never_change_another_user_s_state(
    ops_a: list[tuple[str, str]], ops_b: list[tuple[str, str]], order: random.Random
) -> None:
    """docs/failure-semantics.md, 'Restarts and isolation'. Both users use the same memory ids;
    their events are interleaved at random."""
    alice, bob = to_events(ops_a, "alice"), to_events(ops_b, "bob")
    mixed = [*alice, *bob]
    order.shuffle(mixed)
    # Kafka keeps each key's order: restore per-user order inside the shuffled slots.
    queues = {"alice": iter(alice), "bob": iter(bob)}
    interleaved = [next(queues[e.user_id]) for e in mixed]

    together = replay(interleaved, LIMITS)

    for user, own in (("alice", alice), ("bob", bob)):
        alone = replay(own, LIMITS)
        assert together.decisions_for(user) == alone.decisions
        if own:
            assert together.state(user).memories == alone.state(user).memories
            assert together.state(user).seen_event_ids == alone.state(user).seen_event_ids


def test_two_users_with_the_same_memory_id_keep_separate_memories() -> None:
    events = [
        write(1, memory_id="shared", user="alice", content="alice's"),
        write(1, memory_id="shared", user="bob", content="bob's"),
        event(2, ForgetRequested("shared"), user="alice"),
    ]

    run = replay(events, LIMITS)

    assert run.state("alice").memories["shared"].forgotten
    bob = run.state("bob").memories["shared"]
    assert bob.is_live
    assert bob.memory.content == "bob's"
    assert bob.version == 1
