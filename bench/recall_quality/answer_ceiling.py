"""``python -m bench.recall_quality.answer_ceiling``: how much of an assistant's answers a
memory must keep to carry the RealMem points drawn from them, and which answers hold them.

Issue 38 asks for more evidence than raw retrieval in a quarter of the transcript's characters,
and the assistant's answers are most of those characters. This measures the two sides of that
trade without the engine:

- **What an oracle would keep.** For each needed point traced to one assistant turn, the fewest
  sentences (or list lines) of that turn holding half the point's key words (the evidence
  measure's test, :func:`bench.recall_quality.scoring.holds`), chosen greedily by new key words
  per character: its characters, and their share of the turn. Their union over all point turns
  is what a writer that knew the questions would keep.
- **Where the points are.** The share of the assistant's answers that hold a point, by the
  answer's form (a list of three items or more, or prose), length, and the length of the user's
  next turn: what a writer that does not know the questions could go by.

Pure (no engine, no model, no database); a few seconds.
"""

from __future__ import annotations

import argparse
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from bench.recall_quality import realmem
from bench.recall_quality.realmem import ASSISTANT
from bench.recall_quality.scoring import KEY_WORD_SHARE, content_words, point_words

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s", re.MULTILINE)
LIST_ITEMS = 3  # an answer with this many list items or more is a list, else prose


def units(text: str) -> list[str]:
    """A turn's sentences, a list line being one or more."""
    found: list[str] = []
    for line in text.splitlines():
        found.extend(piece for piece in _SENTENCE.split(line.strip()) if piece.strip())
    return found


def fewest_units(text: str, words: frozenset[str]) -> list[str] | None:
    """The units of ``text`` that hold ``KEY_WORD_SHARE`` of ``words``, chosen greedily by new
    words per character (None: the turn does not hold that many)."""
    need = KEY_WORD_SHARE * len(words)
    candidates = [(unit, content_words(unit) & words) for unit in units(text)]
    held: set[str] = set()
    chosen: list[str] = []
    while len(held) < need:
        best = max(candidates, key=lambda c: len(c[1] - held) / (len(c[0]) + 2), default=None)
        if best is None or not best[1] - held:
            return None
        unit, found = best
        held |= found
        chosen.append(unit)
        candidates.remove(best)
    return chosen


@dataclass
class Ceiling:
    points: int = 0
    unreachable: int = 0
    chars: list[int] = field(default_factory=list)
    shares: list[float] = field(default_factory=list)
    kept: dict[str, set[str]] = field(default_factory=dict)  # turn id → units kept
    turn_chars: dict[str, int] = field(default_factory=dict)
    assistant_chars: int = 0
    answers: Counter[str] = field(default_factory=Counter)
    with_points: Counter[str] = field(default_factory=Counter)


def measure(personas: Sequence[realmem.Persona]) -> Ceiling:
    ceiling = Ceiling()
    for persona in personas:
        turns = {t.turn_id: t for t in persona.turns}
        ceiling.assistant_chars += sum(len(t.text) for t in persona.turns if t.side == ASSISTANT)
        cited: set[str] = set()
        for question in persona.questions:
            for point in question.points:
                evidence = [e for e in point.evidence if e in turns]
                cited.update(evidence)
                if len(evidence) != 1 or turns[evidence[0]].side != ASSISTANT:
                    continue
                turn = turns[evidence[0]]
                ceiling.points += 1
                chosen = fewest_units(turn.text, point_words(point.text))
                if chosen is None:
                    ceiling.unreachable += 1
                    continue
                used = sum(len(unit) + 2 for unit in chosen)
                ceiling.chars.append(used)
                ceiling.shares.append(used / len(turn.text))
                ceiling.kept.setdefault(turn.turn_id, set()).update(chosen)
                ceiling.turn_chars[turn.turn_id] = len(turn.text)
        for session in persona.sessions:
            for i, turn in enumerate(session.turns):
                if turn.side != ASSISTANT:
                    continue
                after = session.turns[i + 1].text if i + 1 < len(session.turns) else None
                for group in _groups(turn.text, after):
                    ceiling.answers[group] += 1
                    ceiling.with_points[group] += turn.turn_id in cited
    return ceiling


def _groups(text: str, after: str | None) -> list[str]:
    items = len(_LIST_ITEM.findall(text))
    size = len(text)
    length = (
        "< 500"
        if size < 500
        else "< 1,500"
        if size < 1500
        else "< 3,000"
        if size < 3000
        else "≥ 3,000"
    )
    reply = "none" if after is None else "< 80" if len(after) < 80 else "≥ 80"
    return [
        "all",
        f"form: {'list' if items >= LIST_ITEMS else 'prose'}",
        f"characters {length}",
        f"the user's next turn: {reply}",
    ]


def report(ceiling: Ceiling, names: Sequence[str]) -> str:
    union = sum(sum(len(u) + 2 for u in kept) for kept in ceiling.kept.values())
    quartiles = statistics.quantiles(ceiling.shares, n=4)
    lines = [
        f"# What a memory must keep of the assistant's answers: {', '.join(names)}",
        "",
        f"Points traced to one assistant turn: {ceiling.points}; held by no half of their "
        f"turn's sentences: {ceiling.unreachable}.",
        "",
        "| an oracle keeps, per point | value |",
        "|---|---:|",
        f"| characters, median / mean | {statistics.median(ceiling.chars):.0f} / "
        f"{statistics.mean(ceiling.chars):.0f} |",
        f"| share of its turn, quartiles | {quartiles[0]:.2f} / {quartiles[1]:.2f} / "
        f"{quartiles[2]:.2f} |",
        f"| all points: characters (share of the assistant's {ceiling.assistant_chars:,}) | "
        f"{union:,} ({union / ceiling.assistant_chars:.3f}) |",
        f"| all points: share of their {len(ceiling.kept)} turns' characters | "
        f"{union / sum(ceiling.turn_chars.values()):.2f} |",
        "",
        "| answers | count | holding a needed point |",
        "|---|---:|---:|",
    ]
    for group in sorted(ceiling.answers):
        count, held = ceiling.answers[group], ceiling.with_points[group]
        lines.append(f"| {group} | {count:,} | {held} ({held / count:.3f}) |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--personas", help="comma-separated (default: every persona)")
    args = parser.parse_args(argv)
    names = args.personas.split(",") if args.personas else realmem.persona_names()
    print(report(measure([realmem.load(name) for name in names]), names), end="")


if __name__ == "__main__":
    main()
