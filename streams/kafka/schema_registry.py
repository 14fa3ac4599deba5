"""A Confluent-compatible Schema Registry (Confluent's, or Apicurio's ``/apis/ccompat/v7``):
the ids the Confluent wire format names, registered and resolved here, once, and cached.

What a process does with it (:func:`contract_registry`):

- a writer (worker, publisher) in ``MEMSTREAM_WIRE_FORMAT=CONFLUENT`` registers the current
  ``MemoryEvent`` and ``ConsolidationEvent`` schemas under the TopicNameStrategy subjects
  (``<topic>-value``) with the compatibility rule the contract keeps (BACKWARD), and writes
  their ids from then on;
- any process with ``MEMSTREAM_SCHEMA_REGISTRY_URL`` set resolves the ids of the records it
  reads (:attr:`streams.kafka.codec.SchemaRegistry.resolver`), once per id.

Outages: a registry that does not answer at start is retried with backoff for
``MEMSTREAM_SCHEMA_REGISTRY_WAIT_SECONDS``, saying so at each attempt; once the ids are
cached, a registry that goes away stops nothing (only an id never seen before needs it:
:func:`resolve_ids_waiting` waits for it, without blocking the worker's event loop).

This module must never decide what a record means (the codec does) and never log a password.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from streams.config.settings import Settings, SettingsError
from streams.kafka import codec

log = logging.getLogger("memstream.schema_registry")

COMPATIBILITY = "BACKWARD"  # what tests/unit/kafka/test_schema_compatibility.py holds schemas/ to
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
REQUEST_TIMEOUT_SECONDS = 5.0
FIRST_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 10.0
NOT_FOUND_CODES = frozenset({40401, 40402, 40403})  # subject, version, schema not found


class RegistryUnavailable(RuntimeError):
    """The registry did not answer (network, TLS, 5xx): waiting may help."""


class RegistryRefused(RuntimeError):
    """The registry answered no (authorization, an incompatible schema): waiting will not help."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status of the refusal, when it was one


def subject_for(topic: str) -> str:
    """The TopicNameStrategy subject of a topic's values."""
    return f"{topic}-value"


class RegistryClient:
    """The few calls of the Confluent Schema Registry API memstream needs, over HTTP(S) with
    optional basic auth and (mutual) TLS. Ids found are cached for the process's life: a
    registry never gives an id to another schema."""

    def __init__(
        self,
        url: str,
        username: str = "",
        password: str = "",
        ssl_context: ssl.SSLContext | None = None,
        timeout: float = REQUEST_TIMEOUT_SECONDS,
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._auth = (
            "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()
            if username
            else None
        )
        self._ssl = ssl_context
        self._schemas: dict[int, str] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> RegistryClient:
        if not settings.schema_registry_url:
            raise SettingsError("MEMSTREAM_SCHEMA_REGISTRY_URL is not set")
        return cls(
            settings.schema_registry_url,
            settings.schema_registry_username,
            _password(settings),
            _ssl_context(settings),
        )

    # --- the API ---------------------------------------------------------------------------

    def register(self, subject: str, schema: str) -> int:
        """Register ``schema`` under ``subject`` (a no-op returning the same id when it is
        already there); its id."""
        path = f"/subjects/{_quote(subject)}/versions"
        try:
            answer = self._call("POST", path, {"schema": schema, "schemaType": "AVRO"})
        except RegistryRefused as exc:
            # Several processes start together and register the same schema: Apicurio
            # answers the ones that lose the race 409 ("artifact already exists"). The
            # schema is then there; a 409 for an incompatible schema finds nothing and stands.
            registered = self.lookup(subject, schema) if exc.status == 409 else None
            if registered is None and exc.status == 409 and _CREATED_BY_ANOTHER in str(exc):
                # the winner's artifact exists but its first version is not readable yet
                # (seen in CI): waiting helps, and the next attempt finds it or is answered
                # by the compatibility check
                raise RegistryUnavailable(
                    f"{exc}: another process is creating {subject} now; trying again"
                ) from None
            if registered is None:
                raise
            answer = {"id": registered}
        schema_id = int(answer["id"])
        self._schemas.setdefault(schema_id, schema)
        return schema_id

    def set_compatibility(self, subject: str, level: str = COMPATIBILITY) -> None:
        path = f"/config/{_quote(subject)}"
        try:
            self._call("PUT", path, {"compatibility": level})
        except RegistryRefused as exc:
            # Processes starting together race here too: Apicurio answers the loser 409 ("a
            # rule named 'COMPATIBILITY' already exists"). Fine if the rule is ours.
            if exc.status != 409 or self.compatibility(subject) != level:
                raise

    def compatibility(self, subject: str) -> str | None:
        """The subject's own compatibility level, or None when it has none."""
        try:
            answer = self._call("GET", f"/config/{_quote(subject)}")
        except _NotFound:
            return None
        level = answer.get("compatibilityLevel", answer.get("compatibility"))
        return str(level) if level is not None else None

    def lookup(self, subject: str, schema: str) -> int | None:
        """The id ``schema`` has under ``subject``, or None when it is not registered there."""
        try:
            answer = self._call("POST", f"/subjects/{_quote(subject)}", {"schema": schema})
        except _NotFound:
            return None
        return int(answer["id"])

    def schema(self, schema_id: int) -> str | None:
        """The schema text of ``schema_id``, or None when the registry has no such id."""
        cached = self._schemas.get(schema_id)
        if cached is not None:
            return cached
        try:
            answer = self._call("GET", f"/schemas/ids/{schema_id}")
        except _NotFound:
            return None
        if answer.get("references"):
            raise RegistryRefused(
                f"schema id {schema_id} uses schema references, which memstream does not "
                f"resolve: register the schema with its named types inlined"
            )
        text = str(answer["schema"])
        self._schemas[schema_id] = text
        return text

    def answers(self) -> bool:
        """Whether the registry answers a request now."""
        try:
            self._call("GET", "/subjects")
        except (RegistryUnavailable, RegistryRefused):
            return False
        return True

    # --- HTTP ------------------------------------------------------------------------------

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Accept", CONTENT_TYPE)
        if data is not None:
            request.add_header("Content-Type", CONTENT_TYPE)
        if self._auth:
            request.add_header("Authorization", self._auth)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout, context=self._ssl) as got:
                return json.loads(got.read() or b"{}")
        except urllib.error.HTTPError as exc:
            raise self._error(method, path, exc) from None
        except (OSError, ValueError) as exc:  # refused, reset, timeout, TLS, bad JSON
            raise RegistryUnavailable(
                f"the Schema Registry at {self.url} does not answer ({type(exc).__name__}: {exc})"
            ) from None

    def _error(self, method: str, path: str, exc: urllib.error.HTTPError) -> Exception:
        try:
            answer = json.loads(exc.read() or b"{}")
        except ValueError:
            answer = {}
        code = answer.get("error_code") if isinstance(answer, dict) else None
        message = answer.get("message", exc.reason) if isinstance(answer, dict) else exc.reason
        if exc.code == 404 and (code in NOT_FOUND_CODES or code is None):
            return _NotFound(message)
        if exc.code >= 500 or exc.code == 429:
            return RegistryUnavailable(
                f"the Schema Registry at {self.url} failed {method} {path}: HTTP {exc.code} "
                f"{message}"
            )
        what = {
            401: "check MEMSTREAM_SCHEMA_REGISTRY_USERNAME and its password",
            403: "the registry's user may not do this: grant it the subject",
            409: "the schema is not BACKWARD-compatible with the subject's versions",
            422: "the registry refuses the schema as invalid",
        }.get(exc.code, "see the registry's message")
        return RegistryRefused(
            f"the Schema Registry at {self.url} refused {method} {path}: HTTP {exc.code} "
            f"{message} ({what})",
            exc.code,
        )


_CREATED_BY_ANOTHER = "already exists"
"""What Apicurio's 409 says to a registration that lost the race to create the subject; an
incompatible schema's 409 says otherwise."""


class _NotFound(Exception):
    pass


def _quote(subject: str) -> str:
    return urllib.parse.quote(subject, safe="")


def _password(settings: Settings) -> str:
    if settings.schema_registry_password_file:
        path = Path(settings.schema_registry_password_file)
        try:
            return path.read_text().strip()
        except OSError as exc:
            raise SettingsError(
                f"MEMSTREAM_SCHEMA_REGISTRY_PASSWORD_FILE={path}: cannot read it ({exc})"
            ) from None
    return settings.schema_registry_password


def _ssl_context(settings: Settings) -> ssl.SSLContext | None:
    if not settings.schema_registry_url.startswith("https://"):
        return None
    try:
        context = ssl.create_default_context(cafile=settings.schema_registry_ssl_ca_file or None)
        if settings.schema_registry_ssl_cert_file:
            context.load_cert_chain(
                settings.schema_registry_ssl_cert_file, settings.schema_registry_ssl_key_file
            )
    except (OSError, ssl.SSLError) as exc:
        raise SettingsError(
            f"the Schema Registry's TLS files (MEMSTREAM_SCHEMA_REGISTRY_SSL_*) cannot be "
            f"loaded: {exc}"
        ) from None
    return context


# --- what a process does at start -------------------------------------------------------------

Sleep = Callable[[float], None]


def contract_registry(
    settings: Settings,
    client: RegistryClient | None = None,
    sleep: Sleep = time.sleep,
    writes: tuple[str, ...] = codec.ENVELOPES,
) -> codec.SchemaRegistry:
    """The codec registry this process reads and writes with.

    Without a registry URL: the shared single-object one. With one: a registry of its own
    whose unknown ids are resolved through the Schema Registry; in the CONFLUENT wire format
    it also registers the schemas of the envelopes it ``writes`` (BACKWARD) and writes the
    ids it got, waiting for the registry up to ``MEMSTREAM_SCHEMA_REGISTRY_WAIT_SECONDS``."""
    if not settings.schema_registry_url:
        return codec.default_registry()
    client = client or RegistryClient.from_settings(settings)
    registry = codec.SchemaRegistry()
    registry.resolver = client.schema
    if settings.wire_format == codec.CONFLUENT:
        ids = with_retries(
            lambda: register_contract(client, settings, registry, writes),
            settings.schema_registry_wait_seconds,
            f"registering the Avro contract in the Schema Registry at {client.url}",
            sleep,
        )
        registry.write_with_ids(ids)
        log.info("Confluent wire format: schema ids %s (%s)", ids, client.url)
    return registry


def contract_subjects(settings: Settings) -> dict[str, str]:
    """Envelope → the subject its topic's values are registered under."""
    return {
        "MemoryEvent": subject_for(settings.events_topic),
        "ConsolidationEvent": subject_for(settings.ledger_topic),
    }


def register_contract(
    client: RegistryClient,
    settings: Settings,
    registry: codec.SchemaRegistry,
    envelopes: Iterable[str] = codec.ENVELOPES,
) -> dict[str, int]:
    """Register the current schemas (BACKWARD) under their subjects; envelope → id."""
    ids = {}
    subjects = contract_subjects(settings)
    for envelope in envelopes:
        subject = subjects[envelope]
        client.set_compatibility(subject, COMPATIBILITY)
        ids[envelope] = client.register(subject, registry.expanded_json(envelope))
    return ids


def with_retries(
    action: Callable[[], Any], wait_seconds: float, what: str, sleep: Sleep = time.sleep
) -> Any:
    """Run ``action`` until it succeeds, retrying :class:`RegistryUnavailable` with a doubling
    backoff for up to ``wait_seconds``; then fail saying what to do."""
    deadline = time.monotonic() + wait_seconds
    delay = FIRST_BACKOFF_SECONDS
    attempt = 1
    while True:
        try:
            return action()
        except RegistryUnavailable as exc:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RegistryUnavailable(
                    f"{what}: gave up after {wait_seconds:g} s ({exc}). Start the registry "
                    f"(`memstream up --registry` locally), check MEMSTREAM_SCHEMA_REGISTRY_URL, "
                    f"or raise MEMSTREAM_SCHEMA_REGISTRY_WAIT_SECONDS"
                ) from None
            pause = min(delay, left)
            log.warning("%s: attempt %d failed (%s); retrying in %.1f s", what, attempt, exc, pause)
            sleep(pause)
            delay = min(delay * 2, MAX_BACKOFF_SECONDS)
            attempt += 1


def unknown_ids(registry: codec.SchemaRegistry, values: Iterable[bytes | None]) -> set[int]:
    """The registry ids that ``values`` name and ``registry`` has not resolved yet."""
    if registry.resolver is None:
        return set()
    found = set()
    for value in values:
        schema_id = codec.peek_schema_id(value)
        if schema_id is not None and schema_id not in registry.by_id:
            found.add(schema_id)
    return found


def resolve_now(registry: codec.SchemaRegistry, schema_id: int) -> None:
    """Resolve one id into ``registry``'s cache; an id the registry does not have (or a
    schema that is not ours) is left to the decoder, which says why in a dead letter."""
    with contextlib.suppress(codec.DecodeError):
        registry.writer_of_id(schema_id)


async def resolve_ids_waiting(
    registry: codec.SchemaRegistry, values: Iterable[bytes | None]
) -> None:
    """Before a batch is decoded: resolve the ids it names that are not cached, off the event
    loop, retrying while the registry is down (the batch waits; nothing is skipped or dead-
    lettered for an outage), so decoding never waits on the network."""
    missing = unknown_ids(registry, values)
    if not missing:
        return
    loop = asyncio.get_running_loop()
    delay = FIRST_BACKOFF_SECONDS
    for schema_id in sorted(missing):
        while True:
            try:
                await loop.run_in_executor(None, resolve_now, registry, schema_id)
                break
            except RegistryUnavailable as exc:
                log.warning(
                    "schema id %d is not cached and the registry is down (%s): the batch "
                    "waits, retrying in %.1f s",
                    schema_id,
                    exc,
                    delay,
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_BACKOFF_SECONDS)
