"""``memstream project`` with ``MEMSTREAM_PROJECTOR_PROCESSES`` > 1: that many projector
processes in one consumer group, started, watched and stopped together.

Why processes: the projector's Python work (consume, decode, fold, format, and the writer
thread's share) holds one GIL. In the bench's projector phase that process ran at 0.94 of a
core while PostgreSQL used 0.38 and a core stood 0.6 idle (README, "Projector processes"):
the rate was bound by one interpreter, not by the machine. The ledger is partitioned by
user and every read-model row belongs to one user, so projectors of disjoint partitions never
touch the same rows; each process is an ordinary group member with its own connection and
its own transactions, and everything the projector guarantees (offsets stored with the rows,
stale batches dropped after a rebalance) holds per process as it does per instance.

The supervisor runs no projector itself. It migrates the read models once, starts the
processes, and forwards SIGTERM/SIGINT to them. If one exits while nobody asked it to, the
others are stopped and the supervisor exits with its code, so whatever restarts the
projector (compose, Kubernetes, systemd) restarts all of it. If the supervisor is killed,
the kernel kills its processes (``PR_SET_PDEATHSIG``, Linux): none is left projecting
without it. Process ``k`` gets instance id ``<instance id>-k`` (static membership, when an
instance id is set) and metrics port ``<projector metrics port> + k``.
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
from projections.startup import database_name, migrate_when_reachable

STOP_TIMEOUT_SECONDS = 30.0
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class ProcessPlan:
    """What one projector process is told: its index and its settings."""

    index: int
    settings: Settings


def process_plans(settings: Settings) -> list[ProcessPlan]:
    """One plan per process: each a single projector, with its own instance id (when the
    instance has one) and metrics port."""
    count = settings.projector_processes
    port = settings.projector_metrics_port
    return [
        ProcessPlan(
            k,
            settings.with_overrides(
                projector_processes=1,
                instance_id=f"{settings.instance_id}-{k}" if settings.instance_id else "",
                projector_metrics_port=port + k if port else 0,
            ),
        )
        for k in range(count)
    ]


def run_projector_processes(settings: Settings) -> int:
    """Run the projector as configured: in this process when one is asked for, else as a
    supervisor of ``projector_processes`` of them. Returns the exit code."""
    if settings.projector_processes == 1:
        from projections.projector import run_projector

        run_projector(settings)
        return 0
    first, count = settings.projector_metrics_port, settings.projector_processes
    if first and first + count - 1 > 65_535:
        raise SystemExit(
            f"memstream projector: {count} processes need metrics ports {first}-"
            f"{first + count - 1}, past 65535; lower MEMSTREAM_PROJECTOR_METRICS_PORT or "
            "MEMSTREAM_PROJECTOR_PROCESSES"
        )
    migrate_when_reachable(settings)
    plans = process_plans(settings)
    print(
        f"memstream projector: {len(plans)} processes, {settings.ledger_topic} -> "
        f"{database_name(settings.database_url)} (metrics {settings.metrics_bind}:"
        f"{plans[0].settings.projector_metrics_port}..{plans[-1].settings.projector_metrics_port})",
        flush=True,
    )
    return Supervisor(plans).run()


class Supervisor:
    """Starts the planned processes and ends with them (see the module docstring)."""

    def __init__(
        self,
        plans: list[ProcessPlan],
        spawn: Callable[[ProcessPlan], subprocess.Popen[bytes]] | None = None,
    ) -> None:
        self.plans = plans
        self.spawn = spawn or spawn_projector
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
                f"memstream projector: process {plan.index} (pid {pid}) exited with code "
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


def spawn_projector(plan: ProcessPlan) -> subprocess.Popen[bytes]:
    """``memstream project`` as one process of the pool, sharing this one's output."""
    return subprocess.Popen(
        [sys.executable, "-m", "memstream.cli", "project"],
        env={**os.environ, **plan.settings.as_env()},
        stdin=subprocess.DEVNULL,
        preexec_fn=_die_with_parent(os.getpid()),  # noqa: PLW1509 - no threads run here yet
    )


def _die_with_parent(parent: int) -> Callable[[], None]:
    """In the child before it runs: be killed when the supervisor dies, and if it already
    has (between fork and here), exit at once."""

    def arrange() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)

    return arrange
