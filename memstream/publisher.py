"""The publisher services use to write memory events: idempotent, Avro, keyed by user_id.

A write is acknowledged by Kafka in milliseconds; consolidation happens later, in the stream.
This is an edge module: it reads the clock and draws random ids for new events, which the
engine never does.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from functools import partial
from types import TracebackType
from typing import Any

from confluent_kafka import KafkaError, Message, Producer

from streams.config.kafka_security import confluent_config
from streams.config.settings import WIRE_FORMATS, Settings, SettingsError, check_schema_registry
from streams.engine.model import (
    ConsolidationRequested,
    ForgetRequested,
    InputPayload,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryPinned,
    MemoryUnpinned,
    MemoryWritten,
    SessionEnded,
    UserForgotten,
)
from streams.engine.validation import MAX_EVENT_BYTES
from streams.erasure.sealing import sealing_of
from streams.kafka import codec
from streams.kafka.schema_registry import contract_registry


class EventTooLarge(ValueError):
    """An event over the worker's record limit: it would only be dead-lettered."""

    def __init__(self, event_id: str, size: int) -> None:
        super().__init__(
            f"event {event_id} encodes to {size:,} bytes; the worker takes at most "
            f"{MAX_EVENT_BYTES:,} (its ledger record must fit Kafka's 1 MB record limit). "
            f"Keep large documents out of memories: store them elsewhere and write a reference."
        )
        self.event_id = event_id
        self.size = size


class PublishError(RuntimeError):
    """Kafka did not acknowledge some events; ``failures`` lists (event_id, error)."""

    def __init__(self, failures: list[tuple[str, str]]) -> None:
        first = "; ".join(f"{eid}: {err}" for eid, err in failures[:3])
        super().__init__(
            f"{len(failures)} event(s) were not acknowledged by Kafka ({first}). "
            f"Check that the broker is up (`memstream status`) and publish them again: "
            f"their event_ids make the retry idempotent."
        )
        self.failures = failures


def now_millis() -> int:
    return int(time.time() * 1000)


def _with_wire_format(settings: Settings, wire_format: str) -> Settings:
    chosen = wire_format.strip().upper()
    if chosen not in WIRE_FORMATS:
        raise SettingsError(
            f"wire format {wire_format!r} is not one of {', '.join(WIRE_FORMATS).lower()}"
        )
    changed = settings.with_overrides(wire_format=chosen)
    check_schema_registry(changed)
    return changed


class MemoryPublisher:
    """Publishes :class:`MemoryEvent` s to ``memory.events``.

    >>> with MemoryPublisher() as pub:                       # doctest: +SKIP
    ...     pub.write("user-1", "Project uses PostgreSQL", importance=0.8)
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        source: str = "unknown",
        producer_config: dict[str, Any] | None = None,
        wire_format: str | None = None,
    ) -> None:
        """``wire_format``: ``single-object`` or ``confluent`` (a Schema Registry id; needs
        ``MEMSTREAM_SCHEMA_REGISTRY_URL``), instead of ``MEMSTREAM_WIRE_FORMAT``."""
        self.settings = settings or Settings.from_env()
        if wire_format is not None:
            self.settings = _with_wire_format(self.settings, wire_format)
        self.source = source
        self.topic = self.settings.events_topic
        self.registry = contract_registry(self.settings, writes=("MemoryEvent",))
        # with a master key, a write's personal fields are sealed with the user's data key
        # before they leave this process (streams/erasure/); its key is made on first use
        self.sealing = sealing_of(self.settings)
        self._failures: list[tuple[str, str]] = []
        self._producer = Producer(
            {
                **confluent_config(self.settings),
                "enable.idempotence": True,
                "acks": "all",
                # murmur2 is what the Java client and aiokafka use: every producer of a user
                # lands on the same partition, hence the same worker.
                "partitioner": "murmur2_random",
                "linger.ms": 5,
                "compression.type": "lz4",
                **(producer_config or {}),
            }
        )

    # -- typed helpers ------------------------------------------------------------------------

    def write(
        self,
        user_id: str,
        content: str,
        *,
        memory_id: str | None = None,
        speaker: str | None = None,
        embedding: Sequence[float] | bytes | None = None,
        occurred_at: int | None = None,
        event_id: str | None = None,
        **fields: Any,
    ) -> str:
        """Write (or, with an existing ``memory_id``, update) a memory. Returns the memory id.

        ``speaker``: who said it, by name ("Caroline"), so that what consolidation writes
        of it is attributed to that person; leave it None when ``created_by`` (user, agent,
        system) already says who. ``fields`` are any other :class:`Memory` fields (layer,
        kind, importance, tags, created_by, …).
        """
        memory_id = memory_id or str(uuid.uuid4())
        if embedding is not None and not isinstance(embedding, bytes):
            embedding = codec.pack_embedding(embedding)
        for name in ("tags", "trigger_conditions"):
            if name in fields:
                fields[name] = tuple(fields[name])
        memory = Memory(
            memory_id=memory_id,
            user_id=user_id,
            content=content,
            speaker=speaker,
            embedding=embedding,
            **fields,
        )
        self.publish_payload(user_id, MemoryWritten(memory), occurred_at, event_id)
        return memory_id

    def access(self, user_id: str, memory_id: str, *, occurred_at: int | None = None) -> str:
        return self.publish_payload(user_id, MemoryAccessed(memory_id), occurred_at)

    def forget(self, user_id: str, memory_id: str, reason: str = "user_request") -> str:
        return self.publish_payload(user_id, ForgetRequested(memory_id, reason))

    def forget_user(self, user_id: str, reason: str = "user_request") -> str:
        """Forget the user: with sealing on, the user's data key is destroyed now (so no copy
        of the user's records opens again, events in flight included), then ``UserForgotten``
        makes the worker drop the user's state and the projector every row. Returns the
        event id."""
        if self.sealing is not None:
            self.sealing.erase(user_id)
        return self.publish_payload(user_id, UserForgotten(reason))

    def pin(self, user_id: str, memory_id: str, reason: str = "permanent") -> str:
        return self.publish_payload(user_id, MemoryPinned(memory_id, reason))

    def unpin(self, user_id: str, memory_id: str) -> str:
        return self.publish_payload(user_id, MemoryUnpinned(memory_id))

    def end_session(self, user_id: str, session_id: str, conversation_id: str | None = None) -> str:
        return self.publish_payload(user_id, SessionEnded(session_id, conversation_id))

    def request_consolidation(
        self,
        user_id: str,
        *,
        conversation_id: str | None = None,
        force: bool = False,
        profile: str | None = None,
    ) -> str:
        return self.publish_payload(
            user_id, ConsolidationRequested(conversation_id, force, profile)
        )

    def request_operation(self, user_id: str, operation: str) -> str:
        """One operation instead of a cycle: ``procedural`` (synthesize the user's procedural
        profile, seed 004) or ``identity_reset`` (make the current identity anchor the
        origin, seed 002). Returns the request's event id."""
        return self.publish_payload(user_id, ConsolidationRequested(trigger=operation))

    # -- the general case ---------------------------------------------------------------------

    def publish_payload(
        self,
        user_id: str,
        payload: InputPayload,
        occurred_at: int | None = None,
        event_id: str | None = None,
    ) -> str:
        event = MemoryEvent(
            event_id=event_id or str(uuid.uuid4()),
            user_id=user_id,
            occurred_at=now_millis() if occurred_at is None else occurred_at,
            payload=payload,
            source=self.source,
        )
        self.publish(event)
        return event.event_id

    def publish(self, event: MemoryEvent) -> None:
        """Encode and enqueue ``event`` (delivery is confirmed by :meth:`flush`). An event over
        the worker's record limit is refused here, before anything is sent (a memory whose
        JSON state entry would be too large is dead-lettered by the worker)."""
        if self.sealing is not None and isinstance(event.payload, MemoryWritten):
            [event] = self.sealing.seal_inputs([event])
        value = codec.encode_event(event, self.registry)
        if len(value) > MAX_EVENT_BYTES:
            raise EventTooLarge(event.event_id, len(value))
        self.publish_raw(event.user_id.encode(), value, event.event_type, event.event_id)

    def publish_raw(
        self, key: bytes | None, value: bytes, event_type: str, label: str = ""
    ) -> None:
        """Enqueue already-encoded bytes (tools and tests that need to send odd records)."""
        while True:
            try:
                self._producer.produce(
                    self.topic,
                    key=key,
                    value=value,
                    headers=[("event_type", event_type.encode())],
                    on_delivery=partial(self._delivered, label=label),
                )
                break
            except BufferError:
                self._producer.poll(0.05)  # local queue full: let deliveries drain
        self._producer.poll(0)

    def _delivered(self, err: KafkaError | None, msg: Message, *, label: str) -> None:
        if err is not None:
            self._failures.append((label, str(err)))

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until every event is acknowledged; raise :class:`PublishError` otherwise."""
        remaining = self._producer.flush(timeout)
        failures, self._failures = self._failures, []
        if remaining:
            failures.append(("(queued)", f"{remaining} event(s) still queued after {timeout}s"))
        if failures:
            raise PublishError(failures)

    def close(self) -> None:
        self.flush()
        if self.sealing is not None:
            self.sealing.close()

    def __enter__(self) -> MemoryPublisher:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
