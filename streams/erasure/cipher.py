"""Sealing one personal field with a user's data key: AES-256-GCM with a synthetic nonce.

Deterministic on purpose. The engine's output must be byte-identical wherever an input is
processed again (README: output event ids are derived, and consumers deduplicate by them);
a random nonce would make a re-processed input's ledger records differ from the first ones.
So the nonce is an HMAC of the field's context and its plaintext (a synthetic IV, as in
RFC 5297's SIV mode): the same field with the same value seals to the same bytes, and two
different plaintexts never share a nonce, which is what GCM needs. What this reveals is
equality: the same value in the same field of the same user seals alike, and nothing more.

The associated data binds a sealed value to its user and its field, so a value cannot be
moved to another user's record or another field and still open.

A sealed value is ``VERSION || nonce (12) || ciphertext || tag (16)``; text fields carry it as
``ms1:`` + URL-safe base64 (no padding), so they stay valid Avro strings and valid JSON.

A value sealed with a memory's key (``streams.erasure.memory_keys``) is
``MEMORY_VERSION || generation (8) || nonce || ciphertext || tag``, text ``ms2:``: the header
names which of the memory's keys opens it, and is bound into the associated data.

A memory's personal fields travel together, sealed once as one value
(``streams.erasure.envelope``): ``ms3:`` with a user's key, ``ms4:`` with a memory's, the same
bytes as ``ms1:`` and ``ms2:`` but for a field of their own in the associated data.

Opening has a compiled path (``streams/erasure/_opening.c``, built at install when a C
compiler and OpenSSL's headers are there): the projector opens every record it reads, and the
Python here spent more on the glue around AES-GCM than on AES-GCM (docs/benchmarks.md,
"Sealing cost"). Sealing goes through it too, to the same bytes (the nonce is synthetic: the
tests compare the two byte for byte). The C only opens what is well formed; for anything else
it returns None and the Python here, the reference, opens the value or says why not, so
errors are the same either way (tests/unit/erasure/test_opening_speedups.py).
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import hmac
import importlib
import os
from typing import Protocol, cast

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from streams.erasure import envelope


class _Speedups(Protocol):
    """The C opening (``streams/erasure/_opening.c``, built by setup.py): each call returns
    None where the Python here, the reference, must judge (it opens or says why not)."""

    def hmac_sha256(self, key: bytes, message: bytes, /) -> bytes: ...

    def open_after(self, key: bytes, sealed: bytes, header: int, aad: bytes, /) -> bytes | None: ...

    def open_memory(
        self,
        key: bytes,
        text: str,
        skip: int,
        header: bytes,
        aad: bytes,
        embedding: bytes | None,
        embedding_aad: bytes,
        /,
    ) -> tuple[str, str | None, dict[str, str], tuple[str, ...], bytes | None] | None: ...

    def unwrap_memory_key(
        self, key: bytes, wrapped: bytes, user_id: str, memory_id: str, generation: int, /
    ) -> bytes | None: ...

    def seal(
        self, key: bytes, nonce_key: bytes, header: bytes, plaintext: bytes, aad: bytes, /
    ) -> bytes: ...

    def seal_envelope(
        self,
        key: bytes,
        nonce_key: bytes,
        header: bytes,
        prefix: str,
        content: str,
        speaker: str | None,
        metadata: dict[str, str],
        triggers: tuple[str, ...],
        aad: bytes,
        /,
    ) -> str | None: ...


def _built_speedups() -> _Speedups | None:
    """The C module, typed by the protocol above (its one declaration), None if not built."""
    try:
        module = importlib.import_module("streams.erasure._opening")
    except ImportError:  # installed without a C compiler or OpenSSL's headers: Python alone
        return None
    return cast(_Speedups, module)


speedups = _built_speedups()

VERSION = b"\x01"
MEMORY_VERSION = b"\x02"  # sealed with a memory's key (streams/erasure/memory_keys.py)
GENERATION_BYTES = 8
NONCE_BYTES = 12
TAG_BYTES = 16
KEY_BYTES = 32
TEXT_PREFIX = "ms1:"
MEMORY_TEXT_PREFIX = "ms2:"
ENVELOPE_PREFIX = "ms3:"  # a memory's fields in one value, sealed with its user's key
MEMORY_ENVELOPE_PREFIX = "ms4:"  # ... with a key of the memory
SEALED_PREFIXES = (TEXT_PREFIX, MEMORY_TEXT_PREFIX, ENVELOPE_PREFIX, MEMORY_ENVELOPE_PREFIX)
MEMORY_KEY_PREFIXES = (MEMORY_TEXT_PREFIX, MEMORY_ENVELOPE_PREFIX)  # sealed with a memory's key
_FROM_URLSAFE = bytes.maketrans(b"-_", b"+/")
_TO_URLSAFE = bytes.maketrans(b"+/", b"-_")


class Unreadable(ValueError):
    """A sealed value that does not open: its key was erased, it was sealed for another user
    or field, or it was altered. Readers show such a field as erased, never stop on it."""


def _subkey(data_key: bytes, purpose: bytes) -> bytes:
    """A key for one purpose, so the nonce's HMAC key is never the cipher's key."""
    message = b"memstream/erasure/" + purpose
    if speedups is not None:
        return speedups.hmac_sha256(data_key, message)
    return hmac.new(data_key, message, hashlib.sha256).digest()


class FieldCipher:
    """Seals and opens the personal fields of one user with that user's data key.

    Each purpose's key is derived (an HMAC) when first needed, and its AES-GCM object made
    when first used by Python: a memory's key that only opens (the projector's, an input's)
    never seals or wraps, and with the C opening (``speedups``) never needs the object."""

    __slots__ = ("_aead", "_data_key", "_nonce_key", "_seal_key", "_wrap_aead", "_wrap_key")
    envelope_prefix = ENVELOPE_PREFIX  # what a memory's envelope sealed with this key starts with

    def __init__(self, data_key: bytes) -> None:
        if len(data_key) != KEY_BYTES:
            raise ValueError(f"a data key is {KEY_BYTES} bytes (AES-256), not {len(data_key)}")
        self._data_key = data_key
        self._seal_key: bytes | None = None
        self._aead: AESGCM | None = None
        self._nonce_key: bytes | None = None
        self._wrap_key: bytes | None = None
        self._wrap_aead: AESGCM | None = None

    def _sealing_key(self) -> bytes:
        if self._seal_key is None:
            self._seal_key = _subkey(self._data_key, b"seal")
        return self._seal_key

    def _sealing(self) -> AESGCM:
        if self._aead is None:
            self._aead = AESGCM(self._sealing_key())
        return self._aead

    def _nonce_subkey(self) -> bytes:
        if self._nonce_key is None:
            self._nonce_key = _subkey(self._data_key, b"nonce")
        return self._nonce_key

    def _wrapping_key(self) -> bytes:
        if self._wrap_key is None:
            self._wrap_key = _subkey(self._data_key, b"wrap")
        return self._wrap_key

    def _wrapping(self) -> AESGCM:
        if self._wrap_aead is None:
            self._wrap_aead = AESGCM(self._wrapping_key())
        return self._wrap_aead

    def wrap(self, key: bytes, context: bytes) -> bytes:
        """``key`` (a memory's key) wrapped under this user's data key, random nonce: the row
        a key store keeps, useless without this key (so forgetting the user voids it)."""
        nonce = os.urandom(NONCE_BYTES)
        return nonce + self._wrapping().encrypt(nonce, key, context)

    def unwrap_memory_key(
        self, wrapped: bytes, user_id: str, memory_id: str, generation: int
    ) -> bytes | None:
        """A memory's key :meth:`wrap` wrapped with ``memory_keys.wrap_context`` of these ids,
        that context built and the key opened by the C in one call (a reader unwraps one per
        memory it opens). None without it, or for anything but a key that opens: the
        reference (:meth:`unwrap` with the context built in Python) then opens it or says
        why not."""
        if speedups is None:
            return None
        return speedups.unwrap_memory_key(
            self._wrapping_key(), wrapped, user_id, memory_id, generation
        )

    def unwrap(self, wrapped: bytes, context: bytes) -> bytes:
        """The key :meth:`wrap` wrapped; :class:`Unreadable` when it does not unwrap."""
        if speedups is not None:
            key = speedups.open_after(self._wrapping_key(), wrapped, 0, context)
            if key is not None:
                return key
        try:
            return self._wrapping().decrypt(wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:], context)
        except InvalidTag as exc:
            raise Unreadable(
                "a memory key does not unwrap with its user's data key: the row was altered, "
                "or the user's key was made again after an erasure"
            ) from exc

    def seal(self, plaintext: bytes, context: bytes, header: bytes = VERSION) -> bytes:
        """``plaintext`` sealed for ``context`` (the user and the field: see module doc),
        after ``header`` (a memory key's value has its own: ``memory_keys.MemoryCipher``)."""
        nonce_key = self._nonce_subkey()
        if speedups is not None:  # the same bytes in one call (tests hold the two together)
            return speedups.seal(self._sealing_key(), nonce_key, header, plaintext, context)
        nonce = hmac.new(
            nonce_key, len(context).to_bytes(4, "big") + context + plaintext, hashlib.sha256
        ).digest()[:NONCE_BYTES]
        return header + nonce + self._sealing().encrypt(nonce, plaintext, context)

    def open(self, sealed: bytes, context: bytes) -> bytes:
        """The plaintext of ``sealed``; :class:`Unreadable` when it does not open."""
        if sealed[:1] != VERSION:
            raise Unreadable("not a sealed value of a version this reader knows")
        return self.open_after(sealed, len(VERSION), context)

    def open_after(self, sealed: bytes, header: int, context: bytes) -> bytes:
        """The plaintext of ``sealed`` whose nonce starts after a ``header`` of that many
        bytes (a memory key's value opens here without being copied into a user key's)."""
        if speedups is not None:
            opened = speedups.open_after(self._sealing_key(), sealed, header, context)
            if opened is not None:
                return opened
        if len(sealed) < header + NONCE_BYTES + TAG_BYTES:
            raise Unreadable("not a sealed value of a version this reader knows")
        start = header + NONCE_BYTES
        try:
            return self._sealing().decrypt(sealed[header:start], sealed[start:], context)
        except InvalidTag as exc:
            raise Unreadable(
                "the value does not open with this key for this user and field: sealed for "
                "another, altered, or its key was rotated away"
            ) from exc

    def open_memory(
        self,
        value: str,
        context: bytes,
        embedding: bytes | None,
        embedding_context: bytes,
        header: bytes = VERSION,
        prefix: str = ENVELOPE_PREFIX,
    ) -> tuple[envelope.Texts, bytes | None] | None:
        """A memory's envelope (``value``: ``prefix``, then base64url of ``header``, nonce,
        ciphertext, tag) opened and unpacked, and its embedding (sealed apart, after the same
        ``header``; None, or packed float32 written before sealing, as it is), by the C in one
        call: what opening a memory costs a reader is mostly the calls around AES-GCM. None
        without it, or for anything but a well-formed envelope and embedding that open: the
        reference path (base64, :meth:`open_after`, ``envelope.unpack``) then opens them or
        says why not."""
        if speedups is None:
            return None
        opened = speedups.open_memory(
            self._sealing_key(),
            value,
            len(prefix),
            header,
            context,
            embedding,
            embedding_context,
        )
        if opened is None:
            return None
        content, speaker, metadata, triggers, plain = opened
        return envelope.Texts(content, speaker, metadata, triggers), plain

    def seal_envelope(
        self,
        texts: envelope.Texts,
        context: bytes,
        header: bytes = VERSION,
        prefix: str = ENVELOPE_PREFIX,
    ) -> str | None:
        """A memory's texts packed (``envelope.pack``), sealed (:meth:`seal`) and written as
        ``prefix`` + base64url by the C in one call, the reference's bytes. None without it,
        or for texts it leaves to the reference (a lone surrogate)."""
        if speedups is None:
            return None
        return speedups.seal_envelope(
            self._sealing_key(),
            self._nonce_subkey(),
            header,
            prefix,
            texts.content,
            texts.speaker,
            texts.metadata,
            texts.trigger_conditions,
            context,
        )

    def seal_text(self, text: str, context: bytes) -> str:
        """A text field sealed, as text (``ms1:`` + base64url)."""
        sealed = self.seal(text.encode("utf-8", "surrogatepass"), context)
        return TEXT_PREFIX + b64url_text(sealed)

    def open_text(self, value: str, context: bytes) -> str:
        """The text of a sealed text field; :class:`Unreadable` when it does not open."""
        sealed = sealed_text_bytes(value, TEXT_PREFIX)
        return self.open(sealed, context).decode("utf-8", "surrogatepass")


def sealed_text_bytes(value: str, prefix: str) -> bytes:
    """The sealed bytes a text field carries after ``prefix`` (``ms1:`` for a user's key,
    ``ms2:`` for a memory's); :class:`Unreadable` when it has no such prefix or no base64url."""
    if not value.startswith(prefix):
        raise Unreadable(f"not a sealed text (no {prefix!r} prefix)")
    try:
        return b64url_bytes(value[len(prefix) :])
    except ValueError as exc:
        raise Unreadable("a sealed text that is not base64url") from exc


def b64url_text(raw: bytes) -> str:
    """``raw`` as base64url without padding (``base64.urlsafe_b64encode``'s output, unpadded,
    without that wrapper's Python-level translation: a third of a small field's cost)."""
    encoded = binascii.b2a_base64(raw, newline=False).translate(_TO_URLSAFE)
    return encoded.rstrip(b"=").decode("ascii")


def b64url_bytes(text: str) -> bytes:
    """The bytes of base64url ``text``, padded or not; ``ValueError`` when it is not ASCII or
    not base64 (as ``base64.urlsafe_b64decode``, whose lenient decoding it keeps)."""
    raw = text.encode("ascii").translate(_FROM_URLSAFE)
    return binascii.a2b_base64(raw + b"=" * (-len(raw) % 4))


def is_sealed_text(value: str) -> bool:
    """Whether a text field holds a sealed value (analytics may count these without a key)."""
    return value.startswith(SEALED_PREFIXES)


@functools.lru_cache(maxsize=8192)
def field_context(user_id: str, field: str) -> bytes:
    """The associated data of one field of one user's records: both named, unambiguously.
    Cached: every field of every record a process seals or opens asks for one of a few per
    user."""
    user = user_id.encode("utf-8", "surrogatepass")
    return len(user).to_bytes(4, "big") + user + field.encode("ascii")
