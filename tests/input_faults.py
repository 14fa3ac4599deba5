"""A test-only fault: the engine raises on one input after it has changed the user's state.

No valid input makes the engine raise any more (the last one found, an access at the
largest count the contract allows, now saturates), so the worker's dead-letter path for an
input it fails on is shown with this one: an access to the memory ``m-poison`` fails after
the real step applied it. Installed in the worker's own process through a ``sitecustomize``
module (``rule_faults.worker_env(directory, __name__)``). Nothing of Kafka or PostgreSQL is
replaced."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from streams import ingest_processor
from streams.engine.model import MemoryAccessed, MemoryEvent

POISON = "m-poison"


def failing_after(real_step: Callable[..., Any]) -> Callable[..., Any]:
    """``real_step``, raising after it applied an access to :data:`POISON`."""

    def step_then_fail(state: Any, event: MemoryEvent, *args: Any, **kwargs: Any) -> Any:
        outcome = real_step(state, event, *args, **kwargs)
        payload = event.payload
        if isinstance(payload, MemoryAccessed) and payload.memory_id == POISON:
            raise ValueError("injected after the step changed the user's state")
        return outcome

    return step_then_fail


def install() -> None:
    """For a worker process (a ``sitecustomize``): its engine fails on the poison input."""
    ingest_processor.step = failing_after(ingest_processor.step)
