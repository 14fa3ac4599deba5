"""An isolated pipeline on the shared real stack: its own topics, database and processes.

Tests drive the real ``memstream worker`` and ``memstream project`` commands as subprocesses
and read the real read models; nothing here replaces Kafka or PostgreSQL.
"""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from confluent_kafka import Consumer
from prometheus_client.parser import text_string_to_metric_families

from memstream.processes import ManagedProcess, start_command
from memstream.publisher import MemoryPublisher
from memstream.stack import LocalStack
from memstream.stack.ports import free_port_ranges
from memstream.waiting import wait_until
from projections.schema import LAYER_TABLES, ensure_database, migrate, migrated_database
from streams.config.kafka_security import confluent_config
from streams.config.settings import Settings
from streams.engine.model import MemoryEvent
from streams.engine.oracle import OracleRun
from streams.worker_engine import replay_as_worker

PARTITIONS = 4
QUIET_DEFAULT_POLICY = 'profile = "default"\n[triggers]\nperiodic_seconds = 86400\n'


def quiet_profile(name: str) -> str:
    """A built-in profile with periodic ticks pushed out of a test's lifetime."""
    return f'profile = "{name}"\n[triggers]\nperiodic_seconds = 86400\n'


def new_migrated_database(server_url: str, embedding_dim: int = 384) -> str:
    """A new database, under a name of its own, on the server of ``server_url`` with the
    read models migrated; its connection string."""
    return migrated_database(server_url, f"d_{uuid.uuid4().hex[:10]}", embedding_dim)


@dataclass
class Pipeline:
    settings: Settings
    workdir: Path
    processes: dict[str, ManagedProcess] = field(default_factory=dict)
    _publisher: MemoryPublisher | None = None

    @classmethod
    def create(
        cls,
        stack: Any,
        workdir: Path,
        policy_toml: str | None = None,
        partitions: int = PARTITIONS,
    ) -> Pipeline:
        """A pipeline on fresh topics and a fresh database. ``policy_toml`` (a policy
        document) defaults to the default profile with periodic ticks pushed out of the
        test's lifetime, so only the events a test publishes cause decisions."""
        run = uuid.uuid4().hex[:10]
        database_url = ensure_database(stack.database_url, f"t_{run}")
        policy_file = workdir / "policy.toml"
        policy_file.write_text(policy_toml or QUIET_DEFAULT_POLICY)
        # room for two processes of each role (MEMSTREAM_*_PROCESSES): process k serves its
        # role's metrics port + k
        worker_port, projector_port = free_port_ranges(2, 2)
        settings = Settings.from_env({"MEMSTREAM_STATE_DIR": str(stack.state_dir)}).with_overrides(
            kafka_bootstrap=stack.kafka_bootstrap,
            database_url=database_url,
            topic_prefix=f"t{run}.",
            partitions=partitions,
            app_id=f"worker-{run}",
            projector_group=f"projector-{run}",
            worker_data_dir=workdir / "worker-data",
            worker_metrics_port=worker_port,
            projector_metrics_port=projector_port,
            projector_batch_ms=50,
            commit_interval_seconds=0.1,
            retry_backoff_seconds=0.5,
            policy_file=str(policy_file),
            # the model-free embedder: fast, and the oracle (Pipeline.oracle) uses the same
            embedder="HASHING",
        )
        migrate(settings.database_url, settings.embedding_dim, settings.vector_index)
        LocalStack(settings).create_topics(settings.topic_prefix, partitions)
        return cls(settings, workdir)

    # -- processes ----------------------------------------------------------------------------

    def start(self, name: str, args: list[str] | None = None, **overrides: Any) -> ManagedProcess:
        """Start ``memstream <args>`` as ``name``; ``overrides`` change this process's
        settings only (e.g. its own metrics port and data dir, for several workers)."""
        command = args or {"worker": ["worker"], "projector": ["project"]}[name.split("-")[0]]
        settings = self.settings.with_overrides(**overrides) if overrides else self.settings
        process = start_command(name, command, settings, self.workdir / "logs")
        self.processes[name] = process
        return process

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run the real ``memstream`` CLI against this pipeline's settings, as an operator
        would."""
        env = {**os.environ, **self.settings.as_env()}
        return subprocess.run(
            [sys.executable, "-m", "memstream.cli", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    def oracle(self, events: list[MemoryEvent]) -> OracleRun:
        """What the batch oracle decides for ``events``, run with this pipeline's worker's
        engine (policy file, limits, embedder): the stream must reach exactly this."""
        return replay_as_worker(events, self.settings)

    def start_all(self) -> None:
        self.start("worker")
        self.start("projector")

    def close(self) -> None:
        if self._publisher is not None:
            self._publisher.flush()
            self._publisher = None  # drops the librdkafka client before the stack goes down
        for process in self.processes.values():
            process.stop()

    def logs(self) -> str:
        return "\n".join(
            f"--- {name} (pid {p.pid}, alive={p.alive()})\n{p.log_tail(40)}"
            for name, p in self.processes.items()
        )

    # -- Kafka --------------------------------------------------------------------------------

    @property
    def publisher(self) -> MemoryPublisher:
        if self._publisher is None:
            self._publisher = MemoryPublisher(self.settings, source="tests")
        return self._publisher

    def read_topic(self, topic: str, expected: int, timeout: float = 60.0) -> list[Any]:
        """Read the committed records of ``topic`` from the beginning: at least ``expected``,
        and then all that follow them."""
        consumer = Consumer(
            {
                **confluent_config(self.settings),
                "group.id": f"reader-{uuid.uuid4().hex[:8]}",
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
        consumer.subscribe([topic])
        records: list[Any] = []

        def enough() -> bool:
            for message in consumer.consume(500, 0.2):
                if message.error() is None:
                    records.append(message)
            return len(records) >= expected

        try:
            wait_until(
                enough,
                timeout=timeout,
                interval=0,
                what=f"{expected} records on {topic}",
                describe=lambda: f"got {len(records)}\n{self.logs()}",
            )
            while True:  # and whatever follows: extra or doubled records must show too
                more = [m for m in consumer.consume(500, 1.0) if m.error() is None]
                if not more:
                    break
                records.extend(more)
        finally:
            consumer.close()
        return records

    # -- PostgreSQL ---------------------------------------------------------------------------

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.settings.database_url) as conn:
            return conn.execute(sql, params).fetchall()

    def scalar(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        return self.query(sql, params)[0][0]

    def analyze(self) -> None:
        """ANALYZE every table now, as autovacuum does in its own time: what it samples goes
        to pg_statistic, in the database's files, so a scan after an erasure must not depend
        on whether autovacuum happened to run first."""
        with psycopg.connect(self.settings.database_url, autocommit=True) as conn:
            conn.execute("ANALYZE")

    def wait_for_log_count(self, expected: int, timeout: float = 90.0) -> None:
        """Wait until ``expected`` ledger events reached consolidation_log."""
        wait_until(
            lambda: self.scalar("SELECT count(*) FROM consolidation_log") >= expected,
            timeout=timeout,
            what=f"{expected} ledger events in consolidation_log",
            describe=lambda: (
                f"have {self.scalar('SELECT count(*) FROM consolidation_log')}\n{self.logs()}"
            ),
        )

    def wait_for_vacuum_paid(self, timeout: float = 90.0) -> None:
        """Wait until no erasure waits for its vacuum (``memstream_vacuum_due`` is empty): the
        projector paid it, by a rewrite that kept no dead row for an open transaction."""
        wait_until(
            lambda: self.scalar("SELECT count(*) FROM memstream_vacuum_due") == 0,
            timeout=timeout,
            what="the projector to pay the vacuum its erasures owe",
            describe=self.logs,
        )

    def memory_rows(self) -> dict[tuple[str, str, str], tuple[Any, ...]]:
        """(layer, user, memory) -> (version, access_count, content, status, pinned,
        invalid_at, salience, speaker) over all layer tables (see
        tests.workloads.expected_rows)."""
        rows = {}
        for layer, table in LAYER_TABLES.items():
            for user_id, memory_id, *facts in self.query(
                "SELECT user_id, memory_id, version, access_count, content, status, pinned, "
                f"invalid_at, salience, speaker FROM {table}"
            ):
                rows[(layer, user_id, memory_id)] = tuple(facts)
        return rows

    def dump_tables(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every read-model table's full content, ordered, for replay comparisons."""
        tables = [
            *LAYER_TABLES.values(),
            "memory_links",
            "sessions",
            "user_profiles",
            "consolidation_reports",
            "consolidation_log",
        ]
        return {t: self.query(f"SELECT * FROM {t} ORDER BY 1, 2, 3") for t in tables}

    # -- metrics ------------------------------------------------------------------------------

    def metrics(self, process: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        port = (
            self.settings.worker_metrics_port
            if process == "worker"
            else self.settings.projector_metrics_port
        )
        return scrape(port)

    def metric_sum(self, process: str, name: str) -> float:
        return sum(v for (n, _), v in self.metrics(process).items() if n == name)


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """One /metrics scrape: (name, sorted labels) -> value."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def process_running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie, killed and awaiting its reaper, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
