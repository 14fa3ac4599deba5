"""A cycle rule is all or nothing (issue 37): one that raises contributes nothing to the
ledger or to state, the cycle's other rules go on, and the report says which rule failed
(``failed_rules`` reads it back for the worker's counter)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from streams.engine import cycle, ledger
from streams.engine.context import CycleContext
from streams.engine.cycle import failed_rules
from streams.engine.oracle import OracleRun, replay
from streams.engine.policy import builtin_profile
from streams.engine.rules.contradictions import detect_contradictions
from streams.engine.step import EngineConfig
from tests.scenarios import (
    contradiction_and_stale_memory,
)

LEXICHORD = EngineConfig(policy=builtin_profile("lexichord"))
USER = "cycle-fail"


def raising_after(rule: Callable[[CycleContext], None]) -> Callable[[CycleContext], None]:
    """``rule``, which raises once it has decided (its decisions are in the context)."""

    def failing(context: CycleContext) -> None:
        decided = len(context.decisions)
        rule(context)
        assert len(context.decisions) > decided, "the rule decided nothing to drop"
        raise RuntimeError("failed midway")

    failing.__name__ = rule.__name__
    return failing


def run_with(steps: tuple[Callable[[CycleContext], None], ...]) -> OracleRun:
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(cycle.OPERATIONS, "full", steps)
        return replay(contradiction_and_stale_memory(USER).events, LEXICHORD)


Rule = Callable[[CycleContext], None]


def replaced(rule: Rule, by: Rule) -> tuple[Rule, ...]:
    return tuple(by if step is rule else step for step in cycle.STEPS)


def without(rule: Rule) -> tuple[Rule, ...]:
    return tuple(step for step in cycle.STEPS if step is not rule)


def report_of(run: OracleRun) -> ledger.ConsolidationCompleted:
    [report] = [
        d.payload for d in run.decisions if isinstance(d.payload, ledger.ConsolidationCompleted)
    ]
    return report


def test_a_rule_that_raises_after_deciding_leaves_none_of_its_decisions() -> None:
    # given the contradiction check reports a pair and then raises
    failing = raising_after(detect_contradictions)

    # when the cycle runs
    run = run_with(replaced(detect_contradictions, failing))

    # then nothing of the check is in the ledger or the state, and the report says why
    assert not [d for d in run.decisions if isinstance(d.payload, ledger.ContradictionDetected)]
    state = run.state(USER)
    assert state.flagged_pairs == set()
    assert state.memories["pg"].memory.invalid_at is None
    report = report_of(run)
    assert report.contradictions == 0
    assert report.warnings == ("detect_contradictions: RuntimeError: failed midway",)
    assert failed_rules(report) == ["detect_contradictions"]


def test_the_other_rules_decide_exactly_as_without_the_failed_rule() -> None:
    failed = run_with(replaced(detect_contradictions, raising_after(detect_contradictions)))
    skipped = run_with(without(detect_contradictions))

    def decided(run: OracleRun) -> list[ledger.ConsolidationEvent]:
        return [
            d for d in run.decisions if not isinstance(d.payload, ledger.ConsolidationCompleted)
        ]

    assert decided(failed) == decided(skipped)
    assert report_of(failed).archived == 1  # a rule after the failed one ran
    assert dataclasses.replace(report_of(failed), warnings=()) == report_of(skipped)
    assert failed.state(USER) == skipped.state(USER)


def test_the_rules_own_warnings_are_not_failures() -> None:
    report = ledger.ConsolidationCompleted(
        "default",
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        warnings=(
            "synthesize_profile: no semantic memories to synthesize",
            "identity drift 0.300 from the origin anchor (warning)",
            "update_identity_anchor: StopIteration: ",
            "not_a_rule: ValueError: x",
        ),
    )

    assert failed_rules(report) == ["update_identity_anchor"]
