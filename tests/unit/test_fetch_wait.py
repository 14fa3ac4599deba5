"""The worker's consumer lets the broker hold an empty fetch for the configured time, not
Faust's fixed 1.5 s (a just-started worker's first second of input came out late). Built
without a broker: an aiokafka consumer connects only when started."""

from __future__ import annotations

import asyncio
from typing import Any

import faust
import pytest

from memstream.settings import Settings
from streams.app import faust_app
from streams.fetch_wait import bound_fetch_wait


def worker_consumer(app: faust.App) -> Any:
    """The aiokafka consumer Faust's consumer thread would start for ``app``."""

    async def create() -> Any:
        thread = app.consumer._thread  # type: ignore[attr-defined]
        return thread._create_worker_consumer(app.transport)

    return asyncio.run(create())


def test_the_worker_consumer_waits_on_the_broker_for_the_configured_time() -> None:
    consumer = worker_consumer(faust_app(Settings(worker_fetch_wait_ms=40), "fetch-wait-test"))

    assert consumer._fetch_max_wait_ms == 40


def test_by_default_an_empty_fetch_is_held_100_ms_not_faust_s_1500() -> None:
    consumer = worker_consumer(faust_app(Settings(), "fetch-wait-default"))

    assert consumer._fetch_max_wait_ms == 100


def test_the_bound_must_be_set_before_faust_creates_its_consumer() -> None:
    app = faust.App("fetch-wait-late", broker="kafka://127.0.0.1:9")
    _ = app.consumer

    with pytest.raises(RuntimeError, match="before the Faust consumer is created"):
        bound_fetch_wait(app, 100)
