"""Sealing and opening the personal fields of the engine's values at the Kafka boundary.

The engine (``streams/engine/``) stays plaintext and pure; what crosses a topic or the worker's
local store is sealed here with the user's data key (:mod:`streams.erasure.cipher`):

- a memory (input, ledger, state): ``content``, ``speaker``, ``metadata`` values,
  ``trigger_conditions`` and ``embedding`` (the packed float32 bytes sealed as bytes);
- ledger decisions: the memories inside them, a contradiction's ``explanation`` (it quotes
  both memories), a narrative's ``unresolved_threads`` and the identity ``anchor`` (a mean of
  embeddings);
- the worker's state entries that hold those: a memory's entry (``m``) and the user's record
  (``u``, with the identity anchor), sealed whole.

Ids, times, layers, kinds, tags, scores, counts, versions, event types and every enum stay in
clear, so routing, ordering, deduplication and analytics on the shape of the log keep
working without a key (docs/analytics.md, "The encrypted envelope").

Opening passes through a value that is not sealed (a record written before sealing was turned
on); a sealed value that does not open raises :class:`Unreadable`, which every reader turns into
"erased" (skip the record, or drop the state entry), never a stop.

This module never opens a connection itself: the key store it is given does.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

import psycopg

from streams.config.settings import Settings
from streams.engine import ledger
from streams.engine.model import Memory, MemoryEvent, MemoryWritten
from streams.erasure.cipher import (
    NONCE_BYTES,
    TAG_BYTES,
    VERSION,
    FieldCipher,
    Unreadable,
    field_context,
    is_sealed_text,
)
from streams.erasure.data_keys import LocalMasterKey, MasterKeyError, PostgresKeyStore
from streams.state.changelog import Entry, split_key

SEALED_OVERHEAD = len(VERSION) + NONCE_BYTES + TAG_BYTES  # 29 bytes per sealed value
SEALED_TABLES = ("m", "u")  # state tables whose values are sealed (streams/state/changelog.py)

__all__ = [
    "KeySource",
    "KeysUnavailable",
    "Sealing",
    "Unreadable",
    "open_entry_value",
    "open_ledger_event",
    "open_memory",
    "open_input_event",
    "seal_entry_value",
    "seal_input_event",
    "seal_ledger_event",
    "seal_memory",
    "sealing_of",
]


# --- one memory --------------------------------------------------------------------------------


def _seal_text(cipher: FieldCipher, user: str, name: str, text: str) -> str:
    return cipher.seal_text(text, field_context(user, name))


def _open_text(cipher: FieldCipher, user: str, name: str, text: str) -> str:
    if not is_sealed_text(text):
        return text  # written before sealing was on
    return cipher.open_text(text, field_context(user, name))


def _seal_bytes(cipher: FieldCipher, user: str, name: str, raw: bytes) -> bytes:
    return cipher.seal(raw, field_context(user, name))


def _open_bytes(cipher: FieldCipher, user: str, name: str, raw: bytes) -> bytes:
    # packed float32 is a multiple of 4 bytes; a sealed value is 29 bytes longer (never one)
    if len(raw) % 4 == 0:
        return raw
    return cipher.open(raw, field_context(user, name))


def seal_memory(memory: Memory, cipher: FieldCipher) -> Memory:
    """``memory`` with its personal fields sealed for its user."""
    user = memory.user_id
    return memory.evolve(
        content=_seal_text(cipher, user, "memory.content", memory.content),
        speaker=None
        if memory.speaker is None
        else _seal_text(cipher, user, "memory.speaker", memory.speaker),
        metadata={
            k: _seal_text(cipher, user, "memory.metadata", v) for k, v in memory.metadata.items()
        },
        trigger_conditions=tuple(
            _seal_text(cipher, user, "memory.trigger", t) for t in memory.trigger_conditions
        ),
        embedding=None
        if memory.embedding is None
        else _seal_bytes(cipher, user, "memory.embedding", memory.embedding),
    )


def open_memory(memory: Memory, cipher: FieldCipher | None) -> Memory:
    """``memory`` with its sealed fields opened; :class:`Unreadable` if one does not open
    (``cipher`` None: the user's key is erased)."""
    if cipher is None:
        if _has_sealed_field(memory):
            raise Unreadable("the user's data key is erased")
        return memory
    user = memory.user_id
    return memory.evolve(
        content=_open_text(cipher, user, "memory.content", memory.content),
        speaker=None
        if memory.speaker is None
        else _open_text(cipher, user, "memory.speaker", memory.speaker),
        metadata={
            k: _open_text(cipher, user, "memory.metadata", v) for k, v in memory.metadata.items()
        },
        trigger_conditions=tuple(
            _open_text(cipher, user, "memory.trigger", t) for t in memory.trigger_conditions
        ),
        embedding=None
        if memory.embedding is None
        else _open_bytes(cipher, user, "memory.embedding", memory.embedding),
    )


def _has_sealed_field(memory: Memory) -> bool:
    return (
        is_sealed_text(memory.content)
        or (memory.speaker is not None and is_sealed_text(memory.speaker))
        or any(is_sealed_text(v) for v in memory.metadata.values())
        or (memory.embedding is not None and len(memory.embedding) % 4 != 0)
    )


# --- input events ------------------------------------------------------------------------------


def seal_input_event(event: MemoryEvent, cipher: FieldCipher) -> MemoryEvent:
    """An input event as a service publishes it with sealing on (only a write carries
    personal fields)."""
    if isinstance(event.payload, MemoryWritten):
        return event.with_written(seal_memory(event.payload.memory, cipher))
    return event


def open_input_event(event: MemoryEvent, cipher: FieldCipher | None) -> MemoryEvent:
    if isinstance(event.payload, MemoryWritten):
        return event.with_written(open_memory(event.payload.memory, cipher))
    return event


# --- ledger events -----------------------------------------------------------------------------

_MEMORY_FIELDS: dict[type, str] = {
    ledger.MemoryStored: "memory",
    ledger.MemoryPromoted: "promoted",
    ledger.PatternDetected: "pattern",
    ledger.MemoryMerged: "survivor",
    ledger.SessionConsolidated: "narrative",
    ledger.EpisodesSummarized: "summary",
    ledger.ProceduralSynthesized: "profile",
    ledger.ScopePromoted: "copy",
}


def seal_ledger_event(
    event: ledger.ConsolidationEvent, cipher: FieldCipher
) -> ledger.ConsolidationEvent:
    """A ledger record with its personal fields sealed for its user."""
    payload = event.payload
    user = event.user_id
    name = _MEMORY_FIELDS.get(type(payload))
    if name is not None:
        sealed = seal_memory(getattr(payload, name), cipher)
        payload = replace(payload, **{name: sealed})  # type: ignore[arg-type]
        if isinstance(payload, ledger.SessionConsolidated) and payload.unresolved_threads:
            threads = tuple(
                _seal_text(cipher, user, "ledger.thread", t) for t in payload.unresolved_threads
            )
            payload = replace(payload, unresolved_threads=threads)
    elif isinstance(payload, ledger.ContradictionDetected):
        explanation = _seal_text(cipher, user, "ledger.explanation", payload.explanation)
        payload = replace(payload, explanation=explanation)
    elif isinstance(payload, ledger.IdentityDriftMeasured):
        payload = replace(
            payload, anchor=_seal_bytes(cipher, user, "ledger.anchor", payload.anchor)
        )
    else:
        return event
    return replace(event, payload=payload)


def open_ledger_event(
    event: ledger.ConsolidationEvent, cipher: FieldCipher | None
) -> ledger.ConsolidationEvent:
    """A ledger record opened; :class:`Unreadable` if a sealed field does not open (``cipher``
    None: the user's key is erased, and the record is readable only if it holds nothing
    sealed)."""
    payload = event.payload
    user = event.user_id
    name = _MEMORY_FIELDS.get(type(payload))
    if name is not None:
        opened = open_memory(getattr(payload, name), cipher)
        payload = replace(payload, **{name: opened})  # type: ignore[arg-type]
        if isinstance(payload, ledger.SessionConsolidated) and payload.unresolved_threads:
            threads = tuple(
                _open_with(cipher, user, "ledger.thread", t) for t in payload.unresolved_threads
            )
            payload = replace(payload, unresolved_threads=threads)
    elif isinstance(payload, ledger.ContradictionDetected):
        explanation = _open_with(cipher, user, "ledger.explanation", payload.explanation)
        payload = replace(payload, explanation=explanation)
    elif isinstance(payload, ledger.IdentityDriftMeasured):
        anchor = payload.anchor
        if len(anchor) % 4 != 0:
            if cipher is None:
                raise Unreadable("the user's data key is erased")
            anchor = _open_bytes(cipher, user, "ledger.anchor", anchor)
        payload = replace(payload, anchor=anchor)
    else:
        return event
    return replace(event, payload=payload)


def _open_with(cipher: FieldCipher | None, user: str, name: str, text: str) -> str:
    if cipher is None:
        if is_sealed_text(text):
            raise Unreadable("the user's data key is erased")
        return text
    return _open_text(cipher, user, name, text)


def carries_personal_fields(event: ledger.ConsolidationEvent) -> bool:
    """Whether a ledger record has fields this module seals (the others need no key)."""
    payload = event.payload
    return type(payload) in _MEMORY_FIELDS or isinstance(
        payload, (ledger.ContradictionDetected, ledger.IdentityDriftMeasured)
    )


# --- state entries -----------------------------------------------------------------------------


def seal_entry_value(user_id: str, table: str, value: bytes, cipher: FieldCipher) -> bytes:
    """A state entry's value sealed whole (JSON never starts with the version byte)."""
    return cipher.seal(value, field_context(user_id, "state." + table))


def open_entry_value(
    user_id: str, table: str, value: bytes, cipher: FieldCipher | None
) -> bytes | None:
    """A state entry's value opened; None when it is sealed and does not open (erased): the
    entry is then as good as a tombstone."""
    if not value.startswith(VERSION):
        return value  # JSON, written before sealing was on (or a table never sealed)
    if cipher is None:
        return None
    try:
        return cipher.open(value, field_context(user_id, "state." + table))
    except Unreadable:
        return None


def _table_of(key: bytes) -> str:
    return split_key(key)[1]


# --- where keys come from ----------------------------------------------------------------------


class KeysUnavailable(RuntimeError):
    """The key store could not be reached or read: no record may be written or read past this
    point (the worker stops without committing and its inputs are processed again)."""


class KeySource(Protocol):
    """What :class:`Sealing` needs of a key store (``PostgresKeyStore``)."""

    def ciphers(self, user_ids: Iterable[str]) -> dict[str, FieldCipher]: ...

    def existing(self, user_id: str) -> FieldCipher | None: ...

    def existing_ciphers(self, user_ids: Iterable[str]) -> dict[str, FieldCipher]: ...

    def close(self) -> None: ...

    def erase(self, user_id: str) -> bool: ...

    def forget_cached(self, user_id: str) -> None: ...


class Sealing:
    """Seals what a process writes and opens what it reads, with keys from ``keys``.

    Writers get a user's key made on first use (:meth:`writing`); readers only ever use a key
    that exists (:meth:`reading`), so reading an erased user's records makes no new key.
    Safe to share between threads (the worker restores partitions in an executor): one lock
    around the store, whose connection is not."""

    def __init__(self, keys: KeySource) -> None:
        self.keys = keys
        self._lock = threading.Lock()

    def writing(self, user_ids: Iterable[str]) -> dict[str, FieldCipher]:
        """Each user's cipher, made if missing: one round trip for the users not cached."""
        with self._lock:
            try:
                return self.keys.ciphers(user_ids)
            except (psycopg.Error, MasterKeyError) as exc:
                raise KeysUnavailable(f"the data keys could not be read: {exc}") from exc

    def reading(self, user_id: str) -> FieldCipher | None:
        """The user's cipher, None once the user's key is erased."""
        with self._lock:
            try:
                return self.keys.existing(user_id)
            except (psycopg.Error, MasterKeyError) as exc:
                raise KeysUnavailable(f"the data keys could not be read: {exc}") from exc

    def reading_many(self, user_ids: Iterable[str]) -> dict[str, FieldCipher]:
        """The ciphers of those of ``user_ids`` who have a key, in one round trip."""
        with self._lock:
            try:
                return self.keys.existing_ciphers(user_ids)
            except (psycopg.Error, MasterKeyError) as exc:
                raise KeysUnavailable(f"the data keys could not be read: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self.keys.close()

    def erase(self, user_id: str) -> bool:
        """Destroy the user's data key (True if there was one): every record sealed with it,
        wherever it is, never opens again."""
        with self._lock:
            try:
                return self.keys.erase(user_id)
            except psycopg.Error as exc:
                raise KeysUnavailable(f"the data key could not be erased: {exc}") from exc

    def forget_cached(self, user_id: str) -> None:
        """Drop this process's copy of the user's key (another process erased it)."""
        with self._lock:
            self.keys.forget_cached(user_id)

    # -- whole batches, as the boundary handles them -------------------------------------------

    def seal_inputs(self, events: Sequence[MemoryEvent]) -> list[MemoryEvent]:
        ciphers = self.writing(e.user_id for e in events)
        return [seal_input_event(e, ciphers[e.user_id]) for e in events]

    def open_inputs(self, events: Sequence[MemoryEvent]) -> list[MemoryEvent | Unreadable]:
        """Each event opened, or the :class:`Unreadable` it raised. The keys of the batch's
        writers are read in one round trip, never made: a sealed input's key was made by its
        publisher, so a missing one is an erased one."""
        writes = [e for e in events if isinstance(e.payload, MemoryWritten)]
        ciphers = self.reading_many(e.user_id for e in writes) if writes else {}
        opened: list[MemoryEvent | Unreadable] = []
        for event in events:
            if not isinstance(event.payload, MemoryWritten):
                opened.append(event)
                continue
            try:
                opened.append(open_input_event(event, ciphers.get(event.user_id)))
            except Unreadable as exc:
                opened.append(exc)
        return opened

    def seal_entries(self, user_id: str, entries: Sequence[Entry]) -> list[Entry]:
        """One user's state entries with the values of the sealed tables sealed."""
        if not any(e.value is not None and _table_of(e.key) in SEALED_TABLES for e in entries):
            return list(entries)
        [cipher] = self.writing([user_id]).values()
        sealed = []
        for entry in entries:
            table = _table_of(entry.key)
            if entry.value is not None and table in SEALED_TABLES:
                entry = Entry(entry.key, seal_entry_value(user_id, table, entry.value, cipher))
            sealed.append(entry)
        return sealed

    def open_input(self, event: MemoryEvent) -> MemoryEvent:
        """:class:`Unreadable` when the event is sealed and its user's key is erased."""
        if not isinstance(event.payload, MemoryWritten):
            return event
        return open_input_event(event, self.reading(event.user_id))

    def seal_ledger(
        self, events: Sequence[ledger.ConsolidationEvent]
    ) -> list[ledger.ConsolidationEvent]:
        users = {e.user_id for e in events if carries_personal_fields(e)}
        if not users:
            return list(events)
        ciphers = self.writing(users)
        return [
            seal_ledger_event(e, ciphers[e.user_id]) if e.user_id in ciphers else e for e in events
        ]

    def open_ledger(self, event: ledger.ConsolidationEvent) -> ledger.ConsolidationEvent:
        """:class:`Unreadable` when a sealed field does not open."""
        if not carries_personal_fields(event):
            return event
        return open_ledger_event(event, self.reading(event.user_id))

    def seal_entry(self, user_id: str, table: str, value: bytes | None) -> bytes | None:
        if value is None or table not in SEALED_TABLES:
            return value
        [cipher] = self.writing([user_id]).values()
        return seal_entry_value(user_id, table, value, cipher)

    def open_entry(self, user_id: str, table: str, value: bytes) -> bytes | None:
        """The entry's value, None when it was sealed with an erased key."""
        if not value.startswith(VERSION):
            return value
        return open_entry_value(user_id, table, value, self.reading(user_id))


def master_key_of(settings: Settings) -> LocalMasterKey | None:
    """The configured master key (MEMSTREAM_MASTER_KEY_FILE or MEMSTREAM_MASTER_KEY), None
    when sealing is off. A malformed key raises ``MasterKeyError`` naming the variable."""
    if settings.master_key_file:
        return LocalMasterKey.from_file(Path(settings.master_key_file))
    if settings.master_key:
        return LocalMasterKey.from_text(settings.master_key, "MEMSTREAM_MASTER_KEY")
    return None


def sealing_of(settings: Settings, conninfo: str | None = None) -> Sealing | None:
    """The process's sealing, keys in ``conninfo`` (default MEMSTREAM_KEYS_DATABASE_URL, else
    MEMSTREAM_DATABASE_URL); None when no master key is configured (sealing off)."""
    master = master_key_of(settings)
    if master is None:
        return None
    where = conninfo or settings.keys_database_url or settings.database_url
    return Sealing(PostgresKeyStore(where, master))
