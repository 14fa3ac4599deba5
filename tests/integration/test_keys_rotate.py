"""`memstream keys rotate` (issue 43): after a master-key rotation every data key is wrapped by
the new master key, what it sealed before still opens, and the old master key opens nothing."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from streams.config.settings import Settings
from streams.erasure.cipher import field_context
from streams.erasure.data_keys import LocalMasterKey, MasterKeyError, PostgresKeyStore
from streams.erasure.sealing import KeysUnavailable, sealing_of

pytestmark = pytest.mark.integration

CONTENT = field_context("alice", "memory.content")


def key_file(path: Path) -> tuple[Path, LocalMasterKey]:
    secret = os.urandom(32)
    path.write_text(base64.b64encode(secret).decode() + "\n")
    return path, LocalMasterKey(secret)


def test_rotating_the_master_key_rewraps_every_data_key_and_changes_no_sealed_value(
    database: str, tmp_path: Path
) -> None:
    old_file, old = key_file(tmp_path / "old.key")
    new_file, new = key_file(tmp_path / "new.key")
    before = PostgresKeyStore(database, old)
    sealed = before.cipher("alice").seal_text("moved to Lisbon", CONTENT)
    before.ciphers(["bob", "carol"])
    before.close()

    rotated = subprocess.run(
        [
            sys.executable,
            "-m",
            "memstream.cli",
            "keys",
            "rotate",
            "--retired-key-file",
            str(old_file),
        ],
        env={
            **os.environ,
            "MEMSTREAM_STATE_DIR": str(tmp_path / "state"),
            "MEMSTREAM_DATABASE_URL": database,
            "MEMSTREAM_MASTER_KEY_FILE": str(new_file),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert rotated.returncode == 0, rotated.stderr
    assert rotated.stdout.startswith("3 data key(s) re-wrapped")
    after = PostgresKeyStore(database, new)
    assert after.cipher("alice").open_text(sealed, CONTENT) == "moved to Lisbon"
    after.close()
    with pytest.raises(MasterKeyError):
        PostgresKeyStore(database, old).existing("alice")


def test_a_process_holding_the_retired_key_opens_what_the_rotation_has_not_rewrapped(
    database: str, tmp_path: Path
) -> None:
    """Given data keys wrapped by the old master key, a process configured with the new key
    and MEMSTREAM_MASTER_KEY_RETIRED_FILES naming the old one opens what they sealed before
    the rotation ran; without the retired key it cannot (it would stop, never misread)."""
    old_file, old = key_file(tmp_path / "old.key")
    new_file, _ = key_file(tmp_path / "new.key")
    before = PostgresKeyStore(database, old)
    sealed = before.cipher("dora").seal_text("moved to Porto", field_context("dora", "x"))
    before.close()
    env = {
        "MEMSTREAM_STATE_DIR": str(tmp_path / "state"),
        "MEMSTREAM_DATABASE_URL": database,
        "MEMSTREAM_MASTER_KEY_FILE": str(new_file),
    }

    holding = sealing_of(
        Settings.from_env({**env, "MEMSTREAM_MASTER_KEY_RETIRED_FILES": str(old_file)})
    )
    without = sealing_of(Settings.from_env(env))
    assert holding is not None and without is not None
    try:
        cipher = holding.reading("dora")
        assert cipher is not None
        assert cipher.open_text(sealed, field_context("dora", "x")) == "moved to Porto"
        with pytest.raises(KeysUnavailable, match="retired"):
            without.reading("dora")
    finally:
        holding.close()
        without.close()
