"""The dead-letter record's headers, defined once for the worker and the projector.

A dead letter is the original record (key and value untouched) plus headers that say why it
was refused and where it came from, so an operator can fix and re-publish it:
``reason`` (machine-readable), ``detail`` (for humans), ``source.topic``,
``source.partition``, ``source.offset``.
"""

from __future__ import annotations

Headers = list[tuple[str, bytes]]


def source_headers(topic: str, partition: int, offset: int) -> Headers:
    return [
        ("source.topic", topic.encode()),
        ("source.partition", str(partition).encode()),
        ("source.offset", str(offset).encode()),
    ]


def letter_headers(reason: str, detail: str, source: Headers) -> Headers:
    return [("reason", reason.encode()), ("detail", detail.encode()), *source]
