"""The API's Prometheus metrics (prefix ``memstream_http_``). Labels are the route template,
the method, the status and refusal reasons: never a user id, a token or content."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

requests = Counter(
    "memstream_http_requests_total",
    "HTTP requests answered, by route template, method and status code",
    ["route", "method", "status"],
)
request_seconds = Histogram(
    "memstream_http_request_seconds",
    "Time to answer a request, by route template and method",
    ["route", "method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
publish_seconds = Histogram(
    "memstream_http_publish_seconds",
    "Time from publishing an event to Kafka's acknowledgement",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
events_published = Counter(
    "memstream_http_events_published_total",
    "Events acknowledged by Kafka, by event type",
    ["event_type"],
)
refused = Counter(
    "memstream_http_refused_total",
    "Requests refused before reaching a route's work, by reason",
    ["reason"],
)
