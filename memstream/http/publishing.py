"""Acknowledged writes: publish one event and wait until Kafka has it.

:class:`memstream.publisher.MemoryPublisher` confirms deliveries in bulk (``flush``), which
suits a batch job; a request handler needs its own event's acknowledgement, without waiting
for every other request's. :class:`AckingPublisher` keeps one future per event id, resolved
by the producer's delivery callback, which a background thread serves.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from typing import Any

from confluent_kafka import KafkaError, Message

from memstream.publisher import MemoryPublisher
from streams.config.settings import Settings
from streams.engine.model import MemoryEvent


class NotAcknowledged(RuntimeError):
    """Kafka refused the event or did not answer in time."""


class AckingPublisher(MemoryPublisher):
    """A :class:`MemoryPublisher` whose :meth:`publish_acked` returns once the broker has
    acknowledged that one event (``acks=all``, idempotent producer)."""

    def __init__(self, settings: Settings, *, source: str = "http-api") -> None:
        # linger 1 ms: a request waits for its own acknowledgement, so batching longer only
        # adds latency; concurrent requests still share batches.
        super().__init__(settings, source=source, producer_config={"linger.ms": 1})
        self._lock = threading.Lock()
        self._waiting: dict[str, list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]]
        self._waiting = defaultdict(list)
        self._stopping = threading.Event()
        self._poller = threading.Thread(target=self._serve_callbacks, daemon=True, name="acks")
        self._poller.start()

    def _serve_callbacks(self) -> None:
        while not self._stopping.is_set():
            self._producer.poll(0.05)

    def _delivered(self, err: KafkaError | None, msg: Message, *, label: str) -> None:
        with self._lock:
            waiting = self._waiting.pop(label, [])
        for loop, future in waiting:
            loop.call_soon_threadsafe(_settle, future, err)

    async def publish_acked(self, event: MemoryEvent, timeout: float = 10.0) -> None:
        """Publish ``event`` and wait for its acknowledgement; :class:`NotAcknowledged` if it
        is refused or not acknowledged within ``timeout`` seconds (the event may still land:
        a retry with the same event id is deduplicated by the worker)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            self._waiting[event.event_id].append((loop, future))
        try:
            if self.sealing is not None:
                # sealing a write makes its memory's key (a committed row): off the event loop,
                # so concurrent writes share the key store's commits instead of queueing
                await asyncio.to_thread(self.publish, event)
            else:
                self.publish(event)
        except BaseException:
            with self._lock:
                self._waiting.pop(event.event_id, None)
            raise
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            with self._lock:
                self._waiting.pop(event.event_id, None)
            raise NotAcknowledged(f"no acknowledgement within {timeout:g} s") from None

    def reachable(self, timeout: float = 2.0) -> bool:
        """Whether the broker answers a metadata request for the events topic."""
        try:
            metadata = self._producer.list_topics(self.topic, timeout=timeout)
        except Exception:  # noqa: BLE001 - any failure means "not ready"
            return False
        topic = metadata.topics.get(self.topic)
        return topic is not None and topic.error is None

    def close(self) -> None:
        self._stopping.set()
        self._poller.join(timeout=2)
        self._producer.flush(5)


def _settle(future: asyncio.Future[None], err: Any) -> None:
    if future.done():
        return
    if err is None:
        future.set_result(None)
    else:
        future.set_exception(NotAcknowledged(str(err)))
