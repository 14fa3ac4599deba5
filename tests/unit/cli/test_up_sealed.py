"""`memstream up --sealed` (issue 43): the local stack gets a master key of its own, made once
(0600 in the 0700 secrets directory, never replaced), and every process it configures seals
through MEMSTREAM_MASTER_KEY_FILE; a stack without one exports none."""

from __future__ import annotations

from pathlib import Path

from memstream.stack import LocalStack
from memstream.stack.stack_state import StackInfo
from streams.config.settings import Settings
from streams.erasure.data_keys import LocalMasterKey


def info(state_dir: Path, master_key_file: Path | None) -> StackInfo:
    return StackInfo(
        kafka_bootstrap="127.0.0.1:9092",
        database_url="postgresql://localhost/memstream",
        kafka_pid=1,
        postgres_pid=2,
        state_dir=state_dir,
        partitions=12,
        kafka_version="4.1.1",
        kafka_log=state_dir / "kafka.log",
        pgdata=state_dir / "pgdata",
        master_key_file=master_key_file,
    )


def test_a_sealed_stack_makes_its_master_key_once_and_exports_its_file(tmp_path: Path) -> None:
    stack = LocalStack(Settings(state_dir=tmp_path))
    said: list[str] = []

    stack._ensure_master_key(said.append)
    path = stack.layout.master_key_file
    first = path.read_text()
    stack._ensure_master_key(said.append)

    assert path.read_text() == first and len(said) == 1  # made once, never replaced
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert len(LocalMasterKey.from_file(path).secret) == 32
    env = info(tmp_path, path).env()
    assert env["MEMSTREAM_MASTER_KEY_FILE"] == str(path)
    assert "MEMSTREAM_MASTER_KEY_FILE" not in info(tmp_path, None).env()
