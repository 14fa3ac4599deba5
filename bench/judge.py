"""``python -m bench.judge``: the built-in contradiction judge scored on labelled memory pairs.

The pairs live in ``bench/judge_data/{dev,heldout,heldout_updates,realmem}.jsonl`` (fields
``first``, ``second``, ``label`` in {"contradiction", "compatible"}, ``class``). ``dev`` is the
split the judge's rules were tuned on; ``heldout`` and ``heldout_updates`` (updates as people
state them, and compatible pairs that look like updates) were each written before the round
that tuned for them and kept out of tuning, so their figures are the honest estimate of how
the judge does on pairs written by other people. ``realmem``: every pair of claims the judge
found contradictory (above the default 0.7) while the engine consolidated the five RealMem
personas at ``2833b88``, labelled by hand: real chat, not written for the judge, and tuned on
since (its figures are a development estimate, like ``dev``'s).

For every class and overall it prints precision and recall of the "contradiction" label (a
class with no contradictions shows only its false alarms), how many of the pairs the judge
calls contradictory share an ``attribute_keys`` blocking key (all of them, and those with
conflicting values), then the mean wall-clock time per judged pair. Timing lives here, not in
the tests, because the engine itself never reads a clock. The judge memoises statements and
verdicts, so each timing round first empties those two memos: the figure is the cost of a pair
of statements the judge has not read before (the word-level memos stay warm, as they do in a
running worker).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from streams.engine.judge import attribute_keys, judge_contradiction
from streams.engine.judge.parse import parse

DATA_DIR = Path(__file__).parent / "judge_data"
SPLITS = ("dev", "heldout", "heldout_updates", "realmem")
CONTRADICTION = "contradiction"
TIMING_ROUNDS = 20  # each split is judged this many times for the timing figure


@dataclass(frozen=True, slots=True)
class Pair:
    first: str
    second: str
    contradicts: bool  # the label
    kind: str  # the pair's class


@dataclass
class Tally:
    """Counts of one class (or of a whole split) for the "contradiction" label."""

    true_positives: int = 0
    false_positives: int = 0
    false_negatives: int = 0
    true_negatives: int = 0

    def add(self, expected: bool, predicted: bool) -> None:
        if expected and predicted:
            self.true_positives += 1
        elif predicted:
            self.false_positives += 1
        elif expected:
            self.false_negatives += 1
        else:
            self.true_negatives += 1

    @property
    def contradictions(self) -> int:
        return self.true_positives + self.false_negatives

    @property
    def compatible(self) -> int:
        return self.false_positives + self.true_negatives

    @property
    def precision(self) -> float | None:
        fired = self.true_positives + self.false_positives
        return self.true_positives / fired if fired else None

    @property
    def recall(self) -> float | None:
        return self.true_positives / self.contradictions if self.contradictions else None


def load_split(name: str) -> list[Pair]:
    lines = (DATA_DIR / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    pairs = []
    for line in lines:
        if not line.strip():
            continue
        row = json.loads(line)
        pairs.append(Pair(row["first"], row["second"], row["label"] == CONTRADICTION, row["class"]))
    return pairs


def score(pairs: Iterable[Pair]) -> tuple[dict[str, Tally], Tally, list[tuple[Pair, str]]]:
    """Tallies per class, overall, and the misjudged pairs with the judge's explanation."""
    per_class: dict[str, Tally] = {}
    overall = Tally()
    mistakes = []
    for pair in pairs:
        verdict = judge_contradiction(pair.first, pair.second)
        per_class.setdefault(pair.kind, Tally()).add(pair.contradicts, verdict.contradicts)
        overall.add(pair.contradicts, verdict.contradicts)
        if verdict.contradicts != pair.contradicts:
            mistakes.append((pair, verdict.explanation))
    return per_class, overall, mistakes


def key_sharing(pairs: Iterable[Pair]) -> str:
    """How many pairs judged contradictory share an attribute key: all of them, and those
    contradicting by conflicting values (a denial or an antonym shares the sentence instead)."""
    shared = judged = shared_values = judged_values = 0
    for pair in pairs:
        verdict = judge_contradiction(pair.first, pair.second)
        if not verdict.contradicts:
            continue
        share = bool(attribute_keys(pair.first) & attribute_keys(pair.second))
        judged, shared = judged + 1, shared + share
        if verdict.cue == "conflicting_value":
            judged_values, shared_values = judged_values + 1, shared_values + share
    return (
        f"judged contradictions sharing an attribute key: {shared} of {judged}; "
        f"with conflicting values: {shared_values} of {judged_values}"
    )


def mean_ms_per_pair(pairs: Sequence[Pair], rounds: int = TIMING_ROUNDS) -> float:
    """Mean time to judge a pair whose statements and verdict are not memoised yet."""
    elapsed = 0.0
    for _ in range(rounds):
        judge_contradiction.cache_clear()
        parse.cache_clear()
        start = time.perf_counter()
        for pair in pairs:
            judge_contradiction(pair.first, pair.second)
        elapsed += time.perf_counter() - start
    return elapsed * 1000 / (rounds * len(pairs))


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def table(name: str, per_class: dict[str, Tally], overall: Tally) -> str:
    """A Markdown table: one row per class, contradiction classes first, then the total."""
    rows = [
        f"**{name}** ({overall.contradictions} contradictions, {overall.compatible} compatible)",
        "",
        "| class | contradictions | compatible | precision | recall | false alarms |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    ordered = sorted(per_class.items(), key=lambda item: (item[1].contradictions == 0, item[0]))
    for kind, tally in [*ordered, ("**overall**", overall)]:
        rows.append(
            f"| {kind} | {tally.contradictions} | {tally.compatible} | {_ratio(tally.precision)}"
            f" | {_ratio(tally.recall)} | {tally.false_positives} |"
        )
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.judge", description=__doc__)
    parser.add_argument("--split", choices=SPLITS, action="append", help="default: every split")
    parser.add_argument("--mistakes", action="store_true", help="list the misjudged pairs")
    args = parser.parse_args(argv)
    everything: list[Pair] = []
    for name in args.split or SPLITS:
        pairs = load_split(name)
        everything += pairs
        per_class, overall, mistakes = score(pairs)
        print(table(name, per_class, overall), end="\n\n")
        print(key_sharing(pairs), end="\n\n")
        if args.mistakes:
            for pair, why in mistakes:
                expected = "contradiction" if pair.contradicts else "compatible"
                print(f"  [{pair.kind}, expected {expected}] {pair.first!r} / {pair.second!r}")
                print(f"      {why}")
            print()
    print(f"mean time per judged pair: {mean_ms_per_pair(everything):.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
