"""A RealMem run's results as markdown and JSON in ``bench/results/``.

``recall_quality-realmem-<YYYY-MM-DD>-<short commit>.md`` (+ ``.json``: the same figures and
every needed memory point's outcome, for diagnosis): the date, the commit measured (marked
when the work tree has uncommitted changes), the machine, the command and what was run, then
the tables: overall and per persona.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.recall_quality.realmem_run import (
    PersonaOutcome,
    char_ratios,
    overall,
    summary,
)
from bench.recall_quality.report import to_json
from bench.recall_quality.scoring import (
    ANSWER_SHARE,
    BUDGETS,
    DERIVED_MAX_CHARS,
    EVIDENCE_KS,
    KEY_WORD_SHARE,
)
from bench.recall_quality.systems import RAW
from bench.report import RESULTS_DIR, machine, source_version

HALF, MOST = f"points_in_context@{KEY_WORD_SHARE}", f"points_in_context@{ANSWER_SHARE}"


def results(
    outcomes: Sequence[PersonaOutcome],
    profile: str,
    command: str,
    parameters: dict[str, Any],
    seconds: float,
) -> dict[str, Any]:
    now = datetime.now(UTC)
    personas = {}
    for outcome in outcomes:
        consolidated = outcome.systems[profile]
        personas[outcome.name] = {
            "corpus": outcome.corpus,
            RAW: summary(outcome.systems[RAW]["scores"]),
            profile: summary(consolidated["scores"]),
            "chars": consolidated["chars"],
            "chars_ratio": char_ratios(consolidated["chars"]),
            "memory_kinds": consolidated["memory_kinds"],
            "ticks": consolidated["ticks"],
            "rejections": consolidated["rejections"],
            "timing": {**outcome.timing, "tick_seconds": consolidated["tick_seconds"]},
        }
    total = overall(outcomes, profile)
    return {
        "benchmark": "recall_quality",
        "corpus": "realmem",
        "date": now.strftime("%Y-%m-%d"),
        "commit": source_version(),
        "command": command,
        "machine": machine(),
        "parameters": {
            **parameters,
            "profile": profile,
            "budget": BUDGETS[0],
            "evidence_ks": list(EVIDENCE_KS),
            "embedder": "minilm",
        },
        "seconds": round(seconds, 1),
        "overall": {**total, "chars_ratio": char_ratios(total["chars"])},
        "personas": personas,
        "points": [row for outcome in outcomes for row in outcome.points],
    }


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "n/a" if not a or b is None else f"{b / a:.2f}"


def render(data: dict[str, Any]) -> str:
    profile = data["parameters"]["profile"]
    rows = [("**all**", data["overall"])] + [
        (name, persona) for name, persona in data["personas"].items()
    ]
    lines = [
        f"# Recall quality on RealMem, {data['date']}",
        "",
        f"- commit: `{data['commit']}`",
        f"- command: `{data['command']}`",
        f"- machine: {data['machine']['cores']} cores, {data['machine']['cpu']}, "
        f"Python {data['machine']['python']}, load at start "
        f"{', '.join(str(x) for x in data['machine']['load_average_at_start'])}",
        f"- run: {', '.join(data['personas'])}; "
        + (
            f"first {data['parameters']['sessions']} sessions each"
            if data["parameters"].get("sessions")
            else "every session"
        )
        + f"; profile `{profile}` against `raw`; plain cosine; {data['seconds']:.0f} s",
        "",
        "Honest in time: each question ranks only what existed before it was asked (turns, "
        "and what the engine's cycles had written by then, with the worker's periodic ticks "
        "in event time). *Evidence @k*: the share of a question's needed memory points (those "
        "traced to a turn) whose turn is among the top k, or a memory of ≤ "
        f"{DERIVED_MAX_CHARS:,} characters derived from it holding ≥ half of the point's key "
        "words or every content word of the turn (kept whole, as the turn counts). "
        "*Points @2,000*: the share of needed memory points whose key words (≥ half; "
        "≥ 80 % in the second column) are in the 2,000-character context; *chance*: the same "
        "for another question's points. Means over questions.",
        "",
        f"| persona | questions | evidence @5 raw / `{profile}` | evidence @10 raw / "
        f"`{profile}` | points @2,000 raw / `{profile}` (ratio) | points @2,000, 80 % | "
        "chance raw / "
        f"`{profile}` |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, figures in rows:
        raw, cons = figures[RAW], figures[profile]
        lines.append(
            f"| {name} | {raw['questions']} ({raw['evidence_questions']} traced) | "
            f"{_f(raw['evidence_recall@5'])} / {_f(cons['evidence_recall@5'])} | "
            f"{_f(raw['evidence_recall@10'])} / {_f(cons['evidence_recall@10'])} | "
            f"{_f(raw[HALF])} / {_f(cons[HALF])} ({_ratio(raw[HALF], cons[HALF])}) | "
            f"{_f(raw[MOST])} / {_f(cons[MOST])} | "
            f"{_f(raw[f'chance@{KEY_WORD_SHARE}'])} / {_f(cons[f'chance@{KEY_WORD_SHARE}'])} |"
        )
    lines += [
        "",
        f"Active memory of `{profile}` after the last session (and a day of ticks) against "
        "the transcript (`Name: text` per turn), by the side it comes from (a derived memory "
        "by its source turns; *both*: from turns of both sides):",
        "",
        "| persona | transcript user / assistant / total | active user / assistant / both "
        "/ other | user side | assistant side | total |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, figures in rows:
        chars, ratio = figures["chars"], figures["chars_ratio"]
        t = chars["transcript"]
        lines.append(
            f"| {name} | {t['user']:,} / {t['assistant']:,} / {t['total']:,} | "
            f"{chars['user']:,} / {chars['assistant']:,} / {chars['both']:,} / "
            f"{chars['neither']:,} | {ratio['user']:.2f} | {ratio['assistant']:.2f} | "
            f"**{ratio['total']:.2f}** |"
        )
    lines += ["", *_diagnosis(data["points"], profile), ""]
    lines += ["Per persona, the engine's run:", ""]
    for name, persona in data["personas"].items():
        c, timing = persona["corpus"], persona["timing"]
        lines.append(
            f"- {name}: {c['sessions']} sessions over {c['days']} days ({c['first_day']} to "
            f"{c['last_day']}), {c['turns']} turns, {c['questions']} questions needing "
            f"{c['points']} points ({c['traced_points']} traced to a turn); "
            f"{persona['ticks']} ticks, {persona['rejections']} rejections; replay "
            f"{timing['replay_seconds']:.0f} s (ticks {timing['tick_seconds']:.0f} s); "
            f"active memories: " + ", ".join(f"{k} {v}" for k, v in persona["memory_kinds"].items())
        )
    return "\n".join(lines) + "\n"


def _diagnosis(points: list[dict[str, Any]], profile: str) -> list[str]:
    """Evidence @5 by the side a point came from, and where the points stood at their
    question's time (whatever the ranking)."""
    lines = [
        f"Needed memory points by the side of their source turn: found in the top 5 (raw / "
        f"`{profile}`), and where each stood in `{profile}`'s active memory when asked: "
        "*turn* (a source turn itself still active), *kept* (a derived memory keeps half the "
        "point's words or its whole turn), *lost* (derived memories active, none keeps "
        "either), *gone* (nothing "
        "active from its turns). *turn holds*: the mean share of the point's words its own "
        "turn holds.",
        "",
        f"| side | points | found @5 raw / `{profile}` | turn | kept | lost | gone | turn holds |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    sides = sorted({p["side"] for p in points if p["reach"] != "untraced"})
    for side in sides:
        group = [p for p in points if p["side"] == side and p["reach"] != "untraced"]
        reach = Counter(p["reach"] for p in group)
        raw = sum(bool(p[f"{RAW}_found@5"]) for p in group) / len(group)
        cons = sum(bool(p[f"{profile}_found@5"]) for p in group) / len(group)
        holds = sum(p["turn_holds"] for p in group) / len(group)
        lines.append(
            f"| {side} | {len(group)} | {raw:.2f} / {cons:.2f} | {reach['turn']} | "
            f"{reach['kept']} | {reach['lost']} | {reach['gone']} | {holds:.2f} |"
        )
    untraced = sum(1 for p in points if p["reach"] == "untraced")
    lines.append("")
    lines.append(f"{untraced} points have no single source turn (RealMem's schedule items).")
    return lines


def save(data: dict[str, Any], markdown: str, directory: Path = RESULTS_DIR) -> Path:
    commit = data["commit"].split()[0]
    stem = f"recall_quality-realmem-{data['date']}-{commit}"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem}.md"
    path.write_text(markdown)
    (directory / f"{stem}.json").write_text(to_json(data))
    return path
