"""The worker's consumer lets the broker hold an empty fetch for the configured time, not
Faust's fixed 1.5 s (a just-started worker's first second of input came out late). Built
without a broker: an aiokafka consumer connects only when started."""

from __future__ import annotations

import asyncio

import faust
import pytest

from streams.config.settings import Settings
from streams.kafka.faust_app import faust_app
from streams.kafka.fetch_wait import bound_fetch_wait


def fetch_wait_of(app: faust.App) -> int:
    """The fetch wait of the aiokafka consumer Faust's consumer thread would start for
    ``app`` (built, read, and closed unstarted)."""

    async def read() -> int:
        thread = app.consumer._thread  # type: ignore[attr-defined]
        consumer = thread._create_worker_consumer(app.transport)
        try:
            return int(consumer._fetch_max_wait_ms)
        finally:
            await consumer.stop()

    return asyncio.run(read())


def test_the_worker_consumer_waits_on_the_broker_for_the_configured_time() -> None:
    app = faust_app(Settings(worker_fetch_wait_ms=40), "fetch-wait-test")

    assert fetch_wait_of(app) == 40


def test_by_default_an_empty_fetch_is_held_100_ms_not_faust_s_1500() -> None:
    assert fetch_wait_of(faust_app(Settings(), "fetch-wait-default")) == 100


def test_the_bound_must_be_set_before_faust_creates_its_consumer() -> None:
    app = faust.App("fetch-wait-late", broker="kafka://127.0.0.1:9")
    _ = app.consumer

    with pytest.raises(RuntimeError, match="before the Faust consumer is created"):
        bound_fetch_wait(app, 100)
