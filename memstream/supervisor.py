"""Several processes of one role (``memstream worker`` or ``memstream project``) in one
consumer group, started, watched and stopped together.

Why processes: the worker's and the projector's Python work holds one interpreter's lock, so
one process uses one core however many the host has. Both scale out by Kafka partitions
(the input is keyed by user, every piece of state and every read-model row belongs to one
user), so processes of one group never share a partition's work; each is an ordinary group
member with its own transactions, and what the role guarantees holds per process as it does
per instance.

The supervisor runs none of the work itself. It starts the processes and forwards
SIGTERM/SIGINT to them. If one exits while nobody asked it to, the others are stopped and
the supervisor exits with its code, so whatever restarts the role (compose, Kubernetes,
systemd) restarts all of it. If the supervisor is killed, the kernel kills its processes
(``PR_SET_PDEATHSIG``, Linux): none is left working without it. Process ``k`` gets instance
id ``<instance id>-k`` (static membership, when an instance id is set) and metrics port
``<metrics port> + k``; the role adds what else must differ per process.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType

from memstream.settings import Settings

STOP_TIMEOUT_SECONDS = 30.0
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class ProcessPlan:
    """What one process of the pool is told: its index and its settings."""

    index: int
    settings: Settings


def process_instance_id(settings: Settings, index: int) -> str:
    """Process ``index``'s static group member id: the instance's with ``-index``, or none
    (dynamic membership) when the instance has none."""
    return f"{settings.instance_id}-{index}" if settings.instance_id else ""


def process_metrics_port(first: int, index: int) -> int:
    """Process ``index``'s metrics port: ``first + index``; 0 (pick any) stays 0."""
    return first + index if first else 0


def check_metrics_ports(
    role: str, first: int, count: int, port_variable: str, count_variable: str
) -> None:
    """Exit with what to change when ``count`` ports from ``first`` run past 65535."""
    if first and first + count - 1 > 65_535:
        raise SystemExit(
            f"memstream {role}: {count} processes need metrics ports {first}-"
            f"{first + count - 1}, past 65535; lower {port_variable} or {count_variable}"
        )


class Supervisor:
    """Starts the planned processes and ends with them (see the module docstring)."""

    def __init__(
        self,
        role: str,
        plans: list[ProcessPlan],
        spawn: Callable[[ProcessPlan], subprocess.Popen[bytes]],
    ) -> None:
        self.role = role
        self.plans = plans
        self.spawn = spawn
        self.children: dict[int, tuple[ProcessPlan, subprocess.Popen[bytes]]] = {}
        self.stopping = False

    def run(self) -> int:
        previous = {
            sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGTERM, signal.SIGINT)
        }
        try:
            for plan in self.plans:
                if self.stopping:
                    break
                child = self.spawn(plan)
                self.children[child.pid] = (plan, child)
            return self._watch()
        finally:
            self._stop_all()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.stopping = True
        self._signal_all(signal.SIGTERM)

    def _watch(self) -> int:
        """Wait for the processes; the first that ends unasked ends them all."""
        worst = 0
        while self.children:
            try:
                pid, status = os.wait()
            except ChildProcessError:  # reaped elsewhere: nothing is left to wait for
                return worst
            entry = self.children.pop(pid, None)
            if entry is None:
                continue
            plan, child = entry
            code = os.waitstatus_to_exitcode(status)
            child.returncode = code
            if self.stopping:
                worst = worst or _nonzero(code)
                continue
            print(
                f"memstream {self.role}: process {plan.index} (pid {pid}) exited with code "
                f"{code}; stopping the other {len(self.children)}",
                file=sys.stderr,
                flush=True,
            )
            self.stopping = True
            self._signal_all(signal.SIGTERM)
            worst = _nonzero(code) or 1
        return worst

    def _signal_all(self, sig: int) -> None:
        for _, child in self.children.values():
            if child.returncode is None:
                # os.kill, not send_signal: that polls, and could reap a process the
                # wait in ``_watch`` is about to report
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, sig)

    def _stop_all(self) -> None:
        """SIGTERM what still runs, SIGKILL what outlives ``STOP_TIMEOUT_SECONDS``."""
        self._signal_all(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        for _, child in list(self.children.values()):
            try:
                child.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        self.children.clear()


def _nonzero(code: int) -> int:
    """An exit code as the supervisor's: a death by signal (negative) becomes 128 + n."""
    return 128 - code if code < 0 else code


def spawn_memstream(*args: str) -> Callable[[ProcessPlan], subprocess.Popen[bytes]]:
    """A spawner of ``memstream <args>`` as one process of the pool, with its plan's
    settings, sharing this process's output."""

    def spawn(plan: ProcessPlan) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "memstream.cli", *args],
            env={**os.environ, **plan.settings.as_env()},
            stdin=subprocess.DEVNULL,
            preexec_fn=die_with_parent(os.getpid()),  # noqa: PLW1509 - no threads run here yet
        )

    return spawn


def die_with_parent(parent: int) -> Callable[[], None]:
    """In the child before it runs: be killed when the supervisor dies, and if it already
    has (between fork and here), exit at once."""

    def arrange() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)

    return arrange
