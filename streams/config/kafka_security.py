"""Kafka client security: the one mapping from :class:`Settings` to every client's config.

memstream reaches Kafka through two client libraries: librdkafka (confluent-kafka: the
publisher, the projector, ledger replay, the tick publisher, admin clients, benchmarks) and
aiokafka (the Faust worker). Both take their security configuration from here and nowhere
else, so a managed Kafka that requires SASL over TLS is configured once, with the same
``MEMSTREAM_KAFKA_*`` variables, for every process.

Secrets: the SASL password is read from ``MEMSTREAM_KAFKA_PASSWORD_FILE`` (or, less safely,
``MEMSTREAM_KAFKA_PASSWORD``) when a client is built, so a rotated mounted secret is picked up
by the next start. It never appears in an error message, a ``repr`` or a log line; errors name
the variable to fix instead.
This module must never open a connection except in :func:`probe`, which exists to turn a
refused connection into a message that says what to do next.
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ClusterMetadata

from streams.config.settings import ENV_PREFIX, Settings, SettingsError

log = logging.getLogger("memstream.kafka")

SASL_PROTOCOLS = frozenset({"SASL_PLAINTEXT", "SASL_SSL"})
TLS_PROTOCOLS = frozenset({"SSL", "SASL_SSL"})
# librdkafka: look for the platform's CA bundle when no CA file is given (the wheels link
# OpenSSL statically, so its compiled-in default paths may not exist on this machine).
SYSTEM_CA = "probe"

_AUTHORIZATION = {
    KafkaError.TOPIC_AUTHORIZATION_FAILED: "use a topic",
    KafkaError.GROUP_AUTHORIZATION_FAILED: "use a consumer group",
    KafkaError.CLUSTER_AUTHORIZATION_FAILED: "perform a cluster operation",
    KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "use a transactional id",
}


class KafkaSecurityError(SettingsError):
    """The security settings are incomplete or contradictory; the message names the variable."""


class KafkaAccessError(RuntimeError):
    """Kafka could not be reached or refused this client; the message says what to check."""


def _var(name: str) -> str:
    return f"{ENV_PREFIX}{name.upper()}"


def uses_sasl(settings: Settings) -> bool:
    return settings.kafka_security_protocol in SASL_PROTOCOLS


def uses_tls(settings: Settings) -> bool:
    return settings.kafka_security_protocol in TLS_PROTOCOLS


def password_source(settings: Settings) -> str:
    """The variable the SASL password comes from, for error messages."""
    return _var("kafka_password_file") if settings.kafka_password_file else _var("kafka_password")


def read_password(settings: Settings) -> str:
    """The SASL password: the password file's content (trailing newlines dropped), else
    ``kafka_password``. Errors name the variable, never the value."""
    if settings.kafka_password_file and settings.kafka_password:
        raise KafkaSecurityError(
            f"both {_var('kafka_password_file')} and {_var('kafka_password')} are set: "
            f"unset {_var('kafka_password')} (the file is the safer of the two)"
        )
    if not settings.kafka_password_file:
        return settings.kafka_password
    path = Path(settings.kafka_password_file).expanduser()
    try:
        secret = path.read_text().rstrip("\r\n")
    except OSError as exc:
        raise KafkaSecurityError(
            f"{_var('kafka_password_file')}={str(path)!r} cannot be read ({exc.strerror}): "
            f"mount the Kafka user's password there or point the variable at it"
        ) from None
    if not secret:
        raise KafkaSecurityError(
            f"{_var('kafka_password_file')}={str(path)!r} is empty: write the Kafka user's "
            f"password into it"
        )
    return secret


def validate(settings: Settings) -> None:
    """Check that the security settings form a usable whole (without reading secrets)."""
    if uses_sasl(settings):
        if not settings.kafka_username:
            raise KafkaSecurityError(
                f"{_var('kafka_security_protocol')}={settings.kafka_security_protocol} needs "
                f"{_var('kafka_username')} (and {_var('kafka_password_file')}): set the Kafka "
                f"user memstream authenticates as"
            )
        if not (settings.kafka_password_file or settings.kafka_password):
            raise KafkaSecurityError(
                f"{_var('kafka_security_protocol')}={settings.kafka_security_protocol} needs a "
                f"password for {settings.kafka_username!r}: set {_var('kafka_password_file')} "
                f"to a file holding it"
            )
    if bool(settings.kafka_ssl_cert_file) != bool(settings.kafka_ssl_key_file):
        raise KafkaSecurityError(
            f"a client certificate needs both {_var('kafka_ssl_cert_file')} and "
            f"{_var('kafka_ssl_key_file')}: set both, or neither"
        )
    tls_files = ("kafka_ssl_ca_file", "kafka_ssl_cert_file", "kafka_ssl_key_file")
    for name in tls_files:
        value = getattr(settings, name)
        if value and not uses_tls(settings):
            raise KafkaSecurityError(
                f"{_var(name)} is set but {_var('kafka_security_protocol')} is "
                f"{settings.kafka_security_protocol}, which does not use TLS: set it to SSL "
                f"or SASL_SSL, or unset {_var(name)}"
            )
        if value and not Path(value).expanduser().is_file():
            raise KafkaSecurityError(f"{_var(name)}={value!r} is not a file: check the mount")


# --- librdkafka (confluent-kafka) ------------------------------------------------------------


def confluent_config(settings: Settings, *, report_errors: bool = True) -> dict[str, Any]:
    """``bootstrap.servers`` plus the security properties of a confluent-kafka client.

    Callers add their own client properties (``group.id``, ``acks`` …) to the result. With
    ``report_errors`` an ``error_cb`` logs refused credentials, failed TLS handshakes and
    missing ACLs once per client in words that say what to fix. librdkafka's own log lines
    go to the ``memstream.kafka.librdkafka`` logger (:data:`LIBRDKAFKA_LOG`), not straight
    to stderr: its warnings are mostly transient states it retries by itself ("Failed to
    acquire idempotence PID … retrying" while the broker starts), so that logger shows
    errors only unless an operator lowers its level."""
    validate(settings)
    config: dict[str, Any] = {
        "bootstrap.servers": settings.kafka_bootstrap,
        "security.protocol": settings.kafka_security_protocol,
    }
    if uses_sasl(settings):
        config["sasl.mechanism"] = settings.kafka_sasl_mechanism
        config["sasl.username"] = settings.kafka_username
        config["sasl.password"] = read_password(settings)
    if uses_tls(settings):
        config["ssl.ca.location"] = settings.kafka_ssl_ca_file or SYSTEM_CA
        # Verify that the broker's certificate names the host we connect to (librdkafka's
        # default since 2.0; stated so that no older default weakens it).
        config["ssl.endpoint.identification.algorithm"] = "https"
        if settings.kafka_ssl_cert_file:
            config["ssl.certificate.location"] = settings.kafka_ssl_cert_file
            config["ssl.key.location"] = settings.kafka_ssl_key_file
    if report_errors:
        config["error_cb"] = error_reporter(settings)
    config["logger"] = LIBRDKAFKA_LOG
    return config


LIBRDKAFKA_LOG = logging.getLogger("memstream.kafka.librdkafka")
"""Where every confluent-kafka client's librdkafka log lines go; ERROR and above by default
(``logging.getLogger("memstream.kafka.librdkafka").setLevel(logging.DEBUG)`` shows all)."""
LIBRDKAFKA_LOG.setLevel(logging.ERROR)


def error_reporter(settings: Settings) -> Callable[[KafkaError], None]:
    """An ``error_cb`` that logs each explainable error (see :func:`explain`) once."""
    reported: set[str] = set()

    def report(error: KafkaError) -> None:
        message = explain(error, settings)
        if message is not None and message not in reported:
            reported.add(message)
            log.error("%s", message)

    return report


def explain(error: KafkaError, settings: Settings) -> str | None:
    """A message saying what to fix for security-related client errors; ``None`` for others
    (unreachable brokers, timeouts: librdkafka already says those plainly)."""
    code, detail = error.code(), error.str()
    where = settings.kafka_bootstrap
    if code == KafkaError._AUTHENTICATION and "SSL" not in detail:
        return (
            f"Kafka at {where} refused the {settings.kafka_sasl_mechanism} credentials of user "
            f"{settings.kafka_username!r}: check {_var('kafka_username')} and the password in "
            f"{password_source(settings)} (the broker said: {detail})"
        )
    if code in (KafkaError._SSL, KafkaError._AUTHENTICATION) or (
        code == KafkaError._TRANSPORT and "SSL handshake" in detail
    ):
        return (
            f"the TLS handshake with Kafka at {where} failed: check that "
            f"{_var('kafka_ssl_ca_file')} holds the CA that signed the broker's certificate "
            f"and that the certificate names the bootstrap host ({detail})"
        )
    if code == KafkaError._TRANSPORT and "security.protocol" in detail:
        return (
            f"Kafka at {where} closed the connection during the handshake: "
            f"{_var('kafka_security_protocol')}={settings.kafka_security_protocol} probably "
            f"does not match the listener (SASL_SSL for managed Kafka) ({detail})"
        )
    if code in _AUTHORIZATION:
        who = settings.kafka_username or "ANONYMOUS"
        return (
            f"Kafka user {who!r} is not allowed to {_AUTHORIZATION[code]}: grant it the ACLs "
            f"listed in docs/security.md (Strimzi: the KafkaUser's acls) ({detail})"
        )
    return None


def probe(settings: Settings, timeout: float = 30.0) -> ClusterMetadata:
    """The cluster's metadata, or :class:`KafkaAccessError` explaining why there is none.

    A wrong password or CA otherwise surfaces as a bare "broker transport failure" after the
    full timeout; here it fails within seconds with a message naming the setting to fix."""
    errors: list[KafkaError] = []
    lines = _Capture()
    config = confluent_config(settings, report_errors=False)
    # librdkafka's retry-by-retry log lines are captured, not printed: what they say is in
    # the explanation raised below.
    quiet: dict[str, Any] = {**config, "error_cb": errors.append, "logger": lines.logger}
    admin = AdminClient(quiet)
    deadline = time.monotonic() + timeout
    while True:
        remaining = max(0.1, deadline - time.monotonic())
        try:
            return admin.list_topics(timeout=min(2.0, remaining))
        except KafkaException as exc:
            last: KafkaError = exc.args[0]
        admin.poll(0)  # serves error_cb and the logger
        for error in errors:
            message = explain(error, settings)
            if message is not None:
                raise KafkaAccessError(message)
        if lines.closed_during_handshake():
            raise KafkaAccessError(
                f"Kafka at {settings.kafka_bootstrap} closes the connection before it is "
                f"established: {_var('kafka_security_protocol')}="
                f"{settings.kafka_security_protocol} probably does not match the listener "
                f"(SASL_SSL for managed Kafka)"
            )
        if time.monotonic() >= deadline:
            raise KafkaAccessError(
                f"cannot reach Kafka at {settings.kafka_bootstrap} ({last.str()}): start it "
                f"(`memstream up` locally) or set {_var('kafka_bootstrap')}"
            )


class _Capture(logging.Handler):
    """Keeps the log lines of one librdkafka client instead of printing them."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []
        self.logger = logging.Logger(f"memstream.kafka.probe.{id(self)}")
        self.logger.propagate = False
        self.logger.addHandler(self)

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def closed_during_handshake(self) -> bool:
        """A plaintext client on a TLS listener (or the reverse) is dropped while it asks
        for the broker's API versions, before any response."""
        return any("state APIVERSION_QUERY" in message for message in self.messages)


# --- aiokafka (Faust) ------------------------------------------------------------------------


def ssl_context(settings: Settings) -> ssl.SSLContext | None:
    """The TLS context for aiokafka: the CA file (else the system's trust store), hostname
    verification on, and the client certificate when one is configured."""
    if not uses_tls(settings):
        return None
    validate(settings)
    context = ssl.create_default_context(cafile=settings.kafka_ssl_ca_file or None)
    if settings.kafka_ssl_cert_file:
        context.load_cert_chain(settings.kafka_ssl_cert_file, settings.kafka_ssl_key_file)
    return context


def faust_credentials(settings: Settings) -> Any:
    """``broker_credentials`` for ``faust.App``: ``None`` (PLAINTEXT), ``SSLCredentials`` or
    ``SASLCredentials`` (with the TLS context for SASL_SSL). Faust hands them to aiokafka for
    its consumer, producers and topic creation alike."""
    from faust.auth import SASLCredentials, SSLCredentials

    validate(settings)
    context = ssl_context(settings)
    if uses_sasl(settings):
        return SASLCredentials(
            username=settings.kafka_username,
            password=read_password(settings),
            mechanism=settings.kafka_sasl_mechanism,
            ssl_context=context,
        )
    if context is not None:
        return SSLCredentials(context)
    return None


# --- clients built from a bare bootstrap address ---------------------------------------------


def settings_for_bootstrap(bootstrap: str) -> Settings:
    """This process's settings (environment, then ``stack.env``: where every memstream process
    reads them) aimed at ``bootstrap``, for helpers still called with an address alone."""
    return Settings.from_env().with_overrides(kafka_bootstrap=bootstrap)


def resolve(source: str | Settings) -> Settings:
    """Settings for a client given either full settings or just a bootstrap address."""
    return source if isinstance(source, Settings) else settings_for_bootstrap(source)
