"""The Idempotency-Key header read as draft-ietf-httpapi-idempotency-key-header says, and the
event ids derived from it (memstream/http/idempotency.py); the store itself is tested against
PostgreSQL in tests/integration/test_http_idempotency.py."""

from __future__ import annotations

import pytest

from memstream.http.idempotency import MAX_KEY_CHARS, KeyedRequest, parse_key
from memstream.http.problems import ProblemError


def keyed(**changes: object) -> KeyedRequest:
    fields: dict[str, object] = {
        "tenant": "acme",
        "user_id": "acme:ana",
        "operation": "createMemory",
        "key": "k-1",
        "target": {},
        "body": {"content": "Ana likes tea."},
    }
    fields.update(changes)
    return KeyedRequest.of(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("header", "key"),
    [
        ("k-1", "k-1"),
        ('"k-1"', "k-1"),  # a Structured Field string, as the draft writes it
        ('"a \\"b\\" \\\\c"', 'a "b" \\c'),
        ("  8e03978e-40d5-43e8-bc93-6894a57f9324 ", "8e03978e-40d5-43e8-bc93-6894a57f9324"),
        (None, None),
    ],
)
def test_a_key_is_read_quoted_or_bare(header: str | None, key: str | None) -> None:
    assert parse_key(header) == key


@pytest.mark.parametrize(
    "header",
    [
        "",
        "   ",
        '""',
        "caf\u00e9",
        "\u00c3\u00a9t\u00c3\u00a9",
        "a\tb",
        "x" * (MAX_KEY_CHARS + 1),
        '"a\\nb"',
        '"a"b"',
        '"a\\"',
    ],
)
def test_an_empty_non_ascii_or_malformed_key_is_a_400(header: str) -> None:
    """An empty key would name every later request that sends one; a non-ASCII one has no
    agreed meaning (Starlette reads header bytes as Latin-1)."""
    with pytest.raises(ProblemError) as refused:
        parse_key(header)

    assert (refused.value.status, refused.value.kind) == (400, "bad-idempotency-key")


def test_the_event_id_is_the_same_for_the_same_request() -> None:
    assert keyed().event_id == keyed().event_id


@pytest.mark.parametrize(
    "change",
    [
        {"tenant": "globex"},
        {"user_id": "acme:bob"},
        {"operation": "putMemory"},
        {"key": "k-2"},
        {"target": {"memory_id": "m1"}},
        {"body": {"content": "Ana likes coffee."}},
    ],
)
def test_the_event_id_differs_with_tenant_user_operation_key_or_request(
    change: dict[str, object],
) -> None:
    """One key sent by two tenants, for two users, on two operations or with two bodies
    never names one event: no event can stand in for another's."""
    assert keyed(**change).event_id != keyed().event_id


def test_the_fingerprint_ignores_key_order() -> None:
    one = keyed(body={"content": "x", "tags": ["a"]})
    two = keyed(body={"tags": ["a"], "content": "x"})

    assert one.fingerprint == two.fingerprint
