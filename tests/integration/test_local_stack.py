"""The local stack (`memstream up` / `down`) against the real Kafka broker and PostgreSQL.

The integration test uses a fresh state dir but the real jar cache, so the Kafka jars are
downloaded at most once per machine. The pure helpers are tested without starting anything.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest
from confluent_kafka.admin import AdminClient
from psycopg import sql

from memstream.stack import LocalStack, StackError, StackInfo, kafka_broker, postgres
from memstream.stack.commands import add_stack_commands
from memstream.stack.ports import free_port, pick_port, port_is_free
from memstream.stack.stack_state import StackLayout, StackState, load_state, save_state
from projections.schema import LAYER_TABLES
from streams.config.settings import Settings, read_env_file

PARTITIONS = 3
READ_MODEL_TABLES = {*LAYER_TABLES.values(), "memory_links", "sessions", "user_profiles"}


# --- the real stack ---------------------------------------------------------------------------


class Recorder:
    """Collects the progress lines of one call."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str) -> None:
        self.lines.append(line)

    def text(self) -> str:
        return "\n".join(self.lines)


@pytest.fixture()
def stack(tmp_path: Path) -> Iterator[LocalStack]:
    environ = {k: v for k, v in os.environ.items() if k != "MEMSTREAM_STATE_DIR"}
    settings = Settings.from_env({**environ, "MEMSTREAM_STATE_DIR": str(tmp_path / "state")})
    settings = settings.with_overrides(partitions=PARTITIONS, topic_prefix="")
    local = LocalStack(settings)
    try:
        yield local
    finally:
        local.down(progress=lambda _: None)


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def marker(local: LocalStack) -> Path:
    libs = kafka_broker.jars_dir(local.settings.cache_dir, local.kafka_version)
    return libs / kafka_broker.JARS_MARKER


def topic_partitions(bootstrap: str) -> dict[str, int]:
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    return {name: len(t.partitions) for name, t in metadata.topics.items()}


@pytest.mark.integration
def test_up_is_idempotent_and_data_survives_down_up(stack: LocalStack) -> None:
    first = stack.up(progress=Recorder())
    jars_marker = marker(stack)
    assert jars_marker.exists()
    marker_mtime = jars_marker.stat().st_mtime_ns

    # A second up is a no-op: same processes, same addresses, nothing downloaded.
    again_log = Recorder()
    again = stack.up(progress=again_log)
    assert again == first
    assert "already running" in again_log.text()
    assert "resolving" not in again_log.text()
    assert jars_marker.stat().st_mtime_ns == marker_mtime

    # The exports are where Settings.from_env finds them.
    exported = read_env_file(first.state_dir / "stack.env")
    assert exported == first.env()
    found = Settings.from_env({"MEMSTREAM_STATE_DIR": str(first.state_dir)})
    assert found.kafka_bootstrap == first.kafka_bootstrap
    assert found.database_url == first.database_url
    assert found.partitions == PARTITIONS

    # The three topics exist with the configured partitions.
    topics = topic_partitions(first.kafka_bootstrap)
    for name in ("memory.events", "memory.consolidation", "memory.deadletter"):
        assert topics.get(name) == PARTITIONS, topics

    # PostgreSQL has pgvector and the read models; write a row that must survive down/up.
    with psycopg.connect(first.database_url, autocommit=True) as conn:
        version = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        assert version is not None and version[0]
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
        assert {row[0] for row in rows} >= READ_MODEL_TABLES
        # The stack's server settings apply from the first up (a restart inside it).
        assert server_settings(conn) == postgres.SERVER_SETTINGS
        conn.execute(
            "INSERT INTO sessions (user_id, session_id, memory_count) VALUES (%s, %s, %s)",
            ("u-stack-test", "s-1", 7),
        )

    stack.down(progress=Recorder())
    assert gone(first.kafka_pid)
    assert gone(first.postgres_pid)
    assert not stack.status().kafka_alive
    assert not stack.status().postgres_alive

    restart_log = Recorder()
    second = stack.up(progress=restart_log)
    assert "jars: cached" in restart_log.text()
    assert "resolving" not in restart_log.text()
    assert jars_marker.stat().st_mtime_ns == marker_mtime
    assert second.kafka_pid != first.kafka_pid
    assert stack.status().running
    with psycopg.connect(second.database_url) as conn:
        row = conn.execute(
            "SELECT memory_count FROM sessions WHERE user_id = %s AND session_id = %s",
            ("u-stack-test", "s-1"),
        ).fetchone()
        assert server_settings(conn) == postgres.SERVER_SETTINGS
    assert row == (7,)
    assert topic_partitions(second.kafka_bootstrap).get("memory.events") == PARTITIONS


def server_settings(conn: psycopg.Connection) -> dict[str, str]:
    return {
        name: conn.execute(sql.SQL("SHOW {}").format(sql.Identifier(name))).fetchone()[0]
        for name in postgres.SERVER_SETTINGS
    }


@pytest.mark.integration
def test_create_topics_with_a_prefix_is_idempotent(stack: LocalStack) -> None:
    info = stack.up(progress=Recorder())
    stack.create_topics("t1.", 2)
    stack.create_topics("t1.", 2)
    topics = topic_partitions(info.kafka_bootstrap)
    assert {topics.get(name) for name in kafka_broker.topic_names("t1.")} == {2}
    with pytest.raises(StackError, match="partitions"):
        stack.create_topics("t1.", 5)


@pytest.mark.integration
def test_cli_up_prints_exports_and_status(stack: LocalStack) -> None:
    env = {**os.environ, "MEMSTREAM_STATE_DIR": str(stack.layout.state_dir)}
    probe = (
        "import argparse, sys\n"
        "from memstream.stack.commands import add_stack_commands\n"
        "p = argparse.ArgumentParser(); add_stack_commands(p.add_subparsers(required=True))\n"
        "a = p.parse_args(sys.argv[1:]); sys.exit(a.func(a))\n"
    )

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", probe, *args], env=env, capture_output=True, text=True
        )

    up = run("up", "--partitions", str(PARTITIONS))
    assert up.returncode == 0, up.stderr
    assert "export MEMSTREAM_KAFKA_BOOTSTRAP='127.0.0.1:" in up.stdout
    assert "starting broker" in up.stderr
    status = run("status")
    assert status.returncode == 0, status.stdout
    assert "running (pid" in status.stdout
    down = run("down")
    assert down.returncode == 0, down.stderr
    assert run("status").returncode == 3


# --- pure helpers -----------------------------------------------------------------------------


def test_server_properties_is_single_node_kraft_on_localhost(tmp_path: Path) -> None:
    values = kafka_broker.server_properties(19092, 19093, tmp_path / "data")
    assert values["process.roles"] == "broker,controller"
    assert values["controller.quorum.voters"] == "1@127.0.0.1:19093"
    assert values["listeners"] == "PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093"
    assert values["advertised.listeners"] == "PLAINTEXT://127.0.0.1:19092"
    assert values["log.dirs"] == str(tmp_path / "data")
    text = kafka_broker.render_properties({"a.b": "c", "path": "C:\\x"})
    assert "a.b=c\n" in text
    assert "path=C:\\\\x\n" in text


@pytest.mark.parametrize(
    ("output", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15', 17),
        ('openjdk version "21" 2023-09-19', 21),
        ('java version "1.8.0_392"', 8),
        ("garbage", None),
    ],
)
def test_java_major_version(output: str, major: int | None) -> None:
    assert kafka_broker.java_major_version(output) == major


def test_topic_names_and_ledger_retention() -> None:
    assert kafka_broker.topic_names("p.") == [
        "p.memory.events",
        "p.memory.consolidation",
        "p.memory.deadletter",
    ]
    assert kafka_broker.topic_config("p.memory.consolidation", "p.") == {"retention.ms": "-1"}
    assert kafka_broker.topic_config("p.memory.events", "p.") == {}


def test_state_round_trip_and_damaged_file(tmp_path: Path) -> None:
    path = tmp_path / "stack.json"
    assert load_state(path) is None
    state = StackState(kafka_version="4.1.1", kafka_port=1, controller_port=2, kafka_pid=3)
    save_state(path, state)
    assert load_state(path) == state
    path.write_text("{not json")
    assert load_state(path) is None


def test_stack_info_env() -> None:
    info = StackInfo(
        kafka_bootstrap="127.0.0.1:1",
        database_url="postgresql://postgres@/memstream?host=/x",
        kafka_pid=1,
        postgres_pid=2,
        state_dir=Path("/s"),
        partitions=4,
        kafka_version="4.1.1",
        kafka_log=Path("/s/kafka/logs/server.log"),
        pgdata=Path("/s/postgres/pgdata"),
    )
    assert info.env() == {
        "MEMSTREAM_KAFKA_BOOTSTRAP": "127.0.0.1:1",
        "MEMSTREAM_DATABASE_URL": "postgresql://postgres@/memstream?host=/x",
        "MEMSTREAM_STATE_DIR": "/s",
        "MEMSTREAM_PARTITIONS": "4",
    }


def test_layout_under_state_dir(tmp_path: Path) -> None:
    layout = StackLayout(tmp_path)
    assert layout.server_properties == tmp_path / "kafka" / "server.properties"
    assert layout.pgdata == tmp_path / "postgres" / "pgdata"
    assert layout.state_file.name == "stack.json"
    assert layout.env_file.name == "stack.env"


def test_ports_reuse_a_free_port_and_replace_a_taken_one() -> None:
    port = free_port()
    assert port_is_free(port)
    assert pick_port(port) == (port, True)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        assert not port_is_free(busy)
        other, reused = pick_port(busy)
        assert not reused and other != busy


def test_wait_until_ready_fails_fast_when_the_process_died(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("line one\nERROR java.net.BindException: Address already in use\n")
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    with pytest.raises(kafka_broker.BrokerDied) as died:
        kafka_broker.wait_until_ready(f"127.0.0.1:{free_port()}", proc.pid, [log], timeout=30)
    assert "Address already in use" in str(died.value)
    assert died.value.port_in_use


def test_commands_register_up_down_status() -> None:
    parser = argparse.ArgumentParser()
    add_stack_commands(parser.add_subparsers(required=True))
    args = parser.parse_args(["up", "--kafka-port", "19092", "--partitions", "3"])
    assert (args.kafka_port, args.partitions) == (19092, 3)
    assert callable(args.func)
    assert callable(parser.parse_args(["down"]).func)
    assert callable(parser.parse_args(["status"]).func)
    with pytest.raises(SystemExit):
        parser.parse_args(["up", "--partitions", "0"])
