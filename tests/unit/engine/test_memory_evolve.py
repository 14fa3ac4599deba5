"""``Memory.evolve`` is ``dataclasses.replace`` made cheaper: the same copy, the same error
for a field that does not exist."""

from __future__ import annotations

from dataclasses import replace

import pytest

from streams.engine.model import Memory


def test_an_evolved_memory_equals_the_dataclass_replace_of_it() -> None:
    memory = Memory("m-1", "u-1", "the sky is blue", tags=("a",), metadata={"k": "v"})
    evolved = memory.evolve(status="archived", salience=0.25, tags=("b",), content="grey")

    assert evolved == replace(memory, status="archived", salience=0.25, tags=("b",), content="grey")
    assert memory.evolve() == memory


def test_evolving_a_field_a_memory_does_not_have_is_an_error() -> None:
    with pytest.raises(TypeError, match="colour"):
        Memory("m-1", "u-1", "the sky is blue").evolve(colour="blue")
