"""``python -m bench.ledger_encoding``: what writing a ledger record costs, by event type,
with the generated writer (``streams.kafka.avro_speedups``) and with cavro from the record's datum.

The worker writes every decision to the ledger: 1.35 records per input on the throughput
workload, 6 % of a worker's time with cavro. This replays the bench workload through the
``default`` profile and times both ways over the same records, after checking they give
the same bytes. Not a test: figures go in the README with the commit they ran on.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from collections.abc import Callable

from bench.workload import written_events
from streams.engine import ledger
from streams.engine.oracle import replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from streams.kafka import codec

USERS = 50
DIMENSION = 384


Record = ledger.ConsolidationEvent


def per_record(write: Callable[[Record], bytes], records: list[Record], rounds: int) -> float:
    """µs per record of ``write`` over ``records``, best of ``rounds`` passes."""
    best = float("inf")
    for _ in range(rounds):
        began = time.perf_counter()
        for record in records:
            write(record)
        best = min(best, time.perf_counter() - began)
    return best / len(records) * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ledger_encoding", description=__doc__)
    parser.add_argument("--inputs", type=int, default=4_000, help="inputs replayed (50 users)")
    parser.add_argument("--rounds", type=int, default=5, help="passes timed; the best counts")
    args = parser.parse_args(argv)
    if args.inputs < 1 or args.rounds < 1:
        parser.error("--inputs and --rounds must be at least 1")
    registry = codec.default_registry()
    schema = registry.current["ConsolidationEvent"]
    if schema.write is None:
        parser.error("the schemas in use have no generated writer (MEMSTREAM_SCHEMAS_DIR?)")
    decisions = replay(
        written_events(args.inputs, USERS, DIMENSION), EngineConfig(builtin_profile("default"))
    ).decisions
    by_type: dict[str, list[ledger.ConsolidationEvent]] = defaultdict(list)
    for decision in decisions:
        by_type[decision.event_type].append(decision)

    def generated(record: ledger.ConsolidationEvent) -> bytes:
        return codec.encode_ledger(record, registry)

    def with_cavro(record: ledger.ConsolidationEvent) -> bytes:
        return codec.frame_with_cavro(schema, codec.ledger_datum(record))

    differing = sum(generated(d) != with_cavro(d) for d in decisions)
    if differing:
        raise SystemExit(f"{differing} of {len(decisions)} records differ from cavro's bytes")
    print(f"{len(decisions):,} ledger records from {args.inputs:,} inputs; µs per record:")
    print(f"  {'event type':<24} {'records':>8} {'cavro':>8} {'generated':>10}")
    for name, records in sorted(by_type.items(), key=lambda item: -len(item[1])):
        slow = per_record(with_cavro, records, args.rounds)
        fast = per_record(generated, records, args.rounds)
        print(f"  {name:<24} {len(records):>8,} {slow:>8.1f} {fast:>10.1f}")


if __name__ == "__main__":
    main()
