"""The one mapping from settings to Kafka client security (streams/config/kafka_security.py), and
the secure local stack's secret handling (memstream/stack/secure.py). No broker is contacted:
clients are not built here, only their configuration; the secure broker itself is exercised
by tests/integration/test_security.py."""

from __future__ import annotations

import logging
import ssl
import stat
from pathlib import Path

import pytest
from confluent_kafka import KafkaError
from faust.auth import SASLCredentials, SSLCredentials
from faust.types.auth import AuthProtocol

from memstream.stack import secure
from memstream.stack.stack_state import StackInfo, StackLayout
from streams.config.kafka_security import (
    SYSTEM_CA,
    KafkaSecurityError,
    confluent_config,
    error_reporter,
    explain,
    faust_credentials,
    read_password,
    resolve,
    ssl_context,
)
from streams.config.settings import Settings

SECRET = "s3cret-Pa55word"
# A public CA certificate (no key), as `memstream up --secure` makes: enough for an SSLContext.
CA_PEM = """-----BEGIN CERTIFICATE-----
MIIBczCCARmgAwIBAgIJALz48EXF2PhdMAoGCCqGSM49BAMCMB0xGzAZBgNVBAMT
Em1lbXN0cmVhbSBsb2NhbCBDQTAeFw0yNjExMjIxMzExMTBaFw0zNjExMTkxMzEx
MTBaMB0xGzAZBgNVBAMTEm1lbXN0cmVhbSBsb2NhbCBDQTBZMBMGByqGSM49AgEG
CCqGSM49AwEHA0IABKnggQxPdY0ugdoOJq5UTQcF/SqBq+R8o+VvtEdClsy+uxMm
NdEgtvjXkn7ajfG7ofyYfjKH2+4+NmJdy5Ll+JSjQjBAMB0GA1UdDgQWBBRYSV0x
YmqVm21gJmzaA1rF3e66ljAOBgNVHQ8BAf8EBAMCAQYwDwYDVR0TAQH/BAUwAwEB
/zAKBggqhkjOPQQDAgNIADBFAiEAw0UeeyScyaxJOA08pSFQlmbBR0PlQdOJx9GY
cg+atOMCIFbS4g5Fz5mzfttoGCrxs0tdyo+9Q4DZGiBEG+GXG2s9
-----END CERTIFICATE-----
"""


@pytest.fixture
def password_file(tmp_path: Path) -> Path:
    path = tmp_path / "kafka.password"
    path.write_text(SECRET + "\n")
    return path


@pytest.fixture
def ca_file(tmp_path: Path) -> Path:
    path = tmp_path / "ca.pem"
    path.write_text(CA_PEM)
    return path


def sasl_ssl(password_file: Path, ca_file: Path | None = None, **changes: object) -> Settings:
    return Settings(
        kafka_bootstrap="kafka.example:9093",
        kafka_security_protocol="SASL_SSL",
        kafka_sasl_mechanism="SCRAM-SHA-512",
        kafka_username="memstream-worker",
        kafka_password_file=str(password_file),
        kafka_ssl_ca_file=str(ca_file) if ca_file else "",
    ).with_overrides(**changes)


def without_callbacks(config: dict[str, object]) -> dict[str, object]:
    """The client properties, without the error callback and the log destination."""
    return {k: v for k, v in config.items() if not callable(v) and k != "logger"}


# ---- librdkafka (confluent-kafka) -----------------------------------------------------------


def test_by_default_clients_connect_in_plaintext_with_nothing_else_set() -> None:
    config = confluent_config(Settings(kafka_bootstrap="127.0.0.1:9092"), report_errors=False)

    assert without_callbacks(config) == {
        "bootstrap.servers": "127.0.0.1:9092",
        "security.protocol": "PLAINTEXT",
    }


def test_sasl_ssl_sends_the_user_and_the_password_read_from_its_file(
    password_file: Path, ca_file: Path
) -> None:
    config = without_callbacks(confluent_config(sasl_ssl(password_file, ca_file)))

    assert config == {
        "bootstrap.servers": "kafka.example:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "memstream-worker",
        "sasl.password": SECRET,  # without the file's trailing newline
        "ssl.ca.location": str(ca_file),
        "ssl.endpoint.identification.algorithm": "https",
    }


def test_without_a_ca_file_tls_trusts_the_system_store(password_file: Path) -> None:
    config = confluent_config(sasl_ssl(password_file))

    assert config["ssl.ca.location"] == SYSTEM_CA


def test_sasl_plaintext_sets_no_tls_properties(password_file: Path) -> None:
    settings = sasl_ssl(password_file, kafka_security_protocol="SASL_PLAINTEXT")

    config = confluent_config(settings)

    assert config["security.protocol"] == "SASL_PLAINTEXT"
    assert not any(key.startswith("ssl.") for key in config)


def test_a_client_certificate_is_passed_for_mutual_tls(tmp_path: Path, ca_file: Path) -> None:
    cert, key = tmp_path / "client.pem", tmp_path / "client.key"
    cert.write_text("cert")
    key.write_text("key")
    settings = Settings(
        kafka_security_protocol="SSL",
        kafka_ssl_ca_file=str(ca_file),
        kafka_ssl_cert_file=str(cert),
        kafka_ssl_key_file=str(key),
    )

    config = confluent_config(settings)

    assert config["ssl.certificate.location"] == str(cert)
    assert config["ssl.key.location"] == str(key)
    assert "sasl.username" not in config


def test_a_password_given_directly_is_used_when_there_is_no_file() -> None:
    settings = Settings(
        kafka_security_protocol="SASL_PLAINTEXT", kafka_username="u", kafka_password=SECRET
    )

    assert confluent_config(settings)["sasl.password"] == SECRET


# ---- configuration errors name the variable to fix, never the secret -----------------------


@pytest.mark.parametrize(
    ("changes", "variable"),
    [
        ({"kafka_username": ""}, "MEMSTREAM_KAFKA_USERNAME"),
        ({"kafka_password_file": ""}, "MEMSTREAM_KAFKA_PASSWORD_FILE"),
        ({"kafka_password": "also-set"}, "MEMSTREAM_KAFKA_PASSWORD"),
        ({"kafka_ssl_cert_file": "/etc/hosts"}, "MEMSTREAM_KAFKA_SSL_KEY_FILE"),
        ({"kafka_ssl_ca_file": "/nonexistent/ca.pem"}, "MEMSTREAM_KAFKA_SSL_CA_FILE"),
        (
            {"kafka_security_protocol": "SASL_PLAINTEXT", "kafka_ssl_ca_file": "/etc/hosts"},
            "MEMSTREAM_KAFKA_SSL_CA_FILE",
        ),
    ],
)
def test_an_incomplete_security_configuration_is_refused_naming_the_variable(
    password_file: Path, changes: dict[str, object], variable: str
) -> None:
    settings = sasl_ssl(password_file).with_overrides(**changes)

    with pytest.raises(KafkaSecurityError) as refused:
        confluent_config(settings)

    assert variable in str(refused.value)
    assert SECRET not in str(refused.value)


def test_an_unreadable_password_file_names_the_variable_and_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "not-mounted" / "password"
    settings = Settings(
        kafka_security_protocol="SASL_SSL",
        kafka_username="u",
        kafka_password_file=str(missing),
    )

    with pytest.raises(KafkaSecurityError, match="MEMSTREAM_KAFKA_PASSWORD_FILE") as refused:
        read_password(settings)

    assert str(missing) in str(refused.value)


def test_an_empty_password_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "password"
    empty.write_text("\n")
    settings = Settings(
        kafka_security_protocol="SASL_SSL", kafka_username="u", kafka_password_file=str(empty)
    )

    with pytest.raises(KafkaSecurityError, match="is empty"):
        read_password(settings)


def test_the_password_is_not_in_the_settings_repr() -> None:
    settings = Settings(kafka_username="u", kafka_password=SECRET)

    assert SECRET not in repr(settings)


# ---- aiokafka (Faust) -----------------------------------------------------------------------


def test_plaintext_gives_faust_no_credentials() -> None:
    assert faust_credentials(Settings()) is None
    assert ssl_context(Settings()) is None


def test_sasl_ssl_gives_faust_scram_credentials_over_a_verifying_tls_context(
    password_file: Path, ca_file: Path
) -> None:
    credentials = faust_credentials(sasl_ssl(password_file, ca_file))

    assert isinstance(credentials, SASLCredentials)
    assert credentials.protocol is AuthProtocol.SASL_SSL
    assert credentials.mechanism.value == "SCRAM-SHA-512"
    assert (credentials.username, credentials.password) == ("memstream-worker", SECRET)
    context = credentials.ssl_context
    assert context is not None
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 1
    assert SECRET not in repr(credentials)


def test_sasl_plaintext_gives_faust_sasl_credentials_without_tls(password_file: Path) -> None:
    credentials = faust_credentials(
        sasl_ssl(password_file, kafka_security_protocol="SASL_PLAINTEXT")
    )

    assert isinstance(credentials, SASLCredentials)
    assert credentials.protocol is AuthProtocol.SASL_PLAINTEXT
    assert credentials.ssl_context is None


def test_ssl_alone_gives_faust_ssl_credentials(ca_file: Path) -> None:
    credentials = faust_credentials(
        Settings(kafka_security_protocol="SSL", kafka_ssl_ca_file=str(ca_file))
    )

    assert isinstance(credentials, SSLCredentials)
    assert credentials.protocol is AuthProtocol.SSL


def test_the_worker_faust_app_carries_the_credentials(password_file: Path, ca_file: Path) -> None:
    from streams.kafka.faust_app import faust_app

    app = faust_app(sasl_ssl(password_file, ca_file), "credentials-test")

    assert isinstance(app.conf.broker_credentials, SASLCredentials)
    assert app.conf.broker_credentials.username == "memstream-worker"


# ---- explaining refused connections ---------------------------------------------------------


def test_refused_sasl_credentials_are_explained_with_the_user_and_the_variable(
    password_file: Path,
) -> None:
    error = KafkaError(
        KafkaError._AUTHENTICATION,
        "SASL authentication error: Authentication failed during authentication due to "
        "invalid credentials with SASL mechanism SCRAM-SHA-512",
    )

    message = explain(error, sasl_ssl(password_file))

    assert message is not None
    assert "'memstream-worker'" in message
    assert "MEMSTREAM_KAFKA_PASSWORD_FILE" in message
    assert SECRET not in message


def test_a_failed_tls_handshake_points_at_the_ca_file(password_file: Path) -> None:
    error = KafkaError(KafkaError._SSL, "SSL handshake failed: certificate verify failed")

    message = explain(error, sasl_ssl(password_file))

    assert message is not None and "MEMSTREAM_KAFKA_SSL_CA_FILE" in message


def test_a_missing_acl_points_at_the_acls(password_file: Path) -> None:
    error = KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed")

    message = explain(error, sasl_ssl(password_file))

    assert message is not None and "ACL" in message and "'memstream-worker'" in message


def test_errors_unrelated_to_security_are_left_to_librdkafka(password_file: Path) -> None:
    error = KafkaError(KafkaError._ALL_BROKERS_DOWN, "1/1 brokers are down")

    assert explain(error, sasl_ssl(password_file)) is None


def test_a_client_logs_each_explained_error_once(
    password_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    report = error_reporter(sasl_ssl(password_file))
    refused = KafkaError(KafkaError._AUTHENTICATION, "SASL authentication error: invalid")

    with caplog.at_level(logging.ERROR, logger="memstream.kafka"):
        for _ in range(5):  # librdkafka reports it on every reconnect
            report(refused)
        report(KafkaError(KafkaError._ALL_BROKERS_DOWN, "down"))

    assert len(caplog.records) == 1
    assert "MEMSTREAM_KAFKA_PASSWORD_FILE" in caplog.records[0].getMessage()


# ---- clients built from a bare bootstrap address --------------------------------------------


def test_a_bare_bootstrap_takes_the_security_settings_of_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, password_file: Path
) -> None:
    monkeypatch.setenv("MEMSTREAM_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("MEMSTREAM_KAFKA_SECURITY_PROTOCOL", "SASL_PLAINTEXT")
    monkeypatch.setenv("MEMSTREAM_KAFKA_USERNAME", "memstream")
    monkeypatch.setenv("MEMSTREAM_KAFKA_PASSWORD_FILE", str(password_file))

    settings = resolve("broker:9095")

    assert settings.kafka_bootstrap == "broker:9095"
    assert confluent_config(settings)["sasl.password"] == SECRET


def test_full_settings_are_used_as_given(password_file: Path) -> None:
    settings = sasl_ssl(password_file)

    assert resolve(settings) is settings


# ---- the secure local stack's secrets -------------------------------------------------------


def test_stack_secrets_are_random_private_files_reused_on_the_next_up(tmp_path: Path) -> None:
    files = secure.SecureFiles(StackLayout(tmp_path))

    first = secure.ensure_secrets(files)
    again = secure.ensure_secrets(files)

    assert first == again
    assert len({first.admin_password, first.app_password, first.keystore_password}) == 3
    assert stat.S_IMODE(files.secrets_dir.stat().st_mode) == 0o700
    for path in files.secrets_dir.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert first.app_password not in repr(first)


def test_stack_env_of_a_secure_stack_names_the_password_file_not_the_password(
    tmp_path: Path,
) -> None:
    files = secure.SecureFiles(StackLayout(tmp_path))
    stack_secrets = secure.ensure_secrets(files)
    info = StackInfo(
        kafka_bootstrap="127.0.0.1:1",
        database_url="postgresql://x",
        kafka_pid=1,
        postgres_pid=2,
        state_dir=tmp_path,
        partitions=4,
        kafka_version="4.1.1",
        kafka_log=tmp_path / "log",
        pgdata=tmp_path / "pg",
        secure=True,
        kafka_client_env=secure.client_env(files),
    )

    env = info.env()

    assert env["MEMSTREAM_KAFKA_PASSWORD_FILE"] == str(files.app_password_file)
    assert env["MEMSTREAM_KAFKA_SECURITY_PROTOCOL"] == "SASL_SSL"
    assert "MEMSTREAM_KAFKA_PASSWORD" not in env
    assert not any(stack_secrets.app_password in value for value in env.values())


def test_scram_passwords_reach_the_storage_tool_through_a_private_argfile(
    tmp_path: Path,
) -> None:
    stack_secrets = secure.StackSecrets("admin-pw", "app-pw", "store-pw")
    args = secure.scram_format_args(stack_secrets)

    with secure.argfile(tmp_path, ["kafka.tools.StorageTool", *args]) as path:
        mode = stat.S_IMODE(path.stat().st_mode)
        text = path.read_text()

    assert mode == 0o600
    assert '"SCRAM-SHA-512=[name=memstream,password=app-pw]"' in text
    assert '"SCRAM-SHA-512=[name=admin,password=admin-pw]"' in text
    assert not path.exists()


def test_the_secure_broker_listens_only_with_sasl_ssl_and_denies_by_default(
    tmp_path: Path,
) -> None:
    files = secure.SecureFiles(StackLayout(tmp_path))
    stack_secrets = secure.StackSecrets("admin-pw", "app-pw", "store-pw")

    props = secure.server_properties(9093, 9094, files, stack_secrets)

    assert props["listeners"] == "SASL_SSL://127.0.0.1:9093,CONTROLLER://127.0.0.1:9094"
    assert props["sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert props["allow.everyone.if.no.acl.found"] == "false"
    assert props["super.users"] == "User:admin"
    assert "StandardAuthorizer" in props["authorizer.class.name"]


def test_the_memstream_principal_gets_no_delete_or_alter_acl() -> None:
    from confluent_kafka.admin import AclOperation

    bindings = secure.app_acl_bindings()

    assert {b.principal for b in bindings} == {"User:memstream"}
    assert not {AclOperation.DELETE, AclOperation.ALTER, AclOperation.ALL} & {
        b.operation for b in bindings
    }


def test_librdkafka_log_lines_go_to_the_memstream_logger_not_to_stderr(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """Given a confluent-kafka client built from confluent_config (here a producer with
    librdkafka's broker debug on, pointed at a closed port), when it logs, then its lines
    reach the memstream.kafka.librdkafka logger and none is written raw to stderr (a demo
    console shows no "%4|…|GETPID|…" line), and that logger shows errors only by default."""
    from confluent_kafka import Producer

    from streams.config.kafka_security import LIBRDKAFKA_LOG

    assert LIBRDKAFKA_LOG.level == logging.ERROR
    config = confluent_config(Settings(kafka_bootstrap="127.0.0.1:1"), report_errors=False)
    with caplog.at_level(logging.DEBUG, logger=LIBRDKAFKA_LOG.name):
        producer = Producer({**config, "debug": "broker"})
        for _ in range(10):
            producer.poll(0.05)
        del producer

    assert any(r.name == LIBRDKAFKA_LOG.name for r in caplog.records)
    assert "|" not in capfd.readouterr().err
