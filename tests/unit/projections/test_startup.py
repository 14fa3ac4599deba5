"""The projector starting without its database (docs/failure-semantics.md, 'The projector': retry
with backoff, then fail with one clear line), and the message it stops with when the ledger is newer
than it."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from projections.failures import outdated_message
from projections.startup import migrate_when_reachable
from streams.config.settings import Settings
from streams.kafka import codec


@pytest.fixture
def nobody_listening() -> Iterator[Settings]:
    """Settings naming a port that is bound (so nobody else takes it) but not listening."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield Settings(
            database_url=f"postgresql://postgres@127.0.0.1:{bound.getsockname()[1]}/memstream",
            retry_attempts=3,
            retry_backoff_seconds=0.01,
        )


def test_without_postgresql_the_projector_says_it_is_waiting_before_each_retry(
    nobody_listening: Settings,
) -> None:
    said: list[str] = []

    with pytest.raises(SystemExit):
        migrate_when_reachable(nobody_listening, say=said.append)

    assert len(said) == 2  # three attempts: two waits
    assert all("waiting for PostgreSQL at memstream on 127.0.0.1:" in line for line in said)
    assert "attempt 1 of 3, retrying in 0.0s" in said[0]


def test_without_postgresql_the_projector_finally_exits_with_one_line(
    nobody_listening: Settings,
) -> None:
    with pytest.raises(SystemExit) as stopped:
        migrate_when_reachable(nobody_listening, say=lambda _line: None)

    message = str(stopped.value.code)
    assert message.startswith("memstream projector: cannot prepare the read models at memstream")
    assert "after 3 attempt(s)" in message
    assert "\n" not in message


def test_an_unknown_schema_names_the_record_the_fingerprint_and_the_fix() -> None:
    exc = codec.DecodeError("unknown_schema", "schema fingerprint 0123456789abcdef is not known")

    message = outdated_message(
        ("memory.consolidation", 3, 42), bytes.fromhex("0123456789abcdef"), exc
    )

    assert message == (
        "ledger record at memory.consolidation[3]@42 uses schema fingerprint 0123456789abcdef "
        "unknown to this projector: upgrade the projector (memstream) to the worker's version; "
        "nothing was skipped"
    )
