"""The worker's emergency exits (issue 37): a failed agent ends the process (code 70)
instead of leaving it running idle, and a requested stop is bounded in time. Each runs in a
child process, since the exits are real."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_an_agent_body_that_raises_ends_the_process_with_code_70() -> None:
    result = run(
        """
        import asyncio
        from streams.runtime.stopping import stop_if_it_fails

        async def body():
            raise AssertionError("a poison batch")

        asyncio.run(stop_if_it_fails(body(), "the ingest agent", lambda: False))
        print("still running")
        """
    )

    assert result.returncode == 70
    assert "still running" not in result.stdout
    assert "the ingest agent failed (AssertionError: a poison batch)" in result.stderr


def test_an_agent_body_that_ends_while_the_worker_runs_ends_the_process() -> None:
    result = run(
        """
        import asyncio
        from streams.runtime.stopping import stop_if_it_fails

        async def body():
            return None

        asyncio.run(stop_if_it_fails(body(), "the ingest agent", lambda: False))
        """
    )

    assert result.returncode == 70


def test_an_agent_body_that_ends_because_the_worker_stops_returns() -> None:
    result = run(
        """
        import asyncio
        from streams.runtime.stopping import stop_if_it_fails

        async def body():
            return None

        asyncio.run(stop_if_it_fails(body(), "the ingest agent", lambda: True))
        print("stopped cleanly")
        """
    )

    assert result.returncode == 0
    assert "stopped cleanly" in result.stdout


def test_a_stop_that_outlasts_its_deadline_exits_without_committing() -> None:
    result = run(
        """
        import threading
        from streams.runtime.stopping import stop_within

        stop_within(0.2, "SIGTERM received")
        threading.Event().wait(30)  # a stop that never finishes
        print("outlived the deadline")
        """
    )

    assert result.returncode == 70
    assert "outlived the deadline" not in result.stdout
    assert "SIGTERM received, and the worker did not stop within 0.2 s" in result.stderr
