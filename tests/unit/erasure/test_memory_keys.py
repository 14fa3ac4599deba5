"""Per-memory keys (issue 43, "Forgetting one memory"): a record sealed with its memory's key
stops opening when that key is destroyed while the user's other memories still open; the
forget cascade's rewrites take a new generation, so their old versions die and the new ones
live; a record processed again seals to the same bytes; readers keep an erased memory's
records with blank fields instead of stopping."""

from __future__ import annotations

import os
import threading

import orjson
import pytest

from streams.engine import ledger
from streams.engine.forgetting import REDERIVED
from streams.engine.model import Memory, MemoryEvent, MemoryWritten
from streams.engine.user_state import MemoryRecord
from streams.erasure import sealing as sealing_module
from streams.erasure.cipher import FieldCipher, Unreadable
from streams.erasure.memory_keys import (
    INPUT_GENERATIONS,
    MemoryCipher,
    MemoryErased,
    generation_for,
    generation_of,
    input_generation,
    memory_key_erasures,
    starts_generation,
    text_generation,
)
from streams.erasure.sealing import EntryOpening, KeysUnavailable, Sealing, _GroupCommit
from streams.kafka import codec
from streams.state import restore
from streams.state.changelog import Entry, encode_memory_record, entry_key, restored_user
from tests.unit.erasure.test_sealing import Keys

EMBEDDING = codec.pack_embedding([0.5, -0.25, 0.75, 1.0])


def memory(memory_id: str, content: str, **fields: object) -> Memory:
    return Memory(
        memory_id=memory_id,
        user_id="alice",
        content=content,
        speaker="Alice",
        embedding=EMBEDDING,
        metadata={"claim": content},
        **fields,  # type: ignore[arg-type]
    )


def stored(
    memory_id: str, content: str, version: int, cause: str = "e1"
) -> ledger.ConsolidationEvent:
    return ledger.ConsolidationEvent(
        f"{memory_id}-{version}",
        "alice",
        1,
        cause,
        ledger.MemoryStored(memory(memory_id, content), version),
    )


def rederived(memory_id: str, content: str, version: int, cause: str) -> ledger.ConsolidationEvent:
    """A MemoryStored the forget cascade made (its id says REDERIVED)."""
    return ledger.ConsolidationEvent(
        ledger.derived_event_id("alice", cause, REDERIVED, memory_id),
        "alice",
        1,
        cause,
        ledger.MemoryStored(memory(memory_id, content), version),
    )


def forgotten(memory_id: str, version: int) -> ledger.ConsolidationEvent:
    return ledger.ConsolidationEvent(
        f"forget-{memory_id}",
        "alice",
        1,
        "forget-input",
        ledger.MemoryForgotten(memory_id, "episodic", version, "user_request"),
    )


def roundtrip(event: ledger.ConsolidationEvent) -> ledger.ConsolidationEvent:
    return codec.decode_ledger(codec.encode_ledger(event))


# --- the pure rules ------------------------------------------------------------------------------


def test_a_record_takes_the_newest_generation_not_after_its_version() -> None:
    assert generation_for([], 1, fresh=False) == (1, True)  # a memory's first record
    assert generation_for([1], 4, fresh=False) == (1, False)
    assert generation_for([1, 7], 6, fresh=False) == (1, False)  # processed again, before 7
    assert generation_for([1, 7], 9, fresh=False) == (7, False)
    assert generation_for([1], 7, fresh=True) == (7, True)  # the cascade wrote it again
    assert generation_for([1, 7], 7, fresh=True) == (7, False)  # ... and again after a crash


def test_a_publisher_reuses_the_newest_key_or_makes_one_below_every_version() -> None:
    generation, make = input_generation([], 123)
    assert make and generation == INPUT_GENERATIONS + 123 and generation < 0
    assert input_generation([generation, 5], 999) == (5, False)


def test_a_memory_key_is_bound_to_its_memory_and_names_its_generation() -> None:
    key = os.urandom(32)
    cipher = MemoryCipher(key, "m1", 7)

    sealed = cipher.seal(b"Alice moved to Lisbon", b"ctx")
    text = cipher.seal_text("Alice moved to Lisbon", b"ctx")

    assert generation_of(sealed) == 7 and text_generation(text) == 7
    assert text_generation("ms1:AAAA") is None and generation_of(b'{"a":1}') is None
    assert cipher.open(sealed, b"ctx") == b"Alice moved to Lisbon"
    assert cipher.open_text(text, b"ctx") == "Alice moved to Lisbon"
    with pytest.raises(Unreadable):
        MemoryCipher(key, "m2", 7).open(sealed, b"ctx")  # moved to another memory
    with pytest.raises(Unreadable):
        MemoryCipher(key, "m1", 8).open(sealed, b"ctx")  # another generation


def test_a_users_key_wraps_a_memory_key_that_only_it_unwraps() -> None:
    user, other = FieldCipher(os.urandom(32)), FieldCipher(os.urandom(32))
    key = os.urandom(32)
    wrapped = user.wrap(key, b"alice/m1/0")
    assert user.unwrap(wrapped, b"alice/m1/0") == key
    with pytest.raises(Unreadable):
        other.unwrap(wrapped, b"alice/m1/0")
    with pytest.raises(Unreadable):
        user.unwrap(wrapped, b"alice/m2/0")


def test_a_forget_voids_all_the_memorys_keys_and_a_rewrite_only_those_before_it() -> None:
    rewrite = rederived("obs", "Alice: a dog", 5, "forget-input")
    assert starts_generation(rewrite) and not starts_generation(stored("obs", "x", 5))
    assert memory_key_erasures(forgotten("m1", 4)) == [("alice", "m1", 4)]
    assert memory_key_erasures(rewrite) == [("alice", "obs", 4)]
    assert memory_key_erasures(stored("obs", "x", 5)) == []


# --- sealing with an in-memory key store --------------------------------------------------------


def test_forgetting_one_memory_erases_its_records_and_leaves_the_users_others_readable() -> None:
    """Given two memories of one user sealed with their own keys,
    when the first one's keys are destroyed (its forget applied),
    then its record no longer opens (a strict reader: MemoryErased; a replaying one keeps
    the record with the memory's fields blank and its ids in clear), the other opens."""
    keys = Keys()
    sealing = Sealing(keys)
    secret, other = stored("m1", "Alice keeps the key under the pot", 1), stored("m2", "Bob", 1)
    sealed = [roundtrip(e) for e in sealing.seal_ledger([secret, other])]
    assert b"pot" not in codec.encode_ledger(sealed[0])

    sealing.erase_memory_keys(memory_key_erasures(forgotten("m1", 2)))
    sealing.new_batch()

    with pytest.raises(MemoryErased):
        sealing.open_ledger(sealed[0])
    kept, erased = sealing.open_ledger_keeping(sealed[0])
    assert erased
    assert kept.payload.memory.memory_id == "m1"  # type: ignore[union-attr]
    assert kept.payload.memory.content == "" and kept.payload.memory.embedding is None  # type: ignore[union-attr]
    assert sealing.open_ledger(sealed[1]) == other


def test_a_rewritten_memory_keeps_its_new_version_and_loses_the_old_ones() -> None:
    """Given an observation stored at version 1, then written again by a forget's cascade at
    version 3, when the cascade's rewrite is applied (generations before 3 destroyed), then
    version 1 is erased and version 3 (and a later version 4) still opens; and the same
    records sealed again after the new key was made (a crash before the commit) are the
    same bytes."""
    keys = Keys()
    sealing = Sealing(keys)
    old = stored("obs", "Alice: I keep the key under the pot", 1)
    new = rederived("obs", "Alice: I have a dog", 3, "forget-input")
    later = stored("obs", "Alice: I have a dog", 4, "e9")
    first = [codec.encode_ledger(e) for e in sealing.seal_ledger([old, new, later])]
    sealing.new_batch()
    again = [codec.encode_ledger(e) for e in sealing.seal_ledger([old, new, later])]
    assert again == first

    for erasure in memory_key_erasures(new):
        sealing.erase_memory_keys([erasure])
    sealing.new_batch()

    opened = [codec.decode_ledger(v) for v in first]
    with pytest.raises(MemoryErased):
        sealing.open_ledger(opened[0])
    assert sealing.open_ledger(opened[1]) == new
    assert sealing.open_ledger(opened[2]) == later


def test_a_contradictions_explanation_dies_with_either_memory() -> None:
    keys = Keys()
    sealing = Sealing(keys)
    sealing.seal_ledger([stored("m1", "Alice is vegan", 1), stored("m2", "Alice ate steak", 1)])
    clash = ledger.ConsolidationEvent(
        "c1",
        "alice",
        1,
        "e3",
        ledger.ContradictionDetected(
            "m1", "m2", 0.9, "negation", "vegan vs ate steak", "latest_wins"
        ),
    )
    versions = {"m1": 1, "m2": 1}
    [sealed] = sealing.seal_ledger([clash], lambda _u, m: versions.get(m))
    sealed = roundtrip(sealed)
    assert b"steak" not in codec.encode_ledger(sealed)
    assert sealing.open_ledger(sealed) == clash

    sealing.erase_memory_keys([("alice", "m2", 2)])
    sealing.new_batch()

    with pytest.raises(MemoryErased):
        sealing.open_ledger(sealed)
    kept, erased = sealing.open_ledger_keeping(sealed)
    assert erased and kept.payload.explanation == ""  # type: ignore[union-attr]


def test_a_memorys_state_entry_dies_with_its_key_and_a_forgotten_ones_outlives_it() -> None:
    keys = Keys()
    sealing = Sealing(keys)
    live = encode_memory_record(MemoryRecord(memory("m1", "Alice keeps the key"), 2, False))
    gone = encode_memory_record(MemoryRecord(Memory("m3", "alice", ""), 4, True))
    entries = [
        Entry(entry_key("alice", "m", "m1"), live),
        Entry(entry_key("alice", "m", "m3"), gone),
    ]

    sealed = sealing.seal_entries("alice", entries)

    assert all(b"Alice" not in (e.value or b"") for e in sealed)
    assert sealing.open_entry("alice", "m", sealed[0].value or b"", "m1") == live
    sealing.erase_memory_keys([("alice", "m1", 3), ("alice", "m3", 4)])
    sealing.new_batch()
    assert sealing.open_entry("alice", "m", sealed[0].value or b"", "m1") is None
    # the forgotten record (nothing personal) is the user's: a restore still knows m3 was forgotten
    assert orjson.loads(sealing.open_entry("alice", "m", sealed[1].value or b"", "m3") or b"")[
        "_forgotten"
    ]


def test_a_write_sealed_by_a_publisher_opens_for_the_worker_until_its_memory_is_forgotten() -> None:
    keys = Keys()
    publisher, worker = Sealing(keys), Sealing(keys)
    write = MemoryEvent("e1", "alice", 1, MemoryWritten(memory("m1", "Alice keeps the key")))
    [sealed] = publisher.seal_inputs([write])
    sealed = codec.decode_event(codec.encode_event(sealed))

    assert worker.open_inputs([sealed]) == [write]
    # the worker's first ledger record of it takes the publisher's key
    [record] = worker.seal_ledger([stored("m1", "Alice keeps the key", 1)])
    generation = text_generation(record.payload.memory.content)  # type: ignore[union-attr]
    assert generation is not None and generation < 0

    worker.erase_memory_keys([("alice", "m1", 1)])
    worker.new_batch()
    [result] = worker.open_inputs([sealed])
    assert isinstance(result, MemoryErased)


def test_the_workers_own_decoded_writes_open_in_place_and_an_erased_one_stays_sealed() -> None:
    keys = Keys()
    publisher, worker = Sealing(keys), Sealing(keys)
    write = MemoryEvent("e1", "alice", 1, MemoryWritten(memory("m1", "Alice keeps the key")))
    [sealed] = publisher.seal_inputs([write])
    encoded = codec.encode_event(sealed)

    decoded = codec.decode_event(encoded)
    [opened] = worker.open_inputs([decoded], in_place=True)
    assert opened is decoded and decoded == write  # the same object, its memory opened

    decoded = codec.decode_event(encoded)
    assert worker.open_inputs([decoded]) == [write]
    assert decoded == codec.decode_event(encoded)  # not in place: the caller's event is as it was

    worker.erase_memory_keys([("alice", "m1", 1)])
    worker.new_batch()
    decoded = codec.decode_event(encoded)
    [result] = worker.open_inputs([decoded], in_place=True)
    assert isinstance(result, MemoryErased) and decoded == codec.decode_event(encoded)


def test_the_record_storing_a_write_opened_in_place_reuses_the_bytes_it_was_sealed_as(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sealing is deterministic, so the worker's MemoryStored of a write it opened in place
    takes the write's sealed bytes instead of sealing its fields again: exactly what sealing
    anew gives. A field or the embedding changed, or a batch later, is sealed anew."""
    keys = Keys()
    publisher, worker = Sealing(keys), Sealing(keys)
    write = MemoryEvent("e1", "alice", 1, MemoryWritten(memory("m1", "Alice keeps the key")))
    [sealed] = publisher.seal_inputs([write])
    encoded = codec.encode_event(sealed)
    worker.open_inputs([codec.decode_event(encoded)], in_place=True)
    calls: list[str] = []
    seal_memory = sealing_module.seal_memory

    def counted(memory: Memory, cipher: object) -> Memory:
        calls.append(memory.content)
        return seal_memory(memory, cipher)  # type: ignore[arg-type]

    monkeypatch.setattr(sealing_module, "seal_memory", counted)

    same = stored("m1", "Alice keeps the key", 1)
    other_embedding = memory("m1", "Alice keeps the key").evolve(
        embedding=codec.pack_embedding([1.0, 0.0, 0.0, 0.0])
    )
    moved = ledger.ConsolidationEvent(
        "m1-1b", "alice", 1, "e1", ledger.MemoryStored(other_embedding, 1)
    )
    changed = stored("m1", "Alice lost the key", 1)
    reused, *anew = worker.seal_ledger([same, moved, changed])

    assert calls == ["Alice keeps the key", "Alice lost the key"]  # the same fields: reused
    assert reused.payload.memory.content == sealed.payload.memory.content  # type: ignore[union-attr]
    assert reused.payload.memory.embedding == sealed.payload.memory.embedding  # type: ignore[union-attr]
    [fresh] = Sealing(keys).seal_ledger([same])  # no write opened: sealed anew, same bytes
    assert codec.encode_ledger(reused) == codec.encode_ledger(fresh)
    assert [worker.open_ledger(e) for e in (reused, *anew)] == [same, moved, changed]

    worker.open_inputs([])  # the next batch: the last one's writes are not reused
    calls.clear()
    worker.seal_ledger([same])
    assert calls == ["Alice keeps the key"]


def test_forgetting_the_user_destroys_the_memory_keys_too() -> None:
    keys = Keys()
    sealing = Sealing(keys)
    sealing.seal_ledger([stored("m1", "Alice keeps the key", 1)])
    assert keys.memory

    sealing.erase("alice")

    assert not keys.memory


def test_concurrent_writes_share_one_key_store_commit_and_each_gets_its_own_key() -> None:
    """Given a commit in progress, writes that arrive meanwhile wait for it and are then made
    together in one commit; every writer gets the key of its own memory, and a failure
    reaches every writer of its round."""
    made: list[list[tuple[str, str]]] = []
    first_running, release = threading.Event(), threading.Event()

    def make(pairs: list[tuple[str, str]]) -> dict[tuple[str, str], MemoryCipher]:
        made.append(pairs)
        if len(made) == 1:
            first_running.set()
            release.wait()
        return {p: MemoryCipher(os.urandom(32), p[1], -1) for p in pairs}

    group = _GroupCommit(make)
    found: dict[str, MemoryCipher] = {}

    def write(memory_id: str) -> None:
        found[memory_id] = group.run([("alice", memory_id)])[("alice", memory_id)]

    first = threading.Thread(target=write, args=("m0",))
    first.start()
    first_running.wait()
    others = [threading.Thread(target=write, args=(f"m{i}",)) for i in range(1, 6)]
    for thread in others:
        thread.start()
    while True:  # all five queued behind the running commit
        with group._cond:
            if len(group._pending) == 5:
                break
    release.set()
    for thread in (first, *others):
        thread.join()

    assert made[0] == [("alice", "m0")]
    assert sorted(made[1]) == [("alice", f"m{i}") for i in range(1, 6)] and len(made) == 2
    assert {m: c.memory_id for m, c in found.items()} == {f"m{i}": f"m{i}" for i in range(6)}

    def failing(pairs: list[tuple[str, str]]) -> dict[tuple[str, str], MemoryCipher]:
        raise KeysUnavailable("the key store is down")

    with pytest.raises(KeysUnavailable):
        _GroupCommit(failing).run([("alice", "m9")])


def reads_of(keys: Keys) -> list[list[tuple[str, str]]]:
    """Every ``memory_keys`` call ``keys`` gets from now on: the pairs each asked for."""
    reads: list[list[tuple[str, str]]] = []
    read = keys.memory_keys

    def counted(pairs):
        reads.append(list(pairs))
        return read(reads[-1])

    keys.memory_keys = counted  # type: ignore[method-assign]
    return reads


def test_a_cold_users_entries_open_with_one_read_of_their_memory_keys() -> None:
    """Given a user's state entries sealed with ten memories' keys, when the user is loaded
    back (a cold user, a restore), then the keys are read in one round trip, not ten, and
    every memory comes back."""
    keys = Keys()
    sealing = Sealing(keys)
    records = [MemoryRecord(memory(f"m{i}", f"fact {i}"), 1, False) for i in range(10)]
    entries = sealing.seal_entries(
        "alice",
        [
            Entry(entry_key("alice", "m", r.memory.memory_id), encode_memory_record(r))
            for r in records
        ],
    )
    reads = reads_of(keys)
    sealing.new_batch()

    state, _ = restored_user("alice", [(e.key, e.value) for e in entries], EntryOpening(sealing))

    assert len(reads) == 1
    assert sorted(state.memories) == sorted(r.memory.memory_id for r in records)
    assert state.memories["m3"].memory.content == "fact 3"


def test_a_replayed_ledgers_memory_keys_are_read_once_per_batch_not_once_per_memory() -> None:
    """Given ten memories' records sealed with their keys (and one not sealed), when a restore
    replays them, then their keys are read in one round trip that names only the ten, and every
    record opens."""
    keys = Keys()
    sealing = Sealing(keys)
    events = sealing.seal_ledger([stored(f"m{i}", f"fact {i}", 1) for i in range(10)])
    plain = stored("p", "said before sealing", 1)
    reads = reads_of(keys)
    sealing.new_batch()

    opened = list(restore._opened(sealing, [*events, plain]))

    assert reads == [[("alice", f"m{i}") for i in range(10)]]
    assert [e.payload.memory.content for e in opened] == [  # type: ignore[union-attr]
        *(f"fact {i}" for i in range(10)),
        "said before sealing",
    ]
