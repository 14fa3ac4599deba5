"""The projector's Prometheus metrics (docs/operations.md, 'Metrics'). Labels never carry user ids
or content."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from streams.kafka.consumer_lag import consumer_lag as consumer_lag  # one gauge, both processes

projector_rows = Counter("memstream_projector_rows", "Rows written to the read models.", ["table"])
projector_events = Counter(
    "memstream_projector_events", "Ledger events applied to the read models.", ["event_type"]
)
projector_batch = Histogram(
    "memstream_projector_batch_seconds",
    "Time to apply one batch (rows + offsets, one transaction).",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
projector_lag = Gauge(
    "memstream_projector_lag_seconds",
    "Wall time minus the event time of the last applied ledger event.",
)
projector_retries = Counter(
    "memstream_projector_retries", "Batch attempts that failed and were retried."
)
projector_undecodable = Counter(
    "memstream_projector_undecodable",
    "Corrupt ledger records the projector could not decode (skipped, dead-lettered).",
)
projector_unprojectable = Counter(
    "memstream_projector_unprojectable",
    "Ledger records whose rows could not be built or stored (skipped, dead-lettered).",
)
projector_stale_batches = Counter(
    "memstream_projector_stale_batches",
    "Batches dropped unapplied because the stored position was already past their start.",
)
projector_held_back = Counter(
    "memstream_projector_emissions_held_back",
    "Batches that ended inside one input's output, which was held back and read again whole.",
)
projector_partial_emission_events = Counter(
    "memstream_projector_partial_emission_events",
    "Ledger events of an input's output that was only partly committed and then emitted "
    "again whole: skipped, never applied as if complete.",
)
