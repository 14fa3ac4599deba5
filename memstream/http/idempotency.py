"""The ``Idempotency-Key`` header, as draft-ietf-httpapi-idempotency-key-header says.

A key is the client's name for one request, scoped by the tenant, the user and the operation:

- the event's id is derived from all of them (and from the request's fingerprint), so two
  users, two tenants or two operations never share an event id, whatever keys they send;
- the first request with a key claims it in the database (``http_idempotency_keys``,
  migration 009), with a fingerprint of the request (operation, path, body); the answer is
  stored when it is known. A retry of the same request is answered with the stored answer
  (``Idempotent-Replayed: true``); the key sent with another body or on another operation is
  refused (422); while the first request is in flight a second one is told to retry (409).
  The store is PostgreSQL, so every API replica sees the same keys;
- a key's record expires after :data:`KEY_LIFETIME` (the key may then be used afresh);
  expired records are purged by whichever replica next claims a key, at most once a minute
  per process.

Rows are written as the API's reader login, inside a grant for the user (``as_user``), so
row-level security confines each to its user. This module never touches the read models.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from memstream.http.problems import ProblemError

HEADER = "Idempotency-Key"
# Event ids derived from keys: uuid5(EVENT_ID_NAMESPACE, tenant, user, operation, key, request).
EVENT_ID_NAMESPACE = uuid.UUID("0b6c54f3-8f0e-5c52-9d6e-4f1a7e2c3d90")
KEY_LIFETIME = timedelta(hours=24)
# A claim whose request has not finished after this long is taken to be abandoned (its
# process died between claiming and answering) and may be claimed again; the request waits at
# most 10 s for Kafka, so a live one never gets this old.
CLAIM_LEASE = timedelta(seconds=60)
PURGE_EVERY_SECONDS = 60.0
PURGE_BATCH = 1000
MAX_KEY_CHARS = 256
# What a key header may hold (the OpenAPI document says the same): a token of visible ASCII
# that does not start with a quote and does not end in a space, or a Structured Field string
# with at least one character ("..." with \" and \\ as its only escapes).
KEY_PATTERN = r'^([!#-~]([ -~]*[!-~])?|"([ !#-\[\]-~]|\\["\\])+")$'
_KEY = re.compile(KEY_PATTERN)


def parse_key(raw: str | None) -> str | None:
    """The key a header value names (None without the header), or a 400.

    The draft makes the value a Structured Field string (``"8e03978e-..."``, quoted); an
    unquoted token is taken as it is too, as most clients send one. A key is 1 to
    :data:`MAX_KEY_CHARS` visible ASCII characters: an empty key would name every request
    that sends one, and bytes beyond ASCII have no agreed meaning in a header."""
    if raw is None:
        return None
    value = raw.strip(" \t")
    if not value or value == '""':
        raise _bad_key("is empty: send a unique value per request (a UUID), or no header")
    if len(value) > MAX_KEY_CHARS:
        raise _bad_key(f"is longer than {MAX_KEY_CHARS} characters: send a UUID")
    if _KEY.fullmatch(value) is None:
        raise _bad_key(
            "is neither a token of visible ASCII characters nor a quoted string of them "
            '(\\" and \\\\ escaped): send a UUID'
        )
    if value[0] == '"':
        value = _unquote(value[1:-1])
    return value


def _unquote(inner: str) -> str:
    """A Structured Field string's content: ``\\"`` and ``\\\\`` unescaped."""
    out, escaped = [], False
    for c in inner:
        if escaped:
            if c not in '"\\':
                raise _bad_key('is a quoted string with an escape other than \\" or \\\\')
            out.append(c)
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == '"':
            raise _bad_key("is a quoted string with an unescaped quote inside")
        else:
            out.append(c)
    if escaped:
        raise _bad_key("is a quoted string that ends in a lone backslash")
    return "".join(out)


def _bad_key(what: str) -> ProblemError:
    return ProblemError(
        400,
        "bad-idempotency-key",
        "Bad Idempotency-Key",
        f"the Idempotency-Key header {what} (nothing was published)",
    )


@dataclass(frozen=True)
class KeyedRequest:
    """A request that carries a key: who sent it for whom, what it asks, and its key."""

    tenant: str
    user_id: str
    operation: str
    key: str
    fingerprint: str

    @classmethod
    def of(
        cls,
        tenant: str,
        user_id: str,
        operation: str,
        key: str,
        target: dict[str, Any],
        body: dict[str, Any] | None,
    ) -> KeyedRequest:
        """``target``: the path's ids and the query; ``body``: the validated body, every
        field (a field left out and the same field sent as its default are one request)."""
        canonical = json.dumps(
            {"operation": operation, "target": target, "body": body},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=True,
        )
        fingerprint = hashlib.sha256(canonical.encode("ascii")).hexdigest()
        return cls(tenant, user_id, operation, key, fingerprint)

    @property
    def event_id(self) -> str:
        """The event's id: the same for a retry of this request, and for nothing else."""
        name = "\x1f".join((self.tenant, self.user_id, self.operation, self.key, self.fingerprint))
        return str(uuid.uuid5(EVENT_ID_NAMESPACE, name))


@dataclass(frozen=True)
class Claimed:
    """This request holds the key: do the work, then :meth:`IdempotencyStore.complete`."""


@dataclass(frozen=True)
class Replay:
    """The key's request was answered before: answer the same."""

    status: int
    body: dict[str, Any]


def conflict(operation: str) -> ProblemError:
    return ProblemError(
        422,
        "idempotency-key-reused",
        "Idempotency-Key reused for another request",
        f"this key was first sent with another request (operation {operation}, or another "
        "path or body) within the last "
        f"{int(KEY_LIFETIME.total_seconds() // 3600)} h: send a new key for a new request "
        "(nothing was published)",
    )


def in_flight() -> ProblemError:
    return ProblemError(
        409,
        "idempotency-key-in-use",
        "Request with this Idempotency-Key in progress",
        "a request with this key has not been answered yet: retry in a second, and the "
        "retry gets its answer",
        headers={"Retry-After": "1"},
    )


_TAKE_OVER = """
DELETE FROM http_idempotency_keys
WHERE tenant = %(tenant)s AND scoped_user_id = %(user)s AND idempotency_key = %(key)s
  AND (expires_at <= statement_timestamp()
       OR (response_status IS NULL AND claimed_at <= statement_timestamp() - %(lease)s))
"""
_CLAIM = """
INSERT INTO http_idempotency_keys (tenant, scoped_user_id, idempotency_key, operation,
    fingerprint, event_id, expires_at)
VALUES (%(tenant)s, %(user)s, %(key)s, %(operation)s, %(fingerprint)s, %(event_id)s,
    statement_timestamp() + %(lifetime)s)
ON CONFLICT DO NOTHING
RETURNING true
"""
_FIRST = """
SELECT operation, fingerprint, response_status, response_body FROM http_idempotency_keys
WHERE tenant = %(tenant)s AND scoped_user_id = %(user)s AND idempotency_key = %(key)s
"""
_COMPLETE = """
UPDATE http_idempotency_keys SET response_status = %(status)s, response_body = %(body)s
WHERE tenant = %(tenant)s AND scoped_user_id = %(user)s AND idempotency_key = %(key)s
  AND fingerprint = %(fingerprint)s AND response_status IS NULL
"""
_RELEASE = """
DELETE FROM http_idempotency_keys
WHERE tenant = %(tenant)s AND scoped_user_id = %(user)s AND idempotency_key = %(key)s
  AND fingerprint = %(fingerprint)s AND response_status IS NULL
"""


def _params(request: KeyedRequest) -> dict[str, Any]:
    return {
        "tenant": request.tenant,
        "user": request.user_id,
        "key": request.key,
        "operation": request.operation,
        "fingerprint": request.fingerprint,
        "event_id": request.event_id,
        "lease": CLAIM_LEASE,
        "lifetime": KEY_LIFETIME,
    }


class IdempotencyStore:
    """The key records, on connections scoped to the request's user (``as_user``)."""

    def __init__(self) -> None:
        self._purged_at = float("-inf")
        self._lock = threading.Lock()

    def claim(self, conn: psycopg.Connection[Any], request: KeyedRequest) -> Claimed | Replay:
        """Claim the key for ``request``, or the answer it had; a 422 if the key was used for
        another request, a 409 while that request is in flight."""
        params = _params(request)
        conn.execute(_TAKE_OVER, params)
        if conn.execute(_CLAIM, params).fetchone() is not None:
            return Claimed()
        first = conn.execute(_FIRST, params).fetchone()
        if first is None:  # taken over and deleted by another replica just now: ask again
            raise in_flight()
        operation, fingerprint, status, body = first
        if fingerprint != request.fingerprint:
            raise conflict(operation)
        if status is None:
            raise in_flight()
        return Replay(int(status), dict(body))

    def complete(
        self, conn: psycopg.Connection[Any], request: KeyedRequest, status: int, body: Any
    ) -> None:
        """Store the answer the claim's request got."""
        conn.execute(_COMPLETE, {**_params(request), "status": status, "body": Jsonb(body)})

    def release(self, conn: psycopg.Connection[Any], request: KeyedRequest) -> None:
        """Give up the claim (the request failed: a retry may try again)."""
        conn.execute(_RELEASE, _params(request))

    def purge_due(self) -> bool:
        """Whether this process should purge expired records now (once a minute)."""
        now = time.monotonic()
        with self._lock:
            if now - self._purged_at < PURGE_EVERY_SECONDS:
                return False
            self._purged_at = now
            return True

    @staticmethod
    def purge(conn: psycopg.Connection[Any]) -> int:
        """Delete expired records of every user (up to a batch); how many."""
        row = conn.execute("SELECT memstream_purge_idempotency_keys(%s)", (PURGE_BATCH,)).fetchone()
        return int(row[0]) if row else 0
