"""Moves one ``memory.events`` record through the pure ingest step and says what to emit.

This is the ingest agent's body without the async loop, so agent tests run it without
Kafka. It decodes, asks the engine (:func:`streams.engine.engine.step`), applies the
resulting records to the owning partition's :class:`UserStates`, and returns the ledger,
state-changelog and dead-letter records to send.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aiokafka.partitioner import murmur2

from streams import codec
from streams.deadletter import Headers, letter_headers
from streams.embedders.base import Embedder
from streams.engine.engine import EngineConfig, step
from streams.engine.ingest import Accepted, Duplicate
from streams.engine.ledger import ConsolidationEvent
from streams.engine.model import MemoryEvent, MemoryWritten
from streams.engine.validation import Limits, Rejection
from streams.state_changelog import Entry, changed_entries, expired_entries
from streams.user_states import UserStates

DEDUPE_WINDOW_SECONDS = 7 * 24 * 3600
"""Input ids are remembered for a week of event time: Kafka producers retry within seconds,
replays of the same file within days. Without a window the set would grow with every input
the user ever sent (state and restore cost would grow with history)."""


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
    state: list[Entry] = field(default_factory=list)  # changed state-changelog entries

    @property
    def ran_cycle(self) -> bool:
        return any(d.cycle_id is not None for d in self.ledger_events)


def partition_for(key: bytes, partitions: int) -> int:
    """Kafka's default partitioner for keyed records (Java client, aiokafka, librdkafka's
    murmur2_random): every producer sends a user's events to the same partition."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


class IngestProcessor:
    """Decode → validate → ingest → state writes → records to emit, for one input record."""

    def __init__(
        self,
        config: EngineConfig | Limits,
        states: UserStates | None = None,
        registry: codec.SchemaRegistry | None = None,
        partitions: int | None = None,
        dedupe_window_seconds: int = DEDUPE_WINDOW_SECONDS,
        embedder: Embedder | None = None,
    ) -> None:
        """``partitions``: the input topic's partition count; when given, a record on a
        partition its key does not hash to is rejected (its user's state lives elsewhere).
        ``dedupe_window_seconds``: how long (event time) an input id is remembered to drop
        a redelivery of it."""
        self.partitions = partitions
        self.dedupe_window_ms = dedupe_window_seconds * 1000
        self.embedder = embedder
        self.config = config if isinstance(config, EngineConfig) else EngineConfig(limits=config)
        self.states = states if states is not None else UserStates()
        self.registry = registry or codec.default_registry()

    def process(
        self, key: bytes | None, value: bytes | None, source: Headers, partition: int = 0
    ) -> Emission:
        """``source`` headers (topic/partition/offset) travel with a dead letter; ``partition``
        is the input partition, which owns the user's state."""
        try:
            event = codec.decode_event(value, self.registry)  # type: ignore[arg-type]
        except codec.DecodeError as exc:
            return self._reject(key, value, Rejection(exc.reason, exc.detail), source, None)
        if key is None:
            reason = Rejection("key_mismatch", "the record has no key: the key must be the user_id")
            return self._reject(key, value, reason, source, event)
        if self.partitions and partition_for(key, self.partitions) != partition:
            reason = Rejection(
                "wrong_partition",
                f"partition {partition} is not where key hashes (murmur2, {self.partitions} "
                f"partitions): publish with the default Kafka partitioner, not a fixed partition",
            )
            return self._reject(key, value, reason, source, event)
        key_text = key.decode("utf-8", "replace")
        event = self._embedded(event)
        state = self.states.user(event.user_id, partition)
        outcome = step(state, event, self.config, key_text)
        if isinstance(outcome, Rejection):
            return self._reject(key, value, outcome, source, event)
        if isinstance(outcome, Duplicate):
            return Emission(event_type=event.event_type, duplicate=True)
        emission = self._accept(event, outcome)
        expired = state.expire_seen(event.occurred_at - self.dedupe_window_ms)
        emission.state = changed_entries(state, event.event_id, outcome.decisions)
        emission.state += expired_entries(state.user_id, expired)
        return emission

    def _embedded(self, event: MemoryEvent) -> MemoryEvent:
        """A written memory without an embedding gets one from the configured embedder, so
        the ledger records it and nothing downstream (cycles, projector, recall) recomputes
        it (SPEC §5 "Similarity"). Invalid content is left to validation to reject."""
        payload = event.payload
        if (
            self.embedder is None
            or not isinstance(payload, MemoryWritten)
            or payload.memory.embedding is not None
            or not payload.memory.content
        ):
            return event
        [vector] = self.embedder.embed([payload.memory.content])
        memory = payload.memory.evolve(embedding=vector)
        return MemoryEvent(
            event.event_id, event.user_id, event.occurred_at, MemoryWritten(memory), event.source
        )

    def _accept(self, event: MemoryEvent, outcome: Accepted) -> Emission:
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
        headers = letter_headers(rejection.reason, rejection.detail, source)
        event_type = event.event_type if event else None
        if event_type:
            headers.append(("event_type", event_type.encode()))
        letter = OutRecord(key, value or b"", headers)
        return Emission(event_type=event_type, deadletter=letter, rejection=rejection)
