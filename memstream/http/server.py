"""The ``memstream serve`` process: uvicorn running the API, and /metrics on its own port.

/metrics is served apart from the API (``MEMSTREAM_HTTP_METRICS_PORT``, bound to
``MEMSTREAM_METRICS_BIND``), as the worker and the projector serve theirs, so a network
policy can open the API to clients and the metrics to Prometheus only.
"""

from __future__ import annotations

import logging

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
