"""What the local stack records about itself, and the values that describe a running stack.

``up`` writes ``<state dir>/stack.json`` (pids, ports, versions) so that ``down`` and ``status``
find the processes it started, and ``<state dir>/stack.env`` (``export`` lines) so that every
later ``memstream`` command finds the stack through :meth:`Settings.from_env`.
This module only reads and writes those files; it must never start, stop or signal a process.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from streams.config.settings import ENV_PREFIX, STACK_ENV_FILE, read_env_file, write_env_file

STATE_FILE = "stack.json"


class StackError(RuntimeError):
    """The local stack could not do what was asked; the message says what to do next."""


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (created if missing), released on exit, so that
    concurrent ``up``/``down`` runs on one state or cache directory take turns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@dataclass(frozen=True)
class StackLayout:
    """Where the local stack keeps its files under the state directory."""

    state_dir: Path

    @property
    def kafka_dir(self) -> Path:
        return self.state_dir / "kafka"

    @property
    def kafka_data_dir(self) -> Path:
        return self.kafka_dir / "data"

    @property
    def kafka_logs_dir(self) -> Path:
        return self.kafka_dir / "logs"

    @property
    def server_properties(self) -> Path:
        return self.kafka_dir / "server.properties"

    @property
    def kafka_server_log(self) -> Path:
        return self.kafka_logs_dir / "server.log"

    @property
    def kafka_console_log(self) -> Path:
        return self.kafka_logs_dir / "console.log"

    @property
    def postgres_dir(self) -> Path:
        return self.state_dir / "postgres"

    @property
    def pgdata(self) -> Path:
        return self.postgres_dir / "pgdata"

    @property
    def state_file(self) -> Path:
        return self.state_dir / STATE_FILE

    @property
    def env_file(self) -> Path:
        return self.state_dir / STACK_ENV_FILE

    @property
    def lock_file(self) -> Path:
        return self.state_dir / ".stack.lock"

    @property
    def reader_grant_key_file(self) -> Path:
        """The local database's reader key (migration 008), for local tools that read as a
        ``memstream_reader`` login: 0600, in the 0700 ``secrets/`` directory."""
        return self.state_dir / "secrets" / "reader-grant.key"

    @property
    def master_key_file(self) -> Path:
        """The local stack's master key (``up --sealed``): 32 random bytes as base64, 0600, in
        the 0700 ``secrets/`` directory. Its presence makes the stack sealed for good: what
        was sealed with it opens with it alone."""
        return self.state_dir / "secrets" / "master.key"

    def create_dirs(self) -> None:
        for directory in (self.kafka_data_dir, self.kafka_logs_dir, self.postgres_dir):
            directory.mkdir(parents=True, exist_ok=True)


@dataclass(frozen=True)
class StackState:
    """The contents of ``stack.json``. Pids are ``None`` when ``down`` stopped the process."""

    kafka_version: str
    kafka_port: int
    controller_port: int
    kafka_pid: int | None = None
    postgres_pid: int | None = None
    database_url: str = ""
    partitions: int = 12
    topic_prefix: str = ""
    secure: bool = False  # `up --secure`: SASL_SSL + SCRAM + ACLs (memstream/stack/secure.py)

    @property
    def kafka_bootstrap(self) -> str:
        return f"127.0.0.1:{self.kafka_port}"


def load_state(path: Path) -> StackState | None:
    """The recorded state, or ``None`` when there is none (a file from another version counts as
    none rather than an error: ``up`` rewrites it)."""
    if not path.exists():
        return None
    try:
        raw = json.loads(path.read_text())
        known = {f.name for f in fields(StackState)}
        return StackState(**{k: v for k, v in raw.items() if k in known})
    except (ValueError, TypeError):
        return None


def save_state(path: Path, state: StackState) -> None:
    """Write ``stack.json`` atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(asdict(state), indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


@dataclass(frozen=True)
class StackInfo:
    """How to reach a running local stack."""

    kafka_bootstrap: str
    database_url: str
    kafka_pid: int
    postgres_pid: int
    state_dir: Path
    partitions: int
    kafka_version: str
    kafka_log: Path
    pgdata: Path
    secure: bool = False
    # Secure mode: how clients authenticate (names of files, never secrets themselves).
    kafka_client_env: dict[str, str] = field(default_factory=dict)
    # The file holding the database's reader key (its name, never the key).
    reader_grant_key_file: Path | None = None
    # `up --sealed`: the file holding the local master key (its name, never the key).
    master_key_file: Path | None = None
    # `up --registry`: the local Schema Registry's Confluent-compatible API, and its pid.
    schema_registry_url: str = ""
    schema_registry_pid: int | None = None

    def env(self) -> dict[str, str]:
        """The exports that point every memstream process at this stack."""
        return {
            f"{ENV_PREFIX}KAFKA_BOOTSTRAP": self.kafka_bootstrap,
            f"{ENV_PREFIX}DATABASE_URL": self.database_url,
            f"{ENV_PREFIX}STATE_DIR": str(self.state_dir),
            f"{ENV_PREFIX}PARTITIONS": str(self.partitions),
            **self.kafka_client_env,
            **(
                {f"{ENV_PREFIX}READER_GRANT_KEY_FILE": str(self.reader_grant_key_file)}
                if self.reader_grant_key_file is not None
                else {}
            ),
            **(
                {f"{ENV_PREFIX}MASTER_KEY_FILE": str(self.master_key_file)}
                if self.master_key_file is not None
                else {}
            ),
            **(
                {f"{ENV_PREFIX}SCHEMA_REGISTRY_URL": self.schema_registry_url}
                if self.schema_registry_url
                else {}
            ),
        }


def write_stack_env(path: Path, info: StackInfo) -> None:
    """Merge ``info.env()`` into ``stack.env``, keeping any other exports already there."""
    write_env_file(path, {**read_env_file(path), **info.env()})


@dataclass(frozen=True)
class StackStatus:
    """What runs where; ``*_alive`` is checked now, the rest comes from ``stack.json``."""

    state_dir: Path
    recorded: bool
    kafka_pid: int | None
    kafka_alive: bool
    kafka_answers: bool
    kafka_bootstrap: str | None
    kafka_version: str | None
    kafka_data_dir: Path
    kafka_log: Path
    postgres_pid: int | None
    postgres_alive: bool
    database_url: str | None
    pgdata: Path
    secure: bool = False
    registry_pid: int | None = None  # `up --registry`; None when not started or stopped
    registry_url: str | None = None

    @property
    def running(self) -> bool:
        return self.kafka_alive and self.kafka_answers and self.postgres_alive

    def lines(self) -> list[str]:
        """A human-readable summary, one fact per line."""
        if not self.recorded:
            return [f"no local stack in {self.state_dir}: run `memstream up`"]

        def state(alive: bool) -> str:
            return "running" if alive else "stopped"

        kafka = state(self.kafka_alive)
        if self.kafka_alive and not self.kafka_answers:
            kafka = "running but not answering"
        return [
            f"state dir:  {self.state_dir}",
            f"kafka:      {kafka} (pid {self.kafka_pid or '-'}), "
            f"bootstrap {self.kafka_bootstrap}, version {self.kafka_version}"
            + (", SASL_SSL (SCRAM-SHA-512, ACLs)" if self.secure else ""),
            f"  data:     {self.kafka_data_dir}",
            f"  log:      {self.kafka_log}",
            f"postgres:   {state(self.postgres_alive)} (pid {self.postgres_pid or '-'})",
            f"  url:      {self.database_url}",
            f"  data:     {self.pgdata}",
        ] + (
            [f"registry:   running (pid {self.registry_pid}), {self.registry_url}"]
            if self.registry_pid
            else []
        )
