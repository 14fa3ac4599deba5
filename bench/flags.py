"""Command-line flags ``memstream bench`` and ``python -m bench`` share; argparse only, so
building ``memstream``'s parser does not import the benchmark."""

from __future__ import annotations

import argparse


def add_keep_flag(parser: argparse._ActionsContainer) -> None:  # a parser or a group
    """``--keep``: every benchmark removes its run's topics and databases unless given."""
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the run's topics and databases for inspection (default: removed at the end)",
    )


def add_cleanup_flags(parser: argparse.ArgumentParser) -> None:
    """``--keep`` and ``--clean``, shared with ``memstream bench``."""
    cleanup = parser.add_mutually_exclusive_group()
    add_keep_flag(cleanup)
    cleanup.add_argument(
        "--clean",
        action="store_true",
        help="only remove the topics and databases earlier runs left, then exit",
    )


def add_processes_flags(parser: argparse.ArgumentParser) -> None:
    """``--worker-processes`` and ``--projector-processes``: how many processes the
    throughput phases run."""
    parser.add_argument(
        "--worker-processes",
        type=int,
        default=None,
        help="worker processes in the worker phases, and pass-through agents in its baseline "
        "(default: one per core, at most one per partition)",
    )
    parser.add_argument(
        "--projector-processes",
        type=int,
        default=None,
        help="projector processes in the projector phase (default: one per core, at most "
        "one per partition)",
    )
