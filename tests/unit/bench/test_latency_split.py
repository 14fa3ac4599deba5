"""Where a write's latency went (bench.latency): to the ledger or after it, and for the
slowest writes, which part their tail came from; the summary the report prints."""

from __future__ import annotations

import pytest

from bench.latency import LatencyRun
from bench.report import _latency_lines
from bench.run import _latency_summary


def _run(to_ledger: list[float], after: list[float]) -> LatencyRun:
    return LatencyRun(
        latencies_ms=[a + b for a, b in zip(to_ledger, after, strict=True)],
        published=len(to_ledger),
        publish_seconds=1.0,
        visible_seconds=1.0,
        to_ledger_ms=to_ledger,
        after_ledger_ms=after,
    )


def test_the_slowest_writes_say_which_side_their_tail_came_from() -> None:
    # 99 writes of 100 ms split evenly; the slowest spent 500 of its 600 ms after the ledger
    run = _run([50.0] * 99 + [100.0], [50.0] * 99 + [500.0])
    assert run.slowest_after_ledger() == pytest.approx(500 / 600)
    # the slowest 10 %: nine even writes and the slow one
    assert run.slowest_after_ledger(0.1) == pytest.approx((9 * 50 + 500) / (9 * 100 + 600))


def test_no_split_without_ledger_times() -> None:
    run = _run([], [])
    assert run.slowest_after_ledger() is None
    summary = _latency_summary(1000.0, 10.0, LatencyRun(latencies_ms=[100.0], published=1))
    assert "split" not in summary


def test_the_report_prints_both_parts() -> None:
    summary = _latency_summary(1000.0, 10.0, _run([40.0] * 99 + [90.0], [60.0] * 99 + [410.0]))
    assert summary["split"] == 100
    assert summary["to_ledger_p50_ms"] == 40.0 and summary["after_ledger_p50_ms"] == 60.0
    lines = "\n".join(_latency_lines({"latency_runs": [summary]}))
    assert "to the ledger (worker wrote it)" in lines
    assert "after it (commit, projector)" in lines
    assert "82%" in lines  # 410 of the slowest write's 500 ms
