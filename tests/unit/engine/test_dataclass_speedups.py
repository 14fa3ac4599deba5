"""Frozen dataclasses copied and built by setting their slots
(``streams.engine.dataclass_speedups``):
the same values ``__init__`` and ``dataclasses.replace`` make, and only for classes whose
``__init__`` does nothing more."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streams.engine.dataclass_speedups import (
    field_reader,
    reference_builder,
    reference_copier,
    reference_reader,
    slot_builder,
    slot_copier,
)
from streams.engine.model import Memory
from tests.unit.kafka.test_codec import a_memory, memories


@given(
    memory=memories,
    other=memories,
    chosen=st.sets(st.sampled_from([f.name for f in dataclasses.fields(Memory)])),
)
def test_evolve_is_dataclasses_replace(memory: Memory, other: Memory, chosen: set[str]) -> None:
    changes = {name: getattr(other, name) for name in chosen}

    evolved = memory.evolve(**changes)

    assert evolved == dataclasses.replace(memory, **changes)
    assert all(getattr(evolved, name) is changes[name] for name in chosen)
    assert memory == dataclasses.replace(memory)  # the original is untouched


def test_evolve_refuses_a_name_that_is_not_a_field() -> None:
    with pytest.raises(TypeError, match="Memory has no field 'colour'"):
        a_memory().evolve(colour="blue")


def test_a_copy_is_a_new_frozen_value() -> None:
    memory = a_memory()
    copy = memory.evolve()

    assert copy == memory and copy is not memory
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.content = "changed"  # type: ignore[misc]


@dataclass(frozen=True, slots=True)
class Checked:
    value: int

    def __post_init__(self) -> None:  # pragma: no cover - never constructed here
        raise AssertionError


@dataclass(frozen=True)
class Unslotted:
    value: int


@pytest.mark.parametrize("cls", [Checked, Unslotted, int])
@pytest.mark.parametrize("make", [slot_builder, slot_copier])
def test_a_class_whose_init_could_do_more_is_refused(cls: type, make: object) -> None:
    with pytest.raises(TypeError, match="slotted dataclass without __post_init__"):
        make(cls)  # type: ignore[operator]


@given(memory=memories)
def test_a_field_reader_gives_every_field_shallowly(memory: Memory) -> None:
    read = field_reader(Memory)(memory)

    assert list(read) == [f.name for f in dataclasses.fields(Memory)]
    assert all(read[name] is getattr(memory, name) for name in read)


@given(memory=memories, other=memories)
def test_the_generated_paths_give_what_the_reference_paths_give(
    memory: Memory, other: Memory
) -> None:
    """The speedups are held to the standard library's paths, which stay as the reference."""
    datum = reference_reader(Memory)(memory)
    assert field_reader(Memory)(memory) == datum
    convert = {"tags": tuple}
    assert slot_builder(Memory, convert)(datum) == reference_builder(Memory, convert)(datum)
    changes = {"content": other.content, "tags": other.tags}
    assert slot_copier(Memory)(memory, changes) == reference_copier(Memory)(memory, changes)
