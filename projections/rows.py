"""Folds a batch of ledger events into the row changes it makes, before any SQL runs.

Pure: ledger events in, per-table row operations out. Within one batch the last version of a
memory wins, so a memory written, accessed and forgotten in the same batch becomes one delete;
the SQL side still guards every write with ``version < new version`` so a batch can never move
a row backwards. Only offsets advance past what the batch contains.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from projections.schema import LAYER_TABLES
from streams.engine import ledger
from streams.engine.model import Layer, Memory

RowKey = tuple[Layer, str, str]  # (layer, user_id, memory_id)

MEMORY_COLUMNS: tuple[str, ...] = (
    "user_id",
    "memory_id",
    "version",
    "kind",
    "subtype",
    "content",
    "tags",
    "importance",
    "confidence",
    "emotional_salience",
    "valence",
    "priority",
    "scope",
    "scope_id",
    "created_by",
    "consent",
    "pinned",
    "conversation_id",
    "session_id",
    "success",
    "trigger_conditions",
    "embedding",
    "metadata",
    "created_at",
    "last_accessed",
    "access_count",
    "valid_at",
    "invalid_at",
    "status",
    "salience",
)
_VERSION = MEMORY_COLUMNS.index("version")
_LAST_ACCESSED = MEMORY_COLUMNS.index("last_accessed")
_ACCESS_COUNT = MEMORY_COLUMNS.index("access_count")

LOG_COLUMNS: tuple[str, ...] = (
    "event_id",
    "user_id",
    "occurred_at",
    "causation_id",
    "cycle_id",
    "trigger",
    "action",
    "memory_id",
    "layer",
    "version",
    "kafka_partition",
    "kafka_offset",
)


def to_datetime(millis: int | None) -> datetime | None:
    return None if millis is None else datetime.fromtimestamp(millis / 1000, tz=UTC)


def memory_row(memory: Memory, version: int) -> list[Any]:
    """One row of a layer table, in ``MEMORY_COLUMNS`` order. The embedding stays packed
    float32 bytes; the writer hands it to pgvector."""
    return [
        memory.user_id,
        memory.memory_id,
        version,
        memory.kind,
        memory.subtype,
        memory.content,
        list(memory.tags),
        memory.importance,
        memory.confidence,
        memory.emotional_salience,
        memory.valence,
        memory.priority,
        memory.scope,
        memory.scope_id,
        memory.created_by,
        memory.consent,
        memory.pinned,
        memory.conversation_id,
        memory.session_id,
        memory.success,
        list(memory.trigger_conditions),
        memory.embedding,
        memory.metadata,
        to_datetime(memory.created_at),
        to_datetime(memory.last_accessed),
        memory.access_count,
        to_datetime(memory.valid_at),
        to_datetime(memory.invalid_at),
        memory.status,
        memory.salience,
    ]


@dataclass(frozen=True, slots=True)
class AccessUpdate:
    version: int
    access_count: int
    last_accessed: datetime | None


@dataclass
class RowBatch:
    """Everything one projector transaction writes."""

    upserts: dict[RowKey, list[Any]] = field(default_factory=dict)
    access_updates: dict[RowKey, AccessUpdate] = field(default_factory=dict)
    deletes: dict[RowKey, int] = field(default_factory=dict)
    log: list[tuple[Any, ...]] = field(default_factory=list)
    next_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    last_event_time_ms: int | None = None

    def __len__(self) -> int:
        return len(self.log)

    def add(
        self, event: ledger.ConsolidationEvent, topic: str, partition: int, offset: int
    ) -> None:
        memory_id, layer, version = _subject(event.payload)
        self._apply(event.user_id, event.payload)
        self.log.append(
            (
                event.event_id,
                event.user_id,
                to_datetime(event.occurred_at),
                event.causation_id,
                event.cycle_id,
                event.trigger,
                event.event_type,
                memory_id,
                layer,
                version,
                partition,
                offset,
            )
        )
        self.advance(topic, partition, offset)
        self.last_event_time_ms = event.occurred_at

    def advance(self, topic: str, partition: int, offset: int) -> None:
        """Move the stored position past ``offset`` (also for records that carry no rows)."""
        key = (topic, partition)
        self.next_offsets[key] = max(self.next_offsets.get(key, 0), offset + 1)

    def _apply(self, user_id: str, payload: ledger.LedgerPayload) -> None:
        if isinstance(payload, ledger.MemoryStored):
            memory = payload.memory
            if payload.previous_layer is not None:
                self._delete((payload.previous_layer, user_id, memory.memory_id), payload.version)
            self._upsert((memory.layer, user_id, memory.memory_id), memory, payload.version)
        elif isinstance(payload, ledger.MemoryAccessRecorded):
            key = (payload.layer, user_id, payload.memory_id)
            self._record_access(key, payload)
        elif isinstance(payload, ledger.MemoryForgotten):
            self._delete((payload.layer, user_id, payload.memory_id), payload.version)

    def _upsert(self, key: RowKey, memory: Memory, version: int) -> None:
        self.access_updates.pop(key, None)
        self.upserts[key] = memory_row(memory, version)

    def _delete(self, key: RowKey, version: int) -> None:
        self.upserts.pop(key, None)
        self.access_updates.pop(key, None)
        self.deletes[key] = max(version, self.deletes.get(key, 0))

    def _record_access(self, key: RowKey, payload: ledger.MemoryAccessRecorded) -> None:
        update = AccessUpdate(
            payload.version, payload.access_count, to_datetime(payload.accessed_at)
        )
        pending = self.upserts.get(key)
        if pending is not None:
            if pending[_VERSION] < update.version:
                pending[_VERSION] = update.version
                pending[_ACCESS_COUNT] = update.access_count
                pending[_LAST_ACCESSED] = _latest(pending[_LAST_ACCESSED], update.last_accessed)
            return
        current = self.access_updates.get(key)
        if current is None or current.version < update.version:
            self.access_updates[key] = update

    def tables_touched(self) -> dict[str, int]:
        """Rows per table this batch writes, for ``memstream_projector_rows_total``."""
        counts: dict[str, int] = {}
        for ops in (self.upserts, self.access_updates, self.deletes):
            for layer, _, _ in ops:
                table = LAYER_TABLES[layer]
                counts[table] = counts.get(table, 0) + 1
        if self.log:
            counts["consolidation_log"] = len(self.log)
        return counts


def _latest(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None or b is None:
        return a or b
    return max(a, b)


def _subject(payload: ledger.LedgerPayload) -> tuple[str | None, str | None, int | None]:
    """(memory_id, layer, version) the log line names, where the payload has one."""
    for memory_attr, version_attr in _MEMORY_SUBJECTS:
        memory = getattr(payload, memory_attr, None)
        if isinstance(memory, Memory):
            return memory.memory_id, memory.layer, getattr(payload, version_attr)
    memory_id = getattr(payload, "memory_id", None) or getattr(payload, "source_memory_id", None)
    return memory_id, getattr(payload, "layer", None), getattr(payload, "version", None)


_MEMORY_SUBJECTS = (
    ("memory", "version"),
    ("promoted", "promoted_version"),
    ("pattern", "version"),
    ("survivor", "survivor_version"),
    ("narrative", "version"),
    ("summary", "version"),
    ("profile", "version"),
    ("copy", "version"),
)
