"""``python -m bench.recall_quality``: see :mod:`bench.recall_quality`."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Sequence

from bench import progress
from bench.recall_quality import realmem, realmem_report, report
from bench.recall_quality.embeddings import EmbeddingCache
from bench.recall_quality.feed import STYLES
from bench.recall_quality.realmem_run import run_persona
from bench.recall_quality.run import RANKINGS, Options, run
from memstream.cli import diversity_argument
from projections.recall_order import DEFAULT_DIVERSITY
from streams.config.settings import Settings, SettingsError
from streams.embedders.base import Embedder, EmbedderUnavailable
from streams.embedders.factory import embedder_for
from streams.engine.policy import profile_names


def _profiles(text: str) -> list[str]:
    names = [p for p in text.replace(",", " ").split() if p]
    unknown = [p for p in names if p not in profile_names()]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown profile(s) {', '.join(unknown)}: choose from {', '.join(profile_names())}"
        )
    return names


def _personas(text: str) -> list[str]:
    names = [p for p in text.replace(",", " ").split() if p]
    known = realmem.persona_names()
    unknown = [p for p in names if p not in known]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown persona(s) {', '.join(unknown)}: choose from {', '.join(known)}"
        )
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.recall_quality",
        description="Recall quality of consolidated memory against raw-turn retrieval: on "
        "RealMem's user/assistant conversations (bench/data/realmem, the main corpus, issue 38) "
        "or on a generated multi-session conversation corpus (issue 30).",
    )
    parser.add_argument(
        "--corpus",
        choices=("realmem", "generated", "both"),
        default="realmem",
        help="realmem (default): the RealMem personas, honest in time, plain cosine; "
        "generated: the generated corpus (the regression check); both: one, then the other",
    )
    parser.add_argument(
        "--personas",
        type=_personas,
        default=None,
        help="RealMem personas, comma- or space-separated (default: all: "
        f"{' '.join(realmem.persona_names())})",
    )
    parser.add_argument(
        "--sessions",
        type=int,
        default=None,
        help="RealMem: only each persona's first N sessions in time (default: all)",
    )
    parser.add_argument("--conversations", type=int, default=5, help="conversations (users)")
    parser.add_argument("--seed", type=int, default=7, help="the corpus's random seed")
    parser.add_argument(
        "--style",
        choices=STYLES,
        default="speaker",
        help="speaker: content is the turn, Memory.speaker its speaker; "
        "prefixed: content 'Name: text', no speaker",
    )
    parser.add_argument(
        "--profiles",
        type=_profiles,
        default=None,
        help="built-in profiles to compare with raw retrieval, comma- or space-separated "
        f"(generated corpus default: all: {' '.join(profile_names())}; RealMem: one, default "
        "`default`)",
    )
    parser.add_argument(
        "--ranking",
        choices=("cosine", "recall", "both"),
        default="both",
        help="plain cosine over active memories, the project's recall on PostgreSQL, or both",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=2,
        help="onnxruntime threads for embedding the corpus (default 2); the engine's replays "
        "embed with one, as the worker does",
    )
    parser.add_argument(
        "--recall-ranking",
        choices=("hybrid", "vector"),
        default="hybrid",
        help="MemoryReader.recall's ranking for the recall ranking: meaning and words (hybrid, "
        "what users get by default) or meaning alone (vector), to measure what words add",
    )
    parser.add_argument(
        "--diversity",
        type=diversity_argument,
        default=DEFAULT_DIVERSITY,
        help="MemoryReader.recall's diversity for the recall ranking (maximal marginal "
        f"relevance; default {DEFAULT_DIVERSITY}, what users get; 0: none)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="embed every text anew (no embedding cache)"
    )
    parser.add_argument(
        "--no-save", action="store_true", help="print the report, write nothing to bench/results"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if (
        args.conversations < 1
        or args.threads < 0
        or (args.sessions is not None and args.sessions < 1)
    ):
        print(
            "error: --conversations and --sessions must be ≥ 1 and --threads ≥ 0", file=sys.stderr
        )
        return 2
    if args.corpus != "generated" and args.profiles is not None and len(args.profiles) != 1:
        print("error: the RealMem run compares one profile with raw retrieval", file=sys.stderr)
        return 2
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    cache = EmbeddingCache(None) if args.no_cache else EmbeddingCache.default(settings.cache_dir)
    embedder = embedder_for("minilm", threads=args.threads)
    worker_embedder = embedder_for("minilm")  # as the worker makes it: one thread
    command = shlex.join(["python", "-m", "bench.recall_quality", *(argv or sys.argv[1:])])
    try:
        if args.corpus in ("generated", "both"):
            _generated(args, settings, cache, embedder, worker_embedder, command)
        if args.corpus in ("realmem", "both"):
            _realmem(args, cache, embedder, worker_embedder, command)
    except EmbedderUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    return 0


def _generated(
    args: argparse.Namespace,
    settings: Settings,
    cache: EmbeddingCache,
    embedder: Embedder,
    worker_embedder: Embedder,
    command: str,
) -> None:
    rankings = RANKINGS if args.ranking == "both" else (args.ranking,)
    options = Options(
        conversations=args.conversations,
        seed=args.seed,
        style=args.style,
        profiles=args.profiles if args.profiles is not None else list(profile_names()),
        rankings=rankings,
        server_url=settings.database_url if "recall" in rankings else None,
        recall_ranking=args.recall_ranking,
        diversity=args.diversity,
    )
    outcome = run(options, embedder, cache, worker_embedder)
    data = report.results(outcome, options, command, args.threads)
    markdown = report.render(data)
    print("\n" + markdown)
    if not args.no_save:
        print(f"results written to {report.save(data, markdown)} (+ .json)")


def _realmem(
    args: argparse.Namespace,
    cache: EmbeddingCache,
    embedder: Embedder,
    worker_embedder: Embedder,
    command: str,
) -> None:
    started = time.perf_counter()
    profile = args.profiles[0] if args.profiles else "default"
    names = args.personas or realmem.persona_names()
    outcomes = []

    def engine_embed(texts: Sequence[str]) -> list[bytes]:
        # what the engine's cycles write is embedded by the worker's embedder (one thread);
        # MiniLM is deterministic byte for byte, so the cache serves it as well
        return cache.embed(texts, worker_embedder.embed)

    for name in names:
        progress.phase(f"RealMem {name}: loading, embedding, replaying under {profile}")
        persona = realmem.load(name, sessions=args.sessions)
        outcomes.append(run_persona(persona, embedder.embed, cache, engine_embed, profile))
    parameters = {"personas": names, "sessions": args.sessions, "threads": args.threads}
    data = realmem_report.results(
        outcomes, profile, command, parameters, time.perf_counter() - started
    )
    markdown = realmem_report.render(data)
    print("\n" + markdown)
    if not args.no_save:
        print(f"results written to {realmem_report.save(data, markdown)} (+ .json)")


if __name__ == "__main__":
    sys.exit(main())
