"""The C opening (streams/erasure/_opening.c) against its reference, the Python in cipher.py
and envelope.py: whatever it returns is what the reference returns, it opens every
well-formed value, and everything else it leaves to the reference (None), which still says
why a value does not open."""

from __future__ import annotations

import hashlib
import hmac
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streams.engine.model import Memory
from streams.erasure import cipher, envelope
from streams.erasure.cipher import (
    ENVELOPE_PREFIX,
    VERSION,
    FieldCipher,
    Unreadable,
    b64url_text,
    field_context,
    sealed_text_bytes,
)
from streams.erasure.memory_keys import MemoryCipher, unwrap_memory_key, wrap_context
from streams.erasure.sealing import ENVELOPE_FIELD, open_memory, seal_memory

KEY = bytes(range(32))
CONTEXT = field_context("user-1", ENVELOPE_FIELD)
EMBEDDING_CONTEXT = field_context("user-1", "memory.embedding")


def built() -> cipher._Speedups:
    assert cipher.speedups is not None, (
        "streams/erasure/_opening.c was not built, so every record is opened by the slower "
        "Python path: install a C compiler and OpenSSL's headers (apt-get install "
        "build-essential libssl-dev), then `make clean-venv test`"
    )
    return cipher.speedups


def opened_envelope(value: str, key: FieldCipher | MemoryCipher) -> envelope.Texts | None:
    """What the C makes of a memory's envelope ``value`` (no embedding): its fields, or None."""
    opened = key.open_memory(value, CONTEXT, None, EMBEDDING_CONTEXT)
    return None if opened is None else opened[0]


def reference_envelope(value: str, key: FieldCipher | MemoryCipher) -> envelope.Texts | str:
    """What the Python path makes of ``value``: the opened fields, or the error it raises."""
    try:
        return envelope.unpack(key.open(sealed_text_bytes(value, key.envelope_prefix), CONTEXT))
    except ValueError as exc:  # Unreadable included
        return f"raises {type(exc).__name__}"


def test_the_c_opening_is_built() -> None:
    built()


@given(key=st.binary(max_size=64), message=st.binary(max_size=200))
def test_hmac_is_the_standard_librarys(key: bytes, message: bytes) -> None:
    assert built().hmac_sha256(key, message) == hmac.new(key, message, hashlib.sha256).digest()


@given(plaintext=st.binary(max_size=300), aad=st.binary(max_size=40), header=st.integers(0, 9))
def test_a_sealed_value_opens_to_its_plaintext_and_an_altered_one_not_at_all(
    plaintext: bytes, aad: bytes, header: int
) -> None:
    sealed = bytes(header) + FieldCipher(KEY).seal(plaintext, aad)[1:]
    speedups = built()
    subkey = cipher._subkey(KEY, b"seal")
    assert speedups.open_after(subkey, sealed, header, aad) == plaintext
    for at in range(header, len(sealed), 7):
        altered = bytearray(sealed)
        altered[at] ^= 1
        assert speedups.open_after(subkey, bytes(altered), header, aad) is None
    assert speedups.open_after(subkey, sealed, header, aad + b"x") is None
    assert speedups.open_after(subkey, sealed[: header + 27], header, aad) is None


@given(
    plaintext=st.binary(max_size=2000),
    aad=st.binary(max_size=60),
    key=st.sampled_from([FieldCipher(KEY), MemoryCipher(KEY, "m-1", 3)]),
)
def test_c_seals_to_the_same_bytes_as_the_reference(
    plaintext: bytes, aad: bytes, key: FieldCipher | MemoryCipher
) -> None:
    """The nonce is synthetic (an HMAC of the field and the value), so a value seals to one
    byte string: a worker with the C module and one without write the same records."""
    built()
    with_c = key.seal(plaintext, aad)
    saved, cipher.speedups = cipher.speedups, None
    try:
        reference = key.seal(plaintext, aad)
        assert key.open(with_c, aad) == plaintext
    finally:
        cipher.speedups = saved
    assert with_c == reference


texts = st.text()  # any code point, surrogates included (sealing encodes with surrogatepass)
fields = st.builds(
    envelope.Texts,
    content=texts,
    speaker=st.none() | texts,
    metadata=st.dictionaries(texts, texts, max_size=4),
    trigger_conditions=st.lists(texts, max_size=3).map(tuple),
)
keys = st.sampled_from(
    [FieldCipher(KEY), MemoryCipher(KEY, "m-1", 3), MemoryCipher(KEY, "m-1", -(1 << 62))]
)


def sealed_envelope(key: FieldCipher | MemoryCipher, plaintext: bytes) -> str:
    return key.envelope_prefix + b64url_text(key.seal(plaintext, CONTEXT))


def has_lone_surrogate(fields: envelope.Texts) -> bool:
    texts = [fields.content, fields.speaker or "", *fields.trigger_conditions]
    texts += [text for pair in fields.metadata.items() for text in pair]
    return any("\ud800" <= c <= "\udfff" for text in texts for c in text)


@given(fields=fields, key=keys)
def test_a_memorys_envelope_is_sealed_in_one_call_to_the_references_bytes(
    fields: envelope.Texts, key: FieldCipher | MemoryCipher
) -> None:
    """Packing, sealing and base64 in C write what the reference writes; texts it cannot
    take as they stand (a lone surrogate) it leaves to the reference (None)."""
    built()
    got = key.seal_envelope(fields, CONTEXT)
    if has_lone_surrogate(fields):
        assert got is None
    else:
        assert got == sealed_envelope(key, envelope.pack(fields))


@given(fields=fields, key=keys)
def test_a_memorys_envelope_opens_in_one_call_to_what_was_sealed(
    fields: envelope.Texts, key: FieldCipher | MemoryCipher
) -> None:
    built()
    value = sealed_envelope(key, envelope.pack(fields))
    assert opened_envelope(value, key) == reference_envelope(value, key) == fields


@given(raw=st.binary(max_size=80), key=keys)
def test_sealed_bytes_that_are_no_envelope_are_left_to_the_reference(
    raw: bytes, key: FieldCipher | MemoryCipher
) -> None:
    """Any plaintext that opens: unpacked exactly as envelope.unpack does, or refused (None)
    exactly where envelope.unpack raises."""
    built()
    value = sealed_envelope(key, raw)
    got = opened_envelope(value, key)
    expected = reference_envelope(value, key)
    if got is None:
        assert isinstance(expected, str) and expected.startswith("raises")
    else:
        assert got == expected


@given(
    fields=fields,
    key=keys,
    edit=st.tuples(st.integers(0, 10_000), st.sampled_from(["drop", "flip", "insert"])),
    char=st.characters(),
)
def test_an_altered_envelope_never_opens_to_something_else(
    fields: envelope.Texts,
    key: FieldCipher | MemoryCipher,
    edit: tuple[int, str],
    char: str,
) -> None:
    """A value changed anywhere (a character dropped, changed or added, padding or odd
    characters included) either opens as the reference opens it or is left to it."""
    built()
    value = sealed_envelope(key, envelope.pack(fields))
    at, how = edit
    at = len(ENVELOPE_PREFIX) + at % (len(value) - len(ENVELOPE_PREFIX))
    if how == "drop":
        value = value[:at] + value[at + 1 :]
    elif how == "flip":
        value = value[:at] + char + value[at + 1 :]
    else:
        value = value[:at] + char + value[at:]
    got = opened_envelope(value, key)
    if got is not None:
        assert got == reference_envelope(value, key)


embeddings = st.sampled_from(["none", "plain", "sealed", "altered", "other header"])


def reference_embedding(
    sealed: bytes | None, key: FieldCipher | MemoryCipher
) -> bytes | None | str:
    """What the Python path makes of a memory's embedding (``sealing._opened_embedding``)."""
    if sealed is None or len(sealed) % 4 == 0:
        return sealed
    try:
        return key.open(sealed, EMBEDDING_CONTEXT)
    except Unreadable:
        return "raises Unreadable"


@given(fields=fields, key=keys, embedding=embeddings, floats=st.binary(min_size=1, max_size=64))
def test_a_memory_opens_in_one_call_with_its_embedding_as_the_reference_opens_them(
    fields: envelope.Texts, key: FieldCipher | MemoryCipher, embedding: str, floats: bytes
) -> None:
    """The envelope and the embedding in one C call (the envelope's key kept for the
    embedding): both as the reference opens them, or None where the reference raises for
    either."""
    built()
    value = sealed_envelope(key, envelope.pack(fields))
    vector = floats * 4  # packed float32: a multiple of 4 bytes
    sealed = {
        "none": None,
        "plain": vector,  # written before sealing: as it is
        "sealed": key.seal(vector, EMBEDDING_CONTEXT),
        "altered": key.seal(vector, EMBEDDING_CONTEXT)[:-1] + b"?",
        "other header": b"\x07" + key.seal(vector, EMBEDDING_CONTEXT)[1:],
    }[embedding]
    got = key.open_memory(value, CONTEXT, sealed, EMBEDDING_CONTEXT)
    expected = (reference_envelope(value, key), reference_embedding(sealed, key))
    if embedding in ("altered", "other header"):
        assert got is None and expected[1] == "raises Unreadable"
    else:
        assert got == expected == (fields, None if sealed is None else vector)


ids = st.text(max_size=40)  # non-ASCII and lone surrogates included: C leaves those alone


@given(
    user_id=ids,
    memory_id=ids,
    generation=st.integers(-(1 << 63), (1 << 63) - 1) | st.integers(1 << 63, 1 << 70),
)
def test_a_memory_key_unwraps_in_one_call_as_the_reference_unwraps_it(
    user_id: str, memory_id: str, generation: int
) -> None:
    """The C builds ``wrap_context`` itself: a key wrapped for one (user, memory,
    generation) unwraps there to the same key, for no other, and what the C leaves alone
    (ids not ASCII, a generation out of range) the reference unwraps or refuses."""
    built()
    user = FieldCipher(KEY)
    key = os.urandom(32)
    try:
        context = wrap_context(user_id, memory_id, generation)
    except (OverflowError, UnicodeEncodeError):
        assert user.unwrap_memory_key(b"x" * 60, user_id, memory_id, generation) is None
        return
    wrapped = user.wrap(key, context)
    fast = user.unwrap_memory_key(wrapped, user_id, memory_id, generation)
    if user_id.isascii() and memory_id.isascii() and generation < 1 << 63:
        assert fast == key
    else:
        assert fast is None
    assert unwrap_memory_key(user, wrapped, (user_id, memory_id, generation)) == key
    assert user.unwrap_memory_key(wrapped, user_id, memory_id + "x", generation) is None
    assert user.unwrap_memory_key(wrapped, user_id, memory_id, generation ^ 1) is None
    with pytest.raises(Unreadable):
        unwrap_memory_key(user, wrapped, (user_id + "x", memory_id, generation))


@pytest.mark.parametrize(
    "value",
    [
        ENVELOPE_PREFIX,  # nothing after the prefix
        ENVELOPE_PREFIX + "A",  # one base64 character: no byte
        ENVELOPE_PREFIX + "AAAA" * 20,  # decodes, but no version byte
        ENVELOPE_PREFIX + "é" * 40,  # not ASCII
    ],
)
def test_what_c_leaves_alone_the_reference_refuses(value: str) -> None:
    key = FieldCipher(KEY)
    subkey = cipher._subkey(KEY, b"seal")
    assert built().open_memory(subkey, value, 4, VERSION, CONTEXT, None, EMBEDDING_CONTEXT) is None
    with pytest.raises(Unreadable):
        open_memory(Memory("m-1", "user-1", content=value), key)


def test_the_other_keys_value_is_refused_by_both(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sealed with another memory's key: the C path does not open it, and the Python path
    (C turned off) refuses it the same way."""
    memory = Memory("m-1", "user-1", content="hello", speaker="Ann", embedding=bytes(16))
    sealed = seal_memory(memory, MemoryCipher(os.urandom(32), "m-1", 1))
    other = MemoryCipher(os.urandom(32), "m-1", 1)
    assert opened_envelope(sealed.content, other) is None
    with pytest.raises(Unreadable):
        open_memory(sealed, FieldCipher(KEY), lambda memory_id, generation: other)
    monkeypatch.setattr(cipher, "speedups", None)
    with pytest.raises(Unreadable):
        open_memory(sealed, FieldCipher(KEY), lambda memory_id, generation: other)


@pytest.mark.parametrize("with_c", [True, False], ids=["c", "python"])
def test_a_memory_opens_alike_with_and_without_c(
    with_c: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if with_c:
        built()
    else:
        monkeypatch.setattr(cipher, "speedups", None)
    memory = Memory(
        "m-1",
        "user-1",
        content="I moved to Lyon\ud800",
        speaker="Ann",
        metadata={"k": "v", "": "é"},
        trigger_conditions=("when asked",),
        embedding=bytes(range(16)),
    )
    key = MemoryCipher(os.urandom(32), "m-1", 7)
    sealed = seal_memory(memory, key)
    user_key = FieldCipher(os.urandom(32))
    assert open_memory(sealed, user_key, lambda memory_id, generation: key) == memory
    wrapped = user_key.wrap(KEY, b"context")
    assert user_key.unwrap(wrapped, b"context") == KEY
    with pytest.raises(Unreadable):
        user_key.unwrap(wrapped, b"other context")
