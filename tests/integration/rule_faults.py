"""A test-only fault: the contradiction check raises after it has reported a pair.

Installed in the worker's own process through a ``sitecustomize`` module on its
``PYTHONPATH`` (:func:`worker_env`), and in the test's process for the batch oracle, so both
drivers run the same faulty engine. Nothing of Kafka or PostgreSQL is replaced."""

from __future__ import annotations

from pathlib import Path

from streams.engine import cycle
from streams.engine.context import CycleContext
from streams.engine.rules.contradictions import detect_contradictions

REPO = Path(__file__).resolve().parents[2]


def detect_contradictions_then_fail(context: CycleContext) -> None:
    decided = len(context.decisions)
    detect_contradictions(context)
    raise RuntimeError(f"injected after {len(context.decisions) - decided} decisions")


detect_contradictions_then_fail.__name__ = detect_contradictions.__name__


def faulty_steps() -> tuple[cycle.Step, ...]:
    return tuple(
        detect_contradictions_then_fail if step is detect_contradictions else step
        for step in cycle.STEPS
    )


def install() -> None:
    cycle.OPERATIONS["full"] = faulty_steps()


def worker_env(directory: Path, faults: str = __name__) -> dict[str, str]:
    """The environment that makes a ``memstream worker`` process install the fault of the
    module ``faults`` (its ``install()``; by default this module's)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "sitecustomize.py").write_text(f"from {faults} import install\ninstall()\n")
    return {"PYTHONPATH": f"{directory}:{REPO}"}
