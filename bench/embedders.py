"""``python -m bench.embedders``: sentences per second of each embedder, in batches of 32.

The sentences are the memory-style statements of the judge's labelled pairs
(``bench/judge_data``), so their lengths are those of real memories rather than of a synthetic
string. Each embedder is loaded and warmed up first (minilm's load time is printed apart),
then the whole set is embedded ``--rounds`` times; the best and the median round are shown.
It also prints the cosine of one paraphrase pair under each embedder, the figure that says
why the model is worth its cost. Not a test: throughput depends on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from streams.embedders import EMBEDDERS, Embedder, MiniLMEmbedder, embedder_for

DATA_DIR = Path(__file__).parent / "judge_data"
PARAPHRASE = ("She keeps her notes in Obsidian.", "Her note-taking app is Obsidian.")


def sentences() -> list[str]:
    """Every distinct statement of the judge's pairs, in file order."""
    seen: dict[str, None] = {}
    for path in sorted(DATA_DIR.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                pair = json.loads(line)
                seen.setdefault(pair["first"])
                seen.setdefault(pair["second"])
    return list(seen)


def rates(embedder: Embedder, texts: Sequence[str], batch: int, rounds: int) -> list[float]:
    """Sentences/s of each round, embedding ``texts`` in calls of ``batch`` texts."""
    embedder.embed(list(texts[:batch]))  # warm-up: first-run allocations are not throughput
    result = []
    for _ in range(rounds):
        started = time.perf_counter()
        for start in range(0, len(texts), batch):
            embedder.embed(list(texts[start : start + batch]))
        result.append(len(texts) / (time.perf_counter() - started))
    return result


def paraphrase_cosine(embedder: Embedder) -> float:
    first, second = (np.frombuffer(v, dtype="<f4") for v in embedder.embed(list(PARAPHRASE)))
    return float(first @ second)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.embedders", description=__doc__)
    parser.add_argument("--batch", type=int, default=32, help="texts per embed call")
    parser.add_argument("--rounds", type=int, default=3, help="timed passes over the set")
    parser.add_argument("--threads", type=int, default=1, help="minilm onnxruntime threads")
    parser.add_argument("--embedder", choices=EMBEDDERS, action="append", help="default: all")
    args = parser.parse_args(argv)
    texts = sentences()
    print(f"{len(texts)} sentences, batch {args.batch}, {args.rounds} rounds")
    print(f"{'embedder':<10} {'best s/s':>10} {'median s/s':>11} {'paraphrase cos':>15}")
    for name in args.embedder or EMBEDDERS:
        embedder = embedder_for(name, threads=args.threads)
        if isinstance(embedder, MiniLMEmbedder):
            started = time.perf_counter()
            embedder.load()
            print(f"(minilm load: {time.perf_counter() - started:.2f} s, {args.threads} thread(s))")
        per_round = rates(embedder, texts, args.batch, args.rounds)
        print(
            f"{name:<10} {max(per_round):>10,.0f} {statistics.median(per_round):>11,.0f} "
            f"{paraphrase_cosine(embedder):>15.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
