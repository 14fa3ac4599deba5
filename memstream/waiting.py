"""Waiting for a condition with a deadline, instead of sleeping a fixed time and hoping."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class WaitTimeout(TimeoutError):
    pass


def wait_until(
    probe: Callable[[], T],
    *,
    timeout: float,
    interval: float = 0.2,
    what: str = "the condition",
    describe: Callable[[], str] | None = None,
) -> T:
    """Call ``probe`` until it returns something truthy; return that, or raise after
    ``timeout`` seconds with ``describe()`` (the last observed state) in the message."""
    deadline = time.monotonic() + timeout
    while True:
        result = probe()
        if result:
            return result
        if time.monotonic() >= deadline:
            detail = f": {describe()}" if describe else ""
            raise WaitTimeout(f"{what} did not happen within {timeout:.0f} s{detail}")
        time.sleep(interval)
