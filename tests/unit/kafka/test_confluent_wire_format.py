"""The Confluent wire format (docs/analytics.md, 'Schema Registry'): ``00`` + a 4-byte
big-endian registry id + the same Avro body; both formats are read always, ids resolved once
each; an id the registry does not have is a dead letter (``unknown_schema``), an outage is
waited out and never dead-letters anything.

The registry here is a function from id to schema text (the codec's whole view of it); the
real one (Apicurio, local) is exercised in tests/integration/test_schema_registry.py."""

from __future__ import annotations

import asyncio
import json
import threading
import typing

import pytest

from streams.config.settings import Settings
from streams.engine.model import InputPayload, MemoryEvent, MemoryWritten
from streams.engine.validation import Limits
from streams.ingest_processor import IngestProcessor
from streams.kafka import codec
from streams.kafka.schema_registry import (
    RegistryUnavailable,
    contract_subjects,
    resolve_ids_waiting,
    subject_for,
    unknown_ids,
    with_retries,
)
from tests.unit.kafka.test_codec import (
    INPUT_PAYLOADS,
    LEDGER_PAYLOADS,
    a_ledger_event,
    a_memory,
    an_event,
)

EVENT_ID, LEDGER_ID = 7, 8
SOURCE = [("source.topic", b"memory.events"), ("source.partition", b"0"), ("source.offset", b"1")]


class Registry:
    """What a Schema Registry answers, id by id, and how often it was asked."""

    def __init__(self, schemas: dict[int, str], down: bool = False) -> None:
        self.schemas = schemas
        self.down = down
        self.asked: list[int] = []
        self.asked_again = threading.Event()  # set at the second question

    def __call__(self, schema_id: int) -> str | None:
        self.asked.append(schema_id)
        if len(self.asked) >= 2:
            self.asked_again.set()
        if self.down:
            raise RegistryUnavailable("the Schema Registry at http://registry does not answer")
        return self.schemas.get(schema_id)


def input_event(name: str) -> MemoryEvent:
    return an_event(typing.cast(InputPayload, INPUT_PAYLOADS[name]))


def contract() -> dict[int, str]:
    local = codec.default_registry()
    return {
        EVENT_ID: local.expanded_json("MemoryEvent"),
        LEDGER_ID: local.expanded_json("ConsolidationEvent"),
    }


def confluent_writer() -> codec.SchemaRegistry:
    registry = codec.SchemaRegistry()
    registry.write_with_ids({"MemoryEvent": EVENT_ID, "ConsolidationEvent": LEDGER_ID})
    return registry


def a_reader(answers: Registry | None = None) -> codec.SchemaRegistry:
    registry = codec.SchemaRegistry()
    registry.resolver = answers if answers is not None else Registry(contract())
    return registry


# --- writing ---------------------------------------------------------------------------------


def test_a_confluent_record_is_magic_zero_the_big_endian_id_and_the_same_body() -> None:
    event = input_event("MemoryWritten/full")

    confluent = codec.encode_event(event, confluent_writer())
    single = codec.encode_event(event)

    assert confluent[:5] == b"\x00\x00\x00\x00\x07"
    assert confluent[5:] == single[codec.HEADER_SIZE :]


@pytest.mark.parametrize("name", sorted(LEDGER_PAYLOADS))
def test_the_generated_ledger_writer_matches_cavro_in_the_confluent_format(name: str) -> None:
    registry = confluent_writer()
    record = a_ledger_event(LEDGER_PAYLOADS[name])
    schema = registry.current["ConsolidationEvent"]

    assert codec.encode_ledger(record, registry) == codec.frame_with_cavro(
        schema, codec.ledger_datum(record)
    )


# --- reading both ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(INPUT_PAYLOADS))
def test_a_reader_decodes_both_formats_of_an_input_event_to_the_same_event(name: str) -> None:
    event = input_event(name)
    reader = a_reader()

    assert codec.decode_event(codec.encode_event(event, confluent_writer()), reader) == event
    assert codec.decode_event(codec.encode_event(event), reader) == event


def test_a_ledger_read_in_both_formats_asks_the_registry_once_per_id() -> None:
    answers = Registry(contract())
    reader = a_reader(answers)
    writer = confluent_writer()
    records = [a_ledger_event(p) for p in LEDGER_PAYLOADS.values()]
    mixed = [codec.encode_ledger(r, writer if i % 2 else None) for i, r in enumerate(records)]

    decoded = [codec.decode_ledger(value, reader) for value in mixed]

    assert decoded == records
    assert answers.asked == [LEDGER_ID]


def test_a_producer_s_own_compatible_schema_is_read_by_avro_resolution() -> None:
    """A producer in another language registers the 1.0.0 schema (no ``speaker``): its
    records are read into the current schema, the missing field taking its default."""
    baseline = codec.default_registry().directory / "baseline" / "1.0.0"
    older = codec.default_registry().expanded_json("MemoryEvent", baseline)
    reader = a_reader(Registry({21: older}))
    old_writer = reader.learn_id(21, older)
    memory = a_memory(content="from a Go service")
    datum = codec.memory_to_datum(memory)
    del datum["salience"], datum["speaker"]
    body = old_writer.schema.binary_encode(
        {
            "event_id": "00000000-0000-4000-8000-000000000001",
            "user_id": memory.user_id,
            "occurred_at": 1,
            "source": "go",
            "payload": (f"{codec.NAMESPACE}.MemoryWritten", {"memory": datum}),
        }
    )

    decoded = codec.decode_event(codec.confluent_frame(21) + body, reader)

    assert isinstance(decoded.payload, MemoryWritten)
    assert decoded.payload.memory.content == "from a Go service"
    assert decoded.payload.memory.speaker is None


# --- what cannot be read ---------------------------------------------------------------------


def test_an_id_the_registry_does_not_have_is_an_unknown_schema() -> None:
    value = codec.confluent_frame(99) + b"\x02"

    with pytest.raises(codec.DecodeError) as caught:
        codec.decode_event(value, a_reader())

    assert caught.value.reason == "unknown_schema"
    assert "99" in caught.value.detail


def test_with_no_registry_configured_a_confluent_record_is_undecodable_and_says_why() -> None:
    value = codec.encode_event(input_event("MemoryAccessed"), confluent_writer())

    with pytest.raises(codec.DecodeError) as caught:
        codec.decode_event(value, codec.SchemaRegistry())

    assert caught.value.reason == "undecodable"
    assert "MEMSTREAM_SCHEMA_REGISTRY_URL" in caught.value.detail


def test_an_id_of_a_schema_that_is_not_ours_is_the_wrong_schema() -> None:
    other = json.dumps(
        {"type": "record", "name": "Click", "fields": [{"name": "x", "type": "int"}]}
    )
    reader = a_reader(Registry({5: other}))

    with pytest.raises(codec.DecodeError) as caught:
        codec.decode_event(codec.confluent_frame(5) + b"\x02", reader)

    assert caught.value.reason == "wrong_schema"


def test_a_ledger_id_read_as_an_input_event_is_the_wrong_schema() -> None:
    value = codec.encode_ledger(
        a_ledger_event(next(iter(LEDGER_PAYLOADS.values()))), confluent_writer()
    )

    with pytest.raises(codec.DecodeError) as caught:
        codec.decode_event(value, a_reader())

    assert caught.value.reason == "wrong_schema"


def test_the_worker_dead_letters_an_unknown_id_with_its_reason_and_the_original_bytes() -> None:
    processor = IngestProcessor(Limits(), registry=a_reader())
    value = (
        codec.confluent_frame(404)
        + codec.encode_event(input_event("MemoryAccessed"))[codec.HEADER_SIZE :]
    )

    emission = processor.process(b"user-7", value, SOURCE)

    assert emission.deadletter is not None
    assert emission.deadletter.value == value
    assert dict(emission.deadletter.headers)["reason"] == b"unknown_schema"
    assert not emission.ledger


# --- outages ---------------------------------------------------------------------------------


def test_a_cached_id_is_read_while_the_registry_is_down() -> None:
    answers = Registry(contract())
    reader = a_reader(answers)
    event = input_event("MemoryAccessed")
    value = codec.encode_event(event, confluent_writer())
    codec.decode_event(value, reader)

    answers.down = True

    assert codec.decode_event(value, reader) == event
    assert answers.asked == [EVENT_ID]


def test_an_outage_is_not_a_decode_error_so_nothing_is_dead_lettered_for_it() -> None:
    reader = a_reader(Registry(contract(), down=True))
    value = codec.encode_event(input_event("MemoryAccessed"), confluent_writer())

    with pytest.raises(RegistryUnavailable):
        codec.decode_event(value, reader)


def test_the_worker_s_batch_waits_for_an_uncached_id_until_the_registry_is_back() -> None:
    answers = Registry(contract(), down=True)
    reader = a_reader(answers)
    value = codec.encode_event(input_event("MemoryAccessed"), confluent_writer())

    async def registry_back_later() -> None:
        # back once the batch has been refused and has asked again: it waited, not skipped
        retried = await asyncio.to_thread(answers.asked_again.wait, 30)
        assert retried, "the batch never asked the registry again"
        answers.down = False

    async def run() -> None:
        await asyncio.gather(resolve_ids_waiting(reader, [value, None]), registry_back_later())

    asyncio.run(run())

    assert unknown_ids(reader, [value]) == set()
    assert len(answers.asked) >= 2  # it was asked while down, then once more


def test_start_retries_with_backoff_then_names_what_to_do() -> None:
    pauses: list[float] = []

    def down() -> None:
        raise RegistryUnavailable("connection refused")

    with pytest.raises(RegistryUnavailable) as caught:
        with_retries(down, 0.0, "registering the contract", pauses.append)

    assert "MEMSTREAM_SCHEMA_REGISTRY_URL" in str(caught.value)
    assert "memstream up --registry" in str(caught.value)


def test_start_succeeds_once_the_registry_answers() -> None:
    pauses: list[float] = []
    attempts = iter([RegistryUnavailable("refused"), RegistryUnavailable("refused"), None])

    def flaky() -> str:
        failure = next(attempts)
        if failure is not None:
            raise failure
        return "registered"

    assert with_retries(flaky, 60.0, "registering", pauses.append) == "registered"
    assert pauses == [0.5, 1.0]


# --- subjects --------------------------------------------------------------------------------


def test_subjects_follow_the_topic_name_strategy() -> None:
    settings = Settings(topic_prefix="acme.")

    assert contract_subjects(settings) == {
        "MemoryEvent": "acme.memory.events-value",
        "ConsolidationEvent": "acme.memory.consolidation-value",
    }
    assert subject_for("x") == "x-value"
