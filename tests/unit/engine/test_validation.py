"""Value rules for untrusted input (docs/analytics.md, 'Dead letters'): every rejection reason, with
the smallest event that breaks it, and the boundaries that must still pass."""

from __future__ import annotations

import math
import struct

import pytest

from streams.engine.model import (
    ForgetRequested,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryPinned,
    MemoryWritten,
    SessionEnded,
)
from streams.engine.validation import (
    MAX_ID_CHARS,
    REJECTION_REASONS,
    Limits,
    Rejection,
    validate_event,
)

LIMITS = Limits()  # 384 dimensions, 65536 bytes of content
USER = "u-1"
EVENT_ID = "0b6f1b5e-3c1e-4b7a-9a51-4a0c2f2d8e11"
T0 = 1_717_000_000_000


def a_memory(**changes: object) -> Memory:
    return Memory("m-1", USER, "the sky is blue").evolve(**changes)


def written(**changes: object) -> MemoryEvent:
    return MemoryEvent(EVENT_ID, USER, T0, MemoryWritten(a_memory(**changes)))


def floats(values: list[float]) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)


def reason(event: MemoryEvent, key: str | None = None, limits: Limits = LIMITS) -> str | None:
    rejection = validate_event(event, limits, key)
    if rejection is not None:
        assert isinstance(rejection, Rejection)
        assert rejection.reason in REJECTION_REASONS
        assert rejection.detail
    return None if rejection is None else rejection.reason


# --- accepted --------------------------------------------------------------------------------


def test_a_fully_valid_written_event_is_accepted() -> None:
    event = written(
        importance=0.9,
        valence=-0.4,
        success=0.7,
        access_count=3,
        embedding=floats([0.01] * 384),
        tags=("a",),
    )

    assert validate_event(event, LIMITS, key=USER) is None


@pytest.mark.parametrize(
    "payload",
    [MemoryAccessed("m-1"), ForgetRequested("m-1"), MemoryPinned("m-1"), SessionEnded("s-1")],
    ids=["access", "forget", "pin", "session"],
)
def test_valid_non_write_events_are_accepted(payload: object) -> None:
    event = MemoryEvent(EVENT_ID, USER, T0, payload)  # type: ignore[arg-type]

    assert validate_event(event, LIMITS, key=USER) is None


@pytest.mark.parametrize("field", ["importance", "confidence", "emotional_salience", "success"])
@pytest.mark.parametrize("value", [0.0, 1.0])
def test_unit_interval_bounds_are_accepted(field: str, value: float) -> None:
    assert reason(written(**{field: value})) is None


@pytest.mark.parametrize("value", [-1.0, 1.0])
def test_valence_bounds_are_accepted(value: float) -> None:
    assert reason(written(valence=value)) is None


def test_content_of_exactly_the_limit_in_bytes_is_accepted() -> None:
    assert reason(written(content="x" * 65536)) is None


def test_an_occurred_at_of_zero_is_accepted() -> None:
    event = MemoryEvent(EVENT_ID, USER, 0, MemoryAccessed("m-1"))

    assert reason(event) is None


def test_without_a_kafka_key_the_key_rule_does_not_apply() -> None:
    assert validate_event(written(), LIMITS, key=None) is None


# --- missing_field ---------------------------------------------------------------------------


def test_an_empty_event_id_is_a_missing_field() -> None:
    event = MemoryEvent("", USER, T0, MemoryAccessed("m-1"))

    assert reason(event) == "missing_field"


def test_an_empty_user_id_is_a_missing_field() -> None:
    event = MemoryEvent(EVENT_ID, "", T0, MemoryAccessed("m-1"))

    assert reason(event) == "missing_field"


@pytest.mark.parametrize(
    "payload",
    [MemoryAccessed(""), ForgetRequested(""), MemoryPinned("")],
    ids=["access", "forget", "pin"],
)
def test_an_empty_memory_id_on_a_reference_is_a_missing_field(payload: object) -> None:
    event = MemoryEvent(EVENT_ID, USER, T0, payload)  # type: ignore[arg-type]

    assert reason(event) == "missing_field"


def test_an_empty_memory_id_on_a_write_is_a_missing_field() -> None:
    assert reason(written(memory_id="")) == "missing_field"


def test_empty_content_is_a_missing_field() -> None:
    assert reason(written(content="")) == "missing_field"


# --- ids and ownership -----------------------------------------------------------------------


@pytest.mark.parametrize("bad_id", ["not-a-uuid", "12345", "0b6f1b5e-3c1e-4b7a-9a51"])
def test_an_event_id_that_is_not_a_uuid_is_invalid(bad_id: str) -> None:
    event = MemoryEvent(bad_id, USER, T0, MemoryAccessed("m-1"))

    assert reason(event) == "invalid_event_id"


def test_a_kafka_key_other_than_the_user_id_is_a_key_mismatch() -> None:
    assert reason(written(), key="someone-else") == "key_mismatch"


def test_a_memory_owned_by_another_user_is_a_user_mismatch() -> None:
    assert reason(written(user_id="intruder")) == "user_mismatch"


# --- numbers ---------------------------------------------------------------------------------


def test_nan_importance_is_not_a_number() -> None:
    assert reason(written(importance=math.nan)) == "not_a_number"


@pytest.mark.parametrize("value", [math.inf, -math.inf])
def test_infinite_valence_is_not_a_number(value: float) -> None:
    assert reason(written(valence=value)) == "not_a_number"


def test_nan_success_is_not_a_number() -> None:
    assert reason(written(success=math.nan)) == "not_a_number"


def test_nan_inside_the_embedding_is_not_a_number() -> None:
    values = [0.5] * 384
    values[200] = math.nan

    assert reason(written(embedding=floats(values))) == "not_a_number"


def test_infinity_inside_the_embedding_is_not_a_number() -> None:
    values = [0.5] * 384
    values[-1] = math.inf

    assert reason(written(embedding=floats(values))) == "not_a_number"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("importance", 1.5),
        ("importance", -0.01),
        ("confidence", 1.0001),
        ("emotional_salience", -1.0),
        ("valence", -2.0),
        ("valence", 1.5),
        ("success", 2.0),
        ("access_count", -1),
    ],
)
def test_values_outside_their_range_are_out_of_range(field: str, value: float) -> None:
    assert reason(written(**{field: value})) == "out_of_range"


def test_a_negative_occurred_at_is_out_of_range() -> None:
    event = MemoryEvent(EVENT_ID, USER, -1, MemoryAccessed("m-1"))

    assert reason(event) == "out_of_range"


# --- sizes -----------------------------------------------------------------------------------


def test_content_one_byte_over_the_limit_is_too_large() -> None:
    assert reason(written(content="x" * 65537)) == "content_too_large"


def test_the_content_limit_counts_utf8_bytes_not_characters() -> None:
    two_byte = "é" * 32769  # 32769 characters, 65538 bytes

    assert len(two_byte) < 65536
    assert reason(written(content=two_byte)) == "content_too_large"


def test_multi_byte_content_exactly_at_the_limit_is_accepted() -> None:
    assert reason(written(content="é" * 32768)) is None


def test_an_embedding_one_value_short_has_the_wrong_dimension() -> None:
    assert reason(written(embedding=floats([0.1] * 383))) == "embedding_dimension"


def test_an_embedding_of_the_configured_dimension_is_accepted() -> None:
    limits = Limits(embedding_dim=8)

    assert reason(written(embedding=floats([0.1] * 8)), limits=limits) is None
    assert reason(written(embedding=floats([0.1] * 384)), limits=limits) == "embedding_dimension"


def test_an_embedding_with_a_partial_float_has_the_wrong_dimension() -> None:
    assert reason(written(embedding=floats([0.1] * 384) + b"\x00")) == "embedding_dimension"


def test_a_smaller_content_limit_is_honoured() -> None:
    limits = Limits(max_content_bytes=10)

    assert reason(written(content="0123456789"), limits=limits) is None
    assert reason(written(content="0123456789A"), limits=limits) == "content_too_large"


def test_an_id_with_the_state_key_separator_is_refused() -> None:
    """The worker's state keys join ids with U+001F: a user id holding it could name
    another user's entries ("victim\\x1fm" reads as user "victim", table "m")."""
    event = MemoryEvent(EVENT_ID, "victim\x1fm", T0, MemoryWritten(a_memory()))

    assert reason(event) == "invalid_text"
    assert reason(written(memory_id="m\x1f1")) == "invalid_text"
    assert reason(written(session_id="s\x1f1")) == "invalid_text"
    assert reason(written(conversation_id="c\x1f1")) == "invalid_text"
    assert reason(MemoryEvent(EVENT_ID, USER, T0, ForgetRequested("m\x1f1"))) == "invalid_text"


def test_other_control_characters_in_ids_and_text_are_kept() -> None:
    """Only U+001F breaks anything: ids accepted with a tab or a newline can still be
    forgotten, and text may hold them."""
    assert reason(written(memory_id="m\n1", content="line one\nline two\tend")) is None
    assert reason(MemoryEvent(EVENT_ID, USER, T0, ForgetRequested("m\t1"))) is None


# --- speaker -----------------------------------------------------------------------------------


def test_a_named_speaker_of_the_longest_allowed_name_is_accepted() -> None:
    assert reason(written(speaker="Caroline")) is None
    assert reason(written(speaker="C" * MAX_ID_CHARS)) is None
    assert reason(written(speaker="Zoë O'Brien\tMüller\x1f")) is None  # U+001F: not an id


def test_a_speaker_name_longer_than_an_id_is_out_of_range() -> None:
    rejection = validate_event(written(speaker="C" * (MAX_ID_CHARS + 1)), LIMITS)

    assert rejection is not None
    assert rejection.reason == "out_of_range"
    assert "memory.speaker" in rejection.detail
    assert str(MAX_ID_CHARS) in rejection.detail


def test_a_speaker_holding_nul_is_invalid_text() -> None:
    rejection = validate_event(written(speaker="Caro\x00line"), LIMITS)

    assert rejection is not None
    assert rejection.reason == "invalid_text"
    assert "memory.speaker" in rejection.detail


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_a_blank_speaker_is_invalid_text(blank: str) -> None:
    """A name that names no one: null is how a producer says created_by tells who."""
    rejection = validate_event(written(speaker=blank), LIMITS)

    assert rejection is not None
    assert rejection.reason == "invalid_text"
    assert "null" in rejection.detail
