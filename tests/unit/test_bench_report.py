"""The bench's printed table says which rounds its medians came from: the projector and its
COPY baseline, the worker and the bare Faust pass-through."""

from __future__ import annotations

from bench.report import _rounds


def rounds(projector: list[float], copy: list[float]) -> dict[str, object]:
    return {
        "details": {
            "projector": {"rounds": [{"per_second": rate} for rate in projector]},
            "copy": {"rounds": [{"per_second": rate} for rate in copy]},
        }
    }


def test_each_round_of_the_projector_and_its_copy_baseline_is_shown_in_order() -> None:
    lines = _rounds(
        rounds([18_050.0, 20_564.0, 23_509.0], [45_623.0, 43_745.0, 47_966.0]),
        "projector",
        "copy",
        "projector / COPY",
    )

    assert lines == [
        "    rounds, projector / COPY (medians above): 18.1k / 45.6k, 20.6k / 43.7k, 23.5k / 48.0k"
    ]


def test_a_single_round_or_results_of_an_older_run_show_no_rounds_line() -> None:
    assert _rounds(rounds([18_050.0], [45_623.0]), "projector", "copy", "projector / COPY") == []
    older = {"details": {"projector": {"per_second": 1.0}, "worker": {"per_second": 1.0}}}
    assert _rounds(older, "projector", "copy", "projector / COPY") == []
    assert _rounds(older, "worker", "passthrough", "worker / pass-through") == []


def test_the_worker_and_pass_through_rounds_are_shown_in_the_order_they_ran() -> None:
    results = {
        "details": {
            "worker": {"rounds": [{"per_second": r} for r in (1_815.0, 1_685.0, 1_380.0)]},
            "passthrough": {"rounds": [{"per_second": r} for r in (4_014.0, 3_265.0, 3_933.0)]},
        }
    }

    assert _rounds(results, "worker", "passthrough", "worker / pass-through") == [
        "    rounds, worker / pass-through (medians above): 1.8k / 4.0k, 1.7k / 3.3k, 1.4k / 3.9k"
    ]
