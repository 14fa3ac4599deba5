"""Runs the Faust worker process: metrics endpoint, then the app until SIGTERM/SIGINT.

Exactly-once needs one more thing from a persistent (RocksDB) table store: Faust writes table
changes to the local store as they happen, but a crash aborts the Kafka transaction that
carried them. Local state can then be *ahead* of the committed changelog — e.g. an event
marked seen whose ledger output was rolled back, which the restarted worker would skip as a
duplicate. Like Kafka Streams under EOS, the worker therefore trusts its local store only
after a clean shutdown; after a crash it discards it and restores the tables from the
changelog topics, which are read with ``read_committed``.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from faust.worker import Worker as FaustWorker
from prometheus_client import disable_created_metrics, start_http_server

from memstream.settings import Settings
from streams.app import build_app

log = logging.getLogger(__name__)
CLEAN_SHUTDOWN_MARKER = ".clean-shutdown"


def discard_state_after_crash(tabledir: Path, marker: Path) -> bool:
    """Remove ``tabledir`` unless ``marker`` says the last run stopped cleanly.

    The marker is consumed either way, so a crash of this run leaves none. Returns True when
    state was discarded."""
    clean = marker.exists()
    marker.unlink(missing_ok=True)
    if clean or not tabledir.exists() or not any(tabledir.iterdir()):
        return False
    shutil.rmtree(tabledir)
    return True


def run_worker(settings: Settings, loglevel: str = "INFO") -> None:
    settings.worker_data_dir.mkdir(parents=True, exist_ok=True)
    disable_created_metrics()
    start_http_server(settings.worker_metrics_port, addr="0.0.0.0")
    worker = build_app(settings)
    persistent = not settings.table_store.startswith("memory:")
    marker = Path(worker.app.conf.tabledir) / CLEAN_SHUTDOWN_MARKER
    tabledir = Path(worker.app.conf.tabledir)
    if persistent and discard_state_after_crash(tabledir, marker):
        print(
            f"memstream worker: the last run did not stop cleanly; discarded local table state "
            f"in {tabledir}, it is restored from the changelog topics",
            flush=True,
        )
    print(
        f"memstream worker: {settings.events_topic} -> {settings.ledger_topic} "
        f"(store {settings.table_store}, metrics :{settings.worker_metrics_port}/metrics)",
        flush=True,
    )
    exit_code: object = 1
    try:
        FaustWorker(worker.app, loglevel=loglevel).execute_from_commandline()
        exit_code = 0
    except SystemExit as exc:
        exit_code = exc.code
        raise
    finally:
        if persistent and exit_code in (0, None):
            tabledir.mkdir(parents=True, exist_ok=True)
            marker.touch()
