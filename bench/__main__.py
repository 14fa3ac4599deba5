"""``python -m bench``: the same benchmark as ``memstream bench``, with every knob as a flag."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bench.cleanup import clean_bench
from bench.flags import add_cleanup_flags, add_processes_flags
from bench.run import DEFAULT_LATENCY_RATE, DEFAULT_LATENCY_SECONDS, run_bench
from streams.config.settings import Settings, SettingsError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="memstream throughput/latency vs a bare Faust agent and raw COPY "
        "(docs/benchmarks.md).",
    )
    parser.add_argument("--events", type=int, default=20000, help="events per throughput phase")
    parser.add_argument("--users", type=int, default=50, help="users the events are spread over")
    parser.add_argument(
        "--partitions", type=int, default=None, help="partitions per topic (default: settings)"
    )
    parser.add_argument(
        "--rate", type=float, default=DEFAULT_LATENCY_RATE, help="latency phase events/s"
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=DEFAULT_LATENCY_SECONDS,
        help="latency phase seconds of publishing",
    )
    add_processes_flags(parser)
    add_cleanup_flags(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    try:
        if args.clean:
            return clean_bench(settings)
        return run_bench(
            settings,
            events=args.events,
            users=args.users,
            partitions=args.partitions,
            latency_rate=args.rate,
            latency_seconds=args.duration,
            keep=args.keep,
            projector_processes=args.projector_processes,
            worker_processes=args.worker_processes,
        )
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
