"""Shared fixtures. Integration tests get ONE real local stack (Kafka broker + PostgreSQL)
per test session, started in a temporary state dir on free ports and stopped at the end;
each test then gets its own topics (a unique prefix), database, worker and projector."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest

warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from memstream.stack import LocalStack
    from streams.config.settings import Settings

    state_dir = tmp_path_factory.mktemp("stack")
    settings = Settings.from_env(
        {"MEMSTREAM_STATE_DIR": str(state_dir), "MEMSTREAM_PARTITIONS": "4"}
    )
    local = LocalStack(settings)
    info = local.up(progress=lambda _message: None)
    try:
        yield info
    finally:
        local.down(progress=lambda _message: None)


@pytest.fixture(scope="session")
def schema_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """ONE real local Schema Registry (Apicurio, as `memstream up --registry` runs it) for the
    session's tests that need one, started on first use: the `stack` fixture never waits for
    it. A test may stop and start it (an outage); it is stopped, by pid, at the end."""
    import os
    from pathlib import Path

    from memstream.stack.apicurio import LocalRegistry
    from streams.config.settings import default_cache_dir

    state_dir = tmp_path_factory.mktemp("registry")
    cache_dir = Path(os.environ.get("MEMSTREAM_CACHE_DIR") or default_cache_dir())
    registry = LocalRegistry(state_dir, cache_dir)
    registry.up(progress=lambda _message: None)
    try:
        yield registry
    finally:
        registry.down(progress=lambda _message: None)


@pytest.fixture
def database(stack: object) -> str:
    """A new database on the stack's PostgreSQL with the read models migrated."""
    from tests.support import new_migrated_database

    return new_migrated_database(stack.database_url)  # type: ignore[attr-defined]


@pytest.fixture
def pipeline(stack: object, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from tests.support import Pipeline

    p = Pipeline.create(stack, tmp_path_factory.mktemp("pipeline"))
    try:
        yield p
    finally:
        p.close()


@pytest.fixture
def sealed(stack: object, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A pipeline whose processes seal personal fields, under a master key made for it."""
    import base64
    import os

    from tests.support import Pipeline

    p = Pipeline.create(stack, tmp_path_factory.mktemp("sealed"))
    p.settings = p.settings.with_overrides(
        master_key=base64.b64encode(os.urandom(32)).decode("ascii")
    )
    try:
        yield p
    finally:
        p.close()


@pytest.fixture
def profile_pipeline(
    stack: object, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[object]:
    """A running pipeline under the built-in profile named by ``indirect`` parametrisation,
    with periodic ticks pushed out of the test's lifetime."""
    from tests.support import Pipeline, quiet_profile

    p = Pipeline.create(stack, tmp_path_factory.mktemp("seed"), quiet_profile(request.param))
    p.start_all()
    try:
        yield p
    finally:
        p.close()
