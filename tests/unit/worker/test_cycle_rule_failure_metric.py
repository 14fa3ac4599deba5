"""The worker counts the cycle rules that failed, by rule, from the cycle's report
(``memstream_cycle_rule_failures_total{rule}``): the engine is pure and counts nothing."""

from __future__ import annotations

from streams.engine import ledger
from streams.worker_metrics import count_decision, cycle_rule_failures


def test_a_report_with_a_failed_rule_counts_it_by_rule() -> None:
    def failures(rule: str) -> float:
        return cycle_rule_failures.labels(rule)._value.get()

    before = failures("merge_duplicates")
    report = ledger.ConsolidationCompleted(
        "default",
        3,
        0,
        0,
        0,
        0,
        0,
        0,
        warnings=("merge_duplicates: StopIteration: ", "identity drift 0.300 (warning)"),
    )

    count_decision(report)

    assert failures("merge_duplicates") == before + 1
