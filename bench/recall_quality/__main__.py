"""``python -m bench.recall_quality``: see :mod:`bench.recall_quality`."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence

from bench.recall_quality import report
from bench.recall_quality.embeddings import EmbeddingCache
from bench.recall_quality.feed import STYLES
from bench.recall_quality.run import RANKINGS, Options, run
from memstream.cli import diversity_argument
from projections.recall_order import DEFAULT_DIVERSITY
from streams.config.settings import Settings, SettingsError
from streams.embedders.base import EmbedderUnavailable
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.recall_quality",
        description="Recall quality of consolidated memory against raw-turn retrieval, on a "
        "generated multi-session conversation corpus (issue 30).",
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
        default=list(profile_names()),
        help="built-in profiles to compare with raw retrieval, comma- or space-separated "
        f"(default: all: {' '.join(profile_names())})",
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
    if args.conversations < 1 or args.threads < 0:
        print("error: --conversations must be ≥ 1 and --threads ≥ 0", file=sys.stderr)
        return 2
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    rankings = RANKINGS if args.ranking == "both" else (args.ranking,)
    options = Options(
        conversations=args.conversations,
        seed=args.seed,
        style=args.style,
        profiles=args.profiles,
        rankings=rankings,
        server_url=settings.database_url if "recall" in rankings else None,
        recall_ranking=args.recall_ranking,
        diversity=args.diversity,
    )
    cache = EmbeddingCache(None) if args.no_cache else EmbeddingCache.default(settings.cache_dir)
    embedder = embedder_for("minilm", threads=args.threads)
    worker_embedder = embedder_for("minilm")  # as the worker makes it: one thread
    command = shlex.join(["python", "-m", "bench.recall_quality", *(argv or sys.argv[1:])])
    try:
        outcome = run(options, embedder, cache, worker_embedder)
    except EmbedderUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    data = report.results(outcome, options, command, args.threads)
    markdown = report.render(data)
    print("\n" + markdown)
    if not args.no_save:
        print(f"results written to {report.save(data, markdown)} (+ .json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
