"""``memstream tail`` on the real stack (issue 8): the ledger the worker wrote, filtered and
decoded into JSON lines by the real command, as an analytics engineer would run it."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration

ALICE, BOB = "tail-alice", "tail-bob"


def test_tail_prints_only_one_users_memory_stored_events_as_json_lines(pipeline):
    """Given memories written for two users and an access of one of them, processed by the
    real worker into the ledger,
    when `memstream tail --from-beginning --event-type MemoryStored --user tail-alice --max 3`
    runs, and again with an idle --timeout instead of --max,
    then stdout holds exactly alice's three MemoryStored events as JSON lines carrying the
    memories' ids and contents (embeddings left out), and every other record was counted as
    skipped."""
    pipeline.start_all()
    contents = {
        pipeline.publisher.write(ALICE, text): text
        for text in ("Alice keeps her notes in Obsidian", "Alice lives in Lisbon", "Alice cycles")
    }
    for text in ("Bob prefers tea", "Bob works nights"):
        pipeline.publisher.write(BOB, text)
    pipeline.publisher.access(ALICE, next(iter(contents)))  # alice's, but not MemoryStored
    pipeline.publisher.flush()
    ledger = pipeline.read_topic(pipeline.settings.ledger_topic, expected=6)

    first = pipeline.cli(
        "tail",
        "--from-beginning",
        "--event-type",
        "MemoryStored",
        "--user",
        ALICE,
        "--max",
        "3",
        "--timeout",
        "60",
    )
    until_idle = pipeline.cli(
        "tail",
        "--from-beginning",
        "--event-type",
        "MemoryStored",
        "--user",
        ALICE,
        "--timeout",
        "3",
    )

    assert first.returncode == 0, first.stderr
    printed = [json.loads(line) for line in first.stdout.splitlines()]
    assert len(printed) == 3
    assert {p["event_type"] for p in printed} == {"MemoryStored"}
    assert {p["user_id"] for p in printed} == {ALICE}
    assert {p["kafka"]["key"] for p in printed} == {ALICE}
    memories = {p["payload"]["memory"]["memory_id"]: p["payload"]["memory"] for p in printed}
    assert {mid: m["content"] for mid, m in memories.items()} == contents
    assert all("embedding" not in m for m in memories.values())
    assert all(p["occurred_at_iso"].endswith("Z") for p in printed)

    assert until_idle.returncode == 0, until_idle.stderr
    assert until_idle.stdout == first.stdout  # one user: one partition, one order
    assert f"3 event(s) printed, {len(ledger) - 3} skipped without decoding" in until_idle.stderr
