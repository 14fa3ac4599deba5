"""The contract evolves BACKWARD-compatibly: data written with a released schema stays
readable by the current one (docs/analytics.md, 'The contract'), checked with Apache Avro's own
checker."""

from __future__ import annotations

import json

import avro.schema
import pytest
from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

from streams.kafka.codec import ENVELOPES, NAMESPACE, SchemaRegistry, schemas_dir

BASELINES = sorted(p for p in (schemas_dir() / "baseline").iterdir() if p.is_dir())


def _parse(registry: SchemaRegistry, envelope: str, directory=None) -> avro.schema.Schema:
    return avro.schema.parse(registry.expanded_json(envelope, directory))


def test_there_is_a_released_baseline_of_every_envelope():
    assert BASELINES, "schemas/baseline/<version>/ must hold the last released contract"
    for envelope in ENVELOPES:
        assert (BASELINES[-1] / f"{NAMESPACE}.{envelope}.avsc").exists(), envelope


@pytest.mark.parametrize("baseline", BASELINES, ids=lambda p: p.name)
@pytest.mark.parametrize("envelope", ENVELOPES)
def test_current_schema_reads_data_written_with_the_baseline(envelope, baseline):
    registry = SchemaRegistry()
    reader = _parse(registry, envelope)
    writer = _parse(registry, envelope, baseline)
    result = ReaderWriterCompatibilityChecker().get_compatibility(reader, writer)
    assert result.compatibility is SchemaCompatibilityType.compatible, result.messages


def test_the_checker_rejects_an_incompatible_change():
    """Guard against a checker that always says yes: a new required field without a
    default cannot read old data."""
    registry = SchemaRegistry()
    old = json.loads(registry.expanded_json("MemoryEvent"))
    new = json.loads(registry.expanded_json("MemoryEvent"))
    new["fields"].append({"name": "tenant", "type": "string"})
    result = ReaderWriterCompatibilityChecker().get_compatibility(
        avro.schema.parse(json.dumps(new)), avro.schema.parse(json.dumps(old))
    )
    assert result.compatibility is SchemaCompatibilityType.incompatible


def _memory_fields(registry: SchemaRegistry, directory=None) -> dict[str, dict]:
    envelope = json.loads(registry.expanded_json("MemoryEvent", directory))
    payloads = next(f for f in envelope["fields"] if f["name"] == "payload")["type"]
    written = next(p for p in payloads if p["name"] == "memstream.v1.MemoryWritten")
    memory = next(f for f in written["fields"] if f["name"] == "memory")["type"]
    return {f["name"]: f for f in memory["fields"]}


def test_speaker_is_an_optional_field_the_released_contract_did_not_have():
    """The compatibility check above covers ``speaker`` only while the baseline lacks it and
    the current schema gives it a null default (a producer that never names a speaker, or
    wrote before the field existed, is read with ``speaker`` null)."""
    registry = SchemaRegistry()
    current = _memory_fields(registry)
    released = _memory_fields(registry, BASELINES[-1])

    assert "speaker" not in released
    assert current["speaker"]["type"] == ["null", "string"]
    assert current["speaker"]["default"] is None
    assert current["speaker"]["doc"]
