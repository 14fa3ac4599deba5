"""The bench's printed table says which rounds its medians came from (the projector and its
COPY baseline, the worker and the bare Faust pass-through) and how many processes ran the
projector; a pipeline run is kept as a dated pair."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bench.report import (
    _passthrough_label,
    _projector_label,
    _rounds,
    _without_cycles,
    _worker_label,
    save_dated,
)
from bench.run import default_processes


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


def test_the_worker_without_cycles_is_shown_beside_the_pass_through_it_is_divided_by() -> None:
    results = {
        "rates": {"worker_without_cycles": 2_834.0},
        "ratios": {"worker_without_cycles_vs_passthrough": 2_834.0 / 2_764.0},
        "details": {
            "worker_without_cycles": {"rounds": [{"per_second": r} for r in (2_834.0, 2_799.0)]},
            "passthrough": {"rounds": [{"per_second": r} for r in (2_764.0, 2_750.0)]},
        },
    }

    lines = _without_cycles(results)

    assert lines[0].startswith("  worker, same memories, no on-write cycle")
    assert lines[0].split()[-2:] == ["2,834", "ev/s"]
    assert lines[1] == (
        "    rounds, no cycle / pass-through (medians above): 2.8k / 2.8k, 2.8k / 2.8k"
    )
    assert lines[2].split()[:6] == ["ratio", "to", "pass-through", "(diagnostic)", "1.03", "no"]


def test_results_of_a_run_without_the_diagnostic_show_no_line_for_it() -> None:
    assert _without_cycles({"rates": {"worker": 1.0}, "ratios": {}}) == []


def test_the_projector_line_says_how_many_processes_ran_it_and_older_results_say_none() -> None:
    assert _projector_label({"projector_processes": 2}) == (
        "projector (memstream project, 2 processes)"
    )
    assert _projector_label({"projector_processes": 1}) == (
        "projector (memstream project, 1 process)"
    )
    assert _projector_label({"events": 20_000}) == "projector (memstream project)"


def test_the_worker_and_pass_through_lines_say_how_many_processes_ran_each() -> None:
    assert _worker_label({"worker_processes": 2}) == "worker (memstream worker, 2 processes)"
    assert _passthrough_label({"worker_processes": 2}) == (
        "bare Faust pass-through agent (2 processes)"
    )
    assert (
        _passthrough_label({"worker_processes": 1}) == "bare Faust pass-through agent (1 process)"
    )
    assert _worker_label({}) == "worker (memstream worker, exactly_once)"
    assert _passthrough_label({}) == "bare Faust pass-through agent"


def test_the_throughput_phases_run_a_process_per_core_but_never_more_than_partitions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert default_processes(12) == 2
    assert default_processes(1) == 1
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert default_processes(12) == 1


def test_a_pipeline_run_is_kept_as_a_dated_pair_named_by_its_commit(tmp_path: Path) -> None:
    results = {"rates": {"worker": 2619.0}, "run": {"source": "fc1cb8a + uncommitted changes"}}
    markdown = save_dated(
        results, "  worker  2,619 ev/s\n", "fc1cb8a + uncommitted changes", tmp_path
    )
    assert markdown.name.endswith("-pipeline-fc1cb8a.md")
    assert markdown.read_text().startswith("# memstream bench, ")
    assert "at `fc1cb8a + uncommitted changes`" in markdown.read_text()
    assert "  worker  2,619 ev/s\n```\n" in markdown.read_text()
    saved = json.loads(markdown.with_suffix(".json").read_text())
    assert saved == results


def test_the_sealing_cost_shows_each_round_s_memory_over_plain_in_order() -> None:
    from bench.sealing_cost import round_ratios

    rounds = {
        "plain": [
            {"worker": 2_000.0, "projector": 20_000.0},
            {"worker": 2_500.0, "projector": 24_000.0},
        ],
        "user": [
            {"worker": 1_900.0, "projector": 18_000.0},
            {"worker": 2_300.0, "projector": 20_000.0},
        ],
        "memory": [
            {"worker": 1_600.0, "projector": 15_000.0},
            {"worker": 1_750.0, "projector": 13_200.0},
        ],
    }
    assert round_ratios(rounds) == [
        "",
        "Memory keys / plain in each round, in the order run: worker 0.80, 0.70; "
        "projector 0.75, 0.55.",
    ]
    assert round_ratios({"plain": rounds["plain"][:1], "memory": rounds["memory"][:1]}) == []
    assert round_ratios({}) == []


@pytest.mark.parametrize(
    ("bench", "events", "rounds"),
    [("bench.sealing_cost", 60_000, 4), ("bench.wire_formats", 10_000, 1)],
)
def test_a_ratio_bench_runs_its_own_default_size_unless_told(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, bench: str, events: int, rounds: int
) -> None:
    """The sealing bench's phases must last long enough to measure more than noise (its
    module doc), so it runs more events than the wire-format bench by default."""
    import importlib

    from bench import report

    module = importlib.import_module(bench)
    asked: list[tuple[int, int, int]] = []

    def run(events: int, users: int, rounds: int, keep: bool, date: str) -> dict[str, object]:
        asked.append((events, users, rounds))
        return {}

    monkeypatch.setattr(module, "run", run)
    monkeypatch.setattr(module, "render", lambda results: "table\n")
    monkeypatch.setattr(report, "save_named", lambda name, results, table: tmp_path / "r.md")

    assert module.main([]) == 0
    assert module.main(["--events", "500", "--rounds", "2"]) == 0
    assert asked == [(events, 50, rounds), (500, 50, 2)]
