"""Per-memory keys: forgetting one memory erases its text from every copy of the log.

A user's data key opens everything of the user, so it cannot erase one memory. Each memory
therefore has keys of its own, random (never derived from the user's key, which lives on) and
kept in the key store wrapped under the user's data key (``memstream_memory_keys``, migration
012). A record's personal fields are sealed with a key of the memory the record is about; the
projector deletes the keys a forget makes void when it applies the forget (docs/security.md,
"Forgetting one memory"), and every copy sealed with them stops opening.

A memory has one key per *generation*: the version from which its current content was
written. A memory the forget cascade writes again (an observation, narrative, summary or
profile that quoted the forgotten one) starts a new generation, so its old versions, which
quote the forgotten text, die with the old key while the memory lives on. The sealed value
names its generation in a clear header (``ms2:``), so a reader needs no other lookup.

Which generation a writer uses is a function of the versions, never of time or of a cache
(:func:`generation_for`): an input processed again after a crash seals its records with the
same keys, byte for byte, which exactly-once output relies on (cipher.py's synthetic nonce).

Pure: no I/O (the key store is ``data_keys.PostgresKeyStore``).
"""

from __future__ import annotations

from collections.abc import Iterable

from streams.engine import ledger
from streams.engine.forgetting import REDERIVED
from streams.erasure import envelope
from streams.erasure.cipher import (
    GENERATION_BYTES,
    MEMORY_ENVELOPE_PREFIX,
    MEMORY_KEY_PREFIXES,
    MEMORY_TEXT_PREFIX,
    MEMORY_VERSION,
    TAG_BYTES,
    FieldCipher,
    Unreadable,
    b64url_bytes,
    b64url_text,
    sealed_text_bytes,
)

HEADER_BYTES = len(MEMORY_VERSION) + GENERATION_BYTES
MemoryKeyId = tuple[str, str, int]  # (user id, memory id, generation)

INPUT_GENERATIONS = -(1 << 62)
"""Generations a publisher makes for a written memory are below zero (this, plus the time in
microseconds): they never collide with the versions the worker starts generations at, and a
memory id written again after its forget gets a key no earlier process has cached."""


class MemoryErased(Unreadable):
    """A memory's fields do not open because the key of their generation is gone (the memory
    was forgotten, or written again from what remained): the record's other fields still
    read, so a reader may keep it with this memory shown as erased."""

    def __init__(self, memory_id: str, generation: int) -> None:
        super().__init__(f"memory {memory_id}'s key of generation {generation} is erased")
        self.memory_id = memory_id
        self.generation = generation


class MemoryCipher:
    """Seals and opens the fields of one memory with its key of one generation.

    The same methods as :class:`FieldCipher`, so the sealing of a memory takes either; the
    memory id and the generation are bound into the associated data, so a value cannot be
    moved to another memory and still open."""

    __slots__ = ("_bound", "_cipher", "_header", "generation", "memory_id")
    envelope_prefix = MEMORY_ENVELOPE_PREFIX

    def __init__(self, key: bytes, memory_id: str, generation: int) -> None:
        self._cipher = FieldCipher(key)
        self.memory_id = memory_id
        self.generation = generation
        self._header = header_of(generation)
        memory = memory_id.encode("utf-8", "surrogatepass")
        self._bound = len(memory).to_bytes(4, "big") + memory + self._header

    def seal(self, plaintext: bytes, context: bytes) -> bytes:
        return self._cipher.seal(plaintext, context + self._bound, self._header)

    def open(self, sealed: bytes, context: bytes) -> bytes:
        if not sealed.startswith(self._header):
            raise Unreadable("the value is sealed with another key of this memory")
        return self._cipher.open_after(sealed, HEADER_BYTES, context + self._bound)

    def seal_envelope(self, texts: envelope.Texts, context: bytes) -> str | None:
        return self._cipher.seal_envelope(
            texts, context + self._bound, self._header, MEMORY_ENVELOPE_PREFIX
        )

    def open_memory(
        self, value: str, context: bytes, embedding: bytes | None, embedding_context: bytes
    ) -> tuple[envelope.Texts, bytes | None] | None:
        return self._cipher.open_memory(
            value,
            context + self._bound,
            embedding,
            embedding_context + self._bound,
            self._header,
            MEMORY_ENVELOPE_PREFIX,
        )

    def seal_text(self, text: str, context: bytes) -> str:
        sealed = self.seal(text.encode("utf-8", "surrogatepass"), context)
        return MEMORY_TEXT_PREFIX + b64url_text(sealed)

    def open_text(self, value: str, context: bytes) -> str:
        sealed = sealed_text_bytes(value, MEMORY_TEXT_PREFIX)
        return self.open(sealed, context).decode("utf-8", "surrogatepass")


def header_of(generation: int) -> bytes:
    return MEMORY_VERSION + generation.to_bytes(GENERATION_BYTES, "big", signed=True)


def generation_of(sealed: bytes) -> int | None:
    """The generation a value sealed with a memory key names; None for any other value."""
    if len(sealed) < HEADER_BYTES + TAG_BYTES or not sealed.startswith(MEMORY_VERSION):
        return None
    return int.from_bytes(sealed[1:HEADER_BYTES], "big", signed=True)


def text_generation(value: str) -> int | None:
    """:func:`generation_of` for a text field (``ms2:`` or a memory's envelope, ``ms4:``, +
    base64url); None for other text."""
    if not value.startswith(MEMORY_KEY_PREFIXES):
        return None
    start = len(MEMORY_TEXT_PREFIX)
    try:  # its first 12 characters: the 9 bytes of the header
        raw = b64url_bytes(value[start : start + 12])
    except ValueError:
        return None
    if len(raw) < HEADER_BYTES or not raw.startswith(MEMORY_VERSION):
        return None
    return int.from_bytes(raw[1:HEADER_BYTES], "big", signed=True)


def generation_for(live: Iterable[int], version: int, fresh: bool) -> tuple[int, bool]:
    """The generation a record of a memory at ``version`` is sealed with, and whether its key
    must be made: ``live``, the generations the key store holds for the memory.

    ``fresh``: the record starts a new generation (the forget cascade wrote the memory again,
    or a forgotten memory id is written anew): its own version. Otherwise the newest live
    generation not after ``version``, so a record processed again after a crash takes the
    key it took the first time even when a later record of the same batch made a newer one;
    a memory with none (its first record) starts one at ``version``."""
    if fresh:
        return version, version not in set(live)
    below = [g for g in live if g <= version]
    if below:
        return max(below), False
    return version, True


def input_generation(live: Iterable[int], now_us: int) -> tuple[int, bool]:
    """The generation a publisher seals a written memory with: the memory's newest live one
    (an update of a memory written before), else a new one below zero, unique in time."""
    generations = list(live)
    if generations:
        return max(generations), False
    return INPUT_GENERATIONS + now_us, True


def wrap_context(user_id: str, memory_id: str, generation: int) -> bytes:
    """A wrapped memory key unwraps only as the key of its user, memory and generation."""
    user = user_id.encode("utf-8", "surrogatepass")
    memory = memory_id.encode("utf-8", "surrogatepass")
    return (
        b"memstream/memory-key/"
        + len(user).to_bytes(4, "big")
        + user
        + len(memory).to_bytes(4, "big")
        + memory
        + generation.to_bytes(GENERATION_BYTES, "big", signed=True)
    )


def unwrap_memory_key(user: FieldCipher, wrapped: bytes, key_id: MemoryKeyId) -> bytes:
    """The memory key of ``key_id`` that ``user``'s key wrapped (the C's one call, or the
    reference's :func:`wrap_context` and unwrap); :class:`Unreadable` when it does not unwrap."""
    user_id, memory_id, generation = key_id
    key = user.unwrap_memory_key(wrapped, user_id, memory_id, generation)
    if key is None:
        key = user.unwrap(wrapped, wrap_context(user_id, memory_id, generation))
    return key


def starts_generation(event: ledger.ConsolidationEvent) -> bool:
    """Whether the record is a memory the forget cascade wrote again from what remained of its
    sources: its old versions quote the forgotten text, so it takes a new key from here on."""
    payload = event.payload
    # a rewrite is a memory's next version, never its first: most records are told apart
    # without deriving the id (a uuid5 per sealed record)
    return (
        isinstance(payload, ledger.MemoryStored)
        and payload.version > 1
        and event.event_id
        == ledger.derived_event_id(
            event.user_id, event.causation_id, REDERIVED, payload.memory.memory_id
        )
    )


def memory_key_erasures(event: ledger.ConsolidationEvent) -> list[MemoryKeyId]:
    """The memory keys an applied ledger record makes void, as (user, memory, through
    generation): all of a forgotten memory's up to its forget, and the generations before a
    memory the forget cascade wrote again. Later generations (the id written anew) stay."""
    payload = event.payload
    if isinstance(payload, ledger.MemoryForgotten):
        return [(event.user_id, payload.memory_id, payload.version)]
    if isinstance(payload, ledger.MemoryStored) and starts_generation(event):
        return [(event.user_id, payload.memory.memory_id, payload.version - 1)]
    return []
