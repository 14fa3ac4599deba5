"""When the bench measures latency again at 80 % of the drained rate (issue: the read path,
end-to-end latency): whenever the target rate was not held within the p99 target, whether
the pipeline fell behind or kept up with a queueing tail; never when it held it."""

from __future__ import annotations

from bench.latency import LatencyRun
from bench.run import sustainable_rate


def run_at_1000(latencies_ms: list[float], visible_seconds: float) -> LatencyRun:
    """10 s of publishing at 1,000 ev/s, the last write visible after ``visible_seconds``."""
    return LatencyRun(
        latencies_ms=latencies_ms,
        published=10_000,
        publish_seconds=10.0,
        visible_seconds=visible_seconds,
    )


def test_kept_up_within_the_target_needs_no_second_run() -> None:
    assert sustainable_rate(run_at_1000([120.0] * 99 + [480.0], 10.2)) is None


def test_kept_up_with_a_p99_over_the_target_runs_at_80_percent_of_the_drained_rate() -> None:
    run = run_at_1000([200.0] * 90 + [650.0] * 10, 10.2)
    assert run.kept_up
    assert sustainable_rate(run) == round(0.8 * 10_000 / 10.2)


def test_fell_behind_runs_at_80_percent_of_the_drained_rate() -> None:
    run = run_at_1000([2_000.0] * 100, 13.0)
    assert not run.kept_up
    assert sustainable_rate(run) == round(0.8 * 10_000 / 13.0)
