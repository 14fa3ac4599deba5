"""JSON Lines input for the CLI publisher: one event per line, structure and types checked here,
with errors that say which field is wrong and which line it is on."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memstream.jsonl import EventFormatError, event_from_json, parse_time, read_events
from streams.engine.model import (
    ConsolidationRequested,
    ForgetRequested,
    MemoryAccessed,
    MemoryWritten,
    SessionEnded,
)
from streams.kafka import codec

NOW = 1_717_000_000_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
EVENT_ID = "0b6f1b5e-3c1e-4b7a-9a51-4a0c2f2d8e11"


def a_write(**memory: Any) -> dict[str, Any]:
    return {"type": "MemoryWritten", "user_id": "u1", "memory": {"content": "hi", **memory}}


def error_for(obj: Any) -> str:
    with pytest.raises(EventFormatError) as caught:
        event_from_json(obj, NOW)
    return str(caught.value)


# --- lines that parse ------------------------------------------------------------------------


def test_a_minimal_write_gets_the_envelope_user_and_defaults() -> None:
    event = event_from_json(a_write(), NOW)

    assert isinstance(event.payload, MemoryWritten)
    memory = event.payload.memory
    assert event.user_id == "u1"
    assert memory.user_id == "u1"
    assert memory.content == "hi"
    assert memory.memory_id
    assert memory.layer == "working"
    assert event.occurred_at == NOW
    assert event.source == "jsonl"
    assert event.event_id


def test_envelope_fields_are_taken_from_the_line() -> None:
    line = {**a_write(memory_id="m-7"), "event_id": EVENT_ID, "source": "svc", "occurred_at": 5}

    event = event_from_json(line, NOW)

    assert (event.event_id, event.source, event.occurred_at) == (EVENT_ID, "svc", 5)
    assert event.payload.memory.memory_id == "m-7"


def test_an_explicit_memory_user_id_is_kept_for_the_worker_to_judge() -> None:
    event = event_from_json(a_write(user_id="someone-else"), NOW)

    assert event.payload.memory.user_id == "someone-else"


def test_lines_without_event_ids_get_distinct_ones() -> None:
    first, second = event_from_json(a_write(), NOW), event_from_json(a_write(), NOW)

    assert first.event_id != second.event_id


def test_a_full_memory_parses_every_typed_field() -> None:
    event = event_from_json(
        a_write(
            layer="semantic",
            tags=["coffee", "morning"],
            importance=1,
            valence=-0.5,
            success=None,
            consent=True,
            access_count=2,
            embedding=[0.5, -1, 2.25],
            metadata={"k": "v"},
            trigger_conditions=["asked"],
        ),
        NOW,
    )

    memory = event.payload.memory
    assert memory.layer == "semantic"
    assert memory.tags == ("coffee", "morning")
    assert memory.trigger_conditions == ("asked",)
    assert memory.importance == 1
    assert memory.consent is True
    assert memory.embedding == codec.pack_embedding([0.5, -1.0, 2.25])
    assert memory.metadata == {"k": "v"}


def test_a_speaker_is_taken_from_the_memory_and_absent_means_none() -> None:
    named = event_from_json(a_write(speaker="Caroline", created_by="user"), NOW)
    unnamed = event_from_json(a_write(created_by="agent"), NOW)
    null = event_from_json(a_write(speaker=None), NOW)

    assert named.payload.memory.speaker == "Caroline"
    assert unnamed.payload.memory.speaker is None
    assert null.payload.memory.speaker is None
    assert codec.decode_event(codec.encode_event(named)) == named


def test_the_other_event_types_parse() -> None:
    lines = [
        {"type": "MemoryAccessed", "user_id": "u1", "memory_id": "m1"},
        {"type": "MemoryForgotten", "user_id": "u1", "memory_id": "m1", "reason": "gdpr"},
        {"type": "SessionEnded", "user_id": "u1", "session_id": "s1"},
        {"type": "ConsolidationRequested", "user_id": "u1", "force": True},
    ]

    payloads = [event_from_json(line, NOW).payload for line in lines]

    assert payloads == [
        MemoryAccessed("m1"),
        ForgetRequested("m1", "gdpr"),
        SessionEnded("s1"),
        ConsolidationRequested(force=True),
    ]


@pytest.mark.parametrize(
    ("text", "millis"),
    [
        ("2024-05-29T16:26:40Z", 1_717_000_000_000),
        ("2024-05-29T16:26:40.123Z", 1_717_000_000_123),
        ("2024-05-29T18:26:40.5+02:00", 1_717_000_000_500),
        ("1970-01-01T00:00:00Z", 0),
    ],
)
def test_iso_8601_times_become_epoch_millis(text: str, millis: int) -> None:
    event = event_from_json({**a_write(), "occurred_at": text}, NOW)

    assert event.occurred_at == millis


def test_epoch_millis_times_are_taken_as_they_are() -> None:
    event = event_from_json(
        {"type": "MemoryAccessed", "user_id": "u1", "memory_id": "m1", "accessed_at": 1234},
        NOW,
    )

    assert event.payload.accessed_at == 1234


def test_memory_times_accept_iso_8601() -> None:
    event = event_from_json(a_write(created_at="2024-05-29T16:26:40Z", valid_at=7), NOW)

    assert event.payload.memory.created_at == 1_717_000_000_000
    assert event.payload.memory.valid_at == 7


@given(millis=st.integers(min_value=0, max_value=32_503_680_000_000))  # up to year 3000
@example(millis=2_158_000_637_410)
def test_any_millisecond_iso_time_parses_to_that_millisecond(millis: int) -> None:
    """Millisecond text must give that millisecond; float seconds must not round it down."""
    text = (EPOCH + timedelta(milliseconds=millis)).isoformat(timespec="milliseconds")

    assert parse_time(text, "occurred_at") == millis


# --- clear errors ----------------------------------------------------------------------------


def test_an_unknown_type_is_an_error_listing_the_known_types() -> None:
    message = error_for({"type": "MemoryExploded", "user_id": "u1"})

    assert "MemoryExploded" in message
    assert "MemoryWritten" in message


def test_a_missing_user_id_is_an_error() -> None:
    assert "user_id" in error_for({"type": "SessionEnded", "session_id": "s1"})


def test_an_unknown_memory_field_is_an_error_naming_it() -> None:
    assert "colour" in error_for(a_write(colour="blue"))


def test_an_unknown_envelope_field_is_an_error_naming_it() -> None:
    assert "priority_lane" in error_for({**a_write(), "priority_lane": 1})


def test_an_unknown_field_on_another_event_type_is_an_error() -> None:
    line = {"type": "MemoryAccessed", "user_id": "u1", "memory_id": "m1", "when": 1}

    assert "when" in error_for(line)


def test_a_write_without_content_is_an_error() -> None:
    assert "content" in error_for({"type": "MemoryWritten", "user_id": "u1", "memory": {}})


def test_a_write_without_a_memory_object_is_an_error() -> None:
    assert "memory" in error_for({"type": "MemoryWritten", "user_id": "u1", "memory": "hi"})


def test_a_reference_without_its_memory_id_is_an_error() -> None:
    assert "memory_id" in error_for({"type": "MemoryAccessed", "user_id": "u1"})


@pytest.mark.parametrize(
    ("memory", "field"),
    [
        ({"importance": "high"}, "importance"),
        ({"importance": True}, "importance"),
        ({"tags": "coffee"}, "tags"),
        ({"layer": "cold"}, "layer"),
        ({"content": 42}, "content"),
        ({"consent": "yes"}, "consent"),
        ({"access_count": 1.5}, "access_count"),
        ({"embedding": ["a", "b"]}, "embedding"),
        ({"metadata": {"n": 1}}, "metadata"),
        ({"priority": None}, "priority"),
        ({"speaker": 7}, "speaker"),
        ({"speaker": ["Caroline"]}, "speaker"),
    ],
)
def test_a_wrongly_typed_memory_field_is_an_error_naming_it(
    memory: dict[str, Any], field: str
) -> None:
    assert field in error_for(a_write(**memory))


def test_a_null_metadata_is_an_error() -> None:
    """metadata is a map with a default, not nullable: a null must not reach the encoder."""
    assert "metadata" in error_for(a_write(metadata=None))


def test_a_wrongly_typed_field_on_another_event_type_is_an_error() -> None:
    """Types are checked here so that every line that parses can be encoded and published."""
    line = {"type": "MemoryAccessed", "user_id": "u1", "memory_id": 5}

    assert "memory_id" in error_for(line)


def test_a_naive_iso_time_is_an_error_asking_for_a_timezone() -> None:
    message = error_for({**a_write(), "occurred_at": "2024-05-29T16:26:40"})

    assert "timezone" in message
    assert "occurred_at" in message


@pytest.mark.parametrize("value", ["yesterday", 1.5, True, None])
def test_a_time_that_is_neither_millis_nor_iso_is_an_error(value: object) -> None:
    assert "occurred_at" in error_for({**a_write(), "occurred_at": value})


def test_a_json_value_that_is_not_an_object_is_an_error() -> None:
    assert "object" in error_for(["MemoryWritten"])


# --- files -----------------------------------------------------------------------------------


def test_a_wrongly_typed_speaker_is_reported_on_its_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    lines = [a_write(speaker="Caroline"), a_write(speaker=42), a_write(speaker="Melanie")]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")

    parsed = list(read_events(path, NOW))

    assert [p.number for p in parsed if p.error] == [2]
    assert parsed[1].error == "memory.speaker must be a string"
    assert [p.event.payload.memory.speaker for p in parsed if p.event is not None] == [
        "Caroline",
        "Melanie",
    ]


def test_read_events_reports_bad_lines_by_number_and_skips_blank_ones(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(a_write()),  # 1
                "",  # 2 blank
                "{not json",  # 3
                json.dumps({"type": "Nope", "user_id": "u1"}),  # 4
                "   ",  # 5 blank
                json.dumps({"type": "SessionEnded", "user_id": "u1", "session_id": "s"}),  # 6
            ]
        )
        + "\n",
        encoding="utf-8",
    )

    parsed = list(read_events(path, NOW))

    assert [p.number for p in parsed] == [1, 3, 4, 6]
    assert [p.number for p in parsed if p.error] == [3, 4]
    assert [p.number for p in parsed if p.event is not None] == [1, 6]
    not_json = parsed[1].error
    assert not_json is not None
    assert not_json.startswith("not JSON")
    assert "Nope" in (parsed[2].error or "")


def test_every_line_read_from_a_file_can_be_encoded(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(
        json.dumps(a_write(tags=["t"], embedding=[0.1, 0.2]))
        + "\n"
        + json.dumps({"type": "MemoryAccessed", "user_id": "u1", "memory_id": "m1"})
        + "\n",
        encoding="utf-8",
    )

    events = [p.event for p in read_events(path, NOW)]

    assert all(e is not None for e in events)
    for event in events:
        assert codec.decode_event(codec.encode_event(event)) == event  # type: ignore[arg-type]
