"""Hostile input (issue 10): over 10,000 mutated and random records through the running worker.

The records are what a broken or malicious producer sends to ``memory.events``: bit flips of
valid events (in the header and in the body), truncations, random bytes, JSON, records of the
ledger's schema, values of the wrong Avro type, impossible lengths and counts ("a map of 2^40
entries"), huge maps, deep unicode with a NUL in it, and events that break one rule of the
contract each. Interleaved with them, valid events of other users (some in deep unicode too).

Every hostile record must be dead-lettered with a reason, the worker must neither crash nor
restart, and every valid event must reach the read models.

Most kinds are invalid by construction, and the test asserts so before publishing, with the
pure ingest step the worker runs (``IngestProcessor``). A body bit flip or a retyped field can
happen to leave a valid event (a flipped bit in a content string is still a content string):
such a record is a valid event, not a fuzz case, and is left out. The same pure step gives the
reason each record must be dead-lettered with, which the worker must agree on.
"""

from __future__ import annotations

import copy
import functools
import io
import itertools
import json
import math
import random
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import fastavro
import pytest

from memstream.waiting import wait_until
from streams.engine.model import (
    ConsolidationRequested,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryWritten,
)
from streams.engine.validation import Limits
from streams.ingest_processor import IngestProcessor, partition_for
from streams.kafka import codec
from tests.support import PARTITIONS, Pipeline
from tests.workloads import BASE_TIME, DIM

pytestmark = pytest.mark.integration

HOSTILE_RECORDS = 10_000
VALID_EVENTS = 300
VALID_USERS = [f"valid-user-{u}" for u in range(10)]
FUZZ_USERS = [f"fuzz-user-{u}" for u in range(40)]
SEED = 20_261_122
KNOWN_REASONS = {
    "undecodable",
    "unknown_schema",
    "wrong_schema",
    "missing_field",
    "invalid_event_id",
    "key_mismatch",
    "wrong_partition",
    "user_mismatch",
    "not_a_number",
    "out_of_range",
    "content_too_large",
    "embedding_dimension",
    "invalid_text",
    "reserved_field",
    "unknown_memory",
    "unknown_profile",
}
DEEP_UNICODE = [
    "e" + "\u0301\u0302\u0303\u0304\u0308" * 200,  # one letter under a thousand combining marks
    "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466" * 50,  # ZWJ family sequences
    "\u202eevil\u202c \u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627",  # RTL override
    "\U00010348\U0001d11e\U0001f600\U000e0041",  # astral planes, a tag character
    "\ufeff\ufffe\uffff\u2028\u2029",  # BOM, noncharacters, line/paragraph separators
    "漢字かなカナ한국어" * 300,
]


# ---- building records -----------------------------------------------------------------------


@dataclass(frozen=True)
class Record:
    kind: str
    key: bytes | None
    value: bytes


def new_id(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def valid_event(
    rng: random.Random, user: str, index: int, content: str | None = None
) -> MemoryEvent:
    memory = Memory(
        memory_id=f"{user}-m{index}",
        user_id=user,
        content=content or f"{user} remembers fact {index}",
        tags=("fuzz", f"t{index % 7}"),
        importance=rng.uniform(0, 0.6),
        metadata={"source": "fuzz-test", "n": str(index)},
        embedding=codec.pack_embedding([rng.uniform(-1, 1) for _ in range(DIM)])
        if index % 3 == 0
        else None,
    )
    return MemoryEvent(new_id(rng), user, BASE_TIME + index, MemoryWritten(memory))


class Retyper:
    """Writes a valid event with one Memory field re-typed (e.g. ``metadata`` as a ``long``),
    framed with the real MemoryEvent fingerprint: what a producer with a wrong idea of the
    contract sends, and the way to claim a map of 2^40 entries in a few bytes."""

    def __init__(self) -> None:
        registry = codec.default_registry()
        self.fingerprint = registry.current["MemoryEvent"].fingerprint
        self.schema = codec.strip_logical_types(json.loads(registry.expanded_json("MemoryEvent")))
        self.reader = fastavro.parse_schema(copy.deepcopy(self.schema))

    def encode(self, event: MemoryEvent, name: str, avro_type: Any, value: Any) -> bytes:
        body = io.BytesIO(codec.encode_event(event)[codec.HEADER_SIZE :])
        datum: Any = fastavro.schemaless_reader(body, self.reader, return_record_name=True)
        datum["payload"][1]["memory"][name] = value
        out = io.BytesIO()
        fastavro.schemaless_writer(out, self._writer(name, json.dumps(avro_type)), datum)
        return codec.MAGIC + self.fingerprint + out.getvalue()

    @functools.cache  # noqa: B019 - one Retyper per test run
    def _writer(self, name: str, avro_type: str) -> Any:
        schema = copy.deepcopy(self.schema)
        written = next(s for s in _payload(schema) if s["name"].endswith("MemoryWritten"))
        memory_fields = written["fields"][0]["type"]["fields"]
        retyped = next(f for f in memory_fields if f["name"] == name)
        retyped["type"] = json.loads(avro_type)
        retyped.pop("default", None)
        return fastavro.parse_schema(schema)


def _payload(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return next(f for f in schema["fields"] if f["name"] == "payload")["type"]


def flip_bits(data: bytes, rng: random.Random, start: int, end: int, flips: int) -> bytes:
    mutable = bytearray(data)
    for _ in range(flips):
        position = rng.randrange(start, end)
        mutable[position] ^= 1 << rng.randrange(8)
    return bytes(mutable)


def broken_events(rng: random.Random, user: str) -> Iterator[tuple[bytes | None, MemoryEvent]]:
    """(key, event) pairs that each break one rule of the contract."""
    key = user.encode()
    base = valid_event(rng, user, rng.randrange(10_000))
    memory = base.payload.memory  # type: ignore[union-attr]

    def write(**changes: Any) -> MemoryEvent:
        return MemoryEvent(new_id(rng), user, BASE_TIME, MemoryWritten(memory.evolve(**changes)))

    yield key, write(importance=math.nan)
    yield key, write(confidence=math.inf)
    yield key, write(valence=rng.choice([-1.5, 2.0, -1e308]))
    yield key, write(access_count=-rng.randrange(1, 2**31))
    yield key, write(created_at=rng.choice([-1, 2**62]))
    yield key, write(content="")
    yield key, write(content="x" * 65_537)
    yield key, write(content=rng.choice(DEEP_UNICODE) + "\x00")
    yield key, write(tags=("ok", "nul\x00tag"))
    yield key, write(embedding=codec.pack_embedding([0.5] * (DIM - 1)))
    yield key, write(embedding=codec.pack_embedding([math.nan] * DIM))
    yield key, write(status="archived")
    yield key, write(user_id="someone-else")
    yield key, MemoryEvent("not-a-uuid", user, BASE_TIME, base.payload)
    yield key, MemoryEvent(new_id(rng), user, -5, base.payload)
    yield key, MemoryEvent(new_id(rng), user, BASE_TIME, MemoryAccessed(f"never-{rng.random()}"))
    yield key, MemoryEvent(new_id(rng), user, BASE_TIME, ConsolidationRequested(profile="nope"))
    yield rng.choice(FUZZ_USERS).encode() + b"-other", base  # key is not the user
    yield None, base  # no key at all


def hostile_candidates(rng: random.Random) -> Iterator[Record]:
    """An endless mix of hostile records, in rough proportion per kind."""
    retyper = Retyper()
    ledger_fingerprint = codec.default_registry().current["ConsolidationEvent"].fingerprint
    for round_number in itertools.count():
        user = rng.choice(FUZZ_USERS)
        key = user.encode()
        event = valid_event(rng, user, rng.randrange(10_000), rng.choice([None, *DEEP_UNICODE]))
        good = codec.encode_event(event)
        yield Record("random_bytes", key, rng.randbytes(rng.randrange(0, 400)))
        yield Record("random_bytes", None, rng.randbytes(rng.randrange(0, 40)))
        yield Record("header_flip", key, flip_bits(good, rng, 0, codec.HEADER_SIZE, 1))
        yield Record("header_flip", key, flip_bits(good, rng, 0, codec.HEADER_SIZE, 3))
        yield Record("truncation", key, good[: rng.randrange(0, len(good))])
        yield Record("truncation", key, good[: len(good) - rng.randrange(1, 4)])
        for flips in (1, 2, 4):
            yield Record(
                "body_flip", key, flip_bits(good, rng, codec.HEADER_SIZE, len(good), flips)
            )
        yield Record("body_flip", key, good + rng.randbytes(rng.randrange(1, 8)))  # trailing
        yield Record("wrong_type", key, json.dumps({"event_id": event.event_id}).encode())
        yield Record("wrong_type", key, codec.MAGIC + ledger_fingerprint + good[10:])
        yield Record(
            "wrong_type",
            key,
            retyper.encode(
                event,
                rng.choice(["importance", "access_count", "created_at"]),
                "string",
                "high",
            ),
        )
        yield Record(
            "wrong_type",
            key,
            retyper.encode(
                event, "tags", {"type": "map", "values": "long"}, {"a": rng.randrange(9)}
            ),
        )
        if rng.random() < 0.3:
            yield Record(
                "invalid_utf8",
                key,
                retyper.encode(
                    event, "content", "bytes", rng.choice([b"\xed\xa0\x80", b"\xff\xfe\xc3"])
                ),
            )
        huge = rng.choice([2**31, 2**40, 2**62, -1, -(2**40)])
        name = rng.choice(["metadata", "tags", "content", "embedding", "memory_id"])
        yield Record("huge_claim", key, retyper.encode(event, name, "long", huge))
        if round_number % 50 == 0:
            metadata = {f"k{i}": "v" * 8 for i in range(20_000)}
            metadata["last"] = "nul\x00"
            yield Record(
                "huge_map",
                key,
                codec.encode_event(
                    MemoryEvent(
                        new_id(rng),
                        user,
                        BASE_TIME,
                        MemoryWritten(event.payload.memory.evolve(metadata=metadata)),  # type: ignore[union-attr]
                    )
                ),
            )
        for broken_key, broken in broken_events(rng, user):
            if rng.random() < 0.15:
                yield Record("contract_break", broken_key, codec.encode_event(broken))


MAY_BE_VALID = {"body_flip", "wrong_type", "invalid_utf8"}


@dataclass
class Plan:
    hostile: list[Record] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)  # what the pure ingest step says, per record
    valid: list[MemoryEvent] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)  # mutations that left valid events

    def interleaved(self, rng: random.Random) -> Iterator[MemoryEvent | Record]:
        every = len(self.hostile) // len(self.valid)
        valid = iter(self.valid)
        for i, record in enumerate(self.hostile):
            if i % every == 0:
                yield from [e for e in [next(valid, None)] if e is not None]
            yield record
        yield from valid


def plan(rng: random.Random) -> Plan:
    """Hostile records checked against the pure ingest step, and valid events of other users."""
    result = Plan()
    limits = Limits(DIM, 65_536)
    processor = IngestProcessor(limits, partitions=PARTITIONS)
    for record in hostile_candidates(rng):
        if len(result.hostile) >= HOSTILE_RECORDS:
            break
        partition = partition_for(record.key, PARTITIONS) if record.key is not None else 0
        emission = processor.process(record.key, record.value, [], partition)
        if emission.rejection is None:
            assert record.kind in MAY_BE_VALID, f"a {record.kind} record was accepted"
            result.dropped[record.kind] += 1
            processor = IngestProcessor(limits, partitions=PARTITIONS)  # forget what it added
            continue
        result.hostile.append(record)
        result.reasons.append(emission.rejection.reason)
    for i in range(VALID_EVENTS):
        user = VALID_USERS[i % len(VALID_USERS)]
        content = DEEP_UNICODE[i % len(DEEP_UNICODE)] if i % 10 == 0 else None
        result.valid.append(valid_event(rng, user, i, content))
    return result


# ---- the run --------------------------------------------------------------------------------


@dataclass
class FuzzRun:
    pipeline: Pipeline
    plan: Plan
    worker_pid: int
    letters: list[Any]


@pytest.fixture(scope="module")
def fuzz_run(stack: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FuzzRun]:
    """The worker and projector running while the hostile records and the valid events are
    published in one interleaved stream; the dead letters read back."""
    rng = random.Random(SEED)
    the_plan = plan(rng)
    pipeline = Pipeline.create(stack, tmp_path_factory.mktemp("fuzz"))
    try:
        pipeline.start_all()
        worker_pid = pipeline.processes["worker"].pid
        publisher = pipeline.publisher
        for item in the_plan.interleaved(rng):
            if isinstance(item, MemoryEvent):
                publisher.publish(item)
            else:
                publisher.publish_raw(item.key, item.value, event_type=f"fuzz-{item.kind}")
        publisher.flush(120)
        letters = pipeline.read_topic(
            pipeline.settings.deadletter_topic, expected=len(the_plan.hostile), timeout=150
        )
        yield FuzzRun(pipeline, the_plan, worker_pid, letters)
    finally:
        pipeline.close()


def test_the_plan_is_over_ten_thousand_hostile_records_of_every_kind(fuzz_run: FuzzRun) -> None:
    kinds = Counter(record.kind for record in fuzz_run.plan.hostile)

    assert len(fuzz_run.plan.hostile) >= 10_000
    assert set(kinds) == {
        "random_bytes",
        "header_flip",
        "truncation",
        "body_flip",
        "wrong_type",
        "invalid_utf8",
        "huge_claim",
        "huge_map",
        "contract_break",
    }, kinds


def test_every_hostile_record_is_dead_lettered_once_with_its_reason(fuzz_run: FuzzRun) -> None:
    """Given the hostile records interleaved with valid events,
    when the worker has processed them,
    then memory.deadletter holds each one exactly once, byte for byte, with a known reason
    (the one the pure ingest step gives) and a detail."""
    letters = fuzz_run.letters
    headers = [dict(m.headers() or []) for m in letters]

    assert len(letters) == len(fuzz_run.plan.hostile)
    assert Counter(m.value() or b"" for m in letters) == Counter(
        r.value for r in fuzz_run.plan.hostile
    )
    assert all(h.get("detail") for h in headers)
    reasons = Counter(h["reason"].decode() for h in headers)
    assert set(reasons) <= KNOWN_REASONS
    assert reasons == Counter(fuzz_run.plan.reasons)


def test_the_worker_never_crashed_and_counted_every_rejection(fuzz_run: FuzzRun) -> None:
    pipeline = fuzz_run.pipeline
    worker = pipeline.processes["worker"]

    assert worker.alive() and worker.pid == fuzz_run.worker_pid
    assert "Traceback" not in worker.log_tail(100_000)
    wait_until(
        lambda: (
            pipeline.metric_sum("worker", "memstream_events_rejected_total")
            == len(fuzz_run.plan.hostile)
        ),
        timeout=30,
        what="the rejection counters to add up",
        describe=lambda: str(pipeline.metric_sum("worker", "memstream_events_rejected_total")),
    )


def test_every_valid_event_interleaved_with_them_arrives(fuzz_run: FuzzRun) -> None:
    pipeline = fuzz_run.pipeline
    expected = {
        (e.user_id, e.payload.memory.memory_id, e.payload.memory.content)  # type: ignore[union-attr]
        for e in fuzz_run.plan.valid
    }

    def arrived() -> set[tuple[str, str, str]]:
        return {
            (user, memory_id, facts[2])
            for (_, user, memory_id), facts in pipeline.memory_rows().items()
        }

    wait_until(
        lambda: arrived() >= expected,
        timeout=90,
        what=f"{len(expected)} valid memories in the read models",
        describe=lambda: f"{len(arrived() & expected)} arrived\n{pipeline.logs()}",
    )
    assert {user for user, _, _ in arrived()} == set(VALID_USERS)


def test_no_metric_label_names_a_user_or_content_after_the_hostile_run(fuzz_run: FuzzRun) -> None:
    """Given forty hostile users and ten valid ones, when /metrics is scraped, then no label
    value carries a user id or a memory's content."""
    pipeline = fuzz_run.pipeline
    forbidden = [*VALID_USERS, *FUZZ_USERS, "fuzz-user", "valid-user", "remembers fact"]

    labels = {
        value
        for process in ("worker", "projector")
        for (_, sample_labels) in pipeline.metrics(process)
        for _, value in sample_labels
    }

    assert labels
    assert [value for value in labels if any(f in value for f in forbidden)] == []
