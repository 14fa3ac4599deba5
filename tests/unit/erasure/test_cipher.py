"""Sealing a personal field: it opens only with its user's key, for its user and field, and
seals alike every time (the engine's output must be byte-identical when re-processed)."""

from __future__ import annotations

import base64
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streams.erasure.cipher import (
    TEXT_PREFIX,
    FieldCipher,
    Unreadable,
    b64url_bytes,
    b64url_text,
    field_context,
    is_sealed_text,
    sealed_text_bytes,
)
from streams.erasure.data_keys import LocalMasterKey, MasterKeyError

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
CONTEXT = field_context("user-42", "content")


@given(text=st.text(), user=st.text(min_size=1), field=st.sampled_from(["content", "speaker"]))
def test_a_sealed_text_opens_to_what_was_sealed_and_seals_alike_again(
    text: str, user: str, field: str
) -> None:
    cipher = FieldCipher(KEY)
    context = field_context(user, field)
    sealed = cipher.seal_text(text, context)
    assert is_sealed_text(sealed) and sealed.isascii()
    assert cipher.open_text(sealed, context) == text
    assert FieldCipher(KEY).seal_text(text, context) == sealed  # reproducible


@given(a=st.binary(), b=st.binary())
def test_two_plaintexts_never_share_a_nonce(a: bytes, b: bytes) -> None:
    cipher = FieldCipher(KEY)
    sealed_a, sealed_b = cipher.seal(a, CONTEXT), cipher.seal(b, CONTEXT)
    assert (sealed_a[1:13] == sealed_b[1:13]) == (a == b)


def test_the_plaintext_is_not_in_the_sealed_bytes() -> None:
    secret = "Samuel's passport number is K1234567"
    sealed = FieldCipher(KEY).seal_text(secret, CONTEXT)
    assert "K1234567" not in sealed and "Samuel" not in sealed


@pytest.mark.parametrize(
    "opened_with",
    [
        ("another key", OTHER_KEY, CONTEXT),
        ("another user", KEY, field_context("user-43", "content")),
        ("another field", KEY, field_context("user-42", "speaker")),
    ],
    ids=lambda case: case[0],
)
def test_a_sealed_value_opens_for_its_own_user_and_field_only(
    opened_with: tuple[str, bytes, bytes],
) -> None:
    _, key, context = opened_with
    sealed = FieldCipher(KEY).seal_text("moved to Lisbon", CONTEXT)
    with pytest.raises(Unreadable):
        FieldCipher(key).open_text(sealed, context)


def test_an_altered_or_malformed_value_is_unreadable_not_an_error_of_another_kind() -> None:
    cipher = FieldCipher(KEY)
    sealed = bytearray(cipher.seal(b"moved to Lisbon", CONTEXT))
    sealed[-1] ^= 1
    for value in (bytes(sealed), b"", b"\x02" + bytes(40), b"\x01short"):
        with pytest.raises(Unreadable):
            cipher.open(value, CONTEXT)
    for text in ("plain text", TEXT_PREFIX + "!!!", TEXT_PREFIX + "AAAA"):
        with pytest.raises(Unreadable):
            cipher.open_text(text, CONTEXT)


def test_a_data_key_must_be_256_bits() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        FieldCipher(b"short")


def test_a_master_key_wraps_a_data_key_for_one_user_only() -> None:
    master = LocalMasterKey(os.urandom(32))
    wrapped = master.wrap(KEY, b"alice")
    assert master.unwrap(wrapped, b"alice") == KEY
    with pytest.raises(MasterKeyError, match="does not unwrap"):
        master.unwrap(wrapped, b"bob")
    with pytest.raises(MasterKeyError, match="does not unwrap"):
        LocalMasterKey(os.urandom(32)).unwrap(wrapped, b"alice")
    assert master.key_id.startswith("local:") and master.secret.hex() not in master.key_id


@pytest.mark.parametrize(
    ("text", "message"),
    [("not base64 at all!", "not base64"), ("c2hvcnQ=", "32 bytes, not 5")],
)
def test_a_bad_master_key_says_how_to_make_a_good_one(text: str, message: str) -> None:
    with pytest.raises(MasterKeyError, match=message) as raised:
        LocalMasterKey.from_text(text, "MEMSTREAM_MASTER_KEY")
    assert "head -c 32 /dev/urandom | base64" in str(raised.value)
    assert "MEMSTREAM_MASTER_KEY" in str(raised.value)


@given(raw=st.binary(max_size=200))
def test_base64url_is_the_standard_librarys_without_padding(raw: bytes) -> None:
    text = b64url_text(raw)
    assert text == base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
    assert b64url_bytes(text) == raw
    assert sealed_text_bytes("ms1:" + text, "ms1:") == raw


@given(text=st.text(max_size=40))
def test_any_text_decodes_as_the_standard_library_does_or_fails_as_it_does(text: str) -> None:
    """A sealed text field is anyone's input (a record on a topic): whatever it holds, it
    decodes to what ``base64.urlsafe_b64decode`` gives, or raises the ValueError it raises."""
    try:
        expected: bytes | None = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        expected = None
    try:
        got: bytes | None = b64url_bytes(text)
    except ValueError:
        got = None
    assert got == expected
