"""The bench's printed table says which rounds its projector and COPY medians came from."""

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
    lines = _rounds(rounds([18_050.0, 20_564.0, 23_509.0], [45_623.0, 43_745.0, 47_966.0]))

    assert lines == [
        "    rounds, projector / COPY (medians above): 18.1k / 45.6k, 20.6k / 43.7k, 23.5k / 48.0k"
    ]


def test_a_single_round_or_results_of_an_older_run_show_no_rounds_line() -> None:
    assert _rounds(rounds([18_050.0], [45_623.0])) == []
    assert _rounds({"details": {"projector": {"per_second": 1.0}}}) == []
