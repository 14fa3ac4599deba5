"""The real Apache Kafka broker of the local stack: jars, configuration, process, topics.

The broker's jars are resolved from Maven Central with ``mvn`` into
``<cache dir>/kafka/<version>/libs`` once; a marker file written only after ``mvn`` succeeded
makes later runs skip the download (an interrupted download is redone). The broker runs as one
single-node KRaft process (broker + controller) on 127.0.0.1, detached from the caller so that it
outlives ``memstream up``.
This module must never stop a process it cannot identify as a broker of the given
``server.properties``, and must never listen on anything but 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import psutil
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from memstream.stack.ports import port_accepts
from memstream.stack.secure import argfile, write_private
from memstream.stack.stack_state import StackError, file_lock

DEFAULT_KAFKA_VERSION = "4.1.1"
MIN_JAVA_MAJOR = 17
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
JARS_MARKER = ".complete"
MAIN_CLASS = "kafka.Kafka"
STORAGE_TOOL = "kafka.tools.StorageTool"
JVM_OPTIONS = ("-Xms256m", "-Xmx512m", "-XX:+UseG1GC", "-Djava.awt.headless=true")
ADDRESS_IN_USE = "Address already in use"

Progress = Callable[[str], None]

# The ledger is the single source of truth (docs/analytics.md, 'The ledger and `memstream tail`'):
# it is never deleted by age.
TOPIC_CONFIGS: dict[str, dict[str, str]] = {
    "memory.consolidation": {"retention.ms": "-1"},
}


# --- Java and Maven ---------------------------------------------------------------------------


def find_java() -> str:
    """The ``java`` executable (``$JAVA_HOME/bin/java`` first), checked to be 17 or newer."""
    java_home = os.environ.get("JAVA_HOME")
    candidate = Path(java_home) / "bin" / "java" if java_home else None
    java = str(candidate) if candidate and candidate.exists() else shutil.which("java")
    if java is None:
        raise StackError(
            "Java not found: install a JDK 17+ (apt-get install openjdk-17-jre-headless) "
            "or set JAVA_HOME"
        )
    major = java_major_version(_java_version_text(java))
    if major is not None and major < MIN_JAVA_MAJOR:
        raise StackError(
            f"{java} is Java {major}; Kafka needs Java {MIN_JAVA_MAJOR}+: install "
            "openjdk-17-jre-headless (or newer) and put it first on PATH or in JAVA_HOME"
        )
    return java


def _java_version_text(java: str) -> str:
    try:
        done = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise StackError(f"could not run `{java} -version`: {exc}") from exc
    return done.stderr + done.stdout


def java_major_version(version_text: str) -> int | None:
    """Parse ``java -version`` output: ``"17.0.15"`` → 17, ``"1.8.0_392"`` → 8."""
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version_text)
    if not match:
        return None
    major = int(match.group(1))
    if major == 1 and match.group(2):
        return int(match.group(2))
    return major


def find_maven() -> str:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise StackError(
            "Maven not found: install it (apt-get install maven); it downloads the Kafka broker "
            "jars from Maven Central once"
        )
    return mvn


# --- jars -------------------------------------------------------------------------------------


def jars_dir(cache_dir: Path, version: str) -> Path:
    return cache_dir / "kafka" / version / "libs"


def jars_cached(cache_dir: Path, version: str) -> bool:
    return (jars_dir(cache_dir, version) / JARS_MARKER).exists()


def resolve_jars(cache_dir: Path, version: str, progress: Progress) -> Path:
    """Return the directory holding the broker's jars, downloading them with Maven if needed."""
    libs = jars_dir(cache_dir, version)
    with file_lock(libs.parent / ".lock"):
        if jars_cached(cache_dir, version):
            progress(f"kafka {version} jars: cached in {libs}")
            return libs
        mvn = find_maven()
        progress(f"kafka {version} jars: resolving from Maven Central into {libs} (once) ...")
        if libs.exists():
            shutil.rmtree(libs)  # a download that was interrupted: start over
        libs.mkdir(parents=True)
        pom = libs.parent / "pom.xml"
        pom.write_bytes(resources.files(__package__).joinpath("kafka-pom.xml").read_bytes())
        _run_maven(mvn, pom, libs, version)
        count = len(list(libs.glob("*.jar")))
        (libs / JARS_MARKER).write_text(f"{version}\n{count} jars\n")
        progress(f"kafka {version} jars: {count} resolved")
        return libs


def _run_maven(mvn: str, pom: Path, libs: Path, version: str) -> None:
    command = [
        mvn,
        "-q",
        "-B",
        "-Dstyle.color=never",
        "dependency:copy-dependencies",
        f"-DoutputDirectory={libs}",
        "-DincludeScope=runtime",
        f"-Dkafka.version={version}",
        "-f",
        str(pom),
    ]
    try:
        done = subprocess.run(
            command, cwd=pom.parent, capture_output=True, text=True, timeout=900, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise StackError(
            "Maven did not finish resolving the Kafka jars in 15 minutes: check the network "
            "access to Maven Central (or a mirror in ~/.m2/settings.xml) and run `memstream up` "
            "again"
        ) from exc
    if done.returncode != 0 or not list(libs.glob("kafka_2.13-*.jar")):
        tail = _tail_text(done.stdout + done.stderr, 20)
        raise StackError(
            f"Maven could not resolve Kafka {version} (exit {done.returncode}): check the "
            f"version exists on Maven Central and the network/proxy settings, then run "
            f"`memstream up` again. Maven said:\n{tail}"
        )


def classpath(libs: Path) -> str:
    return f"{libs}/*"


# --- configuration and storage ----------------------------------------------------------------


def server_properties(port: int, controller_port: int, data_dir: Path) -> dict[str, str]:
    """The single-node KRaft configuration (broker and controller in one process)."""
    return {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(data_dir),
        "num.partitions": "1",
        "auto.create.topics.enable": "true",
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
    }


def write_properties(path: Path, values: Mapping[str, str]) -> None:
    """Write ``server.properties`` readable by its owner only: in secure mode it holds the
    broker's JAAS and keystore passwords."""
    write_private(path, render_properties(values))


def render_properties(values: Mapping[str, str]) -> str:
    """Java ``.properties`` text; backslashes and separators in values are escaped."""
    lines = ["# Written by `memstream up`; rewritten on every start."]
    for key, value in values.items():
        escaped = value.replace("\\", "\\\\").replace("\n", "\\n")
        lines.append(f"{key}={escaped}")
    return "\n".join(lines) + "\n"


def storage_formatted(data_dir: Path) -> bool:
    return (data_dir / "meta.properties").exists()


def format_storage(
    java: str,
    libs: Path,
    properties: Path,
    data_dir: Path,
    secret_args: list[str] | None = None,
    private_dir: Path | None = None,
) -> str:
    """Format the KRaft log directory once with a new cluster id; return that id.

    ``secret_args`` (e.g. ``--add-scram`` with passwords) go through a ``java @argfile`` in
    ``private_dir`` so they never appear on a command line."""
    cluster_id = _run_tool(java, libs, [STORAGE_TOOL, "random-uuid"]).strip().splitlines()[-1]
    format_args = [STORAGE_TOOL, "format", "-t", cluster_id, "-c", str(properties)]
    if secret_args:
        with argfile(private_dir or properties.parent, [*format_args, *secret_args]) as path:
            _run_tool(java, libs, [f"@{path}"], shown=format_args)
    else:
        _run_tool(java, libs, format_args)
    if not storage_formatted(data_dir):
        raise StackError(f"formatting the Kafka storage left no meta.properties in {data_dir}")
    return cluster_id


def _run_tool(java: str, libs: Path, args: list[str], shown: list[str] | None = None) -> str:
    command = [java, "-cp", classpath(libs), *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise StackError(
            f"`{' '.join(shown or args)}` failed (exit {done.returncode}); if the jar cache is "
            f"damaged, delete {libs.parent} and run `memstream up` again:\n"
            f"{_tail_text(done.stdout + done.stderr, 20)}"
        )
    return done.stdout


# --- the broker process -----------------------------------------------------------------------


def broker_command(
    java: str, libs: Path, properties: Path, logs_dir: Path, log_config: Path
) -> list[str]:
    return [
        java,
        *JVM_OPTIONS,
        f"-Dkafka.logs.dir={logs_dir}",
        f"-Dlog4j2.configurationFile={log_config}",
        "-cp",
        classpath(libs),
        MAIN_CLASS,
        str(properties),
    ]


def start_broker(java: str, libs: Path, properties: Path, logs_dir: Path, console_log: Path) -> int:
    """Start the broker detached (own session, stdin closed, output to ``console_log``);
    return its pid. The broker keeps running after this Python process exits."""
    logs_dir.mkdir(parents=True, exist_ok=True)
    log_config = logs_dir.parent / "log4j2.yaml"
    log_config.write_bytes(resources.files(__package__).joinpath("kafka-log4j2.yaml").read_bytes())
    argv = broker_command(java, libs, properties, logs_dir, log_config)
    write_flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    file_actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, str(console_log), write_flags, 0o644),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    return os.posix_spawn(java, argv, dict(os.environ), file_actions=file_actions, setsid=True)


def pid_alive(pid: int | None) -> bool:
    """True while ``pid`` runs (a zombie counts as gone; a child of ours is reaped here)."""
    if not pid:
        return False
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def is_broker_of(pid: int | None, properties: Path) -> bool:
    """True when ``pid`` is alive and is a Kafka broker started with ``properties``."""
    if not pid_alive(pid):
        return False
    try:
        cmdline = psutil.Process(pid).cmdline()
    except psutil.Error:
        return False
    return MAIN_CLASS in cmdline and str(properties) in cmdline


def find_brokers_of(properties: Path) -> list[int]:
    """Pids of every running broker started with ``properties`` (for when stack.json is lost)."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        if MAIN_CLASS in cmdline and str(properties) in cmdline and pid_alive(proc.pid):
            found.append(proc.pid)
    return found


def stop_process(pid: int, timeout: float = STOP_TIMEOUT_S) -> bool:
    """SIGTERM, wait up to ``timeout`` s, then SIGKILL. Return True if SIGKILL was needed."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if _wait_gone(pid, timeout):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    if not _wait_gone(pid, 10.0):
        raise StackError(f"process {pid} survived SIGKILL; check it with `ps -p {pid}`")
    return True


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# --- talking to the broker --------------------------------------------------------------------


ClientConfig = Mapping[str, Any]


def admin_client(bootstrap: str, client: ClientConfig | None = None) -> AdminClient:
    """An admin client of ``bootstrap``; ``client`` adds the security properties (the secure
    stack's admin principal) from :func:`streams.config.kafka_security.confluent_config`."""
    # log_level 0: librdkafka would otherwise print every refused connection while we poll.
    return AdminClient({**(client or {}), "bootstrap.servers": bootstrap, "log_level": 0})


def broker_answers(
    bootstrap: str, timeout: float = 5.0, client: ClientConfig | None = None
) -> bool:
    """True when a real metadata request to ``bootstrap`` succeeds within ``timeout`` s."""
    port = int(bootstrap.rsplit(":", 1)[1])
    if not port_accepts(port):
        return False
    try:
        admin_client(bootstrap, client).list_topics(timeout=timeout)
    except KafkaException:
        return False
    return True


def wait_until_ready(
    bootstrap: str,
    pid: int,
    log_files: list[Path],
    timeout: float = READY_TIMEOUT_S,
    client_config: ClientConfig | None = None,
) -> None:
    """Wait until the broker answers a metadata request; fail fast if its process died."""
    deadline = time.monotonic() + timeout
    port = int(bootstrap.rsplit(":", 1)[1])
    client: AdminClient | None = None
    while True:
        if not pid_alive(pid):
            raise BrokerDied(
                f"the Kafka broker (pid {pid}) exited while starting; last log lines:\n"
                f"{last_log_lines(log_files)}",
                log_tail=last_log_lines(log_files, 200),
            )
        if port_accepts(port):
            client = client or admin_client(bootstrap, client_config)
            try:
                client.list_topics(timeout=2.0)
                return
            except KafkaException:
                pass
        if time.monotonic() > deadline:
            raise StackError(
                f"Kafka did not become ready in {timeout:.0f} s; last log lines:\n"
                f"{last_log_lines(log_files)}"
            )
        time.sleep(0.2)


class BrokerDied(StackError):
    """The broker process exited during start-up."""

    def __init__(self, message: str, log_tail: str = "") -> None:
        super().__init__(message)
        self.log_tail = log_tail

    @property
    def port_in_use(self) -> bool:
        return ADDRESS_IN_USE in self.log_tail


def last_log_lines(paths: list[Path], count: int = 20) -> str:
    chunks = []
    for path in paths:
        if path.exists():
            tail = _tail_text(path.read_text(errors="replace"), count)
            if tail.strip():
                chunks.append(f"--- {path} ---\n{tail}")
    return "\n".join(chunks) or "(no log output)"


def _tail_text(text: str, count: int) -> str:
    return "\n".join(text.rstrip().splitlines()[-count:])


# --- topics -----------------------------------------------------------------------------------


def topic_names(prefix: str) -> list[str]:
    return [f"{prefix}memory.events", f"{prefix}memory.consolidation", f"{prefix}memory.deadletter"]


def topic_config(name: str, prefix: str) -> dict[str, str]:
    return dict(TOPIC_CONFIGS.get(name.removeprefix(prefix), {}))


def list_topics(
    bootstrap: str, timeout: float = 10.0, client: ClientConfig | None = None
) -> dict[str, int]:
    """Topic name → partition count, as the broker reports it now."""
    metadata = admin_client(bootstrap, client).list_topics(timeout=timeout)
    return {name: len(topic.partitions) for name, topic in metadata.topics.items()}


def ensure_topics(
    bootstrap: str,
    prefix: str,
    partitions: int,
    timeout: float = READY_TIMEOUT_S,
    client: ClientConfig | None = None,
) -> list[str]:
    """Create the three memstream topics that do not exist yet; return the names created.

    An existing topic with another partition count is an error: per-user ordering and the
    Faust tables depend on it, so it is never changed silently.
    """
    if partitions < 1:
        raise StackError(f"partitions must be at least 1, got {partitions}")
    admin = admin_client(bootstrap, client)
    wanted = topic_names(prefix)
    existing = _partition_counts(admin, timeout)
    missing = [name for name in wanted if name not in existing]
    _check_partitions(existing, wanted, partitions)
    if missing:
        new = [NewTopic(name, partitions, 1, config=topic_config(name, prefix)) for name in missing]
        for name, future in admin.create_topics(new, request_timeout=timeout).items():
            try:
                future.result(timeout=timeout)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise StackError(f"could not create topic {name}: {exc}") from exc
    _wait_for_topics(admin, wanted, partitions, timeout)
    return missing


def _partition_counts(client: AdminClient, timeout: float) -> dict[str, int]:
    try:
        metadata = client.list_topics(timeout=timeout)
    except KafkaException as exc:
        raise StackError(
            f"Kafka does not answer: {exc}; check `memstream status` or run `memstream up`"
        ) from exc
    return {name: len(topic.partitions) for name, topic in metadata.topics.items()}


def _check_partitions(existing: dict[str, int], wanted: list[str], partitions: int) -> None:
    for name in wanted:
        if name in existing and existing[name] != partitions:
            raise StackError(
                f"topic {name} exists with {existing[name]} partitions, not {partitions}: "
                f"use --partitions {existing[name]} (MEMSTREAM_PARTITIONS), or another "
                f"MEMSTREAM_TOPIC_PREFIX, or `memstream down` and delete the state dir"
            )


def _wait_for_topics(
    client: AdminClient, names: list[str], partitions: int, timeout: float
) -> None:
    """Wait until the metadata shows every topic with all partitions led by a broker."""
    deadline = time.monotonic() + timeout
    while True:
        metadata = client.list_topics(timeout=timeout)
        ready = all(
            name in metadata.topics
            and metadata.topics[name].error is None
            and len(metadata.topics[name].partitions) == partitions
            and all(p.leader >= 0 for p in metadata.topics[name].partitions.values())
            for name in names
        )
        if ready:
            return
        if time.monotonic() > deadline:
            raise StackError(
                f"topics {names} were not all ready after {timeout:.0f} s; check the broker log"
            )
        time.sleep(0.1)
