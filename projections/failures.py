"""Tells the projector's failures apart: wait and retry, skip one record, or stop.

The projector must never skip work because the database was briefly away, and must never stop
every user of a partition because one ledger record cannot be stored. So each failure is one of:

- **transient** — the database (or Kafka) is unavailable or asked us to try again: connection
  loss, shutdown, serialization failures, deadlocks, exhausted resources. Retried with backoff,
  then the consumer is rewound to the stored offsets. Database errors that are neither
  (a missing table, a revoked privilege) are treated the same way: they are not the record's
  fault, retrying is safe, and skipping would lose data while the operator fixes the database.
- **poison** — this record's data cannot become a row: values PostgreSQL rejects (NUL bytes in
  text, numbers out of range, a wrong vector dimension), constraint violations, or Python value
  errors while building the row (a timestamp past year 9999). Retrying cannot help: the record
  is dead-lettered (reason ``ledger_unprojectable``) and the rest of the partition flows.
- **outdated** — the ledger record uses a schema this projector does not know. The ledger is
  the trusted source of truth, so this projector is older than the worker: it stops without
  skipping anything (:class:`ProjectorOutdated`).

Anything else is a bug and is left to crash the process.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

import psycopg

if TYPE_CHECKING:
    from streams.kafka.codec import DecodeError

# SQLSTATE classes whose error describes the data, not the database's state: 22 data exception,
# 23 integrity constraint violation, 54 program limit exceeded (e.g. an index row too large).
_POISON_SQLSTATE_CLASSES = frozenset({"22", "23", "54"})
# Raised by Python while turning a decoded record into row values (dates, packed vectors).
BUILD_ERRORS: tuple[type[Exception], ...] = (ValueError, ArithmeticError, struct.error)
# Decode failures (``codec.DecodeError.reason``) that mean "newer schema", not "corrupt bytes".
OUTDATED_DECODE_REASONS = frozenset({"unknown_schema", "wrong_schema"})


class DeadLetterUnavailable(Exception):
    """The dead-letter topic did not acknowledge a record in time. Skipping the record now
    would lose it, so this counts as transient: retry, then rewind."""


class ProjectorOutdated(Exception):
    """A ledger record this projector cannot read because it is older than the worker."""


def is_poison(exc: BaseException) -> bool:
    """True when ``exc`` is caused by the record's own data, so retrying cannot help."""
    if isinstance(exc, psycopg.Error):
        sqlstate = exc.sqlstate
        if sqlstate is not None:
            return sqlstate[:2] in _POISON_SQLSTATE_CLASSES
        # Errors raised by psycopg itself before reaching the server (e.g. a NUL byte in a
        # text parameter) carry no SQLSTATE but keep the DB-API class.
        return isinstance(exc, psycopg.DataError | psycopg.IntegrityError)
    return isinstance(exc, BUILD_ERRORS)


def is_transient(exc: BaseException) -> bool:
    """True when waiting and retrying the same work may succeed."""
    if isinstance(exc, DeadLetterUnavailable):
        return True
    return isinstance(exc, psycopg.Error) and not is_poison(exc)


def stops_the_projector(decode_reason: str) -> bool:
    """An undecodable ledger record stops the projector when it is merely newer than the
    projector (it will be readable after an upgrade); corrupt bytes never will be."""
    return decode_reason in OUTDATED_DECODE_REASONS


def one_line(exc: BaseException) -> str:
    """An error as one log/console line (libpq messages span several lines)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def outdated_message(
    position: tuple[str, int, int], fingerprint: bytes | None, exc: DecodeError
) -> str:
    """What an operator reads when the projector stops on a ledger record it cannot read."""
    topic, partition, offset = position
    known = (
        "unknown to this projector"
        if exc.reason == "unknown_schema"
        else f"that this projector cannot read as a ledger record ({exc.detail})"
    )
    return (
        f"ledger record at {topic}[{partition}]@{offset} uses schema fingerprint "
        f"{fingerprint.hex() if fingerprint else '(none)'} {known}: upgrade the projector "
        f"(memstream) to the worker's version; nothing was skipped"
    )
