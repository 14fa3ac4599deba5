"""A worker's batch seals its state entries once per key, at the batch's end (issue 43): what
the changelog receives is the same state as sealing every input's entries, with nothing in
clear and nothing sealed with a key an erasure in the batch destroyed."""

from __future__ import annotations

import uuid

from streams.engine.model import Memory, MemoryEvent, MemoryWritten, UserForgotten
from streams.engine.validation import Limits
from streams.erasure.sealing import EntryOpening, Sealing
from streams.ingest_processor import Emission, IngestProcessor, Input
from streams.kafka import codec
from streams.state.changelog import restored_user, split_key
from tests.unit.erasure.test_sealing import Keys

T0 = 1_717_000_000_000
SOURCE = [("source.topic", b"memory.events"), ("source.partition", b"0")]


def _event(n: int, user: str, payload: object) -> MemoryEvent:
    event_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"sealed-batch/{n}"))
    return MemoryEvent(event_id, user, T0 + n * 1000, payload, source="chat")  # type: ignore[arg-type]


def _write(n: int, user: str, memory_id: str) -> MemoryEvent:
    text = f"{user} secret number {n}"
    return _event(n, user, MemoryWritten(Memory(memory_id, user, text, speaker=user.title())))


def _batch() -> list[MemoryEvent]:
    return [
        _write(1, "alice", "a1"),
        _write(2, "bob", "b1"),
        _write(3, "alice", "a2"),
        _write(4, "alice", "a1"),  # a new version of a1: its entry is rewritten in the batch
        _event(5, "alice", UserForgotten()),
        _write(6, "alice", "a3"),  # after the erasure: sealed with the user's new key
        _write(7, "bob", "b2"),
    ]


def _inputs(events: list[MemoryEvent]) -> list[Input]:
    return [Input(e.user_id.encode(), codec.encode_event(e), SOURCE) for e in events]


def _coalesced(emissions: list[Emission]) -> dict[bytes, bytes | None]:
    """What the changelog receives: the last entry of each key (streams.kafka.output_batch)."""
    last: dict[bytes, bytes | None] = {}
    for emission in emissions:
        for entry in emission.state:
            last[entry.key] = entry.value
    return last


def _restored(entries: dict[bytes, bytes | None], user: str, sealing: Sealing | None) -> object:
    mine = [(k, v) for k, v in entries.items() if split_key(k)[0] == user]
    opener = EntryOpening(sealing) if sealing is not None else None
    state, _ = restored_user(user, mine, opener)
    return sorted(
        (r.memory.memory_id, r.memory.content, r.memory.speaker, r.version) for r in state.records()
    )


def test_a_batch_seals_each_state_key_once_and_keeps_the_state_of_sealing_every_input() -> None:
    sealing = Sealing(Keys())
    sealed = IngestProcessor(Limits(), sealing=sealing).process_batch(_inputs(_batch()))
    plain = IngestProcessor(Limits()).process_batch(_inputs(_batch()))
    assert all(e.deadletter is None for e in sealed)

    keys = [entry.key for emission in sealed for entry in emission.state]
    assert len(keys) == len(set(keys))  # a key rewritten later in the batch is sent once
    plain_keys = [entry.key for emission in plain for entry in emission.state]
    assert len(plain_keys) > len(keys)  # ...where unsealed inputs each send theirs

    sent = _coalesced(sealed)
    assert set(sent) == set(_coalesced(plain))
    for value in sent.values():
        assert value is None or b"secret number" not in value  # nothing personal in clear
    for user in ("alice", "bob"):
        # every entry opens with the keys as they are after the batch: none was sealed with
        # the key alice's erasure destroyed
        assert _restored(sent, user, sealing) == _restored(_coalesced(plain), user, None)
    assert [m for m, *_ in _restored(sent, "alice", sealing)] == ["a3"]
    assert [m for m, *_ in _restored(sent, "bob", sealing)] == ["b1", "b2"]


def test_a_single_input_is_sealed_as_a_batch_of_one() -> None:
    sealing = Sealing(Keys())
    [emission] = IngestProcessor(Limits(), sealing=sealing).process_batch(
        _inputs([_write(1, "carol", "c1")])
    )
    assert emission.state and emission.unsealed is None
    assert all(e.value is None or b"secret number" not in e.value for e in emission.state)
    sent = {e.key: e.value for e in emission.state}
    assert _restored(sent, "carol", sealing) == [("c1", "carol secret number 1", "Carol", 1)]


class CountingKeys(Keys):
    """The in-memory store, counting the round trips a Postgres store would make."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def ensure_memory_keys(self, user_id, asks):  # type: ignore[no-untyped-def]
        self.calls.append("ensure_memory_keys")
        return super().ensure_memory_keys(user_id, asks)

    def store_drafts(self):  # type: ignore[no-untyped-def]
        self.calls.append("store_drafts")
        return super().store_drafts()


def test_a_batchs_new_memories_get_their_keys_in_one_round_trip() -> None:
    keys = CountingKeys()
    writes = [_write(n, user, f"{user}-{n}") for n in range(1, 9) for user in ("dan", "eve")]
    emissions = IngestProcessor(Limits(), sealing=Sealing(keys)).process_batch(_inputs(writes))
    assert all(e.deadletter is None and e.ledger for e in emissions)
    assert keys.calls == ["store_drafts"]  # was one statement per input making new memories
    written = {(w.user_id, w.payload.memory.memory_id) for w in writes}  # type: ignore[union-attr]
    assert {(u, m) for u, m, _ in keys.memory} == written


def test_a_batch_run_again_after_its_keys_were_stored_sends_the_same_bytes() -> None:
    # A worker that stopped after its batch's keys were stored but before its output was
    # committed: the next worker drafts other keys, finds the stored ones, and seals again.
    keys = Keys()
    batch = _inputs([_write(1, "bob", "b1"), _write(2, "bob", "b2"), _write(3, "bob", "b1")])
    first = IngestProcessor(Limits(), sealing=Sealing(keys)).process_batch(batch)
    again = IngestProcessor(Limits(), sealing=Sealing(keys)).process_batch(batch)
    assert [[r.value for r in e.ledger] for e in again] == [
        [r.value for r in e.ledger] for e in first
    ]
    assert _coalesced(again) == _coalesced(first)
