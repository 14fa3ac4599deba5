"""bench.recall_latency writes what it printed, dated and with its commit, as the other
benchmarks do (docs/benchmarks.md cites the files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.recall_latency import row_line, save_results

ROW = {"memories": 50_000, "ranking": "hybrid", "p50_ms": 56.7, "p99_ms": 73.04, "queries": 100}


def _results(vector_index: str, commit: str = "54b9057") -> dict[str, Any]:
    return {
        "benchmark": "recall_latency",
        "date": "2026-11-29",
        "commit": commit,
        "command": "python -m bench.recall_latency --server-url x --sizes 50000",
        "machine": {
            "cores": 2,
            "cpu": "AMD EPYC",
            "python": "3.11.7",
            "load_average_at_start": [1.0],
        },
        "parameters": {"dim": 384, "vector_index": vector_index, "k": 5},
        "rows": [ROW],
        "ingest": None,
    }


def test_the_printed_lines_and_the_rows_are_saved_under_the_date_and_commit(tmp_path: Path) -> None:
    line = row_line(ROW, "none")
    assert (
        line == " 50,000 memories  hybrid  none  p50    56.7 ms  p99    73.0 ms  (100 queries, k=5)"
    )

    written = save_results(_results("none"), [line], tmp_path)

    assert written == tmp_path / "recall_latency-2026-11-29-54b9057.md"
    report = written.read_text()
    assert report.startswith("# Recall latency: 2026-11-29, commit 54b9057\n")
    assert "`python -m bench.recall_latency --server-url x --sizes 50000`" in report
    assert f"```\n{line}\n```" in report
    saved = json.loads((tmp_path / "recall_latency-2026-11-29-54b9057.json").read_text())
    assert saved["rows"] == [ROW]


def test_an_index_run_and_a_dirty_tree_are_told_apart_by_the_name(tmp_path: Path) -> None:
    results = _results("hnsw", "54b9057 + uncommitted changes")

    written = save_results(results, [row_line(ROW, "hnsw")], tmp_path)

    assert written.name == "recall_latency-hnsw-2026-11-29-54b9057.md"
    assert "commit 54b9057 + uncommitted changes" in written.read_text()
