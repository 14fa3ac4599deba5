"""Isolated pipelines for the benchmark phases on the local stack, and the processes they run.

Every phase gets fresh topics (a unique prefix, the run's partition count), its own consumer
group / Faust app id, free metrics ports and, when it projects, a fresh database with the
read-model migrations applied. Processes are started as children and stopped by pid. All of a
run's topics, consumer groups and databases are named ``bench<run id>…``, so the run can
remove them when it ends (bench/cleanup.py; ``--keep`` keeps them for inspection).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from dataclasses import dataclass, field, fields
from pathlib import Path

from memstream.processes import ManagedProcess, start_command
from memstream.stack import LocalStack, StackInfo
from memstream.stack.ports import free_port_ranges
from projections.schema import migrated_database
from streams.config.settings import Settings


class BenchError(RuntimeError):
    """A phase could not complete; the message says what happened and what to do next."""


@dataclass
class Harness:
    """Creates phase pipelines for one benchmark run and owns the processes it starts."""

    base: Settings
    stack: StackInfo
    partitions: int
    # metrics ports kept free per role: one per process of the phases' worker or projector
    port_span: int = 1
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    processes: list[ManagedProcess] = field(default_factory=list)

    @property
    def workdir(self) -> Path:
        return Path(self.base.state_dir) / "bench" / self.run_id

    def pipeline(self, phase: str, database: bool = False) -> Settings:
        """Settings for a fresh pipeline named ``phase``; its topics exist when this returns."""
        name = f"bench{self.run_id}-{phase}"
        worker_port, projector_port = free_port_ranges(self.port_span, 2)
        settings = self.base.with_overrides(
            kafka_bootstrap=self.stack.kafka_bootstrap,
            database_url=self.stack.database_url,
            topic_prefix=f"{name}.",
            partitions=self.partitions,
            app_id=f"{name}-worker",
            projector_group=f"{name}-projector",
            worker_data_dir=self.workdir / phase / "worker-data",
            worker_metrics_port=worker_port,
            projector_metrics_port=projector_port,
            **_memory_store(),
        )
        LocalStack(settings).create_topics(settings.topic_prefix, self.partitions)
        if database:
            settings = self.fresh_database(settings, name.replace("-", "_"))
        return settings

    def fresh_database(self, settings: Settings, dbname: str) -> Settings:
        url = migrated_database(self.stack.database_url, dbname, settings.embedding_dim)
        return settings.with_overrides(database_url=url)

    # -- processes ----------------------------------------------------------------------------

    def start_memstream(self, name: str, args: list[str], settings: Settings) -> ManagedProcess:
        """``memstream <args>`` (``worker`` or ``project``) for ``settings``."""
        process = start_command(name, args, settings, self.workdir / "logs")
        self.processes.append(process)
        return process

    def start_module(self, name: str, module: str, settings: Settings) -> ManagedProcess:
        """``python -m <module>`` with ``settings`` exported (the pass-through baseline)."""
        log_dir = self.workdir / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / f"{name}.log"
        env = {**os.environ, **settings.as_env()}
        with log_path.open("ab") as log:
            popen = subprocess.Popen(
                [sys.executable, "-m", module],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        process = ManagedProcess(name, popen, log_path)
        self.processes.append(process)
        return process

    def stop(self, process: ManagedProcess) -> None:
        process.stop()
        if process in self.processes:
            self.processes.remove(process)

    def stop_all(self) -> None:
        for process in list(self.processes):
            self.stop(process)


def _memory_store() -> dict[str, str]:
    """``table_store="memory://"`` where the settings still have that knob (older workers
    kept Faust tables; the current one keeps its state in memory, rebuilt from the ledger)."""
    names = {f.name for f in fields(Settings)}
    return {"table_store": "memory://"} if "table_store" in names else {}


def check_alive(processes: list[ManagedProcess]) -> None:
    """Raise :class:`BenchError` with the log tail when one of ``processes`` has exited."""
    for process in processes:
        if not process.alive():
            raise BenchError(
                f"the {process.name} (pid {process.pid}) exited with code "
                f"{process.popen.returncode}; its log {process.log_path} ends with:\n"
                f"{process.log_tail(25)}"
            )
