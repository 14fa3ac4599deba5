"""The benchmark's results: one JSON-ready dict, printed as a table and saved to results/.

``bench/results/latest.json`` is overwritten by every run (the directory ignores ``*.json``
in git: results belong to a machine, not to the repository).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).parent / "results"
TARGET_WORKER_RATIO = 0.7
TARGET_PROJECTOR_RATIO = 0.5
TARGET_P99_MS = 500.0


def machine() -> dict[str, Any]:
    return {
        "cores": os.cpu_count(),
        "cpu": _cpu_model(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def source_version() -> str:
    """The commit measured, marked when the work tree has uncommitted changes."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head} + uncommitted changes" if dirty else head


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _verdict(ok: bool) -> str:
    return "ok" if ok else "BELOW TARGET"


def _projector_label(parameters: dict[str, Any]) -> str:
    return _label("projector (memstream project", parameters.get("projector_processes"))


def _worker_label(parameters: dict[str, Any]) -> str:
    processes = parameters.get("worker_processes")
    if processes is None:
        return "worker (memstream worker, exactly_once)"
    return _label("worker (memstream worker", processes)


def _passthrough_label(parameters: dict[str, Any]) -> str:
    return _label("bare Faust pass-through agent (", parameters.get("worker_processes"))


def _label(opening: str, processes: int | None) -> str:
    """``opening`` closed with the phase's process count. Older results, from before the
    phase ran several processes, have none, and say none."""
    if processes is None:
        return f"{opening})".replace(" ()", "")
    separator = "" if opening.endswith("(") else ", "
    return f"{opening}{separator}{processes} process{'es' if processes > 1 else ''})"


def render(results: dict[str, Any]) -> str:
    """The human table of ``results`` (see :func:`bench.run.run_bench` for the keys)."""
    m, p = results["machine"], results["parameters"]
    rates, ratios = results["rates"], results["ratios"]
    lines = [
        "",
        f"memstream bench — {p['events']} events, {p['users']} users, {p['partitions']} "
        f"partitions; {m['cores']} cores ({m['cpu']})",
        f"  commit interval {p['commit_interval_seconds']} s, projector batch "
        f"{p['projector_batch_size']} rows / {p['projector_batch_ms']} ms, embedding dim "
        f"{p['embedding_dim']}, load at start {m['load_average_at_start']}",
        "",
        f"  {'measurement':<44}{'value':>16}",
        f"  {'-' * 60}",
        f"  {_worker_label(p):<44}{rates['worker']:>11,.0f} ev/s",
        f"  {_passthrough_label(p):<44}{rates['passthrough']:>11,.0f} ev/s",
        *_rounds(results, "worker", "passthrough", "worker / pass-through"),
        f"  {'  ratio worker / pass-through':<44}{ratios['worker_vs_passthrough']:>16.2f}"
        f"   target ≥ {TARGET_WORKER_RATIO}: "
        f"{_verdict(ratios['worker_vs_passthrough'] >= TARGET_WORKER_RATIO)}",
        *_without_cycles(results),
        f"  {_projector_label(p):<44}{rates['projector']:>11,.0f} ev/s",
        *_write_only(results),
        f"  {'raw binary COPY of the rows it writes':<44}{rates['copy']:>11,.0f} ev/s",
        *_rounds(results, "projector", "copy", "projector / COPY"),
        f"  {'  ratio projector / COPY':<44}{ratios['projector_vs_copy']:>16.2f}"
        f"   target ≥ {TARGET_PROJECTOR_RATIO}: "
        f"{_verdict(ratios['projector_vs_copy'] >= TARGET_PROJECTOR_RATIO)}",
        f"  {'-' * 60}",
        *_latency_lines(results),
        *_overload_warning(results),
        *_recall_lines(results),
        *_engine_cost_lines(results),
        "",
    ]
    return "\n".join(lines)


def _latency_lines(results: dict[str, Any]) -> list[str]:
    """One block per latency run (200 ev/s, the target, and 80 % of the sustainable rate
    when the pipeline did not hold the target rate within the p99 target)."""
    lines = []
    for lat in results.get("latency_runs") or [results["latency"]]:
        drained = lat.get("drained_rate")
        behind = (
            f"; fell behind: drained {drained:.0f} ev/s, the sustainable rate"
            if drained is not None and not lat.get("kept_up", True)
            else ""
        )
        lines += [
            f"  end-to-end latency publish → write applied to the read models, "
            f"{lat['target_rate']:.0f} ev/s for {lat['seconds']:.0f} s "
            f"(achieved {lat['achieved_rate']:.0f} ev/s, {lat['events']} events{behind}):",
            f"  {'  p50 / p95 / p99':<44}"
            f"{lat['p50_ms']:>5.0f} /{lat['p95_ms']:>5.0f} /{lat['p99_ms']:>5.0f} ms"
            f"   target p99 < {TARGET_P99_MS:.0f} ms: {_verdict(lat['p99_ms'] < TARGET_P99_MS)}",
            f"  {'  mean / max':<44}{lat['mean_ms']:>12.0f} /{lat['max_ms']:>5.0f} ms",
        ]
        if lat.get("split"):
            lines += [
                f"  {'  p50 / p99 to the ledger (worker wrote it)':<44}"
                f"{lat['to_ledger_p50_ms']:>12.0f} /{lat['to_ledger_p99_ms']:>5.0f} ms",
                f"  {'  p50 / p99 after it (commit, projector)':<44}"
                f"{lat['after_ledger_p50_ms']:>12.0f} /{lat['after_ledger_p99_ms']:>5.0f} ms",
                f"  {'  slowest 1 %: share of their time after it':<44}"
                f"{lat['slowest_after_ledger_share']:>19.0%}",
            ]
    return lines


def _recall_lines(results: dict[str, Any]) -> list[str]:
    lines = [f"  {'-' * 60}", "  recall (MemoryReader.recall, k=5) per user size:"]
    for row in results.get("recall") or []:
        lines.append(
            f"  {'  ' + format(row['memories'], ',') + ' memories: p50 / p99':<44}"
            f"{row['p50_ms']:>9.1f} /{row['p99_ms']:>6.1f} ms"
        )
    return lines if results.get("recall") else []


def _engine_cost_lines(results: dict[str, Any]) -> list[str]:
    """The engine's CPU per input on real conversations beside the synthetic workload."""
    found = results.get("engine_cost")
    if not found:
        return []
    lines = [
        f"  {'-' * 60}",
        "  engine cost per input, in process (python -m bench.engine_cost), MiniLM:",
    ]
    for name, label in (("synthetic", "synthetic workload"), ("realmem", "RealMem")):
        row = found[name]
        lines.append(
            f"    {label:<20} engine {row['engine_ms_per_input']:.2f} ms CPU "
            f"(writers {row['writers_ms_per_input']:.2f}, contradictions "
            f"{row['contradictions_ms_per_input']:.2f}), embedder "
            f"{row['embed_ms_per_input']:.2f} ms ({100 * row['embed_share']:.0f} %), "
            f"{row['inputs_per_second']:,.0f} inputs/s per process"
        )
    return lines


def _rounds(results: dict[str, Any], first: str, second: str, label: str) -> list[str]:
    """Each round's rates of a measurement and its baseline (``details[first]`` and
    ``details[second]``), when they were measured in several rounds (the rates above are
    their medians)."""
    details = results.get("details", {})
    ours = [r["per_second"] for r in details.get(first, {}).get("rounds", [])]
    theirs = [r["per_second"] for r in details.get(second, {}).get("rounds", [])]
    if len(ours) < 2:
        return []
    pairs = ", ".join(
        f"{a / 1000:.1f}k / {b / 1000:.1f}k" for a, b in zip(ours, theirs, strict=True)
    )
    return [f"    rounds, {label} (medians above): {pairs}"]


def _without_cycles(results: dict[str, Any]) -> list[str]:
    """The diagnostic worker rate without on-write cycles (absent from older results)."""
    rate = results["rates"].get("worker_without_cycles")
    if rate is None:
        return []
    ratio = results["ratios"]["worker_without_cycles_vs_passthrough"]
    return [
        f"  {'worker, same memories, no on-write cycle':<44}{rate:>11,.0f} ev/s",
        *_rounds(results, "worker_without_cycles", "passthrough", "no cycle / pass-through"),
        f"  {'  ratio to pass-through (diagnostic)':<44}{ratio:>16.2f}"
        "   no target: splits the gap above",
    ]


def _write_only(results: dict[str, Any]) -> list[str]:
    rate = results.get("details", {}).get("projector", {}).get("rows_per_s_in_write_transactions")
    if not rate:
        return []
    return [f"  {'  (time inside its write transactions only)':<44}{rate:>11,.0f} ev/s"]


def _overload_warning(results: dict[str, Any]) -> list[str]:
    rate = results["latency"]["target_rate"]
    rates = results["rates"]
    slowest = min(("worker", rates["worker"]), ("projector", rates["projector"]), key=_second)
    if rate <= slowest[1]:
        return []
    return [
        f"  note: the input rate ({rate:.0f} ev/s) exceeds the measured {slowest[0]} "
        f"throughput ({slowest[1]:.0f}/s),",
        "  so these latencies are mostly queueing; `python -m bench --rate R` with R below it "
        "measures the pipeline itself.",
    ]


def _second(pair: tuple[str, float]) -> float:
    return pair[1]


def save(results: dict[str, Any], path: Path | None = None) -> Path:
    path = path or RESULTS_DIR / "latest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2, default=str) + "\n")
    return path


def save_dated(
    results: dict[str, Any], table: str, source: str, results_dir: Path = RESULTS_DIR
) -> Path:
    """``memstream bench``'s run as ``<date>-pipeline-<commit>.{json,md}`` beside
    ``latest.json``, which the next run overwrites: the dated pair is what docs/benchmarks.md
    cites (the .md is the printed report, headed by what was measured). Returns the .md."""
    date = datetime.now(UTC).date().isoformat()
    header = f"# memstream bench, {date}, at `{source}`\n\n"
    report = header + "```\n" + table.rstrip("\n") + "\n```\n"
    return _save_pair(results_dir / f"{date}-pipeline-{_commit(source)}", results, report)


def _commit(source: str) -> str:
    """The commit of a source version ("abc1234 + uncommitted changes" → abc1234)."""
    return source.split()[0]


def save_named(
    name: str, results: dict[str, Any], report: str, results_dir: Path = RESULTS_DIR
) -> Path:
    """A bench's ``results`` (with their ``date`` and ``commit``) and ``report`` as
    ``<name>-<date>-<commit>.{json,md}``; returns the .md."""
    stem = results_dir / f"{name}-{results['date']}-{_commit(str(results['commit']))}"
    return _save_pair(stem, results, report)


def _save_pair(stem: Path, results: dict[str, Any], report: str) -> Path:
    """``results`` as ``<stem>.json`` and ``report`` as ``<stem>.md``; returns the .md."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    (stem.parent / f"{stem.name}.json").write_text(
        json.dumps(results, indent=2, default=str) + "\n"
    )
    markdown = stem.parent / f"{stem.name}.md"
    markdown.write_text(report)
    return markdown


def ratio_bench_main(
    argv: Sequence[str] | None,
    name: str,
    description: str | None,
    run: Callable[[int, int, int, bool, str], dict[str, Any]],
    render_table: Callable[[dict[str, Any]], str],
    *,
    events: int = 10_000,
    rounds: int = 1,
) -> int:
    """The command line of a bench that compares two setups' throughput ratios in one run
    (``bench.wire_formats``, ``bench.sealing_cost``): run it, print its table, and record it
    as ``bench/results/<name>-<date>-<commit>.{json,md}``. ``events`` and ``rounds``: the
    defaults of ``--events`` and ``--rounds``."""
    parser = argparse.ArgumentParser(prog=f"python -m bench.{name}", description=description)
    parser.add_argument("--events", type=int, default=events)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--date", default=datetime.now(UTC).date().isoformat())
    args = parser.parse_args(argv)
    if args.events < 1 or args.users < 1 or args.rounds < 1:
        print("error: --events, --users and --rounds must be positive", file=sys.stderr)
        return 2
    results = run(args.events, args.users, args.rounds, args.keep, args.date)
    table = render_table(results)
    print(table)
    written = save_named(name, results, table)
    print(f"results written to {written.with_suffix('.json')} and .md")
    return 0
