"""Reader keys and grants (projections/grants.py): the key file form, what a grant carries,
and that its signature is the HMAC migration 008 rebuilds from sha256() in SQL. That the
database accepts exactly these grants is tested against PostgreSQL in
tests/integration/test_isolation.py."""

from __future__ import annotations

import hashlib
import secrets
import stat
from pathlib import Path

import pytest

from projections.grants import (
    DEFAULT_TTL_SECONDS,
    MAX_TTL_SECONDS,
    GrantKey,
    GrantKeyError,
    grant_message,
    load_grant_key,
    write_key_file,
)


def a_key(key_id: int = 7) -> GrantKey:
    return GrantKey(key_id, secrets.token_bytes(32))


def test_a_key_survives_its_file_form_and_the_file_is_private(tmp_path: Path) -> None:
    key = a_key()
    path = tmp_path / "keys" / "reader.key"

    write_key_file(path, key)

    assert GrantKey.parse(key.to_text()) == key
    assert GrantKey.from_file(path) == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_keys_repr_does_not_show_its_secret() -> None:
    key = a_key()

    assert key.secret.hex() not in repr(key)
    assert str(key.key_id) in repr(key)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "/run/secrets/reader.key",
        "memstream-reader-key-v1:0:" + "ab" * 32,
        "memstream-reader-key-v1:1:" + "ab" * 31,
        "memstream-reader-key-v1:1:" + "AB" * 32,
        "memstream-reader-key-v2:1:" + "ab" * 32,
    ],
)
def test_text_that_is_not_a_key_is_refused_without_echoing_it(text: str) -> None:
    with pytest.raises(GrantKeyError, match="projections.grants export") as refused:
        GrantKey.parse(text)

    assert not text or text not in str(refused.value)


def test_a_missing_key_file_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(GrantKeyError, match="MEMSTREAM_READER_GRANT_KEY_FILE"):
        GrantKey.from_file(tmp_path / "absent.key")


def test_a_grant_carries_key_expiry_signature_and_the_user_verbatim() -> None:
    key = a_key(12)
    user = "carol:ops\nÜnïcödé"

    grant = key.grant(user, ttl_seconds=30, now=1_800_000_000.9)
    version, key_id, expires, signature, named = grant.split(":", 4)

    assert (version, key_id, expires, named) == ("v1", "12", "1800000030", user)
    assert len(signature) == 64 and int(signature, 16) >= 0
    assert grant_message(12, 1_800_000_030, user) == (
        f"memstream-grant-v1:12:1800000030:{user}".encode()
    )


def test_the_signature_is_the_hmac_the_database_builds_from_sha256() -> None:
    """Migration 008: sha256((K xor opad) || sha256((K xor ipad) || message)), with the
    32-byte key padded with zeros to the 64-byte block."""
    key = a_key()
    grant = key.sign("alice", 1_800_000_000)
    block = key.secret.ljust(64, b"\x00")
    inner = bytes(b ^ 0x36 for b in block)
    outer = bytes(b ^ 0x5C for b in block)
    message = grant_message(key.key_id, 1_800_000_000, "alice")

    by_hand = hashlib.sha256(outer + hashlib.sha256(inner + message).digest()).hexdigest()

    assert grant.split(":")[3] == by_hand


def test_grants_differ_by_user_expiry_and_key() -> None:
    key = a_key()
    other = GrantKey(key.key_id, secrets.token_bytes(32))

    signatures = {
        g.split(":")[3]
        for g in (
            key.sign("alice", 1_800_000_000),
            key.sign("bob", 1_800_000_000),
            key.sign("alice", 1_800_000_001),
            other.sign("alice", 1_800_000_000),
        )
    }

    assert len(signatures) == 4


@pytest.mark.parametrize("ttl", [0, -1, MAX_TTL_SECONDS + 1])
def test_a_grant_lives_at_most_an_hour(ttl: int) -> None:
    with pytest.raises(ValueError, match="seconds"):
        a_key().grant("alice", ttl_seconds=ttl)


def test_a_grant_names_a_real_user() -> None:
    for user in ("", "a\x00b"):
        with pytest.raises(ValueError, match="user_id"):
            a_key().sign(user, 1_800_000_000)


def test_the_default_grant_is_short_lived() -> None:
    grant = a_key().grant("alice", now=1_800_000_000)

    assert int(grant.split(":")[2]) == 1_800_000_000 + DEFAULT_TTL_SECONDS


def test_a_reader_takes_its_key_in_any_of_its_forms(tmp_path: Path) -> None:
    key = a_key()
    path = tmp_path / "reader.key"
    write_key_file(path, key)

    forms = [
        load_grant_key(key),
        load_grant_key(key.to_text()),
        load_grant_key(path),
        load_grant_key(grant_key_file=str(path)),
    ]

    assert forms == [key] * 4
    assert load_grant_key() is None
    assert load_grant_key(grant_key_file="") is None
    with pytest.raises(GrantKeyError, match="not both"):
        load_grant_key(key, grant_key_file=str(path))
