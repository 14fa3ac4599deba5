"""``memstream tail`` without a broker (issue 8): filtering on key and header before decoding,
the JSON form of every ledger event, ``--max``, and bad records. The records are built in
memory from real encoded ledger events; the Kafka side is covered by
tests/integration/test_tail.py."""

from __future__ import annotations

import base64
import dataclasses
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memstream.cli import main
from memstream.tail import (
    LEDGER_EVENT_TYPES,
    HeaderValue,
    Tail,
    TailFilter,
    event_json,
    iso_millis,
    render,
    time_fields,
)
from streams.engine import ledger
from streams.kafka import codec
from tests.unit.kafka.test_codec import LEDGER_PAYLOADS, T0, USER, a_ledger_event, a_memory

OTHER = "user-8"


@dataclass
class FakeRecord:
    """A consumed ledger record as confluent-kafka hands it over (key = user id)."""

    value_bytes: bytes | None
    key_bytes: bytes | None
    header_list: list[tuple[str, HeaderValue]] | None
    offset_: int = 0
    partition_: int = 2
    topic_: str = "t.memory.consolidation"
    timestamp_: tuple[int, int] = (1, T0 + 50)

    def key(self) -> bytes | None:
        return self.key_bytes

    def value(self) -> bytes | None:
        return self.value_bytes

    def headers(self) -> list[tuple[str, HeaderValue]] | None:
        return self.header_list

    def topic(self) -> str | None:
        return self.topic_

    def partition(self) -> int | None:
        return self.partition_

    def offset(self) -> int | None:
        return self.offset_

    def timestamp(self) -> tuple[int, int]:
        return self.timestamp_


def a_record(event: ledger.ConsolidationEvent, offset: int = 0, header: bool = True) -> FakeRecord:
    """What the worker writes: key = user id, ``event_type`` header, encoded value."""
    headers: list[tuple[str, HeaderValue]] = [("event_type", event.event_type.encode())]
    return FakeRecord(
        codec.encode_ledger(event), event.user_id.encode(), headers if header else None, offset
    )


def for_user(user: str, payload: object) -> ledger.ConsolidationEvent:
    return dataclasses.replace(a_ledger_event(payload), user_id=user)


@dataclass
class CountingDecoder:
    """``decode_ledger`` that remembers what it was asked to decode."""

    calls: list[bytes] = field(default_factory=list)

    def __call__(self, data: bytes) -> ledger.ConsolidationEvent:
        self.calls.append(data)
        return codec.decode_ledger(data)


def a_tail(wanted: TailFilter, **options: object) -> tuple[Tail, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Tail(wanted, out, err, **options), out, err  # type: ignore[arg-type]


def lines(out: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


# --- filter ----------------------------------------------------------------------------------


def test_only_the_users_wanted_types_are_decoded_and_printed_the_rest_counted_as_skipped():
    """Given a ledger of two users with stored, accessed and completed events,
    when tailing MemoryStored of one user,
    then exactly that user's MemoryStored events come out, in order, and every other record
    is counted as skipped without its value ever being decoded."""
    stored, accessed = LEDGER_PAYLOADS["MemoryStored"], LEDGER_PAYLOADS["MemoryAccessRecorded"]
    completed = LEDGER_PAYLOADS["ConsolidationCompleted"]
    events = [
        for_user(USER, stored),
        for_user(OTHER, stored),
        for_user(USER, accessed),
        for_user(USER, completed),
        for_user(OTHER, accessed),
        for_user(USER, stored),
    ]
    records = [a_record(event, offset) for offset, event in enumerate(events)]
    decoder = CountingDecoder()
    tail, out, err = a_tail(TailFilter(frozenset({"MemoryStored"}), USER), decode=decoder)

    tail.feed(records)

    printed = lines(out)
    assert [(p["kafka"]["offset"], p["event_type"], p["user_id"]) for p in printed] == [
        (0, "MemoryStored", USER),
        (5, "MemoryStored", USER),
    ]
    assert decoder.calls == [records[0].value_bytes, records[5].value_bytes]
    assert (tail.stats.printed, tail.stats.skipped, tail.stats.records) == (2, 4, 6)
    assert err.getvalue() == ""


def test_several_event_types_and_no_user_filter_take_every_user():
    events = [
        for_user(USER, LEDGER_PAYLOADS["MemoryStored"]),
        for_user(OTHER, LEDGER_PAYLOADS["MemoryForgotten"]),
        for_user(OTHER, LEDGER_PAYLOADS["SalienceDecayed"]),
    ]
    tail, out, _ = a_tail(TailFilter(frozenset({"MemoryStored", "MemoryForgotten"})))

    tail.feed(a_record(event) for event in events)

    assert [p["event_type"] for p in lines(out)] == ["MemoryStored", "MemoryForgotten"]
    assert tail.stats.skipped == 1


def test_a_record_without_the_event_type_header_is_decoded_and_filtered_on_its_type():
    """Given records that lack the header (not the worker's, but possible), when filtering by
    type, then they are decoded and kept or dropped by their decoded type: nothing is missed."""
    stored = a_record(for_user(USER, LEDGER_PAYLOADS["MemoryStored"]), 0, header=False)
    deleted = a_record(for_user(USER, LEDGER_PAYLOADS["MemoryDeleted"]), 1, header=False)
    tail, out, _ = a_tail(TailFilter(frozenset({"MemoryStored"})))

    tail.feed([stored, deleted])

    assert [p["kafka"]["offset"] for p in lines(out)] == [0]
    assert tail.stats.filtered_after_decode == 1


def test_a_record_of_another_user_is_skipped_even_without_a_key_or_headers():
    keyless = FakeRecord(
        codec.encode_ledger(a_ledger_event(LEDGER_PAYLOADS["MemoryStored"])), None, None
    )
    tail, out, _ = a_tail(TailFilter(user=USER))

    tail.feed([keyless])

    assert out.getvalue() == ""
    assert tail.stats.skipped == 1


def test_an_unknown_event_type_is_refused_with_the_known_ones_listed():
    with pytest.raises(ValueError, match="MemoryStord") as raised:
        TailFilter(frozenset({"MemoryStord"}))

    assert "MemoryStored" in str(raised.value)
    assert set(LEDGER_EVENT_TYPES) == {cls.__name__ for cls in ledger.LEDGER_PAYLOAD_TYPES}


# --- the loop's stopping and bad input -------------------------------------------------------


def test_max_stops_after_n_printed_events_and_reads_no_further():
    records = [a_record(for_user(USER, LEDGER_PAYLOADS["MemoryStored"]), n) for n in range(5)]
    tail, out, _ = a_tail(TailFilter(), max_events=2)

    tail.feed(records[:1])
    tail.feed(records[1:])

    assert len(lines(out)) == 2
    assert tail.done
    assert tail.stats.records == 2


def test_an_undecodable_record_is_reported_on_stderr_and_the_tail_goes_on():
    """Given a corrupt record between two good ones, when tailing, then stdout holds only the
    two good JSON lines and stderr names where the bad one is and why."""
    good = a_record(for_user(USER, LEDGER_PAYLOADS["MemoryStored"]), 0)
    bad = FakeRecord(b"\xc3\x01garbage", USER.encode(), [("event_type", b"MemoryStored")], 1)
    also_good = a_record(for_user(USER, LEDGER_PAYLOADS["MemoryStored"]), 2)
    tail, out, err = a_tail(TailFilter())

    tail.feed([good, bad, also_good])

    assert [p["kafka"]["offset"] for p in lines(out)] == [0, 2]
    assert "t.memory.consolidation[2]@1" in err.getvalue()
    assert "undecodable" in err.getvalue()
    assert tail.stats.undecodable == 1


# --- render ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", LEDGER_PAYLOADS.keys())
def test_every_ledger_event_type_renders_as_one_line_of_json_with_every_field(name):
    """Given each of the seventeen payload types, when rendered, then the line is valid JSON
    holding every ConsolidationEvent field and every payload field (bytes fields aside)."""
    event = a_ledger_event(LEDGER_PAYLOADS[name])

    line = render(event, a_record(event))

    assert "\n" not in line
    document = json.loads(line)
    envelope = {f.name for f in dataclasses.fields(ledger.ConsolidationEvent)}
    assert envelope <= document.keys()
    assert document["event_type"] == name
    payload_fields = {f.name for f in dataclasses.fields(event.payload)}
    bytes_fields = {n for n in payload_fields if isinstance(getattr(event.payload, n), bytes)}
    assert payload_fields - bytes_fields <= document["payload"].keys()
    assert not bytes_fields & document["payload"].keys()


def test_times_are_ints_with_iso_twins_and_embeddings_are_omitted_by_default():
    event = a_ledger_event(ledger.MemoryStored(a_memory(), 3, previous_layer="working"))

    document = event_json(event)

    assert document["occurred_at"] == T0 + 1
    assert document["occurred_at_iso"] == iso_millis(T0 + 1) == "2024-05-29T16:26:40.001Z"
    memory = document["payload"]["memory"]
    assert memory["created_at"] == T0 and memory["created_at_iso"] == "2024-05-29T16:26:40.000Z"
    assert memory["salience"] is None
    assert "salience_iso" not in memory  # not a time
    assert memory["tags"] == ["coffee", "morning"]
    assert memory["metadata"] == {"source": "chat", "lang": "en"}
    assert "embedding" not in memory
    assert list(document)[:2] == ["event_id", "event_type"]


def test_embeddings_base64_gives_back_the_packed_float32_bytes():
    memory = a_memory()
    event = a_ledger_event(ledger.MemoryStored(memory, 3))

    document = event_json(event, embeddings="base64")

    assert memory.embedding is not None
    assert base64.b64decode(document["payload"]["memory"]["embedding"]) == memory.embedding


def test_an_unset_embedding_is_left_out_too_and_is_null_with_base64():
    """The key's presence never depends on the value: omitted means omitted, set or not."""
    event = a_ledger_event(ledger.MemoryStored(a_memory(embedding=None), 1))

    assert "embedding" not in event_json(event)["payload"]["memory"]
    assert event_json(event, embeddings="base64")["payload"]["memory"]["embedding"] is None


def test_a_missing_time_has_a_null_iso_twin_and_the_kafka_coordinates_are_kept():
    event = a_ledger_event(ledger.MemoryStored(a_memory(invalid_at=None), 1))
    record = a_record(event, offset=41)

    document = json.loads(render(event, record))

    assert document["payload"]["memory"]["invalid_at"] is None
    assert document["payload"]["memory"]["invalid_at_iso"] is None
    assert document["kafka"] == {
        "topic": "t.memory.consolidation",
        "partition": 2,
        "offset": 41,
        "key": USER,
        "timestamp": T0 + 50,
        "timestamp_iso": "2024-05-29T16:26:40.050Z",
    }


def test_the_time_fields_are_read_from_the_contract():
    assert time_fields() == {
        "occurred_at",
        "accessed_at",
        "invalid_at",
        "started_at",
        "ended_at",
        "created_at",
        "last_accessed",
        "valid_at",
    }
    assert iso_millis(0) == "1970-01-01T00:00:00.000Z"
    assert iso_millis(None) is None


# --- the command's input checks (no broker: each fails before connecting) --------------------


@pytest.fixture
def isolated_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTREAM_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("MEMSTREAM_KAFKA_BOOTSTRAP", "127.0.0.1:1")  # nothing listens


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--event-type", "MemoryStord"], "unknown ledger event type"),
        (["--max", "0"], "--max needs a positive number"),
        (["--timeout", "-1"], "--timeout needs a positive number"),
    ],
)
def test_bad_tail_arguments_exit_2_with_what_to_fix(isolated_state, capsys, args, message):
    assert main(["tail", *args]) == 2

    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.out == ""
