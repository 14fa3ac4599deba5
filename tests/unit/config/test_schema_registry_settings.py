"""The wire-format and Schema Registry settings (README, Configuration): each value checked,
and the ones that only make sense together refused apart, with the variable to fix named."""

from __future__ import annotations

import pytest

from streams.config.settings import Settings, SettingsError

REGISTRY = {"MEMSTREAM_SCHEMA_REGISTRY_URL": "http://127.0.0.1:8081/apis/ccompat/v7"}


def settings(tmp_path: object, **env: str) -> Settings:
    return Settings.from_env({"MEMSTREAM_STATE_DIR": str(tmp_path), **env})


def test_the_default_is_single_object_with_no_registry(tmp_path: object) -> None:
    got = settings(tmp_path)

    assert got.wire_format == "SINGLE-OBJECT"
    assert got.schema_registry_url == ""


def test_the_wire_format_is_read_case_insensitively(tmp_path: object) -> None:
    assert settings(tmp_path, MEMSTREAM_WIRE_FORMAT="confluent", **REGISTRY).wire_format == (
        "CONFLUENT"
    )


def test_an_unknown_wire_format_names_the_choices(tmp_path: object) -> None:
    with pytest.raises(SettingsError, match="MEMSTREAM_WIRE_FORMAT='protobuf'.*CONFLUENT"):
        settings(tmp_path, MEMSTREAM_WIRE_FORMAT="protobuf")


def test_confluent_without_a_registry_says_how_to_get_one(tmp_path: object) -> None:
    with pytest.raises(SettingsError, match="MEMSTREAM_SCHEMA_REGISTRY_URL.*--registry"):
        settings(tmp_path, MEMSTREAM_WIRE_FORMAT="CONFLUENT")


def test_a_registry_url_must_be_http_or_https(tmp_path: object) -> None:
    with pytest.raises(SettingsError, match="not an http"):
        settings(tmp_path, MEMSTREAM_SCHEMA_REGISTRY_URL="registry:8081")


def test_a_password_and_a_password_file_are_not_both_set(tmp_path: object) -> None:
    with pytest.raises(SettingsError, match="not both"):
        settings(
            tmp_path,
            MEMSTREAM_SCHEMA_REGISTRY_USERNAME="analytics",
            MEMSTREAM_SCHEMA_REGISTRY_PASSWORD="secret",
            MEMSTREAM_SCHEMA_REGISTRY_PASSWORD_FILE="/run/secrets/registry",
            **REGISTRY,
        )


def test_a_password_needs_a_username(tmp_path: object) -> None:
    with pytest.raises(SettingsError, match="MEMSTREAM_SCHEMA_REGISTRY_USERNAME"):
        settings(tmp_path, MEMSTREAM_SCHEMA_REGISTRY_PASSWORD="secret", **REGISTRY)


def test_a_client_certificate_needs_its_key(tmp_path: object) -> None:
    with pytest.raises(SettingsError, match="both or neither"):
        settings(tmp_path, MEMSTREAM_SCHEMA_REGISTRY_SSL_CERT_FILE="/tls/client.pem", **REGISTRY)


def test_the_wait_is_bounded(tmp_path: object) -> None:
    with pytest.raises(SettingsError, match="MEMSTREAM_SCHEMA_REGISTRY_WAIT_SECONDS"):
        settings(tmp_path, MEMSTREAM_SCHEMA_REGISTRY_WAIT_SECONDS="-1")


def test_the_password_is_never_in_an_error_nor_the_repr(tmp_path: object) -> None:
    got = settings(
        tmp_path,
        MEMSTREAM_SCHEMA_REGISTRY_USERNAME="analytics",
        MEMSTREAM_SCHEMA_REGISTRY_PASSWORD="hunter2",
        **REGISTRY,
    )

    assert "hunter2" not in repr(got)
