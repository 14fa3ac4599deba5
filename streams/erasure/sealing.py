"""Sealing and opening the personal fields of the engine's values at the Kafka boundary.

The engine (``streams/engine/``) stays plaintext and pure; what crosses a topic or the worker's
local store is sealed here (:mod:`streams.erasure.cipher`), with a key of the memory it is
about (:mod:`streams.erasure.memory_keys`) or, for what belongs to no one memory, the user's
data key:

- a memory (input, ledger, state): ``content``, ``speaker``, ``metadata`` values,
  ``trigger_conditions`` and ``embedding`` (the packed float32 bytes sealed as bytes);
- ledger decisions: the memories inside them, a contradiction's ``explanation`` (it quotes
  both memories), a narrative's ``unresolved_threads`` and the identity ``anchor`` (a mean of
  embeddings);
- the worker's state entries that hold those: a memory's entry (``m``) and the user's record
  (``u``, with the identity anchor), sealed whole.

With memory keys (the default), a memory's fields, its state entry and a narrative's threads
are sealed with the memory's key of the generation its version falls in; a contradiction's
explanation with both memories' keys, one inside the other, so forgetting either erases it;
the identity anchor (a mean over all of the user's memories), the user's record and a
forgotten memory's entry (nothing personal left in it) with the user's key. A record whose
memory key is erased reads as erased: :meth:`Sealing.open_ledger` raises
:class:`~streams.erasure.memory_keys.MemoryErased`, and the projector's
:meth:`Sealing.open_ledger_keeping` keeps the record with that memory's fields blank, so its
clear fields (ids, versions, links, the audit line) apply as before.

Ids, times, layers, kinds, tags, scores, counts, versions, event types and every enum stay in
clear, so routing, ordering, deduplication and analytics on the shape of the log keep
working without a key (docs/analytics.md, "The encrypted envelope").

Opening passes through a value that is not sealed (a record written before sealing was turned
on); a sealed value that does not open raises :class:`Unreadable`, which every reader turns into
"erased" (skip the record, or drop the state entry), never a stop.

This module never opens a connection itself: the key store it is given does.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import orjson
import psycopg

from streams.config.settings import Settings, retired_key_files
from streams.engine import ledger
from streams.engine.dataclass_speedups import slot_copier
from streams.engine.model import Memory, MemoryEvent, MemoryWritten
from streams.erasure import envelope
from streams.erasure.cipher import (
    MEMORY_KEY_PREFIXES,
    MEMORY_VERSION,
    NONCE_BYTES,
    TAG_BYTES,
    VERSION,
    FieldCipher,
    Unreadable,
    b64url_text,
    field_context,
    is_sealed_text,
    sealed_text_bytes,
)
from streams.erasure.data_keys import (
    LocalMasterKey,
    MasterKeyError,
    MemoryKeyId,
    MemoryPair,
    PostgresKeyStore,
)
from streams.erasure.memory_keys import (
    MemoryCipher,
    MemoryErased,
    generation_for,
    generation_of,
    starts_generation,
    text_generation,
)
from streams.state.changelog import MEMORY, Entry, split_key

SEALED_OVERHEAD = len(VERSION) + NONCE_BYTES + TAG_BYTES  # 29 bytes per sealed value
_T = TypeVar("_T")
_P = TypeVar("_P")
SEALED_TABLES = ("m", "u")  # state tables whose values are sealed (streams/state/changelog.py)
ENVELOPE_FIELD = "memory.envelope"  # the associated data's field of a memory's envelope
EMBEDDING_FIELD = "memory.embedding"  # and of its embedding, sealed apart

Cipher = FieldCipher | MemoryCipher
"""A user's cipher or a memory's: the same seal and open methods."""
MemoryCipherOf = Callable[[str, int], "MemoryCipher | None"]
"""(memory id, generation) → that memory key's cipher; None: erased (or never made)."""

__all__ = [
    "KeySource",
    "MemoryErased",
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


def _seal_text(cipher: Cipher, user: str, name: str, text: str) -> str:
    return cipher.seal_text(text, field_context(user, name))


def _open_text(cipher: Cipher, user: str, name: str, text: str) -> str:
    if not is_sealed_text(text):
        return text  # written before sealing was on
    return cipher.open_text(text, field_context(user, name))


def _seal_bytes(cipher: Cipher, user: str, name: str, raw: bytes) -> bytes:
    return cipher.seal(raw, field_context(user, name))


def _open_bytes(cipher: Cipher, user: str, name: str, raw: bytes) -> bytes:
    # packed float32 is a multiple of 4 bytes; a sealed value is 29 bytes longer with a user
    # key, 37 with a memory key (never a multiple of 4 either way)
    if len(raw) % 4 == 0:
        return raw
    return cipher.open(raw, field_context(user, name))


def blank_memory(memory: Memory) -> Memory:
    """``memory`` as a reader sees it once its key is erased: ids, layer, times and scores
    kept, every personal field empty."""
    return memory.evolve(
        content="", speaker=None, metadata={}, trigger_conditions=(), embedding=None
    )


def seal_memory(memory: Memory, cipher: Cipher) -> Memory:
    """``memory`` with its personal fields sealed for its user: its texts together
    (:mod:`streams.erasure.envelope`) in ``content``, the other text fields empty (the
    metadata's keys kept in clear, with empty values), the embedding sealed as bytes."""
    user = memory.user_id
    context = field_context(user, ENVELOPE_FIELD)
    texts = _texts_of(memory)
    content = cipher.seal_envelope(texts, context)  # in C, when it is built: the same bytes
    if content is None:
        content = cipher.envelope_prefix + b64url_text(cipher.seal(envelope.pack(texts), context))
    embedding = memory.embedding
    if embedding is not None:
        embedding = _seal_bytes(cipher, user, EMBEDDING_FIELD, embedding)
    return _with_sealed(memory, content, embedding)


def _texts_of(memory: Memory) -> envelope.Texts:
    """The memory's texts that its envelope seals together."""
    return envelope.Texts(
        memory.content, memory.speaker, memory.metadata, memory.trigger_conditions
    )


def _with_sealed(memory: Memory, content: str, embedding: bytes | None) -> Memory:
    """``memory`` as sealed: its envelope in ``content``, the other text fields empty (the
    metadata's keys kept in clear, with empty values), its sealed ``embedding``."""
    return memory.evolve(
        content=content,
        speaker=None,
        metadata=dict.fromkeys(memory.metadata, ""),
        trigger_conditions=(),
        embedding=embedding,
    )


def open_memory(
    memory: Memory, cipher: FieldCipher | None, memory_keys: MemoryCipherOf | None = None
) -> Memory:
    """``memory`` with its sealed fields opened; :class:`Unreadable` if one does not open
    (``cipher`` None: the user's key is erased), :class:`MemoryErased` when they are sealed
    with a memory key that is gone (``memory_keys`` finds the memory's keys)."""
    if cipher is None:
        if _has_sealed_field(memory):
            raise Unreadable("the user's data key is erased")
        return memory
    generation = text_generation(memory.content)
    if generation is not None:
        found = memory_keys(memory.memory_id, generation) if memory_keys is not None else None
        if found is None:
            raise MemoryErased(memory.memory_id, generation)
        return _open_sealed(memory, found)
    return _open_sealed(memory, cipher)


def _open_sealed(memory: Memory, cipher: Cipher) -> Memory:
    if not memory.content.startswith(cipher.envelope_prefix):
        return _open_fields(memory, cipher)  # sealed field by field, before the envelope
    opened = _opened_in_c(memory, cipher)
    if opened is None:  # the reference: it opens what C did not, or says why not
        context = field_context(memory.user_id, ENVELOPE_FIELD)
        plain = cipher.open(sealed_text_bytes(memory.content, cipher.envelope_prefix), context)
        try:
            texts = envelope.unpack(plain)
        except ValueError as exc:
            raise Unreadable(f"a memory's envelope that does not unpack: {exc}") from exc
        opened = texts, _opened_embedding(memory, cipher)
    texts, embedding = opened
    return memory.evolve(
        content=texts.content,
        speaker=texts.speaker,
        metadata=texts.metadata,
        trigger_conditions=texts.trigger_conditions,
        embedding=embedding,
    )


def _opened_in_c(memory: Memory, cipher: Cipher) -> tuple[envelope.Texts, bytes | None] | None:
    """A memory's envelope and embedding opened by the C in one call (``Cipher.open_memory``);
    None for whatever the reference must judge, or without the C."""
    user = memory.user_id
    return cipher.open_memory(
        memory.content,
        field_context(user, ENVELOPE_FIELD),
        memory.embedding,
        field_context(user, EMBEDDING_FIELD),
    )


_OPENED_SLOTS = tuple(
    getattr(Memory, name).__set__
    for name in ("content", "speaker", "metadata", "trigger_conditions", "embedding")
)


def open_in_place(memory: Memory, cipher: Cipher) -> envelope.Texts | None:
    """Open a memory sealed in an envelope by setting its fields, instead of copying it and
    the record around it: the texts it opened to when done; None (nothing changed) for
    anything but a well-formed envelope that the C opening opens, which :func:`open_memory`
    then judges.

    Only for a memory no one else holds: a record its reader has just decoded (the
    projector's batch). A copy of the memory, its payload and its record is 4 µs of the
    projector's ~12 for opening a record (docs/benchmarks.md, "Sealing cost")."""
    if not memory.content.startswith(cipher.envelope_prefix):
        return None
    opened = _opened_in_c(memory, cipher)
    if opened is None:
        return None
    texts, embedding = opened
    set_content, set_speaker, set_metadata, set_triggers, set_embedding = _OPENED_SLOTS
    set_content(memory, texts.content)
    set_speaker(memory, texts.speaker)
    set_metadata(memory, texts.metadata)
    set_triggers(memory, texts.trigger_conditions)
    set_embedding(memory, embedding)
    return texts


@dataclass(frozen=True, slots=True)
class SealedAsOpened:
    """A write opened in place, with what it was sealed as: sealing the same fields with the
    same key gives those bytes again (the nonce is synthetic, a function of the key, the
    field and the value), so the record that stores the write reuses them instead of sealing
    its texts and its embedding anew (~10 µs of the worker's ~70 a sealed input costs it:
    docs/benchmarks.md, "Sealing cost"). Only values sealed by this code open in place, and
    any other key, field or embedding is sealed as always."""

    key: Cipher
    texts: envelope.Texts  # as opened
    embedding: bytes | None
    sealed_content: str  # as read
    sealed_embedding: bytes | None

    def sealed(self, memory: Memory, key: Cipher) -> Memory | None:
        """``memory`` sealed with ``key`` from the bytes it was read as, when its personal
        fields and the key are those it was opened with; None otherwise."""
        if (
            key is not self.key
            or memory.embedding != self.embedding
            or _texts_of(memory) != self.texts
        ):
            return None
        return _with_sealed(memory, self.sealed_content, self.sealed_embedding)


def _open_fields(memory: Memory, cipher: Cipher) -> Memory:
    """A memory sealed field by field (what every writer did before the envelope)."""
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
        embedding=_opened_embedding(memory, cipher),
    )


def _opened_embedding(memory: Memory, cipher: Cipher) -> bytes | None:
    """The memory's embedding opened (sealed apart from its texts in either layout)."""
    if memory.embedding is None:
        return None
    return _open_bytes(cipher, memory.user_id, EMBEDDING_FIELD, memory.embedding)


def _has_sealed_field(memory: Memory) -> bool:
    return (
        is_sealed_text(memory.content)
        or (memory.speaker is not None and is_sealed_text(memory.speaker))
        or any(is_sealed_text(v) for v in memory.metadata.values())
        or (memory.embedding is not None and len(memory.embedding) % 4 != 0)
    )


# --- input events ------------------------------------------------------------------------------


def seal_input_event(event: MemoryEvent, cipher: Cipher) -> MemoryEvent:
    """An input event as a service publishes it with sealing on (only a write carries
    personal fields)."""
    if isinstance(event.payload, MemoryWritten):
        return event.with_written(seal_memory(event.payload.memory, cipher))
    return event


def open_input_event(
    event: MemoryEvent, cipher: FieldCipher | None, memory_keys: MemoryCipherOf | None = None
) -> MemoryEvent:
    if isinstance(event.payload, MemoryWritten):
        return event.with_written(open_memory(event.payload.memory, cipher, memory_keys))
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


_VERSION_FIELDS: dict[type, str] = {
    ledger.MemoryStored: "version",
    ledger.MemoryPromoted: "promoted_version",
    ledger.PatternDetected: "version",
    ledger.MemoryMerged: "survivor_version",
    ledger.SessionConsolidated: "version",
    ledger.EpisodesSummarized: "version",
    ledger.ProceduralSynthesized: "version",
    ledger.ScopePromoted: "version",
}
"""Where each record that carries a memory keeps that memory's version."""


_copy_event = slot_copier(ledger.ConsolidationEvent)
_PayloadCopier = Callable[[Any, Mapping[str, Any]], Any]
_payload_copiers: dict[type, _PayloadCopier] = {}


def _replaced(payload: _P, changes: Mapping[str, Any]) -> _P:
    """``dataclasses.replace(payload, **changes)``, by setting the copy's slots
    (:mod:`streams.engine.dataclass_speedups`: every sealed or opened record is copied twice,
    4.4 µs for the event and 1.4 for its payload through ``replace``, 1.5 and 0.5 this way)."""
    copier = _payload_copiers.get(type(payload))
    if copier is None:
        copier = _payload_copiers[type(payload)] = slot_copier(type(payload))
    return cast(_P, copier(payload, changes))


def carried_memory(payload: ledger.LedgerPayload) -> tuple[Memory, int] | None:
    """The memory a ledger record carries and its version (None: it carries none)."""
    name = _MEMORY_FIELDS.get(type(payload))
    if name is None:
        return None
    return getattr(payload, name), getattr(payload, _VERSION_FIELDS[type(payload)])


def seal_ledger_event(
    event: ledger.ConsolidationEvent,
    cipher: FieldCipher,
    memory_ciphers: Mapping[str, MemoryCipher] | None = None,
    opened: Mapping[str, SealedAsOpened] | None = None,
) -> ledger.ConsolidationEvent:
    """A ledger record with its personal fields sealed for its user: a memory's with its
    memory key from ``memory_ciphers`` (else the user's), a contradiction's explanation
    with the keys of both memories, one inside the other. ``opened``: the user's writes this
    process opened in place, by memory id (a record storing one reuses its sealed bytes)."""
    keys = memory_ciphers or {}
    payload = event.payload
    user = event.user_id
    name = _MEMORY_FIELDS.get(type(payload))
    if name is not None:
        memory = getattr(payload, name)
        key: Cipher = keys.get(memory.memory_id, cipher)
        as_opened = opened.get(memory.memory_id) if opened else None
        sealed = as_opened.sealed(memory, key) if as_opened is not None else None
        payload = _replaced(payload, {name: sealed or seal_memory(memory, key)})
        if isinstance(payload, ledger.SessionConsolidated) and payload.unresolved_threads:
            threads = tuple(
                _seal_text(key, user, "ledger.thread", t) for t in payload.unresolved_threads
            )
            payload = _replaced(payload, {"unresolved_threads": threads})
    elif isinstance(payload, ledger.ContradictionDetected):
        inner: Cipher = keys.get(payload.memory_id, cipher)
        explanation = _seal_text(inner, user, "ledger.explanation", payload.explanation)
        outer = keys.get(payload.other_memory_id)
        if outer is not None:
            explanation = _seal_text(outer, user, "ledger.explanation", explanation)
        payload = _replaced(payload, {"explanation": explanation})
    elif isinstance(payload, ledger.IdentityDriftMeasured):
        payload = _replaced(
            payload, {"anchor": _seal_bytes(cipher, user, "ledger.anchor", payload.anchor)}
        )
    else:
        return event
    return _copy_event(event, {"payload": payload})


def open_ledger_event(
    event: ledger.ConsolidationEvent,
    cipher: FieldCipher | None,
    memory_keys: MemoryCipherOf | None = None,
    *,
    keep_erased: bool = False,
) -> ledger.ConsolidationEvent:
    """A ledger record opened; :class:`Unreadable` if a sealed field does not open (``cipher``
    None: the user's key is erased, and the record is readable only if it holds nothing
    sealed); :class:`MemoryErased` if a memory key it needs is gone, unless ``keep_erased``:
    then that memory's fields (or the explanation) come back blank."""
    payload = event.payload
    user = event.user_id
    name = _MEMORY_FIELDS.get(type(payload))
    if name is not None:
        memory = getattr(payload, name)
        try:
            opened = open_memory(memory, cipher, memory_keys)
        except MemoryErased:
            if not keep_erased:
                raise
            opened = blank_memory(memory)
            if isinstance(payload, ledger.SessionConsolidated):
                payload = _replaced(payload, {"unresolved_threads": ()})
        payload = _replaced(payload, {name: opened})
        if isinstance(payload, ledger.SessionConsolidated) and payload.unresolved_threads:
            layers = (payload.narrative.memory_id,)
            threads = tuple(
                _open_layered(cipher, memory_keys, user, "ledger.thread", t, layers)
                for t in payload.unresolved_threads
            )
            payload = _replaced(payload, {"unresolved_threads": threads})
    elif isinstance(payload, ledger.ContradictionDetected):
        try:
            explanation = _open_layered(
                cipher,
                memory_keys,
                user,
                "ledger.explanation",
                payload.explanation,
                (payload.other_memory_id, payload.memory_id),
            )
        except MemoryErased:
            if not keep_erased:
                raise
            explanation = ""
        payload = _replaced(payload, {"explanation": explanation})
    elif isinstance(payload, ledger.IdentityDriftMeasured):
        anchor = payload.anchor
        if len(anchor) % 4 != 0:
            if cipher is None:
                raise Unreadable("the user's data key is erased")
            anchor = _open_bytes(cipher, user, "ledger.anchor", anchor)
        payload = _replaced(payload, {"anchor": anchor})
    else:
        return event
    return _copy_event(event, {"payload": payload})


def _open_layered(
    cipher: FieldCipher | None,
    memory_keys: MemoryCipherOf | None,
    user: str,
    name: str,
    text: str,
    layers: Sequence[str],
) -> str:
    """A text sealed with the keys of some of ``layers`` (memory ids), one inside the other,
    then maybe the user's: a layer's header (``ms2:``) names its generation, and of the
    memories' keys of that generation the one that opens it is its (the associated data
    binds the memory id)."""
    if cipher is None:
        if is_sealed_text(text):
            raise Unreadable("the user's data key is erased")
        return text
    remaining = list(layers)
    while (generation := text_generation(text)) is not None:
        for i, memory_id in enumerate(remaining):
            found = memory_keys(memory_id, generation) if memory_keys is not None else None
            if found is None:
                continue
            try:
                text = found.open_text(text, field_context(user, name))
            except Unreadable:
                continue  # a layer of the other memory
            del remaining[i]
            break
        else:
            raise MemoryErased(remaining[0] if remaining else "?", generation)
    return _open_text(cipher, user, name, text)


def carries_personal_fields(event: ledger.ConsolidationEvent) -> bool:
    """Whether a ledger record has fields this module seals (the others need no key)."""
    payload = event.payload
    return type(payload) in _MEMORY_FIELDS or isinstance(
        payload, (ledger.ContradictionDetected, ledger.IdentityDriftMeasured)
    )


# --- state entries -----------------------------------------------------------------------------


def seal_entry_value(user_id: str, table: str, value: bytes, cipher: Cipher) -> bytes:
    """A state entry's value sealed whole (JSON never starts with a version byte)."""
    return cipher.seal(value, field_context(user_id, "state." + table))


def open_entry_value(
    user_id: str,
    table: str,
    value: bytes,
    cipher: FieldCipher | None,
    memory_keys: MemoryCipherOf | None = None,
    entry_id: str = "",
) -> bytes | None:
    """A state entry's value opened; None when it is sealed and does not open (erased): the
    entry is then as good as a tombstone. A memory's entry sealed with its memory key is
    opened with the key its header names (``entry_id``: the memory id)."""
    generation = generation_of(value) if value.startswith(MEMORY_VERSION) else None
    if generation is None and not value.startswith(VERSION):
        return value  # JSON, written before sealing was on (or a table never sealed)
    if cipher is None:
        return None
    key: Cipher | None = cipher
    if generation is not None:
        key = memory_keys(entry_id, generation) if memory_keys is not None else None
        if key is None:
            return None
    try:
        return key.open(value, field_context(user_id, "state." + table))  # type: ignore[union-attr]
    except Unreadable:
        return None


_ENTRY_HEAD = re.compile(
    rb'\{"_changed":(?:null|-?\d+),"_forgotten":(true|false),"_version":(-?\d+)[,}]'
)
"""The start of a memory's entry as ``encode_memory_record`` writes it (keys sorted, so its
three underscored keys come first)."""


def memory_entry_version(value: bytes) -> int | None:
    """The version a memory's state entry (plain JSON) records; None for a forgotten memory's
    (nothing personal is left in it: it is sealed with the user's key, which outlives the
    memory's, so a restore still knows the memory was forgotten).

    Read from the entry's first bytes where it starts as the worker writes it: parsing the
    whole entry (its embedding's base64 is most of it) cost ~3 µs for each entry sealed, every
    batch; any other entry is parsed."""
    head = _ENTRY_HEAD.match(value)
    if head is not None:
        return None if head[1] == b"true" else int(head[2])
    data = orjson.loads(value)
    if data.get("_forgotten"):
        return None
    version = data.get("_version")
    return version if isinstance(version, int) else None


def _table_of(key: bytes) -> str:
    return split_key(key)[1]


# --- where keys come from ----------------------------------------------------------------------


class KeysUnavailable(RuntimeError):
    """The key store could not be reached or read: no record may be written or read past this
    point (the worker stops without committing and its inputs are processed again)."""


def _from_store(action: Callable[[], _T], failure: str) -> _T:
    """``action()`` on the key store; a database or master-key failure raised as
    :class:`KeysUnavailable`, its message saying what could not be done (``failure``)."""
    try:
        return action()
    except (psycopg.Error, MasterKeyError) as exc:
        raise KeysUnavailable(f"{failure}: {exc}") from exc


class KeySource(Protocol):
    """What :class:`Sealing` needs of a key store (``PostgresKeyStore``)."""

    def ciphers(self, user_ids: Iterable[str]) -> dict[str, FieldCipher]: ...

    def existing(self, user_id: str) -> FieldCipher | None: ...

    def existing_ciphers(self, user_ids: Iterable[str]) -> dict[str, FieldCipher]: ...

    def close(self) -> None: ...

    def erase(self, user_id: str) -> bool: ...

    def forget_cached(self, user_id: str) -> None: ...

    def memory_keys(
        self, pairs: Iterable[MemoryPair]
    ) -> dict[MemoryPair, dict[int, MemoryCipher]]: ...

    def ensure_memory_keys(
        self, user_id: str, asks: Sequence[tuple[str, int, bool]]
    ) -> dict[str, dict[int, MemoryCipher]]: ...

    def draft_memory_key(self, user_id: str, memory_id: str, generation: int) -> MemoryCipher: ...

    def store_drafts(
        self,
    ) -> tuple[dict[MemoryPair, dict[int, MemoryCipher]], set[MemoryKeyId]]: ...

    def input_keys(
        self, pairs: Iterable[MemoryPair], now_us: int
    ) -> dict[MemoryPair, MemoryCipher]: ...

    def erase_memory_keys(self, erasures: Iterable[MemoryKeyId]) -> int: ...

    def flush(self) -> None: ...


LIVE_PAIRS = 100_000
"""Memories whose live keys a process remembers between :meth:`Sealing.new_batch` calls (a
reader that never calls it, like ``tail``, starts again past this many)."""

SealRequest = tuple[str, int, bool]  # (memory id, version, starts a new generation)
FIRST_VERSION = 1  # a memory's first ledger record is its version 1


class Sealing:
    """Seals what a process writes and opens what it reads, with keys from ``keys``.

    Writers get a user's key made on first use (:meth:`writing`); readers only ever use a key
    that exists (:meth:`reading`), so reading an erased user's records makes no new key.
    ``per_memory`` (MEMSTREAM_MEMORY_KEYS, on by default): a memory's fields are sealed with
    its own keys, so forgetting one memory erases it (module doc); off, with the user's only.

    Which keys each memory has is read once, in one round trip for the memories a batch names,
    and remembered until :meth:`new_batch` (another worker may have made a generation since,
    after a rebalance); a reader missing a generation reads its memory again; the unwrapped
    keys stay cached in the store.
    Safe to share between threads (the worker restores partitions in an executor): one lock
    around the store, whose connection is not."""

    def __init__(self, keys: KeySource, *, per_memory: bool = True) -> None:
        self.keys = keys
        self.per_memory = per_memory
        self._lock = threading.Lock()
        self._live: dict[MemoryPair, dict[int, MemoryCipher]] = {}
        self._input_keys = _GroupCommit(self._make_input_keys)
        # first keys of new memories drafted by :meth:`seal_ledger`, not stored yet (by key
        # id), and which of them the last :meth:`seal_ledger` used
        self._drafted: set[MemoryKeyId] = set()
        self._used: set[MemoryPair] = set()
        # the writes the last open_inputs(in_place=True) opened, by user and memory id
        self._opened: dict[str, dict[str, SealedAsOpened]] = {}

    def _make_input_keys(self, pairs: list[MemoryPair]) -> dict[MemoryPair, MemoryCipher]:
        now_us = time.time_ns() // 1000
        return self._store(lambda: self.keys.input_keys(pairs, now_us), "memory keys")

    def _store(self, action: Callable[[], _T], what: str) -> _T:
        with self._lock:
            return _from_store(action, f"the {what} could not be read")

    def writing(self, user_ids: Iterable[str]) -> dict[str, FieldCipher]:
        """Each user's cipher, made if missing: one round trip for the users not cached."""
        return self._store(lambda: self.keys.ciphers(user_ids), "data keys")

    def reading(self, user_id: str) -> FieldCipher | None:
        """The user's cipher, None once the user's key is erased."""
        return self._store(lambda: self.keys.existing(user_id), "data keys")

    def reading_many(self, user_ids: Iterable[str]) -> dict[str, FieldCipher]:
        """The ciphers of those of ``user_ids`` who have a key, in one round trip."""
        return self._store(lambda: self.keys.existing_ciphers(user_ids), "data keys")

    def close(self) -> None:
        with self._lock:
            self.keys.close()

    def erase(self, user_id: str) -> bool:
        """Destroy the user's data key and memory keys (True if there was a data key): every
        record sealed with them, wherever it is, never opens again."""
        with self._lock:
            self._drop_live(user_id)
            self._drafted = {k for k in self._drafted if k[0] != user_id}  # the store drops them
            return _from_store(lambda: self.keys.erase(user_id), "the data key could not be erased")

    def forget_cached(self, user_id: str) -> None:
        """Drop this process's copy of the user's keys (another process erased them)."""
        with self._lock:
            self._drop_live(user_id)
            self.keys.forget_cached(user_id)

    def _drop_live(self, user_id: str) -> None:
        """Forget which keys the user's memories have (lock held)."""
        self._live = {p: k for p, k in self._live.items() if p[0] != user_id}

    def erase_memory_keys(self, erasures: Iterable[MemoryKeyId]) -> int:
        """Destroy, for each (user, memory, through), the memory's keys of generations up to
        ``through`` (what :func:`memory_key_erasures` finds in applied ledger records)."""
        wanted = list(erasures)
        with self._lock:
            for user_id, memory_id, through in wanted:
                live = self._live.get((user_id, memory_id))
                if live is not None:
                    for generation in [g for g in live if g <= through]:
                        del live[generation]
            return _from_store(
                lambda: self.keys.erase_memory_keys(wanted), "the memory keys could not be erased"
            )

    # -- memory keys ----------------------------------------------------------------------------

    def flush(self) -> None:
        """Make the keys written so far durable (a store that defers its commits' WAL flush:
        the worker, once per batch, before the batch's records are committed to Kafka)."""
        self._store(self.keys.flush, "memory keys")

    def new_batch(self) -> None:
        """Forget which keys each memory has: they are read again when next needed. The
        worker calls it when partitions are assigned to it (another worker may have made
        generations of their users' memories meanwhile), the projector once per batch."""
        with self._lock:
            self._live.clear()

    def _load_live(self, pairs: Iterable[MemoryPair]) -> None:
        """Read the live keys of the memories not read since :meth:`new_batch` (lock held)."""
        missing = [p for p in dict.fromkeys(pairs) if p not in self._live]
        if not missing:
            return
        if len(self._live) + len(missing) > LIVE_PAIRS:
            self._live.clear()
        found = _from_store(
            lambda: self.keys.memory_keys(missing), "the memory keys could not be read"
        )
        self._live.update(found)

    def prefetch(self, pairs: Iterable[MemoryPair]) -> None:
        """Read the keys of these memories in one round trip (a batch's readers ask first)."""
        with self._lock:
            self._load_live(pairs)

    def prefetch_ledger(self, events: Iterable[ledger.ConsolidationEvent]) -> None:
        """:meth:`prefetch` for a batch of ledger records about to be opened: the memories
        they carry that are sealed with keys of their own (with the users' keys alone, none
        are, and nothing is read)."""
        self.prefetch(
            (event.user_id, carried[0].memory_id)
            for event in events
            if (carried := carried_memory(event.payload)) is not None
            and carried[0].content.startswith(MEMORY_KEY_PREFIXES)  # generation: when opened
        )

    def open_decoded(self, event: ledger.ConsolidationEvent) -> bool:
        """Open the memory of a record this process has just decoded and holds alone, in
        place, with a key :meth:`prefetch_ledger` read (:func:`open_in_place`): True when
        done, the record's clear fields untouched; False (nothing changed) when the record
        needs :meth:`open_ledger_keeping` (no memory, a narrative's threads, the user's key,
        a key not read or erased, anything the C opening leaves to the reference). No I/O."""
        payload = event.payload
        name = _MEMORY_FIELDS.get(type(payload))
        if name is None or type(payload) is ledger.SessionConsolidated:
            return False
        return self._opened_in_place(event.user_id, getattr(payload, name))

    def _opened_in_place(self, user_id: str, memory: Memory, *, keep: bool = False) -> bool:
        """:func:`open_in_place` with the memory key a prefetch read (False: none read).
        ``keep``: remember what it was sealed as, for :meth:`seal_ledger`."""
        with self._lock:
            live = self._live.get((user_id, memory.memory_id))
        if not live:
            return False
        key: MemoryCipher | None
        if len(live) == 1:
            # its one live key, without reading which the value names: a value of another
            # generation fails its tag (the generation is in the associated data) and is left
            # to the reference path, which says what it is
            [key] = live.values()
        else:
            generation = text_generation(memory.content)
            key = None if generation is None else live.get(generation)
        if key is None:
            return False
        sealed_content, sealed_embedding = memory.content, memory.embedding
        texts = open_in_place(memory, key)
        if texts is None:
            return False
        if keep:
            self._opened.setdefault(user_id, {})[memory.memory_id] = SealedAsOpened(
                key, texts, memory.embedding, sealed_content, sealed_embedding
            )
        return True

    def memory_key_of(self, user_id: str) -> MemoryCipherOf:
        """How a reader of ``user_id``'s records finds a memory key (one round trip for a
        memory not read in this batch; None: erased)."""

        def find(memory_id: str, generation: int) -> MemoryCipher | None:
            pair = (user_id, memory_id)
            with self._lock:
                live = self._live.get(pair)
                if live is None or generation not in live:
                    # not read yet, or read before another process made this generation (a
                    # publisher's key for a forgotten id written anew): read it again
                    self._live.pop(pair, None)
                    self._load_live([pair])
                return self._live[pair].get(generation)

        return find

    def sealing_keys(
        self, user_id: str, requests: Sequence[SealRequest], *, drafting: bool = False
    ) -> list[MemoryCipher]:
        """The key each request (memory, version, new generation?) seals with, made where
        missing, in at most one round trip: the memories not read yet are read, and the keys
        their requests need made, by one statement (``PostgresKeyStore.ensure_memory_keys``).
        ``drafting``: a memory's first version not read yet takes a key made here, stored by
        :meth:`store_drafts` (the caller's promise to call it, and to seal again what
        it names, before anything sealed with a draft leaves the process)."""
        with self._lock:
            asks: list[tuple[str, int, bool]] = []
            first: set[str] = set()
            planned: dict[str, set[int]] = {}
            for memory_id, version, fresh in requests:
                live = self._live.get((user_id, memory_id))
                if live is None and drafting and version == FIRST_VERSION and not fresh:
                    # a new memory (or, rarely, one whose key an earlier run of this input
                    # made: store_drafts finds it): as generation_for decides for no keys
                    cipher = self.keys.draft_memory_key(user_id, memory_id, version)
                    self._live[(user_id, memory_id)] = {version: cipher}
                    self._drafted.add((user_id, memory_id, version))
                    continue
                if live is None:
                    # not read yet: the statement decides, as generation_for would, from
                    # what the store holds (its first request, and every fresh one)
                    if fresh or memory_id not in first:
                        asks.append((memory_id, version, fresh))
                        first.add(memory_id)
                    continue
                known = planned.setdefault(memory_id, set(live))
                generation, make = generation_for(known, version, fresh)
                if make:
                    known.add(generation)
                    asks.append((memory_id, generation, True))
            if asks:
                found = _from_store(
                    lambda: self.keys.ensure_memory_keys(user_id, asks),
                    "the memory keys could not be made",
                )
                for memory_id, ciphers in found.items():
                    self._live.setdefault((user_id, memory_id), {}).update(ciphers)
            chosen = []
            choosing: dict[str, set[int]] = {}
            for memory_id, version, fresh in requests:
                live = self._live[(user_id, memory_id)]
                known = choosing.setdefault(memory_id, set(live))
                generation, _ = generation_for(known, version, fresh)
                known.add(generation)
                chosen.append(live[generation])
                if (user_id, memory_id, generation) in self._drafted:
                    self._used.add((user_id, memory_id))
            return chosen

    def store_drafts(self) -> set[MemoryPair]:
        """Store the keys drafted since the last call, in one round trip; the memories whose
        draft was not stored because the store already had a key for them (an earlier run of
        the same input made it before it stopped): what was sealed with their draft must be
        sealed again, with the stored key, which :meth:`sealing_keys` now returns."""
        with self._lock:
            if not self._drafted:
                return set()
            drafted, self._drafted = self._drafted, set()
            found, stored = _from_store(self.keys.store_drafts, "the memory keys could not be made")
            self._live.update(found)
            return {(u, m) for u, m, g in drafted - stored}

    def drafts_used(self) -> set[MemoryPair]:
        """The memories whose drafted key what was sealed since the last call used (what
        :meth:`store_drafts` may ask to seal again)."""
        with self._lock:
            used, self._used = self._used, set()
            return used

    # -- whole batches, as the boundary handles them -------------------------------------------

    def seal_inputs(self, events: Sequence[MemoryEvent]) -> list[MemoryEvent]:
        if not self.per_memory:
            ciphers = self.writing(e.user_id for e in events)
            return [seal_input_event(e, ciphers[e.user_id]) for e in events]
        pairs = [
            (e.user_id, e.payload.memory.memory_id)
            for e in events
            if isinstance(e.payload, MemoryWritten)
        ]
        keys = self._input_keys.run(pairs)
        return [
            seal_input_event(e, keys[(e.user_id, e.payload.memory.memory_id)])
            if isinstance(e.payload, MemoryWritten)
            else e
            for e in events
        ]

    def open_inputs(
        self, events: Sequence[MemoryEvent], *, in_place: bool = False
    ) -> list[MemoryEvent | Unreadable]:
        """Each event opened, or the :class:`Unreadable` it raised. The keys of the batch's
        writers are read in one round trip (and their memories' in another), never made: a
        sealed input's key was made by its publisher, so a missing one is an erased one.
        ``in_place``: the events were decoded by the caller, which alone holds them (the
        worker's batch): a write is opened by setting its memory's fields where it can
        (:func:`open_in_place`), not copied."""
        self._opened = {}  # the last batch's writes are sealed by now
        writes = [e for e in events if isinstance(e.payload, MemoryWritten)]
        ciphers = self.reading_many(e.user_id for e in writes) if writes else {}
        self.prefetch(
            (e.user_id, e.payload.memory.memory_id)  # type: ignore[union-attr]
            for e in writes
            if e.payload.memory.content.startswith(MEMORY_KEY_PREFIXES)  # type: ignore[union-attr]
        )
        opened: list[MemoryEvent | Unreadable] = []
        for event in events:
            if not isinstance(event.payload, MemoryWritten):
                opened.append(event)
                continue
            try:
                found = ciphers.get(event.user_id)
                if (
                    in_place
                    and found is not None
                    and self._opened_in_place(event.user_id, event.payload.memory, keep=True)
                ):
                    opened.append(event)
                    continue
                opened.append(open_input_event(event, found, self.memory_key_of(event.user_id)))
            except Unreadable as exc:
                opened.append(exc)
        return opened

    def seal_entries(self, user_id: str, entries: Sequence[Entry]) -> list[Entry]:
        """One user's state entries with the values of the sealed tables sealed: a memory's
        with the key of its version (a forgotten memory's, and the user's record, with the
        user's key)."""
        sealed_tables = [
            e for e in entries if e.value is not None and _table_of(e.key) in SEALED_TABLES
        ]
        if not sealed_tables:
            return list(entries)
        [cipher] = self.writing([user_id]).values()
        requests: dict[bytes, SealRequest] = {}
        if self.per_memory:
            for entry in sealed_tables:
                _, table, memory_id = split_key(entry.key)
                if table == MEMORY:
                    version = memory_entry_version(entry.value)  # type: ignore[arg-type]
                    if version is not None:
                        requests[entry.key] = (memory_id, version, False)
        found = self.sealing_keys(user_id, list(requests.values()))
        keys = dict(zip(requests, found, strict=True))
        sealed = []
        for entry in entries:
            table = _table_of(entry.key)
            if entry.value is not None and table in SEALED_TABLES:
                key: Cipher = keys.get(entry.key, cipher)
                entry = Entry(entry.key, seal_entry_value(user_id, table, entry.value, key))
            sealed.append(entry)
        return sealed

    def open_input(self, event: MemoryEvent) -> MemoryEvent:
        """:class:`Unreadable` when the event is sealed and its key is erased."""
        if not isinstance(event.payload, MemoryWritten):
            return event
        return open_input_event(
            event, self.reading(event.user_id), self.memory_key_of(event.user_id)
        )

    def seal_ledger(
        self,
        events: Sequence[ledger.ConsolidationEvent],
        version_of: Callable[[str, str], int | None] | None = None,
        rewritten: Collection[str] = (),
        *,
        drafting: bool = False,
    ) -> list[ledger.ConsolidationEvent]:
        """``events`` sealed. ``version_of(user, memory)``: a memory's version now (what a
        contradiction's explanation is sealed at); ``rewritten``: ids of the memories whose
        record here starts a new generation besides the forget cascade's rewrites (a memory
        id written again after its forget); ``drafting``: as :meth:`sealing_keys`."""
        users = {e.user_id for e in events if carries_personal_fields(e)}
        if not users:
            return list(events)
        ciphers = self.writing(users)
        if not self.per_memory:
            return [
                seal_ledger_event(e, ciphers[e.user_id]) if e.user_id in ciphers else e
                for e in events
            ]
        by_user: dict[str, list[tuple[int, SealRequest]]] = {}
        for index, event in enumerate(events):
            for request in _seal_requests(event, version_of, rewritten):
                by_user.setdefault(event.user_id, []).append((index, request))
        keys: dict[int, dict[str, MemoryCipher]] = {}
        for user_id, wanted in by_user.items():
            found = self.sealing_keys(user_id, [r for _, r in wanted], drafting=drafting)
            for (index, request), cipher in zip(wanted, found, strict=True):
                keys.setdefault(index, {})[request[0]] = cipher
        opened = self._opened
        return [
            seal_ledger_event(e, ciphers[e.user_id], keys.get(i), opened.get(e.user_id))
            if e.user_id in ciphers
            else e
            for i, e in enumerate(events)
        ]

    def open_ledger(self, event: ledger.ConsolidationEvent) -> ledger.ConsolidationEvent:
        """:class:`Unreadable` when a sealed field does not open (:class:`MemoryErased` when
        it is a memory's key that is gone)."""
        if not carries_personal_fields(event):
            return event
        return open_ledger_event(
            event, self.reading(event.user_id), self.memory_key_of(event.user_id)
        )

    def open_ledger_keeping(
        self, event: ledger.ConsolidationEvent
    ) -> tuple[ledger.ConsolidationEvent, bool]:
        """The record opened, with the fields of an erased memory blank, and whether there was
        one; :class:`Unreadable` when the user's key is erased (the record is then skipped).
        A replay keeps an erased memory's records so that what follows them (its forget, its
        version written anew) lands as it did live."""
        if not carries_personal_fields(event):
            return event, False
        cipher = self.reading(event.user_id)
        memory_keys = self.memory_key_of(event.user_id)
        try:
            return open_ledger_event(event, cipher, memory_keys), False
        except MemoryErased:
            return open_ledger_event(event, cipher, memory_keys, keep_erased=True), True

    def open_entry(
        self, user_id: str, table: str, value: bytes, entry_id: str = ""
    ) -> bytes | None:
        """The entry's value, None when it was sealed with an erased key."""
        if not value.startswith(VERSION) and not value.startswith(MEMORY_VERSION):
            return value
        return open_entry_value(
            user_id, table, value, self.reading(user_id), self.memory_key_of(user_id), entry_id
        )


class EntryOpening:
    """:meth:`Sealing.open_entry` for a restore or a cold user's load, which also reads the
    keys of all the user's memories in one round trip first
    (``streams.state.changelog.PrefetchingOpener``)."""

    def __init__(self, sealing: Sealing) -> None:
        self.sealing = sealing

    def __call__(self, user_id: str, table: str, value: bytes, entry_id: str = "") -> bytes | None:
        return self.sealing.open_entry(user_id, table, value, entry_id)

    def prefetch_entries(self, user_id: str, memory_ids: list[str]) -> None:
        if self.sealing.per_memory and memory_ids:
            self.sealing.prefetch((user_id, m) for m in memory_ids)


class _GroupCommit:
    """Makes the keys of concurrent publishers' writes in one statement: a write's key is a
    committed row (its WAL flush is most of the cost), so writes arriving while one commit
    runs wait for it and then share the next, one commit for all of them (the HTTP API
    publishes from many threads at once). A failure reaches every write of its round."""

    def __init__(self, make: Callable[[list[MemoryPair]], dict[MemoryPair, MemoryCipher]]) -> None:
        self._make = make
        self._cond = threading.Condition()
        self._pending: list[MemoryPair] = []
        self._round = 0  # the round the pending pairs will be made in
        self._busy = False
        self._results: dict[int, tuple[dict[MemoryPair, MemoryCipher], BaseException | None]] = {}
        self._waiting: dict[int, int] = {}

    def run(self, pairs: Sequence[MemoryPair]) -> dict[MemoryPair, MemoryCipher]:
        if not pairs:
            return {}
        with self._cond:
            self._pending.extend(pairs)
            mine = self._round
            self._waiting[mine] = self._waiting.get(mine, 0) + 1
            while mine not in self._results:
                if not self._busy and self._round == mine:
                    self._lead()
                else:
                    self._cond.wait()
            found, error = self._results[mine]
            self._waiting[mine] -= 1
            if not self._waiting[mine]:
                del self._waiting[mine], self._results[mine]
        if error is not None:
            raise error
        return found

    def _lead(self) -> None:
        """Make this round's keys (the condition held on entry and on return)."""
        taken, self._pending = list(dict.fromkeys(self._pending)), []
        this, self._round, self._busy = self._round, self._round + 1, True
        self._cond.release()
        try:
            found, error = self._make(taken), None
        except BaseException as exc:  # noqa: BLE001 - handed to every writer of the round
            found, error = {}, exc
        finally:
            self._cond.acquire()
        self._results[this] = (found, error)
        self._busy = False
        self._cond.notify_all()


def _seal_requests(
    event: ledger.ConsolidationEvent,
    version_of: Callable[[str, str], int | None] | None,
    rewritten: Collection[str],
) -> list[SealRequest]:
    """The memory keys a ledger record is sealed with: its memory's at its version (a new
    generation where the forget cascade wrote it again, or it is written anew after its
    forget); a contradiction's two memories' at their versions now."""
    carried = carried_memory(event.payload)
    if carried is not None:
        memory, version = carried
        fresh = starts_generation(event) or (
            memory.memory_id in rewritten and isinstance(event.payload, ledger.MemoryStored)
        )
        return [(memory.memory_id, version, fresh)]
    payload = event.payload
    if isinstance(payload, ledger.ContradictionDetected) and version_of is not None:
        found = []
        for memory_id in (payload.memory_id, payload.other_memory_id):
            now = version_of(event.user_id, memory_id)
            if now is not None:
                found.append((memory_id, now, False))
        return found
    return []


def master_key_of(settings: Settings) -> LocalMasterKey | None:
    """The configured master key (MEMSTREAM_MASTER_KEY_FILE or MEMSTREAM_MASTER_KEY), None
    when sealing is off. A malformed key raises ``MasterKeyError`` naming the variable."""
    if settings.master_key_file:
        return LocalMasterKey.from_file(Path(settings.master_key_file))
    if settings.master_key:
        return LocalMasterKey.from_text(settings.master_key, "MEMSTREAM_MASTER_KEY")
    return None


def retired_master_keys_of(settings: Settings) -> list[LocalMasterKey]:
    """The retired master keys MEMSTREAM_MASTER_KEY_RETIRED_FILES lists: a process holding
    them unwraps the data keys a rotation has not re-wrapped yet, instead of stopping."""
    return [LocalMasterKey.from_file(Path(p)) for p in retired_key_files(settings)]


def sealing_of(
    settings: Settings, conninfo: str | None = None, *, deferred: bool = False
) -> Sealing | None:
    """The process's sealing, keys in ``conninfo`` (default MEMSTREAM_KEYS_DATABASE_URL, else
    MEMSTREAM_DATABASE_URL); None when no master key is configured (sealing off).
    ``deferred``: key writes are made durable by :meth:`Sealing.flush` (the worker's)."""
    master = master_key_of(settings)
    if master is None:
        return None
    where = conninfo or settings.keys_database_url or settings.database_url
    store = PostgresKeyStore(
        where, master, retired=retired_master_keys_of(settings), deferred=deferred
    )
    return Sealing(store, per_memory=settings.erasure_keys == "MEMORY")
