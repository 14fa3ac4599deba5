"""``memstream tail`` over a sealed ledger (issue 43): with the user's key it prints the
plaintext, and a record whose user's key is erased prints as stored with ``"erased": true``
and is counted, never stopping the tail."""

from __future__ import annotations

import io
import json
import os

from memstream.tail import Tail, TailFilter
from streams.engine import ledger
from streams.erasure.cipher import FieldCipher
from streams.erasure.sealing import Sealing, open_ledger_event, seal_ledger_event
from streams.kafka import codec
from tests.unit.cli.test_tail import FakeRecord
from tests.unit.erasure.test_sealing import Keys
from tests.unit.kafka.test_codec import USER, a_ledger_event, a_memory


def test_a_sealed_record_prints_opened_and_an_erased_one_as_a_tombstone() -> None:
    cipher = FieldCipher(os.urandom(32))
    event = a_ledger_event(ledger.MemoryStored(a_memory(), 1))
    sealed = codec.encode_ledger(seal_ledger_event(event, cipher))
    record = FakeRecord(sealed, USER.encode(), [("event_type", b"MemoryStored")])
    keys: dict[str, FieldCipher | None] = {USER: cipher}
    out = io.StringIO()
    tail = Tail(
        TailFilter(frozenset(), None),
        out,
        io.StringIO(),
        open=lambda e: open_ledger_event(e, keys[e.user_id]),
    )

    tail.feed([record])
    keys[USER] = None  # erased
    tail.feed([record])

    opened, erased = [json.loads(line) for line in out.getvalue().splitlines()]
    assert opened["payload"]["memory"]["content"] == event.payload.memory.content  # type: ignore[union-attr]
    assert "erased" not in opened
    assert erased["erased"] is True
    assert erased["payload"]["memory"]["content"].startswith("ms3:")
    assert tail.stats.erased == 1 and tail.stats.printed == 2


def test_a_record_of_a_forgotten_memory_prints_as_erased_and_the_users_others_open() -> None:
    """With per-memory keys: once a memory's keys are destroyed (its forget applied), its
    record prints sealed with ``"erased": true``, and a record of the user's other memory
    still prints opened."""
    keys = Keys()
    sealing = Sealing(keys)
    forgotten = a_ledger_event(ledger.MemoryStored(a_memory(), 1))
    other = a_ledger_event(ledger.MemoryStored(a_memory().evolve(memory_id="other"), 1))
    records = [
        FakeRecord(codec.encode_ledger(e), USER.encode(), [("event_type", b"MemoryStored")])
        for e in sealing.seal_ledger([forgotten, other])
    ]
    sealing.erase_memory_keys([(USER, a_memory().memory_id, 1)])
    sealing.new_batch()
    out = io.StringIO()
    tail = Tail(TailFilter(frozenset(), None), out, io.StringIO(), open=sealing.open_ledger)

    tail.feed(records)

    erased, opened = [json.loads(line) for line in out.getvalue().splitlines()]
    assert erased["erased"] is True
    assert erased["payload"]["memory"]["content"].startswith("ms4:")
    assert "erased" not in opened
    assert opened["payload"]["memory"]["content"] == a_memory().content
    assert tail.stats.erased == 1
