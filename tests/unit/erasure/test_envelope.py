"""A memory's texts in one sealed envelope: packing gives back exactly what was packed, odd
bytes are refused rather than misread, and a memory sealed field by field (before the
envelope) still opens."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streams.engine.model import Memory
from streams.erasure import envelope
from streams.erasure.cipher import FieldCipher, Unreadable, field_context
from streams.erasure.memory_keys import MemoryCipher
from streams.erasure.sealing import open_memory, seal_memory
from streams.kafka import codec

texts = st.text()  # any code point, surrogates included (sealing encodes with surrogatepass)


@given(
    content=texts,
    speaker=st.none() | texts,
    metadata=st.dictionaries(texts, texts, max_size=5),
    triggers=st.lists(texts, max_size=4).map(tuple),
)
def test_an_envelope_unpacks_to_what_was_packed(
    content: str, speaker: str | None, metadata: dict[str, str], triggers: tuple[str, ...]
) -> None:
    packed = envelope.pack(envelope.Texts(content, speaker, metadata, triggers))
    got = envelope.unpack(packed)
    assert (got.content, got.speaker, got.metadata, got.trigger_conditions) == (
        content,
        speaker,
        metadata,
        triggers,
    )


@given(st.binary(max_size=64))
def test_bytes_that_are_not_an_envelope_raise_value_error_or_unpack_exactly(raw: bytes) -> None:
    """Whatever the bytes, unpacking either refuses them or accounts for every byte (then
    packing the result gives the same bytes back): nothing is read past the end, nothing left
    over is ignored."""
    try:
        got = envelope.unpack(raw)
    except ValueError:
        return
    assert envelope.pack(got) == raw


HEAD = bytes(9)  # no speaker, no metadata, no triggers: the content's length follows


@pytest.mark.parametrize(
    "raw",
    [
        b"",  # no head
        b"\x00\x00\x00",  # a head cut short
        HEAD + b"\x00\x00\x00\x05abc",  # a text longer than what is left
        HEAD + b"\x00\x00\x00\x01ab",  # bytes left over
        HEAD + b"\x00\x00\x00\x01\xff",  # not UTF-8
        b"\x00\xff\xff\xff\xff\x00\x00\x00\x00",  # more pairs than bytes
    ],
)
def test_a_damaged_envelope_is_refused(raw: bytes) -> None:
    with pytest.raises(ValueError):
        envelope.unpack(raw)


def a_memory() -> Memory:
    return Memory(
        memory_id="m1",
        user_id="alice",
        content="Alice moved to Lisbon",
        layer="episodic",
        speaker="Alice",
        embedding=codec.pack_embedding([0.25, -0.5, 0.125, 1.0]),
        metadata={"claim": "lives in Lisbon", "source": "chat"},
        trigger_conditions=("when asked about home",),
    )


@pytest.mark.parametrize("keyed", ["user", "memory"])
def test_a_memory_sealed_field_by_field_before_the_envelope_still_opens(keyed: str) -> None:
    """Records already in the log were sealed one field at a time (``ms1:`` / ``ms2:`` texts):
    a reader of this version opens them as before."""
    user = FieldCipher(os.urandom(32))
    cipher = user if keyed == "user" else MemoryCipher(os.urandom(32), "m1", 3)
    memory = a_memory()

    def sealed(name: str, text: str) -> str:
        return cipher.seal_text(text, field_context("alice", name))

    old = memory.evolve(
        content=sealed("memory.content", memory.content),
        speaker=sealed("memory.speaker", "Alice"),
        metadata={k: sealed("memory.metadata", v) for k, v in memory.metadata.items()},
        trigger_conditions=(sealed("memory.trigger", "when asked about home"),),
        embedding=cipher.seal(memory.embedding or b"", field_context("alice", "memory.embedding")),
    )
    keys = {("m1", 3): cipher} if keyed == "memory" else {}
    assert open_memory(old, user, lambda m, g: keys.get((m, g))) == memory  # type: ignore[arg-type]
    new = seal_memory(memory, cipher)
    assert new.content.startswith("ms3:" if keyed == "user" else "ms4:")
    assert open_memory(new, user, lambda m, g: keys.get((m, g))) == memory  # type: ignore[arg-type]


def test_an_envelope_opens_only_as_the_envelope_of_its_own_user() -> None:
    cipher = FieldCipher(os.urandom(32))
    sealed = seal_memory(a_memory(), cipher)
    with pytest.raises(Unreadable):
        open_memory(sealed.evolve(user_id="bob"), cipher)
    # nor as the content field of the memory sealed field by field
    moved = sealed.evolve(content="ms1:" + sealed.content.removeprefix("ms3:"))
    with pytest.raises(Unreadable):
        open_memory(moved, cipher)
