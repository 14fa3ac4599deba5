"""Process settings: environment > ``<state dir>/stack.env`` (written by ``memstream up``) >
defaults, with errors that name the variable to fix. No real environment is read: every test
passes its own mapping and a temporary state dir."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

from streams.config.settings import Settings, SettingsError, read_env_file, write_env_file
from streams.erasure.sealing import retired_master_keys_of


def env_for(state_dir: Path, **values: str) -> dict[str, str]:
    return {
        "MEMSTREAM_STATE_DIR": str(state_dir),
        **{f"MEMSTREAM_{k}": v for k, v in values.items()},
    }


def test_with_nothing_configured_the_documented_defaults_apply(tmp_path: Path) -> None:
    settings = Settings.from_env(env_for(tmp_path))

    assert settings.kafka_bootstrap == "127.0.0.1:9092"
    assert settings.database_url == "postgresql://postgres@127.0.0.1:5432/memstream"
    assert settings.topic_prefix == ""
    assert settings.partitions == 12
    assert settings.embedding_dim == 384
    assert settings.max_content_bytes == 65536
    assert settings.retry_attempts == 3
    assert settings.retry_backoff_seconds == 5.0
    assert (settings.projector_batch_size, settings.projector_batch_ms) == (2000, 20)
    assert settings.producer_batch_bytes == 524_288
    assert (settings.worker_batch_size, settings.worker_batch_ms) == (500, 30)
    assert settings.app_id == "memstream-worker"
    assert settings.state_dir == tmp_path
    assert settings.worker_data_dir == tmp_path / "worker"


def test_environment_variables_override_the_defaults(tmp_path: Path) -> None:
    settings = Settings.from_env(
        env_for(
            tmp_path,
            KAFKA_BOOTSTRAP="kafka:29092",
            PARTITIONS="4",
            EMBEDDING_DIM="768",
            RETRY_BACKOFF_SECONDS="0.5",
            WORKER_DATA_DIR="/data/worker",
            TOPIC_PREFIX="test-",
        )
    )

    assert settings.kafka_bootstrap == "kafka:29092"
    assert settings.partitions == 4
    assert settings.embedding_dim == 768
    assert settings.retry_backoff_seconds == 0.5
    assert settings.worker_data_dir == Path("/data/worker")
    assert settings.topic_prefix == "test-"


def test_unrelated_environment_variables_are_ignored(tmp_path: Path) -> None:
    settings = Settings.from_env({**env_for(tmp_path), "PARTITIONS": "99", "MEMSTREAM_NOPE": "1"})

    assert settings.partitions == 12


def test_the_stack_file_fills_in_what_the_environment_lacks(tmp_path: Path) -> None:
    (tmp_path / "stack.env").write_text(
        "# written by memstream up\n"
        "export MEMSTREAM_KAFKA_BOOTSTRAP='127.0.0.1:39092'\n"
        'MEMSTREAM_DATABASE_URL="postgresql://postgres@127.0.0.1:55432/memstream"\n'
        "\n"
        "export MEMSTREAM_PARTITIONS=6\n"
    )

    settings = Settings.from_env(env_for(tmp_path))

    assert settings.kafka_bootstrap == "127.0.0.1:39092"
    assert settings.database_url == "postgresql://postgres@127.0.0.1:55432/memstream"
    assert settings.partitions == 6


def test_the_environment_wins_over_the_stack_file(tmp_path: Path) -> None:
    write_env_file(tmp_path / "stack.env", {"MEMSTREAM_KAFKA_BOOTSTRAP": "from-file:9092"})

    settings = Settings.from_env(env_for(tmp_path, KAFKA_BOOTSTRAP="from-env:9092"))

    assert settings.kafka_bootstrap == "from-env:9092"


def test_a_stack_file_in_another_state_dir_is_not_read(tmp_path: Path) -> None:
    other = tmp_path / "other"
    write_env_file(other / "stack.env", {"MEMSTREAM_PARTITIONS": "3"})
    mine = tmp_path / "mine"

    assert Settings.from_env(env_for(mine)).partitions == 12


@pytest.mark.parametrize(
    ("name", "raw"),
    [("PARTITIONS", "twelve"), ("EMBEDDING_DIM", "3.5"), ("RETRY_BACKOFF_SECONDS", "soon")],
)
def test_a_malformed_number_is_an_error_naming_the_variable(
    tmp_path: Path, name: str, raw: str
) -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(env_for(tmp_path, **{name: raw}))

    assert f"MEMSTREAM_{name}" in str(caught.value)
    assert raw in str(caught.value)


def test_a_negative_number_is_an_error_naming_the_variable(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="MEMSTREAM_RETRY_ATTEMPTS"):
        Settings.from_env(env_for(tmp_path, RETRY_ATTEMPTS="-1"))


def test_a_producer_batch_larger_than_a_request_is_refused_naming_the_bound(
    tmp_path: Path,
) -> None:
    with pytest.raises(
        SettingsError, match=r"MEMSTREAM_PRODUCER_BATCH_BYTES.*outside 1,024\.\.1,000,000"
    ):
        Settings.from_env(env_for(tmp_path, PRODUCER_BATCH_BYTES="2000000"))


def test_a_content_limit_whose_memories_could_not_fit_a_kafka_record_is_refused(
    tmp_path: Path,
) -> None:
    with pytest.raises(SettingsError, match=r"MEMSTREAM_MAX_CONTENT_BYTES.*outside 1\.\.131,072"):
        Settings.from_env(env_for(tmp_path, MAX_CONTENT_BYTES=str(256 * 1024)))
    assert Settings.from_env(env_for(tmp_path, MAX_CONTENT_BYTES="131072")).max_content_bytes


def test_a_malformed_number_in_the_stack_file_is_an_error_naming_the_variable(
    tmp_path: Path,
) -> None:
    write_env_file(tmp_path / "stack.env", {"MEMSTREAM_PROJECTOR_BATCH_SIZE": "lots"})

    with pytest.raises(SettingsError, match="MEMSTREAM_PROJECTOR_BATCH_SIZE"):
        Settings.from_env(env_for(tmp_path))


def test_settings_errors_are_value_errors() -> None:
    assert issubclass(SettingsError, ValueError)


def test_topic_names_carry_the_prefix(tmp_path: Path) -> None:
    settings = Settings.from_env(env_for(tmp_path, TOPIC_PREFIX="t42."))

    assert settings.events_topic == "t42.memory.events"
    assert settings.ledger_topic == "t42.memory.consolidation"
    assert settings.deadletter_topic == "t42.memory.deadletter"


def test_without_a_prefix_the_topics_have_their_plain_names() -> None:
    settings = Settings()

    assert (settings.events_topic, settings.ledger_topic, settings.deadletter_topic) == (
        "memory.events",
        "memory.consolidation",
        "memory.deadletter",
    )


def test_settings_survive_a_trip_through_their_exports(tmp_path: Path) -> None:
    original = Settings.from_env(
        env_for(tmp_path, TOPIC_PREFIX="p-", PARTITIONS="3")
    ).with_overrides(commit_interval_seconds=0.05, cache_dir=tmp_path / "cache")

    assert Settings.from_env(original.as_env()) == original


def test_an_env_file_written_is_read_back_unchanged(tmp_path: Path) -> None:
    values = {"MEMSTREAM_A": "x=y", "MEMSTREAM_B": "", "MEMSTREAM_C": "/some path/with spaces"}
    path = tmp_path / "nested" / "stack.env"

    write_env_file(path, values)

    assert read_env_file(path) == values


def test_a_missing_env_file_reads_as_empty(tmp_path: Path) -> None:
    assert read_env_file(tmp_path / "absent.env") == {}


# ---- Kafka client security and the metrics bind address (issue 10) --------------------------


def test_kafka_security_defaults_to_plaintext_and_metrics_to_loopback(tmp_path: Path) -> None:
    settings = Settings.from_env(env_for(tmp_path))

    assert settings.kafka_security_protocol == "PLAINTEXT"
    assert settings.kafka_sasl_mechanism == "SCRAM-SHA-512"
    assert settings.kafka_username == settings.kafka_password == ""
    assert settings.kafka_password_file == settings.kafka_ssl_ca_file == ""
    assert settings.metrics_bind == "127.0.0.1"


def test_kafka_security_is_read_from_the_environment_case_insensitively(tmp_path: Path) -> None:
    settings = Settings.from_env(
        env_for(
            tmp_path,
            KAFKA_SECURITY_PROTOCOL="sasl_ssl",
            KAFKA_SASL_MECHANISM="scram-sha-256",
            KAFKA_USERNAME="memstream-worker",
            KAFKA_PASSWORD_FILE="/var/run/secrets/kafka/password",
            KAFKA_SSL_CA_FILE="/var/run/secrets/kafka-ca/ca.crt",
            METRICS_BIND="0.0.0.0",
        )
    )

    assert settings.kafka_security_protocol == "SASL_SSL"
    assert settings.kafka_sasl_mechanism == "SCRAM-SHA-256"
    assert settings.kafka_username == "memstream-worker"
    assert settings.kafka_password_file == "/var/run/secrets/kafka/password"
    assert settings.kafka_ssl_ca_file == "/var/run/secrets/kafka-ca/ca.crt"
    assert settings.metrics_bind == "0.0.0.0"


@pytest.mark.parametrize(
    ("name", "value"),
    [("KAFKA_SECURITY_PROTOCOL", "SASL_TLS"), ("KAFKA_SASL_MECHANISM", "GSSAPI")],
)
def test_an_unknown_security_choice_is_refused_naming_the_variable_and_the_choices(
    tmp_path: Path, name: str, value: str
) -> None:
    with pytest.raises(SettingsError, match=f"MEMSTREAM_{name}") as refused:
        Settings.from_env(env_for(tmp_path, **{name: value}))

    assert "SASL_SSL" in str(refused.value) or "SCRAM-SHA-512" in str(refused.value)


def test_a_password_from_the_environment_is_kept_out_of_the_repr(tmp_path: Path) -> None:
    settings = Settings.from_env(env_for(tmp_path, KAFKA_PASSWORD="hunter2-but-longer"))

    assert settings.kafka_password == "hunter2-but-longer"
    assert "hunter2-but-longer" not in repr(settings)


def test_a_secure_stack_env_file_configures_kafka_security(tmp_path: Path) -> None:
    write_env_file(
        tmp_path / "stack.env",
        {
            "MEMSTREAM_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
            "MEMSTREAM_KAFKA_USERNAME": "memstream",
            "MEMSTREAM_KAFKA_PASSWORD_FILE": str(tmp_path / "secrets" / "memstream.password"),
        },
    )

    settings = Settings.from_env(env_for(tmp_path))

    assert settings.kafka_security_protocol == "SASL_SSL"
    assert settings.kafka_password_file == str(tmp_path / "secrets" / "memstream.password")


def test_retired_master_key_files_must_exist_and_are_read_in_order(tmp_path: Path) -> None:
    """A rotation's retired keys (MEMSTREAM_MASTER_KEY_RETIRED_FILES): a name that is not a
    file stops the process with what to do; the files listed are each read as a key."""
    old, older = tmp_path / "old.key", tmp_path / "older.key"
    secrets = [os.urandom(32), os.urandom(32)]
    for path, secret in zip((old, older), secrets, strict=True):
        path.write_text(base64.b64encode(secret).decode() + "\n")

    with pytest.raises(SettingsError, match="MASTER_KEY_RETIRED_FILES"):
        Settings.from_env(env_for(tmp_path, MASTER_KEY_RETIRED_FILES=str(tmp_path / "gone.key")))
    settings = Settings.from_env(env_for(tmp_path, MASTER_KEY_RETIRED_FILES=f"{old}, {older}"))
    assert [k.secret for k in retired_master_keys_of(settings)] == secrets
