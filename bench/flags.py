"""Command-line flags ``memstream bench`` and ``python -m bench`` share; argparse only, so
building ``memstream``'s parser does not import the benchmark."""

from __future__ import annotations

import argparse


def add_cleanup_flags(parser: argparse.ArgumentParser) -> None:
    """``--keep`` and ``--clean``, shared with ``memstream bench``."""
    cleanup = parser.add_mutually_exclusive_group()
    cleanup.add_argument(
        "--keep",
        action="store_true",
        help="keep the run's topics and databases for inspection (default: removed at the end)",
    )
    cleanup.add_argument(
        "--clean",
        action="store_true",
        help="only remove the topics and databases earlier runs left, then exit",
    )
