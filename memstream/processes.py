"""Starts and stops memstream's own processes (worker, projector) as children, by pid.

Used by the demo, the benchmark and the integration tests, so all three run the real
``memstream worker`` / ``memstream project`` commands exactly as an operator would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from streams.config.settings import Settings


@dataclass
class ManagedProcess:
    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, timeout: float = 20.0) -> int | None:
        """SIGTERM, then SIGKILL if it has not exited within ``timeout`` seconds."""
        if self.alive():
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.popen.returncode

    def kill(self) -> None:
        """SIGKILL: the crash the failure tests simulate."""
        if self.alive():
            self.popen.kill()
        self.popen.wait(10)

    def log_tail(self, lines: int = 30) -> str:
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def start_command(
    name: str,
    args: list[str],
    settings: Settings,
    log_dir: Path,
    extra_env: dict[str, str] | None = None,
) -> ManagedProcess:
    """Run ``memstream <args>`` with ``settings`` exported, logging to ``log_dir/<name>.log``."""
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{name}.log"
    env = {**os.environ, **settings.as_env(), **(extra_env or {})}
    with log_path.open("ab") as log:
        popen = subprocess.Popen(
            [sys.executable, "-m", "memstream.cli", *args],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return ManagedProcess(name, popen, log_path)
