"""The local stack's secure mode (``memstream up --secure``): SASL_SSL, SCRAM-SHA-512, ACLs.

It exists so that the secure client path is tested against a real broker configured the way
a managed Kafka is: clients connect over TLS and authenticate with SCRAM, and the authorizer
denies whatever no ACL allows. The broker gets

- one client listener, ``SASL_SSL`` (SCRAM-SHA-512), with a certificate for ``127.0.0.1`` /
  ``localhost`` signed by a CA generated here with the JDK's ``keytool`` (no extra Python
  dependency);
- a ``SASL_PLAINTEXT`` controller listener (PLAIN: KRaft controllers cannot use SCRAM, whose
  credentials live in the metadata they serve) bound to 127.0.0.1 like everything else;
- the StandardAuthorizer, with the stack's admin principal as the only super user, and ACLs
  that let the ``memstream`` principal use topics, consumer groups and transactional ids.
  Any other principal gets nothing.

SCRAM credentials of both principals are written when the storage is formatted, through a
``java @argfile`` so that no password is ever on a command line. Every secret (passwords,
CA and broker keys) lives in ``<state dir>/secrets`` (0700, files 0600); ``stack.env`` and
``memstream up``'s output name the password *file*, never a password. The broker logs
password-type properties as ``[hidden]``.
This module must never delete Kafka or PostgreSQL data.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from memstream.stack.stack_state import StackError, StackLayout
from streams.config.settings import ENV_PREFIX, Settings

ADMIN_USER = "admin"
APP_USER = "memstream"
MECHANISM = "SCRAM-SHA-512"
PROTOCOL = "SASL_SSL"
SCRAM_ITERATIONS = 8192
KEYSTORE_PASSWORD_ENV = "MEMSTREAM_KEYSTORE_PASSWORD"
CA_VALIDITY_DAYS = 3650
BROKER_VALIDITY_DAYS = 825
SUBJECT_ALT_NAMES = "dns:localhost,ip:127.0.0.1"
# What memstream's processes do on Kafka: Faust creates its own internal topics, the worker
# writes transactionally, producers are idempotent, consumers commit in their groups.
APP_ACLS: tuple[tuple[ResourceType, str, tuple[AclOperation, ...]], ...] = (
    (
        ResourceType.TOPIC,
        "*",
        (
            AclOperation.READ,
            AclOperation.WRITE,
            AclOperation.DESCRIBE,
            AclOperation.CREATE,
            AclOperation.DESCRIBE_CONFIGS,
        ),
    ),
    (ResourceType.GROUP, "*", (AclOperation.READ, AclOperation.DESCRIBE)),
    (ResourceType.TRANSACTIONAL_ID, "*", (AclOperation.WRITE, AclOperation.DESCRIBE)),
    (ResourceType.BROKER, "kafka-cluster", (AclOperation.DESCRIBE, AclOperation.IDEMPOTENT_WRITE)),
)

Progress = Callable[[str], None]


# --- where the secrets live ------------------------------------------------------------------


@dataclass(frozen=True)
class SecureFiles:
    """The secure mode's files under the state directory."""

    layout: StackLayout

    @property
    def secrets_dir(self) -> Path:
        return self.layout.state_dir / "secrets"

    @property
    def tls_dir(self) -> Path:
        return self.layout.state_dir / "tls"

    @property
    def ca_cert(self) -> Path:
        """The CA certificate clients trust (public: it holds no key)."""
        return self.tls_dir / "ca.pem"

    @property
    def ca_keystore(self) -> Path:
        return self.secrets_dir / "ca.p12"

    @property
    def broker_keystore(self) -> Path:
        return self.secrets_dir / "broker.p12"

    def password_file(self, name: str) -> Path:
        return self.secrets_dir / f"{name}.password"

    @property
    def app_password_file(self) -> Path:
        return self.password_file(APP_USER)

    @property
    def admin_password_file(self) -> Path:
        return self.password_file(ADMIN_USER)

    @property
    def keystore_password_file(self) -> Path:
        return self.password_file("keystore")

    def exists(self) -> bool:
        """True once secrets were generated: this state dir holds a secure stack."""
        return self.admin_password_file.exists()


@dataclass(frozen=True)
class StackSecrets:
    admin_password: str = field(repr=False)
    app_password: str = field(repr=False)
    keystore_password: str = field(repr=False)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by its owner only (0600), also when it existed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(text)


def ensure_secrets(files: SecureFiles) -> StackSecrets:
    """Load the stack's passwords, generating the missing ones (random, 0600 files)."""
    files.secrets_dir.mkdir(parents=True, exist_ok=True)
    files.secrets_dir.chmod(0o700)

    def password(path: Path) -> str:
        if not path.exists():
            write_private(path, secrets.token_urlsafe(24) + "\n")
        return path.read_text().strip()

    return StackSecrets(
        admin_password=password(files.admin_password_file),
        app_password=password(files.app_password_file),
        keystore_password=password(files.keystore_password_file),
    )


# --- TLS material, with keytool --------------------------------------------------------------


def find_keytool(java: str) -> str:
    """The ``keytool`` of the JDK that runs the broker (it ships with every JRE)."""
    beside = Path(java).resolve().parent / "keytool"
    found = str(beside) if beside.exists() else shutil.which("keytool")
    if found is None:
        raise StackError(
            f"keytool not found next to {java} or on PATH: install a full JRE 17+ "
            f"(openjdk-17-jre-headless ships it); `memstream up --secure` uses it to make the "
            f"broker's TLS certificate"
        )
    return found


def ensure_tls(
    java: str, files: SecureFiles, stack_secrets: StackSecrets, progress: Progress
) -> None:
    """A CA and a broker certificate signed by it, unless both are there already."""
    if files.ca_cert.exists() and files.broker_keystore.exists() and files.ca_keystore.exists():
        return
    progress(f"kafka: generating a local CA and the broker's TLS certificate in {files.tls_dir}")
    keytool = find_keytool(java)
    for stale in (files.ca_keystore, files.broker_keystore, files.ca_cert):
        stale.unlink(missing_ok=True)  # a half-finished earlier run; all of it is made again
    files.tls_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, KEYSTORE_PASSWORD_ENV: stack_secrets.keystore_password}
    store = ["-storetype", "PKCS12", "-storepass:env", KEYSTORE_PASSWORD_ENV]
    ca = ["-keystore", str(files.ca_keystore), *store]
    broker = ["-keystore", str(files.broker_keystore), *store]
    key = ["-keyalg", "EC", "-groupname", "secp256r1"]
    csr = files.secrets_dir / "broker.csr"
    signed = files.secrets_dir / "broker.pem"
    steps = [
        ["-genkeypair", "-alias", "ca", *key, "-dname", "CN=memstream local CA",
         "-ext", "bc:c=ca:true", "-ext", "KU:c=keyCertSign,cRLSign",
         "-validity", str(CA_VALIDITY_DAYS), *ca],
        ["-exportcert", "-rfc", "-alias", "ca", "-file", str(files.ca_cert), *ca],
        ["-genkeypair", "-alias", "broker", *key, "-dname", "CN=localhost",
         "-validity", str(BROKER_VALIDITY_DAYS), *broker],
        ["-certreq", "-alias", "broker", "-file", str(csr), *broker],
        ["-gencert", "-alias", "ca", "-infile", str(csr), "-outfile", str(signed), "-rfc",
         "-ext", f"SAN={SUBJECT_ALT_NAMES}", "-ext", "KU=digitalSignature",
         "-ext", "EKU=serverAuth,clientAuth", "-validity", str(BROKER_VALIDITY_DAYS), *ca],
        ["-importcert", "-noprompt", "-alias", "ca", "-file", str(files.ca_cert), *broker],
        ["-importcert", "-noprompt", "-alias", "broker", "-file", str(signed), *broker],
    ]  # fmt: skip
    try:
        for step in steps:
            _keytool(keytool, step, env)
    finally:
        csr.unlink(missing_ok=True)
        signed.unlink(missing_ok=True)
    for private in (files.ca_keystore, files.broker_keystore):
        private.chmod(0o600)


def _keytool(keytool: str, args: list[str], env: Mapping[str, str]) -> None:
    done = subprocess.run(
        [keytool, *args], env=dict(env), capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise StackError(
            f"`keytool {args[0]}` failed (exit {done.returncode}) while making the broker's TLS "
            f"certificate; delete the secrets/ and tls/ folders of the state dir only if the "
            f"broker was never formatted with them, then run `memstream up --secure` again:\n"
            f"{(done.stdout + done.stderr).strip()[-2000:]}"
        )


# --- broker configuration --------------------------------------------------------------------


def _jaas(module: str, options: Mapping[str, str]) -> str:
    pairs = " ".join(f'{name}="{value}"' for name, value in options.items())
    return f"{module} required {pairs};"


def server_properties(
    port: int, controller_port: int, files: SecureFiles, stack_secrets: StackSecrets
) -> dict[str, str]:
    """What secure mode changes in :func:`memstream.stack.kafka_broker.server_properties`."""
    admin, password = ADMIN_USER, stack_secrets.admin_password
    plain = "org.apache.kafka.common.security.plain.PlainLoginModule"
    scram = "org.apache.kafka.common.security.scram.ScramLoginModule"
    return {
        "listeners": f"SASL_SSL://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"SASL_SSL://127.0.0.1:{port}",
        "listener.security.protocol.map": "SASL_SSL:SASL_SSL,CONTROLLER:SASL_PLAINTEXT",
        "inter.broker.listener.name": "SASL_SSL",
        "sasl.enabled.mechanisms": MECHANISM,
        "sasl.mechanism.inter.broker.protocol": MECHANISM,
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": _jaas(
            scram, {"username": admin, "password": password}
        ),
        "sasl.mechanism.controller.protocol": "PLAIN",
        "listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
        "listener.name.controller.plain.sasl.jaas.config": _jaas(
            plain, {"username": admin, "password": password, f"user_{admin}": password}
        ),
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": str(files.broker_keystore),
        "ssl.keystore.password": stack_secrets.keystore_password,
        "ssl.key.password": stack_secrets.keystore_password,
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(files.ca_cert),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": f"User:{admin}",
        "allow.everyone.if.no.acl.found": "false",
    }


def scram_format_args(stack_secrets: StackSecrets) -> list[str]:
    """``kafka-storage format`` arguments creating both principals' SCRAM credentials."""
    users = ((ADMIN_USER, stack_secrets.admin_password), (APP_USER, stack_secrets.app_password))
    args = []
    for name, password in users:
        args += ["--add-scram", f"{MECHANISM}=[name={name},password={password}]"]
    return args


@contextlib.contextmanager
def argfile(directory: Path, args: list[str]) -> Iterator[Path]:
    """A private ``java @argfile`` holding ``args``, deleted afterwards: arguments in it never
    show up in a process listing."""
    quoted = ['"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"' for arg in args]
    path = directory / f".java-args-{secrets.token_hex(4)}"
    write_private(path, "\n".join(quoted) + "\n")
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


# --- clients of the secure broker ------------------------------------------------------------


def client_settings(files: SecureFiles, bootstrap: str, user: str = APP_USER) -> Settings:
    """Settings that connect as ``user`` (``memstream`` or ``admin``) to the secure broker."""
    return Settings(
        kafka_bootstrap=bootstrap,
        kafka_security_protocol=PROTOCOL,
        kafka_sasl_mechanism=MECHANISM,
        kafka_username=user,
        kafka_password_file=str(files.password_file(user)),
        kafka_ssl_ca_file=str(files.ca_cert),
    )


def client_env(files: SecureFiles) -> dict[str, str]:
    """The ``stack.env`` exports that make every memstream process connect as ``memstream``:
    the password FILE, never the password."""
    return {
        f"{ENV_PREFIX}KAFKA_SECURITY_PROTOCOL": PROTOCOL,
        f"{ENV_PREFIX}KAFKA_SASL_MECHANISM": MECHANISM,
        f"{ENV_PREFIX}KAFKA_USERNAME": APP_USER,
        f"{ENV_PREFIX}KAFKA_PASSWORD_FILE": str(files.app_password_file),
        f"{ENV_PREFIX}KAFKA_SSL_CA_FILE": str(files.ca_cert),
    }


def app_acl_bindings(principal: str = f"User:{APP_USER}") -> list[AclBinding]:
    return [
        AclBinding(
            resource,
            name,
            ResourcePatternType.LITERAL,
            principal,
            "*",
            operation,
            AclPermissionType.ALLOW,
        )
        for resource, name, operations in APP_ACLS
        for operation in operations
    ]


def ensure_acls(admin_config: Mapping[str, Any], timeout: float = 30.0) -> None:
    """Allow the ``memstream`` principal what it needs (creating an existing ACL is a no-op)."""
    client = AdminClient(dict(admin_config))
    for binding, future in client.create_acls(app_acl_bindings(), request_timeout=timeout).items():
        try:
            future.result(timeout=timeout)
        except KafkaException as exc:
            raise StackError(f"could not create the ACL {binding}: {exc}") from exc


def upsert_scram_user(
    admin_config: Mapping[str, Any], username: str, password: str, timeout: float = 30.0
) -> None:
    """Create (or change the password of) a SCRAM-SHA-512 user. It has no ACL, so it can do
    nothing until someone grants it some."""
    client = AdminClient(dict(admin_config))
    upsert = UserScramCredentialUpsertion(
        username,
        ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, SCRAM_ITERATIONS),
        password.encode(),
    )
    for _, future in client.alter_user_scram_credentials([upsert]).items():
        try:
            future.result(timeout=timeout)
        except KafkaException as exc:
            raise StackError(f"could not create the Kafka user {username!r}: {exc}") from exc
