"""An input's output is whole or nothing (issue: a SIGKILL during a consolidation cycle
commits part of the cycle). The rebuild never marks an input processed from a partial
emission; processing the input again completes it with byte-identical events."""

from __future__ import annotations

import dataclasses

from streams.engine import ledger
from streams.engine.emissions import EmissionAssembler, complete_emissions, numbered
from streams.engine.model import Memory
from streams.engine.step import EngineConfig
from streams.engine.user_state import InMemoryUserState
from streams.ingest_processor import Emission, IngestProcessor
from streams.kafka import codec
from streams.state.hot_users import UserStates
from tests.scenarios import Scenario

SOURCE = [("source.topic", b"memory.events"), ("source.partition", b"0")]


def stored(n: int, cause: str, user: str = "u") -> ledger.ConsolidationEvent:
    memory = Memory(f"m{n}", user, f"fact {n}")
    return ledger.ConsolidationEvent(f"e{n}", user, n, cause, ledger.MemoryStored(memory, 1))


def a_cycle_heavy_user() -> Scenario:
    """Twenty messages in one conversation: the twentieth runs an on-write cycle."""
    scenario = Scenario("cycle-user", namespace="partial-emissions")
    for n in range(20):
        scenario.write(
            f"m{n}",
            f"message {n} about project number {n}",
            layer="working",
            importance=0.9,
            conversation_id="conv-1",
        )
    return scenario


def run(processor: IngestProcessor, scenario: Scenario) -> list[Emission]:
    return [
        processor.process(e.user_id.encode(), codec.encode_event(e), SOURCE)
        for e in scenario.events
    ]


def test_each_input_s_decisions_are_numbered_as_one_emission() -> None:
    emissions = run(IngestProcessor(EngineConfig()), a_cycle_heavy_user())
    cycle = emissions[-1].ledger_events

    assert len(cycle) > 2, "the twentieth message runs a cycle of several decisions"
    assert [d.emission_index for d in cycle] == list(range(len(cycle)))
    assert {d.emission_size for d in cycle} == {len(cycle)}
    assert isinstance(cycle[-1].payload, ledger.ConsolidationCompleted)
    earlier = [d for e in emissions[:-1] for d in e.ledger_events]
    assert all((d.emission_index, d.emission_size) == (0, 1) for d in earlier)


def test_the_assembler_releases_an_emission_only_when_it_is_complete() -> None:
    first = numbered([stored(1, "a"), stored(2, "a"), stored(3, "a")])
    assembler = EmissionAssembler()

    released = [assembler.feed(event) for event in first]

    assert released == [(), (), first]
    assert assembler.open_events() == 0


def test_a_prefix_followed_by_its_re_emission_is_dropped_and_the_whole_one_kept() -> None:
    whole = numbered([stored(1, "a"), stored(2, "a"), stored(3, "a")])
    other = numbered([stored(4, "b")])
    assembler = EmissionAssembler()

    complete = list(complete_emissions([*whole[:2], *whole, *other], assembler))

    assert complete == [whole, other]
    assert assembler.abandoned == 2


def test_a_partial_emission_at_the_end_of_a_partition_is_not_folded() -> None:
    whole = numbered([stored(1, "a")])
    cut = numbered([stored(2, "b"), stored(3, "b")])[:1]
    states = UserStates()

    folded = states.rebuild_partition(0, [*whole, *cut])

    assert folded == 1
    state = states.user("u", 0)
    assert state.has_seen("a") and not state.has_seen("b")
    assert "m2" not in state.memories
    assert states.partial_events == 1


def test_a_rebuild_over_a_partial_cycle_redoes_the_input_with_identical_events() -> None:
    """Given a ledger partition whose last input (a cycle) was committed only in part,
    when the worker rebuilds from it and the input is delivered again,
    then the input is processed (not taken for a duplicate) and emits its whole output again,
    byte for byte the events of an uninterrupted run."""
    scenario = a_cycle_heavy_user()
    uninterrupted = run(IngestProcessor(EngineConfig()), scenario)
    cycle = uninterrupted[-1]
    before = [d for e in uninterrupted[:-1] for d in e.ledger_events]
    partial_ledger = before + cycle.ledger_events[:2]

    states = UserStates()
    states.rebuild_partition(0, partial_ledger)
    restarted = IngestProcessor(EngineConfig(), states)
    redo = restarted.process(
        scenario.user_id.encode(), codec.encode_event(scenario.events[-1]), SOURCE
    )

    assert not redo.duplicate
    assert [r.value for r in redo.ledger] == [r.value for r in cycle.ledger]
    assert states.user(scenario.user_id, 0).memories == _rebuilt(uninterrupted).memories


def _rebuilt(emissions: list[Emission]) -> InMemoryUserState:
    states = UserStates()
    states.rebuild_partition(0, [d for e in emissions for d in e.ledger_events])
    return states.user("cycle-user", 0)


def test_numbering_keeps_every_other_field_of_each_event() -> None:
    """``numbered`` builds each event field by field: one it forgot would be reset to its
    default. Every field holds a distinct object here, so any field not carried is seen."""
    names = [f.name for f in dataclasses.fields(ledger.ConsolidationEvent)]
    events = [ledger.ConsolidationEvent(**{name: object() for name in names}) for _ in range(3)]

    for index, (event, number) in enumerate(zip(events, numbered(events), strict=True)):
        assert (number.emission_index, number.emission_size) == (index, 3)
        for name in set(names) - {"emission_index", "emission_size"}:
            assert getattr(number, name) is getattr(event, name), name
