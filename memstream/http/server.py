"""The ``memstream serve`` process: uvicorn running the API, and /metrics on its own port.

/metrics is served apart from the API (``MEMSTREAM_HTTP_METRICS_PORT``, bound to
``MEMSTREAM_METRICS_BIND``), as the worker and the projector serve theirs, so a network
policy can open the API to clients and the metrics to Prometheus only.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg
import uvicorn
from prometheus_client import disable_created_metrics, start_http_server

from memstream.http.routes import create_app
from streams.config.settings import Settings

log = logging.getLogger("memstream.http")


def serve(settings: Settings) -> int:
    """Run the API until SIGTERM/SIGINT; the exit code."""
    app = create_app(settings)  # a bad key or setting fails here, before any port opens
    disable_created_metrics()
    start_http_server(settings.http_metrics_port, addr=settings.metrics_bind)
    services = app.state.services
    services.embedder.embed(["warm up"])  # load the model now, not in the first recall
    _warn_if_reading_as_owner(services)
    config = uvicorn.Config(
        app,
        host=settings.http_bind,
        port=settings.http_port,
        log_level="info",
        access_log=False,  # paths carry user ids; metrics count requests instead
        server_header=False,
        # a request line and headers larger than this are refused by the HTTP parser
        h11_max_incomplete_event_size=settings.http_max_query_bytes + 16 * 1024,
        timeout_graceful_shutdown=20,
    )
    server = uvicorn.Server(config)
    server.run()
    return 0


def _warn_if_reading_as_owner(services: Any) -> None:
    """Say so when the API reads as a login row-level security does not bind (the tables'
    owner or a superuser, as a plain local `memstream serve` does): every user's rows are then
    one query bug away. docs/http-api.md, 'Running it', creates a reader login."""
    try:
        with services.readers.reader(timeout=5) as reader:
            row = reader.conn.execute(
                "SELECT current_user, r.rolsuper OR r.rolbypassrls"
                " OR pg_has_role(current_user, c.relowner, 'MEMBER')"
                " FROM pg_roles r, pg_class c"
                " WHERE r.rolname = current_user AND c.oid = 'semantic_facts'::regclass"
            ).fetchone()
    except (psycopg.Error, TimeoutError):
        return  # the database is not there yet: /readyz says so
    if row is not None and row[1]:
        log.warning(
            "memstream serve reads the read models as %r, which row-level security does not "
            "bind (the owner or a superuser): create a login in memstream_reader and set "
            "MEMSTREAM_HTTP_DATABASE_URL to it (docs/http-api.md, 'Running it')",
            row[0],
        )
