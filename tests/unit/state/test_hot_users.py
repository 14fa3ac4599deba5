"""A bounded set of hot users (issue 7): the others live in the local store and are read back
when an input of theirs comes, with exactly the state they had."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from streams.engine.policy import builtin_profile
from streams.engine.rules.due import next_due_at
from streams.engine.step import EngineConfig
from streams.engine.user_state import InMemoryUserState
from streams.ingest_processor import IngestProcessor
from streams.kafka import codec
from streams.state.hot_users import UserStates
from streams.state.restore import load_user
from streams.state.store import Checkpoint, LocalStateStore
from tests.workloads import cycle_heavy_workload, mixed_workload

CONFIG = EngineConfig(policy=builtin_profile("default"))
PARTITION = 0


def due_of(state: InMemoryUserState) -> int | None:
    return next_due_at(state, CONFIG.policy)


def events() -> list:
    found = [*mixed_workload(500, users=6, seed=21), *cycle_heavy_workload(300, users=3, seed=22)]
    return sorted(found, key=lambda e: (e.occurred_at, e.event_id))


def run(states: UserStates, store: LocalStateStore | None = None, evict_every: int = 25) -> None:
    """Process the workload; with a store, checkpoint every input's entries at once (so every
    user is clean) and evict every ``evict_every`` inputs."""
    processor = IngestProcessor(CONFIG, states)
    for i, event in enumerate(events(), 1):
        emission = processor.process(event.user_id.encode(), codec.encode_event(event), [])
        if store is not None:
            store.write(PARTITION, emission.state, Checkpoint(i, None))
            if i % evict_every == 0:
                states.evict(lambda _partition, _user: False)
                assert states.hot_users() <= 2


def test_given_two_hot_users_when_six_users_write_then_each_state_equals_an_unbounded_run(
    tmp_path: Path,
) -> None:
    """Given a worker's states holding 2 hot users of 6 (the rest in the local store), when a
    mixed, cycle-heavy workload is processed with evictions along the way, then every user's
    state, read back, equals the state an unbounded run holds."""
    # Given
    store = LocalStateStore(tmp_path / "store")
    bounded = UserStates(2, partial(load_user, store), due_of)
    unbounded = UserStates()

    # When
    run(bounded, store)
    run(unbounded)

    # Then
    users = unbounded.users_in(PARTITION)
    assert len(users) == 6 and bounded.users_in(PARTITION) == users
    assert bounded.loads > 0 and bounded.evictions > 0
    for user in sorted(users):
        assert bounded.user(user, PARTITION) == unbounded.user(user, PARTITION), user


def test_given_a_dirty_user_when_evicting_then_it_stays_hot(tmp_path: Path) -> None:
    """Given three users beyond a capacity of one, when evicting while two of them have state
    not yet in the store, then only the clean one goes cold."""
    # Given
    store = LocalStateStore(tmp_path / "store")
    states = UserStates(1, partial(load_user, store), due_of)
    for user in ("a", "b", "c"):
        states.user(user, PARTITION)

    # When
    evicted = states.evict(lambda _partition, user: user != "b")

    # Then
    assert evicted == 1
    assert states.hot_users() == 2 and len(states) == 3


def test_given_cold_users_when_ticking_then_due_ones_are_found_without_loading(
    tmp_path: Path,
) -> None:
    """Given every user cold after a workload, when the periodic tick asks who is due far in
    the future, then it gets the users the hot run says are due, and loads none of them."""
    # Given
    store = LocalStateStore(tmp_path / "store")
    bounded = UserStates(2, partial(load_user, store), due_of)
    run(bounded, store)
    unbounded = UserStates()
    run(unbounded)
    bounded.capacity = 0
    bounded.evict(lambda _partition, _user: False)
    loads = bounded.loads
    far = 2**62

    # When
    due = bounded.due_users(PARTITION, far, due_of)

    # Then
    assert due == unbounded.due_users(PARTITION, far, due_of) != set()
    assert bounded.loads == loads and bounded.hot_users() == 0


def test_given_hot_users_when_ticking_twice_then_only_users_with_input_between_are_read_again() -> (
    None
):
    """Given every user hot after a workload, when two ticks ask who is due with one user's
    input between them, then the second tick reads that user's state only, and both ticks
    agree with due times computed afresh."""
    # Given
    states = UserStates()
    run(states)
    users = states.users_in(PARTITION)
    read: list[str] = []

    def counted(state: InMemoryUserState) -> int | None:
        read.append(state.user_id)
        return due_of(state)

    far = 2**62
    fresh = {u for u in users if (at := due_of(states.user(u, PARTITION))) and at <= far}

    # When
    first = states.due_users(PARTITION, far, counted)
    first_reads = sorted(read)
    read.clear()
    touched = sorted(users)[0]
    states.user(touched, PARTITION)  # handed out for an input: its due time may change
    second = states.due_users(PARTITION, far, counted)

    # Then
    assert first == second == fresh != set()
    assert first_reads == sorted(users)
    assert read == [touched]
