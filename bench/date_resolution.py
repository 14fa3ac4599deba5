"""``python -m bench.date_resolution``: resolving relative dates in chat turns, three ways.

Compares memstream's own resolver (:mod:`streams.engine.text.dates`) with the two well-kept
parsers issue 30 names, each given the turn's event time as its base:

* ``dateparser.search.search_dates(text, languages=["en"], settings={"RELATIVE_BASE": base,
  "PREFER_DATES_FROM": "past", "TIMEZONE": "UTC", "RETURN_AS_TIMEZONE_AWARE": False})``;
* ``parsedatetime.Calendar(version=VERSION_CONTEXT_STYLE).nlp(text, sourceTime=base)``.

It reports, for each:

1. **cost per turn** (µs) on hand-written chat turns like the issue's corpus (two named
   speakers, ~110 characters, phatic talk, facts, some with a relative date), split into
   turns with and without an expression; the minimum over several rounds, so other jobs on
   the machine inflate it as little as possible; plus import and first-call time, measured
   in a fresh process;
2. **agreement** with the table of ``tests/unit/engine/text/test_dates.py`` (memstream's documented
   conventions): an expected expression agrees when the parser returns, for a span
   overlapping it, a day inside the expected period; a row without an expression agrees when
   the parser returns nothing;
3. **determinism**: calls to a clock (``time.time``, ``datetime.now``, ``date.today`` ...) or
   to the local time zone (``time.localtime``, ``time.mktime``, ``tzlocal``) made while
   resolving the table with the base given (a profiler hook sees every call), answers that
   fall in the current wall-clock week (impossible from the table's bases, 2000-2024, unless
   the clock leaked in), and whether the answers change when the process's time zone (``TZ``)
   does (the table is resolved again in child processes).

The table is imported from ``tests.unit.engine.text.test_dates``, so run this from the
repository root.
The parsers are measured only when installed (``.venv/bin/pip install dateparser
parsedatetime``); they are not dependencies of memstream. Timing lives here, not in the
engine or its tests, because the engine never reads a clock.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from streams.engine.text.dates import _may_have_dates, resolve_dates

try:
    from tests.unit.engine.text.test_dates import TABLE, ms, parse_label
except ImportError as error:  # pragma: no cover - a usage error
    raise SystemExit(
        f"the date table could not be imported ({error}): run `python -m bench.date_resolution` "
        "from the repository root, with the test extras installed"
    ) from error

# A resolver's answer: the span it read and the first and last day of what it names (a
# parser that returns a moment names one day).
Answer = tuple[int, int, date, date]
Resolver = Callable[[str, int], list[Answer]]

TIME_ZONES = ("UTC", "Pacific/Kiritimati", "America/Los_Angeles")
ROUNDS = {"memstream": 50, "parsedatetime": 5, "dateparser": 3}
MON_8_MAY_2023 = 1_683_554_400_000  # 14:00 UTC, the example day
BUDGET_US = 400.0  # ~2,500 inputs/s per worker process, for everything a worker does

# Chat turns, written for this benchmark (not taken from any corpus): a turn is an opener, a
# statement and a follow-up (see :func:`chat_turns`), ~130 characters like the corpus.
PHATIC = (
    "Hey Mel! Good to see you, how have you been?",
    "Hi Caroline! I'm doing great, thanks for asking. The kids keep me busy as always.",
    "Wow, that's amazing! I'm so happy for you.",
    "Thanks, Melanie! That means a lot to me.",
    "Haha, totally. Anyway, what have you been up to?",
    "Oh nice, that sounds like so much fun!",
    "Aww, that's so sweet of you to say.",
    "Take care and talk soon!",
    "Bye! Give the kids a hug from me.",
    "Yeah, I know what you mean. It can be really hard sometimes.",
    "That's awesome, John! You must be so proud of yourself.",
    "Sure thing, let me know how it goes.",
    "I totally agree with you on that one.",
    "What a beautiful picture! Where was it taken?",
    "Good luck with everything, you've got this!",
)
FACTS = (
    "I've been volunteering at the animal shelter, mostly walking the dogs and cleaning up.",
    "My friend Jack just started a pottery business and he asked me to help with the website.",
    "I'm thinking of going into counseling, I want to help people who went through what I did.",
    "We adopted a puppy named Oscar, he's a golden retriever and he chews absolutely everything.",
    "The kids painted a mural of sunflowers on the fence, it took them the whole afternoon.",
    "I finally finished reading that book about climate change, it was hard to put down.",
    "My mom is visiting from Sweden, she brought the necklace my grandma gave her.",
    "I signed up for a charity run to raise money for the children's hospital.",
    "Maria and I went camping by the lake, we saw so many stars at night.",
    "I started learning the guitar, my teacher says I'm picking up chords really fast.",
    "I got a new job at the library, it's part time but I love working with books.",
    "My sister is moving to Denver, so we're helping her pack up her apartment.",
    "We've been trying out new recipes, the lasagna was a big hit with everyone.",
    "I'm saving up for a trip to Japan, I really want to see the cherry blossoms.",
    "Our team won the local basketball tournament, the final score was 54 to 49.",
    "I painted a sunset over the lake, it's hanging in my living room now.",
    "The support group has been a huge help, everyone there is so kind and open.",
    "I've been running in the mornings before work, it helps me clear my head.",
    "My daughter lost her first tooth and left a little note for the tooth fairy.",
    "We're renovating the kitchen, the new countertops should arrive soon.",
    "I joined a book club at the community center, we're reading a mystery novel.",
    "My brother got engaged to his girlfriend of five years, we're all thrilled.",
    "I'm learning to bake sourdough bread, my starter is finally bubbly and active.",
    "I've been collecting vinyl records, my favourite find is an old jazz album.",
    "The concert was incredible, the band played all of our favourite songs.",
    "My grandpa taught me how to fish when I was a kid, it's still my favourite hobby.",
    "I've been feeling stressed at work, so I started doing yoga to unwind.",
    "We planted tomatoes and peppers in the garden, they're growing really well.",
    "I bought a used bike and I've been riding it to work most days.",
    "My friend Tim is writing a fantasy novel, he let me read the first chapters.",
    "I went to a transgender conference in the city, the speakers were so inspiring.",
    "My son wants to be an astronaut, he's obsessed with anything about space.",
    "We took the dog to the beach and he ran straight into the waves.",
    "I'm mentoring a teenager at the youth center, we meet every Tuesday.",
    "I made a scrapbook of our family trips, it has photos going back years.",
)
FOLLOW_UPS = (
    "It was a lot of fun.",
    "The kids loved it.",
    "I'll send you some pictures.",
    "What do you think?",
    "It means a lot to me.",
    "Honestly it was a bit scary at first.",
    "Have you ever tried something like that?",
)
DATED_FACTS = (
    "I went to an LGBTQ support group yesterday and it was so powerful.",
    "My car broke down last Fri on my way to work, so I had to take the bus.",
    "We're going camping with the kids next weekend, I can't wait to unplug.",
    "I ran a charity race last Saturday to raise awareness for mental health.",
    "I started a new painting two weeks ago, it's an abstract piece in blue and gold.",
    "We're moving to a bigger apartment next month, the kids will each get a room.",
    "Last summer we drove along the coast and stopped at every little town.",
    "I adopted a kitten a few days ago, she sleeps on my pillow every night.",
    "My parents are coming to visit this weekend, I need to clean the whole house.",
    "I gave a talk at my old school last week about being true to yourself.",
    "I'm having my first pottery exhibition in two weeks, I'm so nervous.",
    "We celebrated my daughter's birthday the day before yesterday with a big picnic.",
    "I quit my job a couple of months ago to focus on my art full time.",
    "I'm going to a concert tomorrow night with my friends from the book club.",
    "I signed the papers for the adoption agency earlier this month.",
    "My brother visited last night and we stayed up talking until 2am.",
    "I finished my first marathon this morning, my legs are killing me!",
    "We went skiing last winter and my son learned to snowboard.",
    "I had a job interview this Tuesday and they already called me back.",
    "I'm starting a new yoga class next Wed at the community center.",
)
# The corpus: ~40 % of turns phatic, relative dates in >= 15 % of fact turns.
SHARE_WITH_EXPRESSION = 0.6 * 0.15


def chat_turns() -> tuple[list[str], list[str]]:
    """(turns without a relative date, turns with one): phatic turns of two phatic sentences,
    and statements with an opener and a follow-up, a deterministic composition."""
    phatic = [f"{PHATIC[i]} {PHATIC[(i + 4) % len(PHATIC)]}" for i in range(len(PHATIC))]

    def turn(i: int, statement: str) -> str:
        return f"{PHATIC[i % len(PHATIC)]} {statement} {FOLLOW_UPS[i % len(FOLLOW_UPS)]}"

    facts = [turn(i, fact) for i, fact in enumerate(FACTS)]
    dated = [turn(i, fact) for i, fact in enumerate(DATED_FACTS)]
    return phatic + facts, dated


# --- the resolvers -----------------------------------------------------------------------------


def memstream_resolver() -> Resolver:
    def resolve(text: str, at_ms: int) -> list[Answer]:
        return [(r.start, r.end, r.first, r.last) for r in resolve_dates(text, at_ms)]

    return resolve


def _base(at_ms: int) -> datetime:
    """The event time as a naive UTC datetime, the form both parsers take as their base."""
    return datetime(1970, 1, 1) + timedelta(milliseconds=at_ms)


def dateparser_resolver() -> Resolver:
    from dateparser.search import search_dates

    def resolve(text: str, at_ms: int) -> list[Answer]:
        settings = {
            "RELATIVE_BASE": _base(at_ms),
            "PREFER_DATES_FROM": "past",
            "TIMEZONE": "UTC",
            "RETURN_AS_TIMEZONE_AWARE": False,
        }
        found = search_dates(text, languages=["en"], settings=settings) or []
        answers = []
        position = 0
        for phrase, moment in found:  # it returns phrases, not spans: find them in order
            start = text.find(phrase, position)
            if start < 0:
                start = text.find(phrase)
            end = start + len(phrase)
            position = max(position, end)
            answers.append((start, end, moment.date(), moment.date()))
        return answers

    return resolve


def parsedatetime_resolver() -> Resolver:
    import parsedatetime

    calendar = parsedatetime.Calendar(version=parsedatetime.VERSION_CONTEXT_STYLE)

    def resolve(text: str, at_ms: int) -> list[Answer]:
        found = calendar.nlp(text, sourceTime=_base(at_ms)) or ()
        return [(start, end, moment.date(), moment.date()) for moment, _, start, end, _ in found]

    return resolve


RESOLVERS: dict[str, tuple[str | None, Callable[[], Resolver]]] = {
    "memstream": (None, memstream_resolver),
    "dateparser": ("dateparser", dateparser_resolver),
    "parsedatetime": ("parsedatetime", parsedatetime_resolver),
}


def available(names: Sequence[str]) -> dict[str, Resolver]:
    resolvers = {}
    for name in names:
        package, make = RESOLVERS[name]
        if package is not None:
            try:
                importlib.import_module(package)
            except ImportError:
                print(f"{name}: not installed (.venv/bin/pip install {package}), skipped")
                continue
        resolvers[name] = make()
    return resolvers


# --- agreement with the table --------------------------------------------------------------------


@dataclass
class Agreement:
    expressions: Counter[str] = field(default_factory=Counter)  # per granularity: expected
    agreed: Counter[str] = field(default_factory=Counter)
    empty_rows: int = 0  # rows without an expression
    clean_rows: int = 0  # ... where the resolver found nothing
    misses: list[str] = field(default_factory=list)

    @property
    def total(self) -> tuple[int, int]:
        return sum(self.agreed.values()), sum(self.expressions.values())


def agreement(resolve: Resolver, answers: Sequence[list[Answer]] | None = None) -> Agreement:
    score = Agreement()
    for index, (text, moment, expected) in enumerate(TABLE):
        found = answers[index] if answers is not None else resolve(text, ms(moment))
        if not expected:
            score.empty_rows += 1
            if found:
                score.misses.append(
                    f"`{text}` @ {moment[:10]}: expected nothing, got {_shown(text, found)}"
                )
            else:
                score.clean_rows += 1
            continue
        position = 0
        for expression, label in expected:
            start = text.index(expression, position)
            end = position = start + len(expression)
            first, last, granularity = parse_label(label)
            score.expressions[granularity] += 1
            if any(s < end and start < e and first <= a and b <= last for s, e, a, b in found):
                score.agreed[granularity] += 1
            else:
                score.misses.append(
                    f"`{text}` @ {moment[:10]}: `{expression}` = {label}, got {_shown(text, found)}"
                )
    return score


def _shown(text: str, found: list[Answer]) -> str:
    if not found:
        return "nothing"
    return ", ".join(
        f"`{text[s:e]}` = {a.isoformat()}" + ("" if a == b else f"..{b.isoformat()}")
        for s, e, a, b in found
    )


# --- cost per turn --------------------------------------------------------------------------------


def cost_per_turn(resolve: Resolver, turns: Sequence[str], rounds: int) -> float:
    """µs per turn: the fastest of ``rounds`` passes over ``turns`` (after one warm-up pass)."""
    for text in turns:
        resolve(text, MON_8_MAY_2023)
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for text in turns:
            resolve(text, MON_8_MAY_2023)
        best = min(best, time.perf_counter() - started)
    return best / len(turns) * 1e6


# --- determinism ----------------------------------------------------------------------------------

CLOCK_CALLS = {
    ("time", "time"),
    ("time", "time_ns"),
    ("datetime", "now"),
    ("datetime", "utcnow"),
    ("datetime", "today"),
    ("date", "today"),
}
ZONE_CALLS = {("time", "localtime"), ("time", "mktime"), ("tzlocal", "get_localzone")}


def clock_calls(resolve: Resolver) -> Counter[str]:
    """Calls to a clock or to the local time zone while the table is resolved (a profiler
    hook sees every call, in C or Python)."""
    seen: Counter[str] = Counter()

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "c_call":
            owner = getattr(arg, "__self__", None)
            key = (getattr(owner, "__name__", ""), getattr(arg, "__name__", ""))
        elif event == "call":
            key = (frame.f_globals.get("__name__", "").split(".")[0], frame.f_code.co_name)
        else:
            return
        if key in CLOCK_CALLS or key in ZONE_CALLS:
            seen[".".join(key)] += 1

    sys.setprofile(hook)
    try:
        for text, moment, _ in TABLE:
            resolve(text, ms(moment))
    finally:
        sys.setprofile(None)
    return seen


def wall_clock_answers(answers: Sequence[list[Answer]]) -> int:
    """Answers within three days of the machine's current date. The table's bases are in
    2000-2024, so such an answer can only come from a clock read. (The benchmark may read the
    clock; the engine may not.)"""
    today = datetime.now(UTC).date()
    return sum(1 for found in answers for _, _, first, _ in found if abs((first - today).days) <= 3)


MODULES = {
    "memstream": "streams.engine.text.dates",
    "dateparser": "dateparser.search",
    "parsedatetime": "parsedatetime",
}


def import_ms(name: str) -> float:
    """Milliseconds to import the resolver's module in a fresh interpreter."""
    program = (
        "import time; started = time.perf_counter(); "
        f"import {MODULES[name]}; print((time.perf_counter() - started) * 1e3)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    return float(completed.stdout.strip())


def child_answers(name: str) -> dict[str, Any]:
    """In this process: first-call time (what a worker pays once) and the answers on the
    table."""
    resolve = available([name])[name]
    started = time.perf_counter()
    resolve(PHATIC[0], MON_8_MAY_2023)
    first_call = time.perf_counter()
    answers = [
        [[s, e, a.isoformat(), b.isoformat()] for s, e, a, b in resolve(text, ms(moment))]
        for text, moment, _ in TABLE
    ]
    return {
        "first_call_ms": (first_call - started) * 1e3,
        "answers": answers,
    }


def run_child(name: str, zone: str) -> dict[str, Any]:
    environment = dict(os.environ, TZ=zone)
    completed = subprocess.run(
        [sys.executable, "-m", "bench.date_resolution", "--child", name],
        capture_output=True,
        text=True,
        env=environment,
        check=True,
    )
    return json.loads(completed.stdout.splitlines()[-1])


def decoded(answers: list[list[list[Any]]]) -> list[list[Answer]]:
    return [
        [(s, e, date.fromisoformat(a), date.fromisoformat(b)) for s, e, a, b in found]
        for found in answers
    ]


# --- the report -----------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="*", choices=sorted(RESOLVERS), default=list(RESOLVERS))
    parser.add_argument("--misses", type=int, default=12, help="disagreements listed per parser")
    parser.add_argument("--child", choices=sorted(RESOLVERS), help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.child:
        print(json.dumps(child_answers(options.child)))
        return

    resolvers = available(options.only)
    without, with_expression = chat_turns()
    all_turns = without + with_expression
    if any(resolve_dates(t, MON_8_MAY_2023) for t in without) or not all(
        resolve_dates(t, MON_8_MAY_2023) for t in with_expression
    ):
        raise SystemExit("the chat turns are not split as labelled: fix PHATIC/FACTS/DATED_FACTS")
    characters = sum(map(len, all_turns)) / len(all_turns)
    print(
        f"# Relative dates: cost and agreement\n\nPython {platform.python_version()}, "
        f"{os.cpu_count()} CPUs; {len(all_turns)} chat turns (mean {characters:.0f} characters): "
        f"{len(without)} without a relative date, {len(with_expression)} with one; "
        f"table: {len(TABLE)} rows.\n"
    )

    print("## Cost per turn (µs; minimum over rounds)\n")
    print(
        "| resolver | import ms | first call ms | no expression | with expression "
        f"| at {SHARE_WITH_EXPRESSION:.0%} with | share of a {BUDGET_US:.0f} µs input "
        "| turns without a relative date given one |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    children: dict[str, dict[str, dict[str, Any]]] = {}
    for name, resolve in resolvers.items():
        children[name] = {zone: run_child(name, zone) for zone in TIME_ZONES}
        rounds = ROUNDS[name]
        none_us = cost_per_turn(resolve, without, rounds)
        some_us = cost_per_turn(resolve, with_expression, rounds)
        mixed = (1 - SHARE_WITH_EXPRESSION) * none_us + SHARE_WITH_EXPRESSION * some_us
        spurious = sum(1 for t in without if resolve(t, MON_8_MAY_2023))
        utc = children[name]["UTC"]
        print(
            f"| {name} | {import_ms(name):.0f} | {utc['first_call_ms']:.1f} | {none_us:.1f} "
            f"| {some_us:.1f} | {mixed:.1f} | {mixed / BUDGET_US:.1%} "
            f"| {spurious}/{len(without)} |"
        )

    if "memstream" in resolvers:
        rejected = [t for t in without if not _may_have_dates(t.lower())]
        scanned = [t for t in without if _may_have_dates(t.lower())]
        resolve = resolvers["memstream"]
        print(
            f"\nmemstream, turns without a relative date: the pre-check rejects {len(rejected)} "
            f"at {cost_per_turn(resolve, rejected, ROUNDS['memstream']):.1f} µs per turn; "
            f"{len(scanned)} pass it (a temporal-looking word: birthday, money, years ...) and "
            f"are scanned at {cost_per_turn(resolve, scanned, ROUNDS['memstream']):.1f} µs."
        )

    print("\n## Agreement with the table (`tests/unit/engine/text/test_dates.py`)\n")
    granularities = ("day", "weekend", "week", "month", "season", "year")
    print(
        "| resolver | expressions | "
        + " | ".join(granularities)
        + " | rows without an expression left alone |"
    )
    print("|---|---:|" + "---:|" * len(granularities) + "---:|")
    scores = {}
    for name, resolve in resolvers.items():
        score = scores[name] = agreement(resolve)
        agreed, total = score.total
        cells = " | ".join(f"{score.agreed[g]}/{score.expressions[g]}" for g in granularities)
        print(
            f"| {name} | {agreed}/{total} ({agreed / total:.0%}) | {cells} "
            f"| {score.clean_rows}/{score.empty_rows} |"
        )

    print("\n## Determinism (the base is always given)\n")
    print(
        "| resolver | clock calls | local-time calls | answers in the wall-clock week "
        "| answers that change with TZ |"
    )
    print("|---|---|---|---:|---|")
    for name, resolve in resolvers.items():
        calls = clock_calls(resolve)
        clock = ", ".join(f"{k} ×{v}" for k, v in sorted(calls.items()) if _is(k, CLOCK_CALLS))
        zone = ", ".join(f"{k} ×{v}" for k, v in sorted(calls.items()) if _is(k, ZONE_CALLS))
        runs = {z: decoded(run["answers"]) for z, run in children[name].items()}
        leaked = wall_clock_answers(runs["UTC"])
        changed = [
            f"{_differing(runs['UTC'], answers)} rows under {zone_name}"
            for zone_name, answers in runs.items()
            if zone_name != "UTC"
        ]
        print(
            f"| {name} | {clock or 'none'} | {zone or 'none'} | {leaked} | {'; '.join(changed)} |"
        )

    for name, score in scores.items():
        if name == "memstream" or not score.misses:
            continue
        shown = min(options.misses, len(score.misses))
        print(f"\n### {name}: {shown} of {len(score.misses)} disagreements\n")
        for line in score.misses[: options.misses]:
            print(f"- {line}")


def _differing(first: Sequence[list[Answer]], second: Sequence[list[Answer]]) -> int:
    return sum(a != b for a, b in zip(first, second, strict=True))


def _is(key: str, calls: set[tuple[str, str]]) -> bool:
    return tuple(key.split(".", 1)) in calls


if __name__ == "__main__":
    main()
