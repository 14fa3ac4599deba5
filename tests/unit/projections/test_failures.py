"""The projector tells its failures apart (docs/failure-semantics.md, 'The projector'): a database
outage is waited out, a record that cannot be stored is set aside, a schema it does not know stops
it."""

from __future__ import annotations

import struct

import psycopg
import pytest
from psycopg import errors

from projections.failures import (
    DeadLetterUnavailable,
    is_poison,
    is_transient,
    one_line,
    stops_the_projector,
)


@pytest.mark.parametrize(
    "exc",
    [
        psycopg.OperationalError("connection refused"),  # no SQLSTATE: never reached the server
        psycopg.InterfaceError("the connection is closed"),
        errors.AdminShutdown("terminating connection due to administrator command"),
        errors.SerializationFailure("could not serialize access"),
        errors.DeadlockDetected("deadlock detected"),
        errors.TooManyConnections("too many clients"),
        errors.QueryCanceled("canceling statement due to statement timeout"),
        DeadLetterUnavailable("memory.deadletter did not acknowledge"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_an_unavailable_database_or_kafka_is_transient_not_poison(exc: Exception) -> None:
    assert is_transient(exc)
    assert not is_poison(exc)


@pytest.mark.parametrize(
    "exc",
    [
        errors.CharacterNotInRepertoire("invalid byte sequence for encoding UTF8: 0x00"),
        errors.NumericValueOutOfRange("value out of range"),
        errors.DataException("expected 384 dimensions, not 3"),
        errors.CheckViolation("violates check constraint"),
        errors.ProgramLimitExceeded("index row size exceeds btree maximum"),
        psycopg.DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes"),
        ValueError("year 10000 is out of range"),
        OverflowError("timestamp out of range for platform time_t"),
        struct.error("unpack requires a buffer of 4 bytes"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_data_no_row_can_hold_is_poison_not_transient(exc: Exception) -> None:
    assert is_poison(exc)
    assert not is_transient(exc)


@pytest.mark.parametrize(
    "exc",
    [errors.UndefinedTable("relation does not exist"), errors.InsufficientPrivilege("denied")],
    ids=lambda exc: type(exc).__name__,
)
def test_a_database_problem_that_is_not_the_records_fault_is_retried_never_skipped(
    exc: Exception,
) -> None:
    assert is_transient(exc)
    assert not is_poison(exc)


def test_a_bug_is_neither_transient_nor_poison_so_it_is_not_hidden() -> None:
    exc = AttributeError("'NoneType' object has no attribute 'memory_id'")

    assert not is_transient(exc)
    assert not is_poison(exc)


@pytest.mark.parametrize("reason", ["unknown_schema", "wrong_schema"])
def test_a_ledger_record_of_a_schema_the_projector_does_not_know_stops_it(reason: str) -> None:
    assert stops_the_projector(reason)


def test_corrupt_ledger_bytes_do_not_stop_the_projector() -> None:
    assert not stops_the_projector("undecodable")


def test_a_multi_line_database_message_is_reported_on_one_line() -> None:
    exc = psycopg.OperationalError("connection failed: Connection refused\n\tIs the server up?\n")

    assert one_line(exc) == "connection failed: Connection refused Is the server up?"
