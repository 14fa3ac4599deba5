"""Asking the broker about a consumer group when its coordinator may not be ready yet.

A consumer group is served by one broker, its *coordinator*: the leader of the partition of
``__consumer_offsets`` that the group id hashes to. A new broker creates that topic on the
first request that needs it and then loads it; until it has, requests about a group
(describe, delete, commit) are answered with NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or
COORDINATOR_LOAD_IN_PROGRESS. On a freshly started local stack the first ``memstream bench``
failed that way, 3 runs of 3, at its first phase. Measured on a new broker (2026-11-27):
a describe sent while a first consumer joins is answered NOT_COORDINATOR for ~0.4 s; a
describe sent before anyone asked for a coordinator gets no answer at all (librdkafka
waits out the request's timeout, then says _TIMED_OUT), and the next one succeeds.

All of these mean "not yet", not "no". librdkafka marks neither NOT_COORDINATOR nor
_TIMED_OUT retriable in an admin result, so the codes are listed here, each request is
given a short timeout, and every command that asks about a group goes through
:func:`when_coordinator_ready`: it asks again with a growing pause until a deadline, then
fails with a message that says what to check."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ConsumerGroupDescription

T = TypeVar("T")

# The coordinator's answers while it moves or loads, and no answer within a request's
# timeout (what a new broker's first group request gets): ask again.
COORDINATOR_NOT_READY: frozenset[int] = frozenset(
    {
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError._TIMED_OUT,
    }
)

# A new broker answered within ~0.5 s here; a minute leaves room for a loaded machine
# without hiding a broker that is down.
DEFAULT_TIMEOUT_SECONDS = 60.0
# One request's wait: an answer takes milliseconds, and a request a new broker leaves
# unanswered is only given up (and made again) when this has passed.
_REQUEST_TIMEOUT_SECONDS = 5.0


class CoordinatorNotReady(RuntimeError):
    """A group's coordinator still answered "not yet" when the deadline passed."""


def coordinator_not_ready(code: int, *, retriable: bool) -> bool:
    """Whether an error with this ``code`` (and librdkafka's ``retriable`` flag) means the
    request should simply be made again later."""
    return retriable or code in COORDINATOR_NOT_READY


def backoff_delays(first: float = 0.1, factor: float = 2.0, cap: float = 2.0) -> Iterator[float]:
    """Pauses between attempts: ``first``, then ``factor`` times longer each time, never
    longer than ``cap``. Short at first because a new broker is usually ready in under a
    second; capped so a slow one is noticed within ``cap`` of becoming ready."""
    delay = first
    while True:
        yield min(delay, cap)
        delay *= factor


def when_coordinator_ready(
    action: Callable[[], T],
    *,
    what: str,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """``action()``'s result, calling it again while it raises a "not yet" error of the
    group coordinator (:func:`coordinator_not_ready`), until ``timeout`` seconds have
    passed. Any other error is raised at once. ``what`` names the request in the message
    of :class:`CoordinatorNotReady`; ``sleep`` and ``clock`` are for tests."""
    deadline = clock() + timeout
    delays = backoff_delays()
    while True:
        try:
            return action()
        except KafkaException as exc:
            error = exc.args[0] if exc.args else None
            if not isinstance(error, KafkaError) or not coordinator_not_ready(
                error.code(), retriable=error.retriable()
            ):
                raise
            remaining = deadline - clock()
            if remaining <= 0:
                raise CoordinatorNotReady(_explain(what, timeout, error)) from None
            sleep(min(next(delays), remaining))


def describe_group(
    admin: AdminClient, group: str, *, timeout: float = DEFAULT_TIMEOUT_SECONDS
) -> ConsumerGroupDescription:
    """``group``'s description (state, members, assignments), once its coordinator answers.
    A group nobody has joined yet is described, not refused (state ``DEAD``, no members)."""

    def describe() -> ConsumerGroupDescription:
        futures = admin.describe_consumer_groups([group], request_timeout=_REQUEST_TIMEOUT_SECONDS)
        description: ConsumerGroupDescription = futures[group].result()
        return description

    return when_coordinator_ready(
        describe, what=f"describing consumer group {group!r}", timeout=timeout
    )


def delete_group(
    admin: AdminClient, group: str, *, timeout: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    """Delete ``group`` once its coordinator answers. Other refusals (a group that still
    has members, one that is gone) are raised as the broker gave them."""

    def delete() -> None:
        futures = admin.delete_consumer_groups([group], request_timeout=_REQUEST_TIMEOUT_SECONDS)
        futures[group].result()

    when_coordinator_ready(delete, what=f"deleting consumer group {group!r}", timeout=timeout)


def _explain(what: str, timeout: float, error: KafkaError) -> str:
    return (
        f"{what}: the broker's group coordinator was still not ready after {timeout:.0f} s "
        f"(it last said {error.name()}: {error.str() or 'no detail'}). A new broker is "
        f"usually ready within seconds; check that it is up (`memstream status`) and read "
        f"its log (`<state dir>/kafka/logs/server.log`), then run the command again."
    )
