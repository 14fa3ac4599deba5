"""The ``memstream up`` / ``down`` / ``status`` subcommands (argparse wiring only).

Progress goes to stderr and the connection settings to stdout as ``export NAME='value'`` lines,
so ``eval "$(memstream up)"`` configures the current shell. The settings come from
:meth:`Settings.from_env`, so ``MEMSTREAM_STATE_DIR`` selects which stack is meant.
This module must never hold stack logic of its own: it calls :class:`LocalStack` and prints.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memstream.stack import DEFAULT_KAFKA_VERSION, LocalStack, StackError
from streams.config.settings import Settings, SettingsError

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_NOT_RUNNING = 3


def add_stack_commands(subparsers: Any) -> None:
    """Register ``up``, ``down`` and ``status`` on an argparse subparsers object."""
    up = subparsers.add_parser(
        "up",
        help="start the local stack (Kafka broker + PostgreSQL/pgvector)",
        description="Start the local Kafka broker and PostgreSQL, apply migrations, create the "
        "topics, and print the connection settings as export lines "
        '(eval "$(memstream up)" sets them in this shell). Running it again is a no-op.',
    )
    up.add_argument(
        "--kafka-port",
        type=_port,
        default=None,
        help="TCP port for the broker on 127.0.0.1 (default: the port used last time if it is "
        "free, else a free one)",
    )
    up.add_argument(
        "--partitions",
        type=_positive_int,
        default=None,
        help="partitions of the memstream topics (default: MEMSTREAM_PARTITIONS or 12)",
    )
    up.add_argument(
        "--kafka-version",
        default=DEFAULT_KAFKA_VERSION,
        help=f"Apache Kafka version resolved from Maven Central (default {DEFAULT_KAFKA_VERSION})",
    )
    up.add_argument(
        "--secure",
        action="store_true",
        default=None,
        help="a new stack's broker accepts only SASL_SSL (SCRAM-SHA-512, a local CA) and "
        "enforces ACLs; the client password goes to a 0600 file in the state dir, never to "
        "stdout or stack.env (default: keep the mode the state dir already has)",
    )
    up.add_argument(
        "--registry",
        action="store_true",
        help="also start a local Schema Registry (Apicurio, Confluent-compatible API; fetched "
        "from Maven Central once, ~142 MB) and export MEMSTREAM_SCHEMA_REGISTRY_URL; set "
        "MEMSTREAM_WIRE_FORMAT=confluent to write its ids",
    )
    up.add_argument(
        "--sealed",
        action="store_true",
        help="make the stack a master key (secrets/master.key, 0600) if it has none and "
        "export MEMSTREAM_MASTER_KEY_FILE: personal fields are sealed and forgetting erases "
        "them (docs/security.md); a stack with a key keeps it on every later up",
    )
    up.set_defaults(func=run_up)

    down = subparsers.add_parser(
        "down", help="stop the local stack (its data is kept for the next up)"
    )
    down.set_defaults(func=run_down)

    status = subparsers.add_parser(
        "status", help="show what the local stack runs where (exit 3 when not running)"
    )
    status.set_defaults(func=run_status)


def run_up(args: argparse.Namespace) -> int:
    try:
        settings = Settings.from_env()
        if args.partitions is not None:
            settings = settings.with_overrides(partitions=args.partitions)
        stack = LocalStack(settings, kafka_version=args.kafka_version)
        info = stack.up(
            kafka_port=args.kafka_port,
            progress=_progress,
            secure=args.secure,
            registry=args.registry,
            sealed=args.sealed,
        )
    except (StackError, SettingsError) as exc:
        return _fail(exc)
    for name, value in info.env().items():
        print(f"export {name}='{value}'")
    return EXIT_OK


def run_down(args: argparse.Namespace) -> int:
    try:
        LocalStack(Settings.from_env()).down(progress=_progress)
    except (StackError, SettingsError) as exc:
        return _fail(exc)
    return EXIT_OK


def run_status(args: argparse.Namespace) -> int:
    try:
        status = LocalStack(Settings.from_env()).status()
    except (StackError, SettingsError) as exc:
        return _fail(exc)
    print("\n".join(status.lines()))
    return EXIT_OK if status.running else EXIT_NOT_RUNNING


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _fail(exc: Exception) -> int:
    print(f"error: {exc}", file=sys.stderr)
    return EXIT_ERROR


def _port(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a TCP port (1-65535)")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return value
