"""The group coordinator's "not yet" answers are retried until a deadline; any other answer
is not (memstream/consumer_groups.py). No broker here: the action is a plain function that
raises the errors a broker gives, and the clock is a counter moved by the pauses."""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice

import pytest
from confluent_kafka import KafkaError, KafkaException

from memstream.consumer_groups import (
    COORDINATOR_NOT_READY,
    CoordinatorNotReady,
    backoff_delays,
    coordinator_not_ready,
    when_coordinator_ready,
)


@pytest.mark.parametrize(
    "code",
    [
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError._TIMED_OUT,  # a new broker's first group request is left unanswered
    ],
)
def test_the_coordinators_loading_answers_mean_not_yet_even_when_librdkafka_says_final(
    code: int,
) -> None:
    assert code in COORDINATOR_NOT_READY
    assert coordinator_not_ready(code, retriable=False)


@pytest.mark.parametrize(
    "code",
    [
        KafkaError.GROUP_AUTHORIZATION_FAILED,
        KafkaError.GROUP_ID_NOT_FOUND,
        KafkaError.NON_EMPTY_GROUP,
        KafkaError.INVALID_GROUP_ID,
    ],
)
def test_other_answers_are_final_unless_librdkafka_marks_them_retriable(code: int) -> None:
    assert not coordinator_not_ready(code, retriable=False)
    assert coordinator_not_ready(code, retriable=True)


def test_pauses_double_from_a_tenth_of_a_second_and_stop_growing_at_two() -> None:
    assert list(islice(backoff_delays(), 7)) == [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0]


class FakeTime:
    """A monotonic clock that only the pauses move."""

    def __init__(self) -> None:
        self.now = 0.0
        self.pauses: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def failing(errors: list[KafkaError], result: str = "described") -> Callable[[], str]:
    """An action that raises each of ``errors`` in turn, then returns ``result``."""
    pending = list(errors)

    def action() -> str:
        if pending:
            raise KafkaException(pending.pop(0))
        return result

    return action


def test_a_request_refused_while_the_coordinator_loads_is_made_again_until_it_answers() -> None:
    time = FakeTime()
    action = failing(
        [
            KafkaError(KafkaError.NOT_COORDINATOR),
            KafkaError(KafkaError.COORDINATOR_LOAD_IN_PROGRESS),
            KafkaError(KafkaError._TRANSPORT, retriable=True),
        ]
    )

    result = when_coordinator_ready(
        action,
        what="describing consumer group 'g'",
        timeout=60,
        sleep=time.sleep,
        clock=time.clock,
    )

    assert result == "described"
    assert time.pauses == [0.1, 0.2, 0.4]


def test_past_the_deadline_it_fails_with_what_the_broker_said_and_what_to_do() -> None:
    time = FakeTime()
    action = failing([KafkaError(KafkaError.NOT_COORDINATOR)] * 1000)

    with pytest.raises(CoordinatorNotReady) as raised:
        when_coordinator_ready(
            action,
            what="describing consumer group 'g'",
            timeout=5,
            sleep=time.sleep,
            clock=time.clock,
        )

    message = str(raised.value)
    assert "describing consumer group 'g'" in message
    assert "NOT_COORDINATOR" in message
    assert "memstream status" in message
    assert time.now == pytest.approx(5.0)  # the last pause stops at the deadline


def test_a_final_refusal_is_raised_at_once_without_waiting() -> None:
    time = FakeTime()
    action = failing([KafkaError(KafkaError.GROUP_AUTHORIZATION_FAILED)])

    with pytest.raises(KafkaException) as raised:
        when_coordinator_ready(
            action,
            what="describing consumer group 'g'",
            timeout=60,
            sleep=time.sleep,
            clock=time.clock,
        )

    assert raised.value.args[0].code() == KafkaError.GROUP_AUTHORIZATION_FAILED
    assert time.pauses == []
