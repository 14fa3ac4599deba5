"""Periodic consolidation ticks, as input events.

Every ``triggers.periodic_seconds`` the worker publishes a ``ConsolidationRequested``
(trigger ``periodic``) for each user of the partitions it owns, to that user's partition of
``memory.events``. The tick then travels the normal path — one Kafka transaction with its
decisions, replayable, deduplicated — instead of a timer writing outside any transaction.
The tick id derives from the user and the tick window, so two workers ticking during a
rebalance produce the same event and the second is ignored as a duplicate.
This is an edge module: it reads the wall clock, which the engine never does.
"""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Producer

from streams.config.kafka_security import confluent_config, resolve
from streams.config.settings import Settings
from streams.engine.model import ConsolidationRequested, MemoryEvent
from streams.kafka import codec

TICK_NAMESPACE = uuid.UUID("3f1d2c4b-5a69-4e7d-8c0b-7469636b7321")


def tick_event(user_id: str, now_ms: int, period_seconds: int) -> MemoryEvent:
    window = now_ms // (period_seconds * 1000)
    event_id = str(uuid.uuid5(TICK_NAMESPACE, f"{user_id}\x1f{period_seconds}\x1f{window}"))
    return MemoryEvent(
        event_id=event_id,
        user_id=user_id,
        occurred_at=now_ms,
        payload=ConsolidationRequested(trigger="periodic"),
        source="memstream-worker",
    )


class TickPublisher:
    def __init__(self, kafka: str | Settings, topic: str) -> None:
        """``kafka``: the worker's settings, or a bootstrap address (the security settings
        then come from this process's environment, as the worker's do)."""
        self.topic = topic
        self._producer = Producer(
            {**confluent_config(resolve(kafka)), "enable.idempotence": True, "linger.ms": 20}
        )

    def publish(self, users_by_partition: dict[int, set[str]], period_seconds: int) -> int:
        now_ms = int(time.time() * 1000)
        sent = 0
        for partition, users in users_by_partition.items():
            for user_id in sorted(users):
                event = tick_event(user_id, now_ms, period_seconds)
                self._producer.produce(
                    self.topic,
                    key=user_id.encode(),
                    value=codec.encode_event(event),
                    partition=partition,
                    headers=[("event_type", b"ConsolidationRequested")],
                )
                sent += 1
        self._producer.flush(10)
        return sent
