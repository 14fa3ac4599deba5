"""Moves one ``memory.events`` record through the pure ingest step and says what to emit.

This is the ingest agent's body without the async loop, so agent tests can run it on plain
dicts while the worker runs it on Faust tables (any ``MutableMapping[bytes, bytes]``). It
decodes, asks :func:`streams.engine.ingest.ingest`, writes the returned records to the tables
and returns the ledger and dead-letter records to send. Nothing here talks to Kafka.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field

from streams import codec
from streams.engine.ingest import Accepted, Duplicate, ingest
from streams.engine.ledger import ConsolidationEvent
from streams.engine.model import MemoryEvent
from streams.engine.state import MemoryRecord
from streams.engine.validation import Limits, Rejection

Headers = list[tuple[str, bytes]]
SEP = b"\x1f"


@dataclass(frozen=True, slots=True)
class OutRecord:
    key: bytes | None
    value: bytes
    headers: Headers


@dataclass
class Emission:
    """What one input record produced: ledger events, or a dead letter, or nothing."""

    event_type: str | None = None
    ledger: list[OutRecord] = field(default_factory=list)
    ledger_events: list[ConsolidationEvent] = field(default_factory=list)
    deadletter: OutRecord | None = None
    rejection: Rejection | None = None
    duplicate: bool = False


def memory_key(user_id: str, item_id: str) -> bytes:
    """Table key of a user's memory or seen event id: ids are only unique per user."""
    return user_id.encode() + SEP + item_id.encode()


class TableUserView:
    """:class:`streams.engine.state.UserView` over the worker's tables for one user."""

    def __init__(
        self,
        memories: MutableMapping[bytes, bytes],
        seen: MutableMapping[bytes, bytes],
        user_id: str,
        registry: codec.SchemaRegistry,
    ) -> None:
        self._memories = memories
        self._seen = seen
        self._user_id = user_id
        self._registry = registry

    def memory(self, memory_id: str) -> MemoryRecord | None:
        raw = self._memories.get(memory_key(self._user_id, memory_id))
        return None if raw is None else codec.decode_record(raw, self._registry)

    def has_seen(self, event_id: str) -> bool:
        return self._seen.get(memory_key(self._user_id, event_id)) is not None

    def apply(self, event_id: str, records: tuple[MemoryRecord, ...]) -> None:
        for record in records:
            key = memory_key(self._user_id, record.memory.memory_id)
            self._memories[key] = codec.encode_record(record, self._registry)
        self._seen[memory_key(self._user_id, event_id)] = b"1"


class IngestProcessor:
    """Decode → validate → ingest → state writes → records to emit, for one input record."""

    def __init__(
        self,
        memories: MutableMapping[bytes, bytes],
        seen: MutableMapping[bytes, bytes],
        limits: Limits,
        registry: codec.SchemaRegistry | None = None,
    ) -> None:
        self.memories = memories
        self.seen = seen
        self.limits = limits
        self.registry = registry or codec.default_registry()

    def process(self, key: bytes | None, value: bytes | None, source: Headers) -> Emission:
        """``source`` headers (topic/partition/offset) travel with a dead letter."""
        try:
            event = codec.decode_event(value, self.registry)  # type: ignore[arg-type]
        except codec.DecodeError as exc:
            return self._reject(key, value, Rejection(exc.reason, exc.detail), source, None)
        key_text = key.decode("utf-8", "replace") if key is not None else None
        view = TableUserView(self.memories, self.seen, event.user_id, self.registry)
        outcome = ingest(view, event, self.limits, key_text)
        if isinstance(outcome, Rejection):
            return self._reject(key, value, outcome, source, event)
        if isinstance(outcome, Duplicate):
            return Emission(event_type=event.event_type, duplicate=True)
        return self._accept(event, outcome, view)

    def _accept(self, event: MemoryEvent, outcome: Accepted, view: TableUserView) -> Emission:
        view.apply(event.event_id, outcome.records)
        emission = Emission(event_type=event.event_type)
        user_key = event.user_id.encode()
        for decision in outcome.decisions:
            emission.ledger.append(
                OutRecord(
                    user_key,
                    codec.encode_ledger(decision, self.registry),
                    [("event_type", decision.event_type.encode())],
                )
            )
            emission.ledger_events.append(decision)
        return emission

    def _reject(
        self,
        key: bytes | None,
        value: bytes | None,
        rejection: Rejection,
        source: Headers,
        event: MemoryEvent | None,
    ) -> Emission:
        headers: Headers = [
            ("reason", rejection.reason.encode()),
            ("detail", rejection.detail.encode()),
            *source,
        ]
        event_type = event.event_type if event else None
        if event_type:
            headers.append(("event_type", event_type.encode()))
        letter = OutRecord(key, value or b"", headers)
        return Emission(event_type=event_type, deadletter=letter, rejection=rejection)
