"""Progress output of the benchmark: a line per phase and a live counter within it.

On a terminal the counter rewrites one line; in a log (CI, a pipe) it prints a line at most
every few seconds, so a long phase still shows it is moving.
"""

from __future__ import annotations

import sys
import time

LOG_EVERY_SECONDS = 3.0


def phase(text: str) -> None:
    print(f"\n{text}", flush=True)


def note(text: str) -> None:
    print(f"  {text}", flush=True)


class Counter:
    """``done/total label`` with the rate since the counter started."""

    def __init__(self, total: int, label: str) -> None:
        self.total, self.label = max(total, 1), label
        self.tty = sys.stdout.isatty()
        self.started = time.perf_counter()
        self.last_print = 0.0
        self.done = 0
        self.printed = -1

    def show(self, done: int) -> None:
        self.done = done
        now = time.perf_counter()
        if self.tty:
            if now - self.last_print >= 0.1 or done >= self.total:
                self.last_print = now
                print(f"\r  {self._line(now)}", end="", flush=True)
        elif now - self.last_print >= LOG_EVERY_SECONDS:
            self.last_print, self.printed = now, done
            print(f"  {self._line(now)}", flush=True)

    def finish(self) -> None:
        if self.tty:
            print(f"\r  {self._line(time.perf_counter())}", flush=True)
        elif self.printed != self.done:
            print(f"  {self._line(time.perf_counter())}", flush=True)

    def _line(self, now: float) -> str:
        elapsed = now - self.started
        return f"{self.done}/{self.total} {self.label} ({elapsed:.1f} s)"
