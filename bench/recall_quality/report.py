"""The run's results as markdown and JSON in ``bench/results/``.

``recall_quality-<YYYY-MM-DD>-<short commit>.md`` (+ ``.json``, the same figures and every
question's scores): the date, the commit measured (marked when the work tree has uncommitted
changes), the machine and the command, then the tables. The targets are those of issue 30
("Done when" 1), checked for ``default`` with plain cosine.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.recall_quality.corpus import QUESTION_KINDS
from bench.recall_quality.scoring import BUDGETS, EVIDENCE_KS
from bench.recall_quality.systems import RAW
from bench.report import RESULTS_DIR, machine, source_version

TARGET_ANSWER_RATIO = 1.3  # default's answer in context @2,000 against raw retrieval's
TARGET_TEMPORAL = 0.6
TARGET_EVIDENCE_AT_5 = 0.6
TARGET_CHARS_RATIO = 1 / 3
HEADLINE = (
    f"answer_in_context@{BUDGETS[0]}",
    f"answer_in_context@{BUDGETS[-1]}",
    f"evidence_recall@{EVIDENCE_KS[0]}",
    f"evidence_recall@{EVIDENCE_KS[-1]}",
)
CHANCE = (f"chance@{BUDGETS[0]}", f"chance@{BUDGETS[-1]}")


def results(outcome: Any, options: Any, command: str, embedder_threads: int) -> dict[str, Any]:
    now = datetime.now(UTC)
    return {
        "benchmark": "recall_quality",
        "date": now.strftime("%Y-%m-%d"),
        "commit": source_version(),
        "command": command,
        "machine": machine(),
        "parameters": {
            "conversations": options.conversations,
            "seed": options.seed,
            "style": options.style,
            "profiles": list(options.profiles),
            "rankings": list(options.rankings),
            "budgets": list(BUDGETS),
            "evidence_ks": list(EVIDENCE_KS),
            "embedder": "minilm",
            "embedder_threads": embedder_threads,
        },
        "corpus": outcome.corpus,
        "recall_ranking": outcome.recall_note,
        "timing": outcome.timing,
        "systems": outcome.systems,
        "targets": targets(outcome.systems),
        "question_ids": outcome.question_ids,
    }


def targets(systems: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Issue 30, "Done when" 1, for ``default`` with plain cosine (when both were run)."""
    default, raw = systems.get("default"), systems.get(RAW)
    if not default or not raw or "cosine" not in default.get("rankings", {}):
        return []
    cosine = default["rankings"]["cosine"]
    raw_answer = raw["rankings"]["cosine"]["overall"][HEADLINE[0]]
    answer = cosine["overall"][HEADLINE[0]]
    temporal = cosine["by_question_kind"].get("temporal", {}).get(HEADLINE[0], 0.0)
    evidence = cosine["overall"][HEADLINE[2]]
    ratio = default["chars_ratio"]
    return [
        _target(
            f"answer in context @{BUDGETS[0]:,} ≥ {TARGET_ANSWER_RATIO}× raw's "
            f"({TARGET_ANSWER_RATIO * raw_answer:.2f})",
            answer,
            answer >= TARGET_ANSWER_RATIO * raw_answer,
        ),
        _target(
            f"temporal answer in context @{BUDGETS[0]:,} ≥ {TARGET_TEMPORAL}",
            temporal,
            temporal >= TARGET_TEMPORAL,
        ),
        _target(
            f"evidence recall @{EVIDENCE_KS[0]} ≥ {TARGET_EVIDENCE_AT_5}",
            evidence,
            evidence >= TARGET_EVIDENCE_AT_5,
        ),
        _target("active characters ≤ 1/3 of the transcript's", ratio, ratio <= TARGET_CHARS_RATIO),
        *_recall_better(default),
    ]


def _recall_better(default: dict[str, Any]) -> list[dict[str, Any]]:
    """ "With the project's recall ranking, better still": recall answers at least as often."""
    rankings = default["rankings"]
    if "recall" not in rankings:
        return []
    cosine = rankings["cosine"]["overall"][HEADLINE[0]]
    recall = rankings["recall"]["overall"][HEADLINE[0]]
    return [
        _target(
            f"with recall's ranking, answer in context @{BUDGETS[0]:,} ≥ plain cosine's "
            f"({cosine:.2f})",
            recall,
            recall >= cosine,
        )
    ]


def _target(what: str, value: float, met: bool) -> dict[str, Any]:
    return {"target": what, "value": value, "met": met}


def render(data: dict[str, Any]) -> str:
    corpus, params, box = data["corpus"], data["parameters"], data["machine"]
    commit = data["commit"]
    lines = [
        "# Recall quality: consolidated memory against the raw transcript",
        "",
        f"Run on {data['date']} at commit `{commit}`, Python {box['python']}, "
        f"{box['cores']} cores ({box['cpu']}), load average at start "
        f"{', '.join(str(x) for x in box['load_average_at_start'])}, with "
        f"`{data['command']}` ({data['timing'].get('total_seconds', '?')} s; embedding "
        f"{data['timing'].get('embedding_seconds', '?')} s for "
        f"{data['timing'].get('texts_embedded', '?')} texts not cached).",
        "",
        f"**Corpus** (generated, seed {corpus['seed']}, style `{params['style']}`): "
        f"{corpus['conversations']} conversations, {corpus['sessions']} sessions, "
        f"{corpus['turns']:,} turns of {corpus['mean_turn_chars']:.0f} characters on average "
        f"({corpus['transcript_chars']:,} characters as `Name: text`); "
        f"{corpus['phatic_sentence_share']:.0%} of sentences and "
        f"{corpus['phatic_turn_share']:.0%} of turns phatic; relative dates in "
        f"{corpus['relative_date_share_of_fact_turns']:.0%} of the {corpus['fact_turns']:,} "
        f"fact turns. {corpus['questions']} questions: "
        + ", ".join(
            f"{n} {kind.replace('_', '-')}" for kind, n in corpus["questions_by_kind"].items()
        )
        + ".",
        "",
        "Columns: active memories (those with an embedding, which recall can return), their "
        "characters and the ratio to the transcript's, the consolidation's cost per input "
        "(the batch oracle's replay, wall clock, cycles included), answer in context at "
        f"{BUDGETS[0]:,} and {BUDGETS[-1]:,} characters, evidence recall at "
        f"{EVIDENCE_KS[0]} and {EVIDENCE_KS[-1]}, the chance level of answer in context (the "
        "same contexts against a decoy: another question's gold answer of the same kind and "
        "conversation), and for update questions how often the stale value comes first.",
    ]
    for ranking, title in (
        ("cosine", "Plain cosine over the active memories (consolidation alone)"),
        ("recall", "The project's recall ranking (`MemoryReader.recall`, PostgreSQL)"),
    ):
        lines += ["", f"## {title}", ""]
        ran = [n for n, s in data["systems"].items() if ranking in s.get("rankings", {})]
        if not ran:
            lines.append(
                f"Not run: {data['recall_ranking']}." if ranking == "recall" else "Not run."
            )
            continue
        lines += _overall_table(data["systems"], ran, ranking)
        lines += [
            "",
            f"Per question kind: answer in context @{BUDGETS[0]:,} / "
            f"@{BUDGETS[-1]:,} / evidence recall @{EVIDENCE_KS[0]}.",
            "",
        ]
        lines += _kind_table(data["systems"], ran, ranking)
        lines += [
            "",
            f"Chance per question kind: a decoy answer in context @{BUDGETS[0]:,} / "
            f"@{BUDGETS[-1]:,}.",
            "",
        ]
        lines += _kind_table(data["systems"], ran, ranking, CHANCE)
    if data["targets"]:
        lines += ["", '## Issue 30, "Done when" 1: `default` with plain cosine', ""]
        for t in data["targets"]:
            mark = "met" if t["met"] else "**not met**"
            lines.append(f"- {t['target']}: {t['value']:.2f} — {mark}")
    lines += ["", "## Active memories by layer/kind, and the replay's cost", ""]
    for name, s in data["systems"].items():
        kinds = ", ".join(f"{k} {n}" for k, n in s["memory_kinds"].items())
        cost = ""
        if s["replay_seconds"] is not None:
            cost = (
                f"; replay of {s['inputs']:,} inputs {s['replay_seconds']:.1f} s, "
                f"{s['cycle_cpu_us_per_input']:,.0f} µs of CPU per input"
            )
        lines.append(
            f"- `{name}`: {kinds} (longest {s['longest_memory_chars']:,} characters){cost}"
        )
    lines += ["", _METHOD]
    return "\n".join(lines) + "\n"


def _overall_table(systems: dict[str, Any], names: list[str], ranking: str) -> list[str]:
    rows = [
        "| system | active | with embedding | characters | ratio | µs/input (wall) | "
        f"answer @{BUDGETS[0]:,} | answer @{BUDGETS[-1]:,} | evidence @{EVIDENCE_KS[0]} | "
        f"evidence @{EVIDENCE_KS[-1]} | chance @{BUDGETS[0]:,} / @{BUDGETS[-1]:,} | "
        "stale first |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in names:
        s = systems[name]
        r = s["rankings"][ranking]
        figures = " | ".join(f"{r['overall'][h]:.2f}" for h in HEADLINE)
        figures += " | " + " / ".join(f"{r['overall'][h]:.2f}" for h in CHANCE)
        stale = "—" if r["stale_first"] is None else f"{r['stale_first']:.2f}"
        us = "—" if s["cycle_us_per_input"] is None else f"{s['cycle_us_per_input']:,.0f}"
        rows.append(
            f"| `{name}` | {s['active_memories']:,} | {s['retrievable']:,} | "
            f"{s['active_chars']:,} | {s['chars_ratio']:.2f} | {us} | {figures} | {stale} |"
        )
    return rows


def _kind_table(
    systems: dict[str, Any], names: list[str], ranking: str, columns: tuple[str, ...] = HEADLINE[:3]
) -> list[str]:
    kinds = list(QUESTION_KINDS)
    rows = [
        "| system | " + " | ".join(k.replace("_", "-") for k in kinds) + " |",
        "|---|" + "---:|" * len(kinds),
    ]
    for name in names:
        by_kind = systems[name]["rankings"][ranking]["by_question_kind"]
        cells = []
        for kind in kinds:
            f = by_kind.get(kind)
            cells.append("—" if f is None else " / ".join(f"{f[c]:.2f}" for c in columns))
        rows.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return rows


_METHOD = """## How it is measured

`bench/recall_quality/`: the corpus (`corpus.py`, `phrases.py`, `when.py`) is planned as
records (who, what, value, the day it was said, the absolute date a relative expression
means) and only then put into words; questions and gold answers come from the records, and no
module imports the engine's text or judge functions. Each turn is a `MemoryWritten` (memory
id = turn id, `speaker` = the speaker's name, `created_by="user"`, its session and
conversation, its MiniLM embedding); each session ends with `SessionEnded`, each conversation
with one manual `ConsolidationRequested` (`feed.py`). The profiles replay that input through
the batch oracle (`EngineConfig.embed` = MiniLM with one thread, as the worker's), timed;
`raw` keeps every turn as `Name: text`.
Scoring (`scoring.py`): answer in context = the context (memories in rank order up to the
budget, the last cut) holds ≥ 80 % of the gold answer's content words; evidence recall @k =
share of the evidence turns carried by the top k (the turn itself, or a memory of ≤ 1,500
characters derived from it, through metadata `derived_from`, `parents`, `source_episode_ids`,
`evidence_ids`, `evidence`, `pattern_of`, ... or the ledger's `derived_from` / `supersedes` /
`summarized_into` links, that keeps ≥ half of the turn's key words). Recall's salience
weighting reads the database's clock, so the recall ranking of 2023 memories depends a little
on the day it is run."""


def save(data: dict[str, Any], markdown: str, directory: Path = RESULTS_DIR) -> Path:
    commit = data["commit"].split()[0]
    stem = f"recall_quality-{data['date']}-{commit}"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem}.md"
    path.write_text(markdown)
    (directory / f"{stem}.json").write_text(to_json(data))
    return path


_NUMBER_LIST = re.compile(r"\[\s+((?:-?[0-9.]+,\s+)*-?[0-9.]+)\s+\]")


def to_json(data: dict[str, Any]) -> str:
    """Indented JSON with each list of numbers on one line (the per-question figures)."""
    text = json.dumps(data, indent=1)
    return _NUMBER_LIST.sub(lambda m: "[" + re.sub(r"\s+", " ", m[1]) + "]", text) + "\n"
