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
from typing import Any

from streams.config.settings import ENV_PREFIX, Settings

STOP_TIMEOUT_SECONDS = 30.0
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class ProcessPlan:
    """What one process of the pool is told: its index and its settings."""

    index: int
    settings: Settings


@dataclass(frozen=True)
class Role:
    """What tells one role's processes apart from another's: its name in messages and the
    settings fields of its process count and of its first metrics port."""

    name: str
    count_setting: str
    port_setting: str

    def process_plans(
        self, settings: Settings, more: Callable[[int], dict[str, Any]] | None = None
    ) -> list[ProcessPlan]:
        """One plan per process: each a single process of the role, with its own instance id
        (``<instance id>-k`` when the instance has one) and metrics port (the first + k; 0,
        pick any, stays 0), and what ``more(k)`` adds."""
        first: int = getattr(settings, self.port_setting)
        return [
            ProcessPlan(
                k,
                settings.with_overrides(
                    **{self.count_setting: 1, self.port_setting: first + k if first else 0},
                    instance_id=f"{settings.instance_id}-{k}" if settings.instance_id else "",
                    **(more(k) if more else {}),
                ),
            )
            for k in range(getattr(settings, self.count_setting))
        ]

    def check_metrics_ports(self, settings: Settings) -> None:
        """Exit with what to change when the processes' ports run past 65535."""
        first: int = getattr(settings, self.port_setting)
        count: int = getattr(settings, self.count_setting)
        if first and first + count - 1 > 65_535:
            raise SystemExit(
                f"memstream {self.name}: {count} processes need metrics ports {first}-"
                f"{first + count - 1}, past 65535; lower {ENV_PREFIX}"
                f"{self.port_setting.upper()} or {ENV_PREFIX}{self.count_setting.upper()}"
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
