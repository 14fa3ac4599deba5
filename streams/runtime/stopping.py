"""The worker's emergency exits: stop at once and commit nothing, when an input partition
cannot be restored, output was lost, the ingest agent failed, or a requested stop takes
too long."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Awaitable, Callable
from typing import NoReturn

log = logging.getLogger("memstream.worker")


def stop_without_committing(reason: object) -> NoReturn:
    """Exit at once (code 70), committing nothing: a partition this worker owns cannot be
    restored, or output of inputs it owns did not land (committing would ack them without
    it). The open transactions are aborted when the partitions' producers are next
    initialised, and the inputs are processed again from the last commit, by a restarted
    worker or another one."""
    log.critical("%s: stopping the worker without committing", reason)
    os._exit(70)


async def stop_if_it_fails(work: Awaitable[None], what: str, stopping: Callable[[], bool]) -> None:
    """Await ``work`` (an agent's body); if it raises, or ends while the worker is not
    ``stopping``, exit at once without committing (:func:`stop_without_committing`).

    Faust restarts a failed agent, and the restarted one reads nothing (its stream's
    buffered input is never acked): the worker would run on, processing nothing, holding its
    partitions, its lag unmoved, and hang on SIGTERM waiting for that input. Exiting hands
    the partitions to a restarted worker, which processes them again from the last commit.
    Cancellation (the worker stopping) passes through."""
    try:
        await work
    except Exception as exc:  # noqa: BLE001 - whatever it was, nothing else may run on
        log.exception("%s failed", what)
        stop_without_committing(f"{what} failed ({type(exc).__name__}: {exc})")
    if not stopping():
        stop_without_committing(f"{what} ended while the worker runs")


SHUTDOWN_DEADLINE_SECONDS = 25.0
"""How long a worker asked to stop may take before it exits without committing: below the
multi-process supervisor's 30 s before SIGKILL (``streams.runtime.supervisor``) and
Kubernetes' grace period (60 s in k8s/worker.yaml). A clean stop takes a few seconds (the
batch in hand, a commit, leaving the group)."""


def stop_within(seconds: float, why: str) -> threading.Timer:
    """Exit without committing if the process still runs ``seconds`` from now: a thread, so
    it fires whatever the event loop is waiting for (a graceful stop that waits for input
    no agent will ack, a flush to an unreachable broker)."""
    timer = threading.Timer(
        seconds,
        stop_without_committing,
        args=(f"{why}, and the worker did not stop within {seconds:g} s",),
    )
    timer.daemon = True
    timer.start()
    return timer
