"""`memstream up --registry` (memstream/stack/apicurio.py) without starting anything: the
flag reaches the stack, the registry's URL is exported to every later command only while it
runs, a pid is stopped only when it is this state dir's registry, and the bundle comes from
Maven Central with none of the app's own dependencies."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path

from memstream.cli import build_parser
from memstream.stack.apicurio import (
    APICURIO_VERSION,
    CCOMPAT_PATH,
    LocalRegistry,
    RegistryState,
)
from memstream.stack.stack_state import StackInfo

POM = "{http://maven.apache.org/POM/4.0.0}"


def test_up_takes_a_registry_flag() -> None:
    args = build_parser().parse_args(["up", "--registry"])

    assert args.registry is True
    assert build_parser().parse_args(["up"]).registry is False


def test_the_registry_url_is_the_confluent_compatible_api_on_loopback() -> None:
    state = RegistryState(APICURIO_VERSION, 18081, 42)

    assert state.url == f"http://127.0.0.1:18081{CCOMPAT_PATH}"


def test_stack_env_exports_the_registry_only_when_it_runs(tmp_path: Path) -> None:
    base = dict(
        kafka_bootstrap="127.0.0.1:1",
        database_url="postgresql://x",
        kafka_pid=1,
        postgres_pid=2,
        state_dir=tmp_path,
        partitions=4,
        kafka_version="4.1.1",
        kafka_log=tmp_path / "log",
        pgdata=tmp_path / "pg",
    )
    url = f"http://127.0.0.1:18081{CCOMPAT_PATH}"

    with_registry = StackInfo(**base, schema_registry_url=url).env()  # type: ignore[arg-type]
    without = StackInfo(**base).env()  # type: ignore[arg-type]

    assert with_registry["MEMSTREAM_SCHEMA_REGISTRY_URL"] == url
    assert "MEMSTREAM_SCHEMA_REGISTRY_URL" not in without


def test_a_process_that_is_not_this_state_dir_s_registry_is_never_ours(tmp_path: Path) -> None:
    registry = LocalRegistry(tmp_path, tmp_path / "cache")
    # a live process that is not the registry: it waits on its stdin until killed
    sleeper = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        assert not registry.is_ours(sleeper.pid)
        assert not registry.is_ours(os.getpid())
        assert not registry.is_ours(None)
    finally:
        sleeper.kill()
        sleeper.wait()


def test_down_without_a_recorded_registry_stops_nothing(tmp_path: Path) -> None:
    said: list[str] = []

    LocalRegistry(tmp_path, tmp_path / "cache").down(progress=said.append)

    assert said == []


def test_the_bundle_pom_fetches_only_the_all_tar_gz_without_transitive_dependencies() -> None:
    text = resources.files("memstream.stack").joinpath("apicurio-pom.xml").read_text()
    dependency = ET.fromstring(text).find(f"{POM}dependencies/{POM}dependency")
    assert dependency is not None

    assert dependency.findtext(f"{POM}artifactId") == "apicurio-registry-app"
    assert dependency.findtext(f"{POM}classifier") == "all"
    assert dependency.findtext(f"{POM}type") == "tar.gz"
    exclusion = dependency.find(f"{POM}exclusions/{POM}exclusion")
    assert exclusion is not None and exclusion.findtext(f"{POM}artifactId") == "*"
    assert f"<apicurio.version>{APICURIO_VERSION}</apicurio.version>" in text
