"""The local stack's Schema Registry: Apicurio Registry, Confluent-compatible API.

Like the broker: the bundle (``io.apicurio:apicurio-registry-app``, classifier ``all``, a
``tar.gz`` of a Quarkus ``-runner.jar`` and ``lib/``, ~142 MB) is resolved from Maven Central
with ``mvn`` into ``<cache dir>/apicurio/<version>`` once (a marker written after the unpack
makes later runs skip it); it runs as one detached ``java -jar`` on 127.0.0.1 on a free port,
recorded by pid in ``<state dir>/registry/registry.json``, health-checked on start, stopped
by ``memstream down``. Its storage is an H2 file under the state dir (Apicurio's own in-memory
default would give every schema a new id after a restart, and the ledger's records keep the
ids they were written with), so a restarted registry serves the same ids.
Clients use ``http://127.0.0.1:<port>/apis/ccompat/v7`` (``MEMSTREAM_SCHEMA_REGISTRY_URL``).
This module must never stop a process it cannot identify as this state dir's registry, and
must never listen on anything but 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

import psutil

from memstream.stack.kafka_broker import find_java, find_maven, pid_alive, stop_process
from memstream.stack.ports import LOCALHOST, pick_port
from memstream.stack.stack_state import StackError, file_lock

APICURIO_VERSION = "2.6.13.Final"
READY_TIMEOUT_S = 120.0
MARKER = ".complete"
CCOMPAT_PATH = "/apis/ccompat/v7"
IDENTITY_PROPERTY = "-Dmemstream.registry.dir="  # how a pid is known to be ours
JVM_OPTIONS = ("-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-Djava.awt.headless=true")

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RegistryState:
    """``registry.json``: what ``up`` started. ``pid`` is None once stopped."""

    version: str
    port: int
    pid: int | None = None

    @property
    def url(self) -> str:
        return f"http://{LOCALHOST}:{self.port}{CCOMPAT_PATH}"


def bundle_dir(cache_dir: Path, version: str = APICURIO_VERSION) -> Path:
    return cache_dir / "apicurio" / version


def runner_jar(bundle: Path) -> Path | None:
    found = sorted(bundle.glob("*-runner.jar"))
    return found[0] if found else None


def resolve_bundle(cache_dir: Path, version: str, progress: Progress) -> Path:
    """The unpacked bundle's directory, fetched with Maven (once per machine) if needed."""
    bundle = bundle_dir(cache_dir, version)
    with file_lock(bundle.parent / ".lock"):
        if (bundle / MARKER).exists() and runner_jar(bundle) is not None:
            progress(f"schema registry: Apicurio {version} cached in {bundle}")
            return bundle
        progress(f"schema registry: fetching Apicurio {version} (~142 MB, once) into {bundle} ...")
        if bundle.exists():
            shutil.rmtree(bundle)  # an interrupted download: start over
        download = bundle.parent / f".download-{version}"
        shutil.rmtree(download, ignore_errors=True)
        download.mkdir(parents=True)
        pom = download / "pom.xml"
        pom.write_bytes(resources.files(__package__).joinpath("apicurio-pom.xml").read_bytes())
        _run_maven(find_maven(), pom, download, version)
        archives = sorted(download.glob("apicurio-registry-app-*.tar.gz"))
        if not archives:
            raise StackError(f"Maven left no Apicurio archive in {download}")
        staging = bundle.parent / f".unpack-{version}"
        shutil.rmtree(staging, ignore_errors=True)
        with tarfile.open(archives[0]) as archive:
            archive.extractall(staging, filter="data")
        os.replace(staging, bundle)
        shutil.rmtree(download, ignore_errors=True)
        if runner_jar(bundle) is None:
            raise StackError(f"the Apicurio bundle in {bundle} has no -runner.jar")
        (bundle / MARKER).write_text(f"{version}\n")
        progress(f"schema registry: Apicurio {version} unpacked")
        return bundle


def _run_maven(mvn: str, pom: Path, out: Path, version: str) -> None:
    command = [
        mvn,
        "-q",
        "-B",
        "-Dstyle.color=never",
        "dependency:copy-dependencies",
        "-DexcludeTransitive=true",
        f"-DoutputDirectory={out}",
        f"-Dapicurio.version={version}",
        "-f",
        str(pom),
    ]
    try:
        done = subprocess.run(
            command, cwd=out, capture_output=True, text=True, timeout=1800, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise StackError(
            "Maven did not fetch the Apicurio Registry bundle in 30 minutes: check the access to "
            "Maven Central and run `memstream up --registry` again"
        ) from exc
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-20:])
        raise StackError(
            f"Maven could not fetch io.apicurio:apicurio-registry-app:{version} (exit "
            f"{done.returncode}): check the network/proxy settings and run `memstream up "
            f"--registry` again. Maven said:\n{tail}"
        )


class LocalRegistry:
    """Starts, stops and describes the registry kept in ``<state dir>/registry``."""

    def __init__(self, state_dir: Path, cache_dir: Path, version: str = APICURIO_VERSION):
        self.dir = Path(state_dir).expanduser().absolute() / "registry"
        self.cache_dir = Path(cache_dir).expanduser()
        self.version = version

    @property
    def state_file(self) -> Path:
        return self.dir / "registry.json"

    @property
    def console_log(self) -> Path:
        return self.dir / "console.log"

    def state(self) -> RegistryState | None:
        try:
            return RegistryState(**json.loads(self.state_file.read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def _save(self, state: RegistryState) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_name("registry.json.tmp")
        tmp.write_text(json.dumps(asdict(state), indent=2) + "\n")
        os.replace(tmp, self.state_file)

    def running(self) -> RegistryState | None:
        """The recorded registry when its process is alive and ours."""
        state = self.state()
        if state is not None and self.is_ours(state.pid):
            return state
        return None

    def is_ours(self, pid: int | None) -> bool:
        if not pid_alive(pid):
            return False
        try:
            cmdline = psutil.Process(pid).cmdline()
        except psutil.Error:
            return False
        return f"{IDENTITY_PROPERTY}{self.dir}" in cmdline

    def up(self, progress: Progress = print, port: int | None = None) -> RegistryState:
        """Start the registry unless it runs; return how to reach it once it answers."""
        with file_lock(self.dir / ".lock"):
            current = self.running()
            if current is not None:
                wait_until_ready(current, self.console_log)
                progress(f"schema registry: already running (pid {current.pid}) at {current.url}")
                return current
            java = find_java()
            bundle = resolve_bundle(self.cache_dir, self.version, progress)
            previous = self.state()
            chosen, _ = pick_port(port or (previous.port if previous else None))
            state = RegistryState(self.version, chosen)
            pid = self._spawn(java, bundle, chosen)
            state = RegistryState(self.version, chosen, pid)
            self._save(state)
            progress(f"schema registry: starting Apicurio {self.version} (pid {pid}) on {chosen}")
            started = time.monotonic()
            try:
                wait_until_ready(state, self.console_log)
            except StackError:
                if pid_alive(pid):
                    stop_process(pid)
                self._save(RegistryState(self.version, chosen, None))
                raise
            progress(
                f"schema registry: ready in {time.monotonic() - started:.1f} s at {state.url} "
                f"(log {self.console_log})"
            )
            return state

    def _spawn(self, java: str, bundle: Path, port: int) -> int:
        data = self.dir / "data"
        data.mkdir(parents=True, exist_ok=True)
        jar = runner_jar(bundle)
        assert jar is not None
        argv = [
            java,
            *JVM_OPTIONS,
            f"{IDENTITY_PROPERTY}{self.dir}",
            f"-Dquarkus.http.host={LOCALHOST}",
            f"-Dquarkus.http.port={port}",
            "-jar",
            str(jar),
        ]
        env = {
            **os.environ,
            # persistent ids: an H2 file instead of Apicurio's in-memory default
            "REGISTRY_DATASOURCE_URL": f"jdbc:h2:file:{data / 'registry'}",
        }
        write_flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        file_actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, str(self.console_log), write_flags, 0o644),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ]
        return os.posix_spawn(java, argv, env, file_actions=file_actions, setsid=True)

    def down(self, progress: Progress = print) -> None:
        """Stop the registry this state dir started (its data stays)."""
        with file_lock(self.dir / ".lock"):
            state = self.state()
            if state is None or not self.is_ours(state.pid):
                if state is not None:
                    progress("schema registry: not running")
                return
            assert state.pid is not None
            progress(f"schema registry: stopping (pid {state.pid})")
            stop_process(state.pid)
            self._save(RegistryState(state.version, state.port, None))
            progress("schema registry: stopped")


def answers(url: str, timeout: float = 2.0) -> bool:
    """Whether the registry's Confluent-compatible API answers now."""
    try:
        with urllib.request.urlopen(f"{url}/subjects", timeout=timeout) as got:
            return bool(got.status == 200)
    except (OSError, ValueError):
        return False


def wait_until_ready(state: RegistryState, log: Path, timeout: float = READY_TIMEOUT_S) -> None:
    """Wait until the registry answers; fail fast with its log if its process died."""
    deadline = time.monotonic() + timeout
    while not answers(state.url):
        if not pid_alive(state.pid):
            raise StackError(
                f"the schema registry (pid {state.pid}) exited while starting; see {log}:\n"
                f"{_tail(log)}"
            )
        if time.monotonic() > deadline:
            raise StackError(
                f"the schema registry did not answer at {state.url} in {timeout:.0f} s; see "
                f"{log}:\n{_tail(log)}"
            )
        time.sleep(0.3)


def _tail(path: Path, count: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-count:])
    except OSError:
        return "(no log)"
