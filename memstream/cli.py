"""The ``memstream`` command: run the local stack, the worker, the projector, and tools.

Each subcommand is a thin wrapper: parse flags, build :class:`Settings`, call the module
that does the work, turn expected failures into one clear line and a non-zero exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from projections.recall_order import DEFAULT_DIVERSITY
from streams.config.settings import Settings, SettingsError
from streams.runtime.native_threads import single_threaded_blas

if TYPE_CHECKING:
    from memstream.consolidate import UserReport


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.from_env()


def cmd_migrate(args: argparse.Namespace) -> int:
    from projections.schema import migrate

    settings = _settings(args)
    applied = migrate(settings.database_url, settings.embedding_dim, settings.vector_index)
    print(f"migrations applied: {', '.join(applied)}" if applied else "read models up to date")
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    from streams.runtime.worker_processes import run_worker_processes

    return run_worker_processes(_settings(args), loglevel=args.loglevel)


def cmd_project(args: argparse.Namespace) -> int:
    from projections.projector_processes import run_projector_processes

    return run_projector_processes(_settings(args))


def cmd_publish(args: argparse.Namespace) -> int:
    from memstream.jsonl import read_events
    from memstream.publisher import MemoryPublisher, PublishError, now_millis

    path = Path(args.file)
    if not path.exists():
        print(f"error: {path} does not exist", file=sys.stderr)
        return 2
    published = failed = 0
    publisher = MemoryPublisher(_settings(args), source=args.source)
    for line in read_events(path, now_millis()):
        if line.error is not None:
            failed += 1
            print(f"{path}:{line.number}: {line.error}", file=sys.stderr)
            continue
        assert line.event is not None
        try:
            publisher.publish(line.event)
        except (TypeError, ValueError, OverflowError) as exc:  # a value the schema refuses
            failed += 1
            print(f"{path}:{line.number}: does not fit the contract: {exc}", file=sys.stderr)
            continue
        published += 1
    try:
        publisher.flush()
    except PublishError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"published {published} event(s) to {publisher.topic}; {failed} line(s) rejected")
    return 1 if failed else 0


def cmd_consolidate(args: argparse.Namespace) -> int:
    from memstream import consolidate

    settings = _settings(args)
    if args.all == bool(args.user):
        print("error: name one user with --user U, or all users with --all", file=sys.stderr)
        return 2
    if args.profile:
        from streams.engine.policy import PolicyError, builtin_profile

        try:
            builtin_profile(args.profile)
        except PolicyError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    users = consolidate.known_users(settings) if args.all else [args.user]
    if not users:
        print("no users in the read models yet: nothing to consolidate")
        return 0
    cycles = consolidate.request_cycles(
        settings, users, conversation_id=args.conversation, force=args.force, profile=args.profile
    )
    for user, cycle_id in cycles.items():
        print(f"consolidation requested for {user} (cycle {cycle_id})")
    reports = _reports_if_waiting(args, settings, cycles)
    if reports is None:
        return 1
    if args.wait:
        print(consolidate.format_aggregate(reports))
    return 0


def _reports_if_waiting(
    args: argparse.Namespace, settings: Settings, cycles: dict[str, str]
) -> list[UserReport] | None:
    """With ``--wait``, the cycles' reports (None, having said why, if they did not come in
    time); without it, no reports."""
    from memstream import consolidate
    from memstream.waiting import WaitTimeout

    if not args.wait:
        return []
    try:
        return consolidate.wait_for_reports(settings, cycles, timeout=args.timeout)
    except WaitTimeout as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def cmd_procedural(args: argparse.Namespace) -> int:
    """Seed 004's ``create_procedural``: synthesize the user's ONE behavioural profile."""
    return _operation(args, "procedural", "procedural profile synthesis")


def cmd_identity_reset(args: argparse.Namespace) -> int:
    """Seed 002's manual origin reset: the current anchor becomes the origin (drift 0)."""
    return _operation(args, "identity_reset", "identity origin reset")


def _operation(args: argparse.Namespace, operation: str, what: str) -> int:
    from memstream import consolidate

    settings = _settings(args)
    cycles = consolidate.request_operations(settings, [args.user], operation)
    print(f"{what} requested for {args.user} (cycle {cycles[args.user]})")
    reports = _reports_if_waiting(args, settings, cycles)
    if reports is None:
        return 1
    if not args.wait:
        return 0
    warnings = [w for report in reports for w in report.warnings]
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"{what} done for {args.user}" + (" (with warnings)" if warnings else ""))
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    """Forget a user: the data key now (sealing on), then state and read models."""
    from memstream.publisher import MemoryPublisher

    settings = _settings(args)
    with MemoryPublisher(settings, source="memstream-cli") as publisher:
        event_id = publisher.forget_user(args.user, args.reason)
    sealed = "data key destroyed; " if settings.sealing else ""
    print(f"{args.user} forgotten: {sealed}UserForgotten published (event {event_id})")
    return 0


def cmd_keys_rotate(args: argparse.Namespace) -> int:
    """Master-key rotation: every data key wrapped by a retired master key is re-wrapped by
    the configured one. No log record changes: they are sealed with the data keys."""
    from streams.erasure.data_keys import LocalMasterKey, MasterKeyError, PostgresKeyStore
    from streams.erasure.sealing import master_key_of, retired_master_keys_of

    settings = _settings(args)
    try:
        master = master_key_of(settings)
        if master is None:
            print(
                "error: no master key configured: set MEMSTREAM_MASTER_KEY_FILE to the new key",
                file=sys.stderr,
            )
            return 2
        retired = [LocalMasterKey.from_file(Path(p)) for p in args.retired_key_file]
        retired += retired_master_keys_of(settings)  # MEMSTREAM_MASTER_KEY_RETIRED_FILES
        store = PostgresKeyStore(
            settings.keys_database_url or settings.database_url, master, retired=retired
        )
        try:
            rewrapped = store.rewrap()
        finally:
            store.close()
    except MasterKeyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{rewrapped} data key(s) re-wrapped by master key {master.key_id}")
    return 0


def cmd_rebuild_state(args: argparse.Namespace) -> int:
    """Disaster recovery: the workers' state from the ledger instead of the state changelog."""
    from streams.state.restore import reset_state_topic, state_topic

    settings = _settings(args)
    if not args.yes:
        print(
            f"this drops {state_topic(settings)}; every worker then rebuilds its state from "
            f"{settings.ledger_topic} at its next start (cost: the whole ledger). Stop every "
            "worker first, then run again with --yes",
            file=sys.stderr,
        )
        return 2
    reset_state_topic(settings)
    print(f"{state_topic(settings)} is empty: start the workers to rebuild from the ledger")
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    """A user's memories for a text, as a service would get them (``MemoryReader.recall``)."""
    from projections.grants import GrantKeyError
    from projections.reader import MemoryReader
    from streams.embedders.base import EmbedderUnavailable
    from streams.embedders.factory import embedder_for

    settings = _settings(args)
    try:
        embedder = embedder_for(settings.embedder.lower(), settings.embedding_dim)
        with MemoryReader.connect(
            settings.database_url, grant_key_file=settings.reader_grant_key_file or None
        ) as reader:
            found = reader.recall(
                args.user,
                args.text,
                embedder,
                k=args.k,
                include_archived=args.include_archived,
                ranking=args.ranking,
                diversity=args.diversity,
            )
    except EmbedderUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except GrantKeyError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    if not found:
        print(f"no memories for {args.user}", file=sys.stderr)
        return 0
    for memory in found:
        state = "current" if memory.current else memory.status
        print(
            f"{memory.score:.3f}  sim {memory.similarity:.3f}  salience {memory.salience:.2f}  "
            f"{memory.layer:<10} {state:<10} {memory.memory_id}  {memory.content[:120]}"
        )
        if memory.derived_from:
            print(f"       derived from: {', '.join(memory.derived_from)}")
        if memory.summarized_into:
            print(f"       summarized into: {', '.join(memory.summarized_into)}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """The HTTP API (memstream/http/, docs/http-api.md)."""
    from memstream.http.server import serve

    settings = _settings(args)
    overrides: dict[str, object] = {}
    if args.bind is not None:
        overrides["http_bind"] = args.bind
    if args.port is not None:
        overrides["http_port"] = args.port
    return serve(settings.with_overrides(**overrides) if overrides else settings)


def cmd_demo(args: argparse.Namespace) -> int:
    from memstream.demo import run_demo

    return run_demo(_settings(args), users=args.users)


class BenchmarkUnavailable(RuntimeError):
    """This installation has no benchmark: it is not in the wheel, only in a source checkout."""


def benchmark(module: str) -> ModuleType:
    """A module of the benchmark, which lives in the source checkout (``bench/`` beside
    ``memstream/``) and is not installed with the package: a service's image has no use for
    it, and its results and data would ride along in every wheel."""
    checkout = Path(__file__).resolve().parents[1]
    if (checkout / "bench" / "__init__.py").is_file() and str(checkout) not in sys.path:
        sys.path.append(str(checkout))
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != "bench":
            raise
        raise BenchmarkUnavailable(
            "memstream bench runs from a source checkout of memstream (bench/ beside "
            "memstream/): clone the repository, `pip install -e .` there, and run it again"
        ) from None


def cmd_bench(args: argparse.Namespace) -> int:
    try:
        clean_bench = benchmark("bench.cleanup").clean_bench
        run_bench = benchmark("bench.run").run_bench
    except BenchmarkUnavailable as exc:
        print(f"memstream bench: {exc}", file=sys.stderr)
        return 2
    if args.clean:
        return clean_bench(_settings(args))
    return run_bench(
        _settings(args),
        events=args.events,
        users=args.users,
        keep=args.keep,
        projector_processes=args.projector_processes,
        worker_processes=args.worker_processes,
    )


def cmd_tail(args: argparse.Namespace) -> int:
    """The ledger as JSON lines on stdout, counts on stderr (the JSON form: memstream/tail.py)."""
    from memstream.tail import (
        Tail,
        TailError,
        TailFilter,
        ledger_decoder,
        ledger_opener,
        run_tail,
        write_safely,
    )

    if args.max is not None and args.max < 1:
        print("error: --max needs a positive number of events", file=sys.stderr)
        return 2
    if args.timeout is not None and args.timeout <= 0:
        print("error: --timeout needs a positive number of seconds", file=sys.stderr)
        return 2
    try:
        wanted = TailFilter(frozenset(args.event_types or ()), args.user)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        settings = _settings(args)
        decode = ledger_decoder(settings)  # both wire formats (Schema Registry ids resolved)
        tail = Tail(
            wanted,
            sys.stdout,
            sys.stderr,
            max_events=args.max,
            embeddings=args.embeddings,
            decode=decode,
            open=ledger_opener(settings),
        )
        stats = run_tail(settings, tail, from_beginning=args.from_beginning, timeout=args.timeout)
    except TailError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `memstream tail | head`: the reader has all it wanted
        write_safely(sys.stdout)
        return 0
    print(stats.summary(), file=sys.stderr)
    return 0


def diversity_argument(text: str) -> float:
    """``--diversity``: a number from 0 to 1, refused with what to give instead."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not between 0 and 1: give e.g. {DEFAULT_DIVERSITY} (the default), "
            "or 0 to keep alike memories in the ranking's order"
        )
    return value


def build_parser() -> argparse.ArgumentParser:
    try:
        bench_flags: ModuleType | None = benchmark("bench.flags")
    except BenchmarkUnavailable:
        bench_flags = None  # `memstream bench` then says where it runs

    parser = argparse.ArgumentParser(
        prog="memstream",
        description="Consolidate AI-agent memory in the stream: Kafka + Faust + PostgreSQL.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from memstream.stack.commands import add_stack_commands

    add_stack_commands(sub)

    p = sub.add_parser("migrate", help="apply the read-model migrations to MEMSTREAM_DATABASE_URL")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser("worker", help="run the Faust worker (memory.events -> ledger)")
    p.add_argument("--loglevel", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser("project", help="run the projector (ledger -> PostgreSQL read models)")
    p.set_defaults(func=cmd_project)

    p = sub.add_parser("publish", help="publish events from a JSON Lines file")
    p.add_argument("file", help="one JSON event per line (see memstream/jsonl.py)")
    p.add_argument("--source", default="cli", help="the envelope's source (default: cli)")
    p.set_defaults(func=cmd_publish)

    p = sub.add_parser("consolidate", help="request consolidation cycles (one user or all)")
    p.add_argument("--user", help="the user to consolidate")
    p.add_argument("--all", action="store_true", help="every user the read models know")
    p.add_argument("--conversation", help="limit working-memory promotion to a conversation")
    p.add_argument("--force", action="store_true", help="run even where automatic is off")
    p.add_argument("--profile", help="policy profile for this cycle (default: the worker's)")
    p.add_argument("--wait", action="store_true", help="wait for the reports and print them")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait (with --wait)")
    p.set_defaults(func=cmd_consolidate)

    p = sub.add_parser("procedural", help="synthesize a user's procedural profile (seed 004)")
    _operation_arguments(p)
    p.set_defaults(func=cmd_procedural)

    p = sub.add_parser(
        "forget", help="forget a user: data key, state and read models (crypto-shredding)"
    )
    p.add_argument("--user", required=True, help="the user id to forget")
    p.add_argument("--reason", default="user_request", help="recorded on the ledger")
    p.set_defaults(func=cmd_forget)

    p = sub.add_parser("keys", help="the users' data keys (crypto-shredding)")
    keys = p.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    p = keys.add_parser(
        "rotate", help="re-wrap every data key with the configured master key (no log change)"
    )
    p.add_argument(
        "--retired-key-file",
        action="append",
        default=[],
        required=True,
        help="a master key file data keys may still be wrapped with (repeatable)",
    )
    p.set_defaults(func=cmd_keys_rotate)

    p = sub.add_parser("identity", help="a user's identity anchor (seed 002)")
    identity = p.add_subparsers(dest="identity_command", required=True, metavar="ACTION")
    p = identity.add_parser(
        "reset", help="make the current anchor the origin (never done automatically)"
    )
    _operation_arguments(p)
    p.set_defaults(func=cmd_identity_reset)

    p = sub.add_parser("recall", help="a user's memories for a text, best first")
    p.add_argument("--user", required=True, help="the user")
    p.add_argument("text", help="what to recall, in words")
    p.add_argument("--k", type=int, default=5, help="how many memories (default 5)")
    p.add_argument(
        "--include-archived",
        action="store_true",
        help="also archived, superseded and invalidated memories (ranked below current ones)",
    )
    p.add_argument(
        "--ranking",
        choices=["hybrid", "vector"],
        default="hybrid",
        help="hybrid (default): by meaning and by words (names, numbers, rare words); "
        "vector: by meaning alone",
    )
    p.add_argument(
        "--diversity",
        type=diversity_argument,
        default=DEFAULT_DIVERSITY,
        help="0-1: how much a memory's likeness to one already chosen costs it, so that "
        f"the k say different things (default {DEFAULT_DIVERSITY}; 0: none)",
    )
    p.set_defaults(func=cmd_recall)

    p = sub.add_parser(
        "rebuild-state", help="disaster recovery: rebuild the workers' state from the ledger"
    )
    p.add_argument("--yes", action="store_true", help="drop the state changelog (workers stopped)")
    p.set_defaults(func=cmd_rebuild_state)

    p = sub.add_parser("serve", help="the HTTP API: write and recall over HTTP (OpenAPI)")
    p.add_argument("--bind", help="address to listen on (default: MEMSTREAM_HTTP_BIND)")
    p.add_argument("--port", type=int, help="port to listen on (default: MEMSTREAM_HTTP_PORT)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("demo", help="up + worker + projector + sample events, then show the result")
    p.add_argument("--users", type=int, default=5, help="users to write sample events for (5)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("bench", help="throughput/latency ratios vs a bare Faust agent and raw COPY")
    p.add_argument("--events", type=int, default=20000, help="inputs per throughput phase (20,000)")
    p.add_argument(
        "--users",
        type=int,
        default=50,
        help="users the inputs are spread over, in conversations of 20 (50)",
    )
    if bench_flags is not None:
        bench_flags.add_processes_flags(p)
        bench_flags.add_cleanup_flags(p)
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("tail", help="print the ledger as JSON lines (for jq), filtered")
    p.add_argument(
        "--event-type",
        dest="event_types",
        action="append",
        metavar="T",
        help="only this ledger event type, e.g. MemoryStored (repeat for several)",
    )
    p.add_argument("--user", help="only this user's events (the record key)")
    p.add_argument(
        "--from-beginning", action="store_true", help="start at the oldest event (default: new)"
    )
    p.add_argument("--max", type=int, metavar="N", help="stop after printing N events")
    p.add_argument(
        "--timeout", type=float, metavar="S", help="stop after S seconds with no new record"
    )
    p.add_argument(
        "--embeddings",
        choices=["omit", "base64"],
        default="omit",
        help="bytes fields (embeddings, anchors): left out, or base64 of the float32 bytes",
    )
    p.set_defaults(func=cmd_tail)
    return parser


def _operation_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", required=True, help="the user")
    p.add_argument("--wait", action="store_true", help="wait until it is done")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait (with --wait)")


def main(argv: Sequence[str] | None = None) -> int:
    single_threaded_blas()  # before any command imports numpy (streams/runtime/native_threads.py)
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except SettingsError as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
