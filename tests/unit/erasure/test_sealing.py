"""Sealing the personal fields of the engine's values (issue 43): what is sealed, what stays
in clear, that opening gives back exactly what was sealed, and that an erased key reads as
erased, never as plaintext or a crash."""

from __future__ import annotations

import os

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from streams.engine import ledger
from streams.engine.model import ConsolidationRequested, Memory, MemoryEvent, MemoryWritten
from streams.erasure import cipher as cipher_module
from streams.erasure.cipher import FieldCipher, Unreadable, is_sealed_text
from streams.erasure.memory_keys import MemoryCipher, input_generation
from streams.erasure.sealing import (
    Sealing,
    memory_entry_version,
    open_entry_value,
    open_input_event,
    open_ledger_event,
    seal_input_event,
    seal_ledger_event,
)
from streams.kafka import codec
from streams.state.changelog import Entry, MemoryRecord, encode_memory_record, entry_key

EMBEDDING = codec.pack_embedding([0.25, -0.5, 0.125, 1.0])


def memory(user: str = "alice") -> Memory:
    return Memory(
        memory_id="m1",
        user_id=user,
        content="Alice moved to Lisbon",
        layer="episodic",
        tags=("move",),
        speaker="Alice",
        embedding=EMBEDDING,
        metadata={"claim": "lives in Lisbon"},
        trigger_conditions=("when asked about home",),
        created_at=1_700_000_000_000,
    )


class Keys:
    """An in-memory key store: what Sealing needs of PostgresKeyStore."""

    def __init__(self) -> None:
        self.keys: dict[str, FieldCipher] = {}
        self.memory: dict[tuple[str, str, int], bytes] = {}
        self.drafts: dict[tuple[str, str, int], bytes] = {}

    def memory_keys(self, pairs):
        found: dict[tuple[str, str], dict[int, MemoryCipher]] = {p: {} for p in pairs}
        for (user, memory_id, generation), key in self.memory.items():
            if (user, memory_id) in found and user in self.keys:
                found[(user, memory_id)][generation] = MemoryCipher(key, memory_id, generation)
        return found

    def ensure_memory_keys(self, user_id, asks):
        """As PostgresKeyStore's one statement: make what each ask needs, seen from before it."""
        self.ciphers([user_id])
        before = set(self.memory)
        for memory_id, generation, forced in asks:
            if forced or not any(
                k[:2] == (user_id, memory_id) and k[2] <= generation for k in before
            ):
                self.memory.setdefault((user_id, memory_id, generation), os.urandom(32))
        names = {m for m, _, _ in asks}
        found: dict[str, dict[int, MemoryCipher]] = {m: {} for m in names}
        for (user, memory_id, generation), key in self.memory.items():
            if user == user_id and memory_id in names:
                found[memory_id][generation] = MemoryCipher(key, memory_id, generation)
        return found

    def draft_memory_key(self, user_id, memory_id, generation):
        self.ciphers([user_id])
        key = os.urandom(32)
        self.drafts[(user_id, memory_id, generation)] = key
        return MemoryCipher(key, memory_id, generation)

    def drop_drafts(self, user_id):
        self.drafts = {k: v for k, v in self.drafts.items() if k[0] != user_id}

    def store_drafts(self):
        """As PostgresKeyStore's one statement: a draft is stored unless its memory has a key
        of a generation up to it; every key of the drafted memories."""
        drafts, self.drafts = self.drafts, {}
        before = set(self.memory)
        stored = set()
        for (user, memory_id, generation), key in drafts.items():
            if not any(k[:2] == (user, memory_id) and k[2] <= generation for k in before):
                self.memory[(user, memory_id, generation)] = key
                stored.add((user, memory_id, generation))
        pairs = {k[:2] for k in drafts}
        found = {p: {} for p in pairs}
        for (user, memory_id, generation), key in self.memory.items():
            if (user, memory_id) in pairs and user in self.keys:
                found[(user, memory_id)][generation] = MemoryCipher(key, memory_id, generation)
        return found, stored

    def _make(self, key_id):
        return MemoryCipher(self.memory.setdefault(key_id, os.urandom(32)), key_id[1], key_id[2])

    def input_keys(self, pairs, now_us):
        found = {}
        for user, memory_id in pairs:
            live = [g for (u, m, g) in self.memory if (u, m) == (user, memory_id)]
            generation, _ = input_generation(live, now_us)
            key_id = (user, memory_id, generation)
            self.ciphers([user])
            found[(user, memory_id)] = self._make(key_id)
        return found

    def erase_memory_keys(self, erasures):
        erasures = list(erasures)
        gone = [
            k for k in self.memory if any(k[:2] == (u, m) and k[2] <= t for u, m, t in erasures)
        ]
        for key_id in gone:
            del self.memory[key_id]
        return len(gone)

    def ciphers(self, user_ids):
        return {u: self.keys.setdefault(u, FieldCipher(os.urandom(32))) for u in user_ids}

    def existing(self, user_id: str) -> FieldCipher | None:
        return self.keys.get(user_id)

    def existing_ciphers(self, user_ids):
        return {u: self.keys[u] for u in user_ids if u in self.keys}

    def close(self) -> None:
        pass

    def erase(self, user_id: str) -> bool:
        self.drop_drafts(user_id)
        for key_id in [k for k in self.memory if k[0] == user_id]:
            del self.memory[key_id]
        return self.keys.pop(user_id, None) is not None

    def forget_cached(self, user_id: str) -> None:
        pass

    def flush(self) -> None:
        pass


def test_a_sealed_write_hides_its_personal_fields_and_keeps_ids_and_shape_in_clear() -> None:
    cipher = FieldCipher(os.urandom(32))
    event = MemoryEvent("e1", "alice", 1, MemoryWritten(memory()), source="tests")

    sealed = seal_input_event(event, cipher)
    encoded = codec.encode_event(sealed)

    written = sealed.payload.memory  # type: ignore[union-attr]
    # the texts travel together in the content (one envelope), the embedding apart
    assert is_sealed_text(written.content) and written.content.startswith("ms3:")
    assert written.speaker is None and written.trigger_conditions == ()
    assert b"Lisbon" not in encoded and b"Alice" not in encoded
    assert EMBEDDING not in encoded
    assert (written.memory_id, written.layer, written.tags, written.created_at) == (
        "m1",
        "episodic",
        ("move",),
        1_700_000_000_000,
    )
    assert written.metadata == {"claim": ""}  # the keys stay in clear, the values do not
    assert open_input_event(codec.decode_event(encoded), cipher) == event


def test_sealing_is_deterministic_so_a_reprocessed_input_writes_the_same_bytes() -> None:
    cipher = FieldCipher(os.urandom(32))
    event = ledger.ConsolidationEvent("d1", "alice", 1, "e1", ledger.MemoryStored(memory(), 1))
    assert codec.encode_ledger(seal_ledger_event(event, cipher)) == codec.encode_ledger(
        seal_ledger_event(event, cipher)
    )


@pytest.mark.parametrize(
    "payload",
    [
        ledger.MemoryStored(memory(), 1),
        ledger.MemoryPromoted("m0", "working", 2, True, memory(), 1, "importance"),
        ledger.ContradictionDetected(
            "m1", "m2", 0.9, "negation", "Alice moved to Lisbon", "latest_wins"
        ),
        ledger.IdentityDriftMeasured(EMBEDDING, 0.1, "ok"),
        ledger.SessionConsolidated("s1", memory(), 1, ("m1",), 0.5, (), ("Alice in Lisbon?",)),
    ],
)
def test_every_ledger_record_with_personal_fields_opens_to_what_was_sealed(payload) -> None:
    cipher = FieldCipher(os.urandom(32))
    event = ledger.ConsolidationEvent("d1", "alice", 1, "e1", payload)

    encoded = codec.encode_ledger(seal_ledger_event(event, cipher))

    assert b"Lisbon" not in encoded and EMBEDDING not in encoded
    assert open_ledger_event(codec.decode_ledger(encoded), cipher) == event


def test_a_record_of_an_erased_user_is_unreadable_and_one_without_personal_fields_still_reads() -> (
    None
):
    cipher = FieldCipher(os.urandom(32))
    stored = ledger.ConsolidationEvent("d1", "alice", 1, "e1", ledger.MemoryStored(memory(), 1))
    access = ledger.ConsolidationEvent(
        "d2", "alice", 1, "e2", ledger.MemoryAccessRecorded("m1", "episodic", 1, 5, 2)
    )

    with pytest.raises(Unreadable):
        open_ledger_event(seal_ledger_event(stored, cipher), None)
    with pytest.raises(Unreadable):
        open_ledger_event(seal_ledger_event(stored, cipher), FieldCipher(os.urandom(32)))
    assert open_ledger_event(seal_ledger_event(access, cipher), None) == access


def test_records_written_before_sealing_was_on_open_as_they_are() -> None:
    cipher = FieldCipher(os.urandom(32))
    event = ledger.ConsolidationEvent("d1", "alice", 1, "e1", ledger.MemoryStored(memory(), 1))
    assert open_ledger_event(event, cipher) == event
    assert open_entry_value("alice", "m", b'{"a":1}', None) == b'{"a":1}'


def test_state_entries_of_memories_are_sealed_and_an_erased_one_reads_as_gone() -> None:
    keys = Keys()
    sealing = Sealing(keys)
    entries = [
        Entry(entry_key("alice", "m", "m1"), b'{"content":"Alice moved to Lisbon"}'),
        Entry(entry_key("alice", "e", "e1"), b"17"),
        Entry(entry_key("alice", "m", "m2"), None),
    ]

    sealed = sealing.seal_entries("alice", entries)

    assert b"Lisbon" not in (sealed[0].value or b"")
    assert sealed[1:] == entries[1:]  # seen ids and tombstones stay as they are
    assert sealing.open_entry("alice", "m", sealed[0].value or b"") == entries[0].value
    del keys.keys["alice"]
    assert sealing.open_entry("alice", "m", sealed[0].value or b"") is None


def test_an_input_sealed_with_an_erased_key_does_not_open_and_makes_no_new_key() -> None:
    keys = Keys()
    sealing = Sealing(keys)
    write = MemoryEvent("e1", "alice", 1, MemoryWritten(memory()))
    tick = MemoryEvent("e2", "alice", 1, ConsolidationRequested())
    [sealed] = sealing.seal_inputs([write])
    assert sealing.erase("alice")

    opened = sealing.open_inputs([sealed, tick])

    assert isinstance(opened[0], Unreadable)
    assert opened[1] == tick
    assert "alice" not in keys.keys


def test_a_decoded_record_opens_in_place_as_the_reference_opens_it_or_is_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The projector's path: a record it has just decoded is opened in place with the keys
    its batch read; whatever it cannot open so (a narrative's threads, a key not read or
    erased, no C opening) is left exactly as decoded for the reference path."""
    sealing = Sealing(Keys())
    stored = ledger.ConsolidationEvent("d1", "alice", 1, "e1", ledger.MemoryStored(memory(), 1))
    narrative = ledger.ConsolidationEvent(
        "d2",
        "alice",
        1,
        "e2",
        ledger.SessionConsolidated("s1", memory(), 1, ("m1",), 0.5, (), ("Lisbon?",)),
    )
    encoded = [codec.encode_ledger(e) for e in sealing.seal_ledger([stored, narrative])]

    def decoded() -> list[ledger.ConsolidationEvent]:
        return [codec.decode_ledger(value) for value in encoded]

    batch = decoded()
    sealing.new_batch()
    sealing.prefetch_ledger(batch)
    assert [sealing.open_decoded(e) for e in batch] == [True, False]
    assert batch[0] == stored == sealing.open_ledger(decoded()[0])
    assert batch[1] == decoded()[1]  # untouched: still sealed

    sealing.new_batch()  # the keys not read for this batch: nothing is opened without them
    batch = decoded()
    assert not sealing.open_decoded(batch[0]) and batch[0] == decoded()[0]

    monkeypatch.setattr(cipher_module, "speedups", None)
    sealing.prefetch_ledger(batch)
    assert not sealing.open_decoded(batch[0]) and batch[0] == decoded()[0]
    monkeypatch.undo()

    # a later generation made (the memory written anew), the first erased: the one key left
    # is tried without reading which generation the value names, and does not open it
    [anew] = sealing.seal_ledger(
        [ledger.ConsolidationEvent("d3", "alice", 2, "e3", ledger.MemoryStored(memory(), 2))],
        rewritten={"m1"},
    )
    sealing.erase_memory_keys([("alice", "m1", 1)])
    sealing.new_batch()
    sealing.prefetch_ledger(batch)
    assert not sealing.open_decoded(batch[0]) and batch[0] == decoded()[0]
    opened, erased = sealing.open_ledger_keeping(batch[0])
    assert erased and opened.payload.memory.content == ""
    later = codec.decode_ledger(codec.encode_ledger(anew))
    sealing.prefetch_ledger([later])
    assert sealing.open_decoded(later) and later.payload.memory == memory()


@given(
    version=st.integers(-(2**62), 2**62),
    forgotten=st.booleans(),
    epoch=st.none() | st.integers(-(2**40), 2**40),
)
def test_a_memory_entrys_version_is_read_from_its_head_as_parsing_it_whole_reads_it(
    version: int, forgotten: bool, epoch: int | None
) -> None:
    value = encode_memory_record(MemoryRecord(memory(), version, forgotten), epoch)
    data = orjson.loads(value)
    expected = None if data["_forgotten"] else data["_version"]
    assert memory_entry_version(value) == expected
    # the same entry written another way (keys in another order) is parsed, alike
    reordered = orjson.dumps(dict(reversed(list(data.items()))))
    assert memory_entry_version(reordered) == expected
