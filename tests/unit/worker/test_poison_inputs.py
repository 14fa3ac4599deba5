"""No input stops the worker, and no input of one user touches another's (issue 37).

The ingest agent's body (``IngestProcessor.process_batch``) without Kafka: event ids are the
producers', so two inputs of a batch may share one; an input the worker fails on is that
input's dead letter (``internal_error``), its user's state is as if it never came, and the
rest of the batch lands. The saved state entries the worker keeps (local store, pending
changelog entries) are stood in for by a dict fed with each batch's entries, as the
changelog is."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence

import pytest

from streams import ingest_processor
from streams.embedders.hashing import HashingEmbedder
from streams.engine.model import (
    ConsolidationRequested,
    ForgetRequested,
    InputPayload,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryPinned,
    MemoryWritten,
    SessionEnded,
)
from streams.engine.user_state import InMemoryUserState
from streams.engine.validation import Limits
from streams.ingest_processor import INTERNAL_ERROR, Emission, IngestProcessor, Input
from streams.kafka import codec
from streams.state.changelog import SEPARATOR, Entry
from streams.state.hot_users import UserStates
from tests.input_faults import POISON, failing_after

T0 = 1_717_000_000_000
SHARED_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "issue-37/shared"))


def eid(n: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"issue-37/{n}"))


def write(
    user: str, memory_id: str, text: str, event_id: str, at: int = 0, **fields: object
) -> MemoryEvent:
    memory = Memory(memory_id, user, text).evolve(**fields)
    return MemoryEvent(event_id, user, T0 + at, MemoryWritten(memory), source="test")


def event(user: str, payload: InputPayload, event_id: str, at: int = 0) -> MemoryEvent:
    return MemoryEvent(event_id, user, T0 + at, payload, source="test")


def as_input(e: MemoryEvent, offset: int = 0) -> Input:
    source = [("source.topic", b"memory.events"), ("source.offset", str(offset).encode())]
    return Input(e.user_id.encode(), codec.encode_event(e), source)


class SavedEntries:
    """The state entries sent so far, as the worker's local store and pending entries hold
    them: what a failed input's user is rebuilt from."""

    def __init__(self) -> None:
        self.entries: dict[bytes, Entry] = {}

    def __call__(self, partition: int, user_id: str) -> list[Entry]:
        prefix = user_id.encode() + SEPARATOR.encode()
        return [e for key, e in self.entries.items() if key.startswith(prefix)]

    def sent(self, emissions: Iterable[Emission]) -> None:
        for emission in emissions:
            for entry in emission.state:
                self.entries[entry.key] = entry


class Worker:
    """A processor and its saved entries, batch after batch."""

    def __init__(self, embedder: HashingEmbedder | None = None) -> None:
        self.saved = SavedEntries()
        self.processor = IngestProcessor(
            Limits(), UserStates(), embedder=embedder, saved=self.saved
        )

    def batch(self, events: Sequence[MemoryEvent]) -> list[Emission]:
        emissions = self.processor.process_batch([as_input(e, n) for n, e in enumerate(events)])
        self.saved.sent(emissions)
        return emissions

    def state(self, user: str) -> InMemoryUserState:
        return self.processor.states.user(user, 0)


def headers(emission: Emission) -> dict[str, bytes]:
    assert emission.deadletter is not None
    return dict(emission.deadletter.headers)


# --- two inputs sharing one event id ---------------------------------------------------------

OTHER_EVENTS: dict[str, InputPayload] = {
    "consolidation request": ConsolidationRequested(),
    "access": MemoryAccessed("m-b", T0 + 5),
    "pin": MemoryPinned("m-b"),
    "forget": ForgetRequested("m-b"),
    "session end": SessionEnded("session-b"),
}


@pytest.mark.parametrize("kind", list(OTHER_EVENTS))
def test_a_write_and_another_users_event_sharing_an_id_in_one_batch_are_both_processed(
    kind: str,
) -> None:
    # given user b has a memory, and a batch where a's write without an embedding and b's
    # other event carry the same event id
    worker = Worker(HashingEmbedder())
    worker.batch([write("b", "m-b", "b's earlier note", eid(1))])
    a_write = write("a", "m-a", "Alice moved to Lisbon", SHARED_ID, at=10)
    other = event("b", OTHER_EVENTS[kind], SHARED_ID, at=10)

    # when the batch is processed (it once raised AssertionError and stopped the worker)
    emissions = worker.batch([a_write, other])

    # then neither is dead-lettered, and a's memory carries its own text's embedding
    assert [e.rejection for e in emissions] == [None, None]
    [stored] = worker.state("a").memories.values()
    assert stored.memory.embedding == HashingEmbedder().embed(["Alice moved to Lisbon"])[0]


@pytest.mark.parametrize("kind", list(OTHER_EVENTS))
def test_a_write_and_the_same_users_event_sharing_an_id_process_the_first_only(
    kind: str,
) -> None:
    worker = Worker(HashingEmbedder())
    worker.batch([write("b", "m-b", "b's earlier note", eid(1))])
    first = write("b", "m-new", "Bob adopted a beagle", SHARED_ID, at=10)
    second = event("b", OTHER_EVENTS[kind], SHARED_ID, at=11)

    emissions = worker.batch([first, second])

    assert emissions[0].rejection is None and emissions[0].ledger
    assert emissions[1].duplicate  # the producer's id is its idempotency key, per user
    stored = worker.state("b").memories["m-new"].memory
    assert stored.embedding == HashingEmbedder().embed(["Bob adopted a beagle"])[0]


def test_two_users_writes_sharing_an_id_keep_their_own_embeddings_and_ledger_ids() -> None:
    worker = Worker(HashingEmbedder())
    texts = {"a": "I run every morning", "b": "My cat is called Miso"}

    emissions = worker.batch([write(u, "m-1", text, SHARED_ID) for u, text in texts.items()])

    for user, text in texts.items():
        memory = worker.state(user).memories["m-1"].memory
        assert memory.embedding == HashingEmbedder().embed([text])[0]
    ids = [d.event_id for e in emissions for d in e.ledger_events]
    assert len(ids) == len(set(ids))  # consolidation_log's primary key holds both users


# --- an input the worker fails on ---------------------------------------------------------------


@pytest.fixture(autouse=True)
def engine_failing_on_the_poison(monkeypatch: pytest.MonkeyPatch) -> None:
    """No valid input makes the engine raise any more: the engine fails, after changing the
    state, on an access to ``m-poison`` (tests/input_faults.py, as in the end-to-end test)."""
    monkeypatch.setattr(ingest_processor, "step", failing_after(ingest_processor.step))


def poisoned_access(user: str, at: int, event_id: str) -> list[MemoryEvent]:
    """A memory, and an access to it the engine fails on after applying it."""
    return [
        write(user, POISON, "a note the fault is about", eid(100 + at), at),
        event(user, MemoryAccessed(POISON, T0 + at + 1), eid(200 + at), at + 1),
    ]


def test_an_input_that_raises_is_dead_lettered_as_internal_error_and_the_batch_goes_on() -> None:
    worker = Worker()
    setup, poison = poisoned_access("a", 0, eid(0))
    worker.batch([setup])
    after = [write("a", "m-2", "a's next note", eid(3), at=3), write("b", "m-1", "b's", eid(4))]

    emissions = worker.batch([poison, *after])

    letter = emissions[0]
    assert letter.rejection is not None and letter.rejection.reason == INTERNAL_ERROR
    assert headers(letter)["reason"] == INTERNAL_ERROR.encode()
    assert headers(letter)["error.type"] == b"ValueError"
    assert letter.deadletter is not None and letter.deadletter.value == as_input(poison).value
    assert letter.ledger == [] and letter.state == []
    assert [bool(e.ledger) for e in emissions[1:]] == [True, True]


def test_the_failed_inputs_user_has_the_state_it_would_have_without_that_input() -> None:
    # given a user with history, and a batch where their poison input comes between two
    # of their writes
    setup, poison = poisoned_access("a", 0, eid(0))
    before = [setup, write("a", "m-1", "first", eid(1), at=1)]
    batch = [write("a", "m-2", "second", eid(2), at=2), poison, write("a", "m-3", "third", eid(3))]
    worker, without = Worker(), Worker()
    worker.batch(before)
    without.batch(before)

    # when the batch is processed, and the same batch without the poison input elsewhere
    emissions = worker.batch(batch)
    expected = without.batch([e for e in batch if e is not poison])

    # then the state and every other output are exactly those of the run without it
    assert worker.state("a") == without.state("a")
    assert worker.state("a").memories[POISON].memory.access_count == 0
    kept = [e for e in emissions if e.rejection is None]
    assert [r.value for e in kept for r in e.ledger] == [
        r.value for e in expected for r in e.ledger
    ]
    assert [e.state for e in kept] == [e.state for e in expected]


def test_the_same_poison_input_fails_the_same_way_again() -> None:
    worker = Worker()
    setup, poison = poisoned_access("a", 0, eid(0))
    worker.batch([setup])

    first = worker.batch([poison])
    again = worker.batch([poison])  # a redelivery: it was never applied, so not seen

    assert first[0].rejection == again[0].rejection
    assert again[0].rejection is not None and again[0].rejection.reason == INTERNAL_ERROR


def test_without_saved_entries_a_failure_midway_is_raised_not_skipped() -> None:
    processor = IngestProcessor(Limits())
    setup, poison = poisoned_access("a", 0, eid(0))
    processor.process_batch([as_input(setup)])

    with pytest.raises(RuntimeError, match="no saved state entries"):
        processor.process_batch([as_input(poison)])


class FailingOn(HashingEmbedder):
    """An embedder that cannot embed one text (a tokenizer bug, say)."""

    def __init__(self, bad: str) -> None:
        super().__init__()
        self.bad = bad

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        if self.bad in texts:
            raise UnicodeError(f"cannot embed {self.bad!r}")
        return super().embed(texts)


def test_a_text_the_embedder_fails_on_dead_letters_its_input_alone() -> None:
    worker = Worker(FailingOn("bad text"))
    events = [write("a", "m-1", "good text", eid(1)), write("b", "m-1", "bad text", eid(2))]

    emissions = worker.batch(events)

    assert emissions[0].rejection is None
    assert worker.state("a").memories["m-1"].memory.embedding is not None
    assert emissions[1].rejection is not None
    assert headers(emissions[1])["error.type"] == b"UnicodeError"
    assert "m-1" not in worker.state("b").memories
