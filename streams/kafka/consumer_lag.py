"""The consumer-lag gauge both processes export (``memstream_consumer_lag``, docs/operations.md,
'Metrics').

Defined once, here, because a metric name can be registered only once per process: the worker's
and the projector's metrics modules each defined it, so code (or a test) importing both failed
at import with ``DuplicateTimeseries``."""

from __future__ import annotations

from prometheus_client import Gauge

consumer_lag = Gauge(
    "memstream_consumer_lag",
    "Records behind the partition's high watermark.",
    ["topic", "partition"],
)
