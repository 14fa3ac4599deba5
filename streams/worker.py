"""Runs the Faust worker process: metrics endpoint, then the app until SIGTERM/SIGINT."""

from __future__ import annotations

import logging

from faust.worker import Worker as FaustWorker
from prometheus_client import start_http_server

from memstream.settings import Settings
from streams.app import build_app

log = logging.getLogger(__name__)


def run_worker(settings: Settings, loglevel: str = "INFO") -> None:
    settings.worker_data_dir.mkdir(parents=True, exist_ok=True)
    start_http_server(settings.worker_metrics_port, addr="0.0.0.0")
    worker = build_app(settings)
    print(
        f"memstream worker: {settings.events_topic} -> {settings.ledger_topic} "
        f"(store {settings.table_store}, metrics :{settings.worker_metrics_port}/metrics)",
        flush=True,
    )
    FaustWorker(worker.app, loglevel=loglevel).execute_from_commandline()
