"""Process settings: one frozen value read from the environment (and the local stack's file).

Every process (worker, projector, publisher, CLI) reads its configuration here so the names and
defaults are documented once. Precedence: explicit environment variable > the exports that
`memstream up` wrote to ``<state dir>/stack.env`` > the default below.
This module must never start anything or open a connection.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import platformdirs

ENV_PREFIX = "MEMSTREAM_"
STACK_ENV_FILE = "stack.env"


class SettingsError(ValueError):
    """A configuration value is missing or malformed; the message names the variable to fix."""


def default_state_dir() -> Path:
    return Path(platformdirs.user_state_dir("memstream"))


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("memstream"))


@dataclass(frozen=True)
class Settings:
    """Configuration shared by every memstream process. See README "Configuration"."""

    kafka_bootstrap: str = "127.0.0.1:9092"
    database_url: str = "postgresql://postgres@127.0.0.1:5432/memstream"
    topic_prefix: str = ""
    partitions: int = 12
    embedding_dim: int = 384
    app_id: str = "memstream-worker"
    projector_group: str = "memstream-projector"
    worker_data_dir: Path = field(default_factory=lambda: default_state_dir() / "worker")
    commit_interval_seconds: float = 0.1
    worker_metrics_port: int = 9101
    projector_metrics_port: int = 9102
    projector_batch_size: int = 2000
    projector_batch_ms: int = 20
    # Projector processes in one group (projections/projector_processes.py): its Python work holds
    # one interpreter's lock, so a second process is what lets it use a second core.
    projector_processes: int = 1
    # Worker processes in one group (streams/runtime/worker_processes.py), for the same reason: one
    # worker process runs its engine on one core.
    worker_processes: int = 1
    retry_attempts: int = 3
    retry_backoff_seconds: float = 5.0
    max_content_bytes: int = 65536
    profile: str = "default"
    policy_file: str = ""
    state_dir: Path = field(default_factory=default_state_dir)
    cache_dir: Path = field(default_factory=default_cache_dir)
    # Kafka client security, one configuration for every client (streams/config/kafka_security.py
    # maps it to librdkafka and aiokafka). Prefer the password file: a mounted secret can be
    # rotated and never shows up in a process listing or a dump of the environment.
    kafka_security_protocol: str = "PLAINTEXT"
    kafka_sasl_mechanism: str = "SCRAM-SHA-512"
    kafka_username: str = ""
    kafka_password: str = field(default="", repr=False)
    kafka_password_file: str = ""
    kafka_ssl_ca_file: str = ""
    kafka_ssl_cert_file: str = ""
    kafka_ssl_key_file: str = ""
    # Where /metrics listens. Loopback by default: metrics are operational data and need no
    # audience beyond the host; containers set 0.0.0.0 and let the network policy decide.
    metrics_bind: str = "127.0.0.1"
    # The database's reader key (projections/grants.py): a memstream_reader login shows row-
    # level security a grant signed with it per call. `memstream up` writes the local one.
    # A file, never the key itself, for the same reason as the Kafka password file.
    reader_grant_key_file: str = ""
    # Static group membership: a stable id per worker/projector instance (a StatefulSet's pod
    # name) lets a restarted process take its partitions back at once instead of after the
    # session timeout. Empty: dynamic membership (several instances on one host need
    # distinct ids, or none).
    instance_id: str = ""
    session_timeout_seconds: float = 10.0
    # How long (event time) an input id is remembered to drop a redelivery of it.
    dedupe_window_seconds: int = 7 * 24 * 3600
    # The worker takes input in batches of up to this many records, or what arrived within
    # this many milliseconds: a batch is sent in one go, with its state entries coalesced.
    worker_batch_size: int = 500
    # Users whose state the worker holds as Python objects (least recently used evicted to
    # the local store, read back when an input of theirs comes): bounds the worker's memory.
    hot_users: int = 10_000
    # 30, not 10: at 1,000 inputs/s a 10 ms batch held ~10 inputs, so the worker paid its
    # per-batch costs per input and coalesced almost no state entries (README, Configuration).
    worker_batch_ms: int = 30
    # How long the worker's consumer lets the broker hold a fetch that finds nothing new
    # (Faust's own 1,500 ms made a just-started worker's first second late; see
    # streams/kafka/fetch_wait.py).
    worker_fetch_wait_ms: int = 100
    # The largest record batch the worker's producer builds per partition (Kafka's
    # batch.size). A send that finds its partition's batch full waits until the producer has
    # handed that batch to the broker, and the worker sends a batch of inputs' ledger records
    # and state entries (~2 KB each) at once: at Faust's 16 KiB an instrumented worker spent
    # 7.3 s of 20k inputs awaiting sends (11.8 s in the engine), at 512 KiB 2.4 s.
    producer_batch_bytes: int = 524_288
    # Per-layer vector index: "none" (per-user exact search by primary key, the default) or
    # "hnsw" (a global ANN index: cross-user scopes, very large users; caps ingest).
    vector_index: str = "NONE"  # compared case-insensitively, stored upper-case
    # The embedder for memories written without an embedding (the worker records the vector
    # in the ledger) and for recall's query text: MINILM (all-MiniLM-L6-v2, offline) or
    # HASHING (deterministic, no model: tests that need exact reproducibility).
    embedder: str = "MINILM"
    # `memstream serve`, the HTTP API (memstream/http/, docs/http-api.md). Loopback by
    # default, like /metrics: containers set 0.0.0.0 and let the network policy decide.
    http_bind: str = "127.0.0.1"
    http_port: int = 8080
    http_metrics_port: int = 9103
    # The reader login the API reads the read models as (a member of memstream_reader);
    # empty: MEMSTREAM_DATABASE_URL. The API is meant to be the only holder of it.
    http_database_url: str = field(default="", repr=False)
    # Bearer tokens: a key file (an HS256 secret, or an RS256/ES256 public key in PEM) or a
    # JWKS URL (not both), and the issuer and audience every token must name.
    http_jwt_key_file: str = ""
    http_jwks_url: str = ""
    http_jwt_issuer: str = ""
    http_jwt_audience: str = "memstream"
    # Per token subject, per API process (an in-memory token bucket: N replicas admit up to
    # N times this): requests per second, and request bytes per minute.
    http_requests_per_second: float = 50.0
    http_bytes_per_minute: int = 16 * 1024 * 1024
    # The largest request body, counted while it streams in: a 64 KiB memory with its
    # embedding as JSON fits well below it; Kafka's ~1 MB record limit is the ceiling.
    http_max_body_bytes: int = 1024 * 1024
    # The longest query string (recall's text travels in a JSON body, not here).
    http_max_query_bytes: int = 4096
    # Database connections the API keeps open for reads.
    http_readers: int = 4
    # The Avro wire format memstream writes (the publisher's events, the worker's ledger):
    # SINGLE-OBJECT (C3 01 + fingerprint) or CONFLUENT (00 + a Schema Registry id, what
    # Kafka Connect, ksqlDB, Flink, Spark and ClickHouse read). Readers accept both always.
    wire_format: str = "SINGLE-OBJECT"
    # A Confluent-compatible Schema Registry (Confluent's, Apicurio's /apis/ccompat/v7):
    # required by CONFLUENT; with it, readers resolve the ids of records framed that way.
    schema_registry_url: str = ""
    schema_registry_username: str = ""
    schema_registry_password: str = field(default="", repr=False)
    schema_registry_password_file: str = ""
    schema_registry_ssl_ca_file: str = ""
    schema_registry_ssl_cert_file: str = ""
    schema_registry_ssl_key_file: str = ""
    # How long a process starting waits for the registry (retrying with backoff) before it
    # gives up; once its ids are cached, an outage stops nothing.
    schema_registry_wait_seconds: float = 120.0
    # Crypto-shredding (streams/erasure/): with a master key, personal fields are sealed with a
    # per-user data key on every topic and in the worker's state; without one, nothing is
    # sealed. A file (mount a secret) or the value itself, base64 of 32 bytes, not both.
    master_key_file: str = ""
    master_key: str = field(default="", repr=False)
    # During a master-key rotation: the retired master keys' files (comma-separated), so a
    # process can unwrap the data keys `memstream keys rotate` has not re-wrapped yet.
    master_key_retired_files: str = ""
    # Where the users' data keys are (memstream_data_keys): empty, the read-model database.
    # One key store for every process, however many read-model databases are built.
    keys_database_url: str = ""
    # How the projector vacuums after an erasure (a user, forgotten memories): FULL rewrites
    # the user tables (nothing erased is left in the data files; each table is locked while it
    # is rewritten) or PLAIN (no lock; deleted bytes may stay in free space until written over).
    erasure_vacuum: str = "FULL"
    # How long the projector lets a forgotten memory's deleted rows (and its destroyed keys)
    # wait for that vacuum: the forgets of this window share one rewrite of the tables, so
    # frequent forgets do not lock the read models over and over. A user's erasure is vacuumed
    # at once. 0: after every batch that forgot memories.
    erasure_vacuum_delay_seconds: float = 600.0
    # What a memory's personal fields are sealed with: MEMORY, keys of the memory's own (so
    # forgetting one memory erases it from every copy: docs/security.md), or USER, the user's
    # data key alone (forgetting a memory then leaves its old records readable).
    erasure_keys: str = "MEMORY"

    @property
    def sealing(self) -> bool:
        """Personal fields are sealed: a master key is configured."""
        return bool(self.master_key_file or self.master_key)

    @property
    def events_topic(self) -> str:
        return f"{self.topic_prefix}memory.events"

    @property
    def ledger_topic(self) -> str:
        return f"{self.topic_prefix}memory.consolidation"

    @property
    def deadletter_topic(self) -> str:
        return f"{self.topic_prefix}memory.deadletter"

    def with_overrides(self, **changes: object) -> Settings:
        return replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Read settings from ``environ`` (default: the process environment).

        The stack file written by ``memstream up`` fills in whatever the environment leaves
        unset, so commands run after ``up`` find the stack without flags.
        """
        env = dict(os.environ if environ is None else environ)
        state_dir = Path(env.get(f"{ENV_PREFIX}STATE_DIR", str(default_state_dir())))
        merged = {**read_env_file(state_dir / STACK_ENV_FILE), **env}
        values: dict[str, object] = {"state_dir": state_dir}
        for name, kind in _FIELD_KINDS.items():
            raw = merged.get(ENV_PREFIX + name.upper())
            if raw is None or name == "state_dir":
                continue
            values[name] = _parse(name, raw, kind)
        if "worker_data_dir" not in values:
            values["worker_data_dir"] = state_dir / "worker"
        settings = cls(**values)  # type: ignore[arg-type]
        check_schema_registry(settings)
        check_master_key(settings)
        return settings

    def as_env(self) -> dict[str, str]:
        """The exports that reproduce these settings in another process.

        They are meant for a child process's environment: when ``kafka_password`` is set (and
        no password file), it is among them, so never write them to a file or a log."""
        return {ENV_PREFIX + name.upper(): str(getattr(self, name)) for name in _FIELD_KINDS}


_FIELD_KINDS: dict[str, type] = {
    "kafka_bootstrap": str,
    "database_url": str,
    "topic_prefix": str,
    "partitions": int,
    "embedding_dim": int,
    "app_id": str,
    "projector_group": str,
    "worker_data_dir": Path,
    "commit_interval_seconds": float,
    "worker_metrics_port": int,
    "projector_metrics_port": int,
    "projector_batch_size": int,
    "projector_batch_ms": int,
    "projector_processes": int,
    "worker_processes": int,
    "retry_attempts": int,
    "retry_backoff_seconds": float,
    "max_content_bytes": int,
    "profile": str,
    "policy_file": str,
    "state_dir": Path,
    "cache_dir": Path,
    "kafka_security_protocol": str,
    "kafka_sasl_mechanism": str,
    "kafka_username": str,
    "kafka_password": str,
    "kafka_password_file": str,
    "kafka_ssl_ca_file": str,
    "kafka_ssl_cert_file": str,
    "kafka_ssl_key_file": str,
    "metrics_bind": str,
    "reader_grant_key_file": str,
    "instance_id": str,
    "session_timeout_seconds": float,
    "dedupe_window_seconds": int,
    "worker_batch_size": int,
    "hot_users": int,
    "worker_batch_ms": int,
    "worker_fetch_wait_ms": int,
    "producer_batch_bytes": int,
    "vector_index": str,
    "embedder": str,
    "http_bind": str,
    "http_port": int,
    "http_metrics_port": int,
    "http_database_url": str,
    "http_jwt_key_file": str,
    "http_jwks_url": str,
    "http_jwt_issuer": str,
    "http_jwt_audience": str,
    "http_requests_per_second": float,
    "http_bytes_per_minute": int,
    "http_max_body_bytes": int,
    "http_max_query_bytes": int,
    "http_readers": int,
    "wire_format": str,
    "schema_registry_url": str,
    "schema_registry_username": str,
    "schema_registry_password": str,
    "schema_registry_password_file": str,
    "schema_registry_ssl_ca_file": str,
    "schema_registry_ssl_cert_file": str,
    "schema_registry_ssl_key_file": str,
    "schema_registry_wait_seconds": float,
    "master_key_file": str,
    "master_key": str,
    "master_key_retired_files": str,
    "keys_database_url": str,
    "erasure_vacuum": str,
    "erasure_vacuum_delay_seconds": float,
    "erasure_keys": str,
}

# Settings with a closed set of values (compared case-insensitively, stored upper-case).
KAFKA_SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
KAFKA_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
WIRE_FORMATS = ("SINGLE-OBJECT", "CONFLUENT")
_CHOICES: dict[str, tuple[str, ...]] = {
    "kafka_security_protocol": KAFKA_SECURITY_PROTOCOLS,
    "kafka_sasl_mechanism": KAFKA_SASL_MECHANISMS,
    "vector_index": ("NONE", "HNSW"),
    "embedder": ("MINILM", "HASHING"),
    "wire_format": WIRE_FORMATS,
    "erasure_vacuum": ("FULL", "PLAIN"),
    "erasure_keys": ("MEMORY", "USER"),
}


# Inclusive bounds of the numeric settings; a value outside them is a configuration error.
_BOUNDS: dict[str, tuple[float, float]] = {
    "partitions": (1, 10_000),
    "embedding_dim": (1, 16_000),  # pgvector's vector limit
    "worker_metrics_port": (0, 65_535),
    "projector_metrics_port": (0, 65_535),
    "projector_batch_size": (1, 1_000_000),  # librdkafka's consume() limit
    "projector_batch_ms": (1, 60_000),
    "projector_processes": (1, 64),
    "worker_processes": (1, 64),
    "retry_attempts": (1, 100),
    "retry_backoff_seconds": (0, 3_600),
    "commit_interval_seconds": (0.01, 60),
    # a memory (a service's, or a summary consolidation writes) goes to the state changelog
    # as one record of JSON, where text may grow sixfold (control characters escaped), with
    # up to a thousand source ids and its embedding: it must fit the producer's 1,000,000-byte
    # requests (streams/engine/text/budget.py)
    "max_content_bytes": (1, 128 * 1024),
    "session_timeout_seconds": (6, 300),  # the broker's group.min/max.session.timeout.ms
    "dedupe_window_seconds": (60, 10 * 365 * 24 * 3600),
    "worker_batch_size": (1, 100_000),
    "hot_users": (1, 100_000_000),
    "worker_batch_ms": (1, 60_000),
    "worker_fetch_wait_ms": (1, 30_000),
    # a batch is one record batch on the broker: it must fit the topics' max.message.bytes
    # (1,048,588 by default)
    "producer_batch_bytes": (1_024, 1_000_000),
    "http_port": (0, 65_535),
    "http_metrics_port": (0, 65_535),
    "http_requests_per_second": (0.01, 1_000_000),
    "http_bytes_per_minute": (1_024, 1 << 40),
    # a body must hold one memory event and fit the worker's record limit once encoded
    "http_max_body_bytes": (1_024, 4 * 1024 * 1024),
    "http_max_query_bytes": (64, 65_536),
    "http_readers": (1, 256),
    "schema_registry_wait_seconds": (0, 86_400),
    "erasure_vacuum_delay_seconds": (0, 7 * 86_400),
}


def retired_key_files(settings: Settings) -> list[str]:
    """The retired master keys' files MEMSTREAM_MASTER_KEY_RETIRED_FILES lists."""
    return [p.strip() for p in settings.master_key_retired_files.split(",") if p.strip()]


def check_master_key(settings: Settings) -> None:
    """The master key settings, checked before anything starts (the key itself is read and
    its length checked by ``streams.erasure.data_keys.master_key_of``)."""
    if settings.master_key and settings.master_key_file:
        raise SettingsError(
            f"set {ENV_PREFIX}MASTER_KEY_FILE or {ENV_PREFIX}MASTER_KEY, not both (prefer the "
            f"file: a mounted secret)"
        )
    for retired in retired_key_files(settings):
        if not Path(retired).is_file():
            raise SettingsError(
                f"{ENV_PREFIX}MASTER_KEY_RETIRED_FILES names {retired!r}, which is not a file: "
                f"list the old master keys' files (comma-separated) until `memstream keys "
                f"rotate` has re-wrapped every data key, then unset it"
            )
    if settings.master_key_file and not Path(settings.master_key_file).is_file():
        raise SettingsError(
            f"{ENV_PREFIX}MASTER_KEY_FILE={settings.master_key_file!r} is not a file: make one "
            f"with `head -c 32 /dev/urandom | base64 > master.key` (mode 0600), or unset it to "
            f"run without sealing"
        )


def check_schema_registry(settings: Settings) -> None:
    """The registry settings that only make sense together, checked before anything starts."""
    url = settings.schema_registry_url
    name = f"{ENV_PREFIX}SCHEMA_REGISTRY_URL"
    if settings.wire_format == "CONFLUENT" and not url:
        raise SettingsError(
            f"{ENV_PREFIX}WIRE_FORMAT=CONFLUENT needs a Schema Registry: set {name} (e.g. "
            f"http://127.0.0.1:8081, or `memstream up --registry` for a local one)"
        )
    if url and not url.startswith(("http://", "https://")):
        raise SettingsError(f"{name}={url!r} is not an http:// or https:// URL")
    if settings.schema_registry_password and settings.schema_registry_password_file:
        raise SettingsError(
            f"set {ENV_PREFIX}SCHEMA_REGISTRY_PASSWORD_FILE or "
            f"{ENV_PREFIX}SCHEMA_REGISTRY_PASSWORD, not both"
        )
    has_password = settings.schema_registry_password or settings.schema_registry_password_file
    if has_password and not settings.schema_registry_username:
        raise SettingsError(
            f"a Schema Registry password needs {ENV_PREFIX}SCHEMA_REGISTRY_USERNAME (basic auth)"
        )
    if bool(settings.schema_registry_ssl_cert_file) != bool(settings.schema_registry_ssl_key_file):
        raise SettingsError(
            f"{ENV_PREFIX}SCHEMA_REGISTRY_SSL_CERT_FILE and "
            f"{ENV_PREFIX}SCHEMA_REGISTRY_SSL_KEY_FILE go together (mutual TLS): set both or "
            f"neither"
        )


def _bound(value: float) -> str:
    """A bound as an operator writes it: ``1,000,000`` rather than ``1e+06``."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _parse(name: str, raw: str, kind: type) -> object:
    if name in _CHOICES:
        choice = raw.strip().upper()
        if choice not in _CHOICES[name]:
            raise SettingsError(
                f"{ENV_PREFIX}{name.upper()}={raw!r} is not one of {', '.join(_CHOICES[name])}; "
                f"unset it to use the default"
            )
        return choice
    if name in ("kafka_password", "schema_registry_password"):
        return raw  # never echoed in an error: it is a secret
    try:
        value = kind(raw)
    except ValueError:
        raise SettingsError(
            f"{ENV_PREFIX}{name.upper()}={raw!r} is not a valid {kind.__name__}; "
            f"unset it to use the default"
        ) from None
    low, high = _BOUNDS.get(name, (float("-inf"), float("inf")))
    if kind in (int, float) and not low <= value <= high:
        raise SettingsError(
            f"{ENV_PREFIX}{name.upper()}={raw!r} is outside {_bound(low)}..{_bound(high)}; "
            f"unset it to use the default"
        )
    return value


def read_env_file(path: Path) -> dict[str, str]:
    """Parse ``export NAME=value`` / ``NAME=value`` lines; a missing file is empty."""
    if not path.exists():
        return {}
    result: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").strip()
        name, sep, value = line.partition("=")
        if sep:
            result[name.strip()] = value.strip().strip("'\"")
    return result


def write_env_file(path: Path, values: Mapping[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"export {name}='{value}'" for name, value in values.items()]
    path.write_text("\n".join(lines) + "\n")
