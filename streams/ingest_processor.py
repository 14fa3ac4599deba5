"""Moves one ``memory.events`` record through the pure ingest step and says what to emit.

This is the ingest agent's body without the async loop, so agent tests run it without
Kafka. It decodes, asks the engine (:func:`streams.engine.step.step`), applies the
resulting records to the owning partition's :class:`UserStates`, and returns the ledger,
state-changelog and dead-letter records to send.

No input can stop it. Anything one input raises (a bug in the engine, an input nobody
foresaw) makes that input a dead letter (``internal_error``) and the batch goes on. The
engine changes the user's state in place, so an input that raised midway may have left it
half applied: the user's state is then rebuilt from its changelog entries, those saved
before this batch (``saved``: the local store, what a restore owes, what was sent since the
last checkpoint) and those of the batch's earlier inputs. A user's state is a function of
its entries (a cold user is loaded back from them), so the rebuilt state is exactly the one
before the failed input, and the cost falls on the failure alone: nothing is copied per input.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from aiokafka.partitioner import murmur2

from streams.embedders.base import Embedder
from streams.engine.ingest import Accepted, Duplicate
from streams.engine.ledger import ConsolidationEvent
from streams.engine.model import MemoryEvent, MemoryWritten, UserForgotten
from streams.engine.step import EngineConfig, step
from streams.engine.user_state import MemoryRecord
from streams.engine.validation import MAX_EVENT_BYTES, Limits, Rejection
from streams.erasure.sealing import EntryOpening, KeysUnavailable, Sealing, Unreadable
from streams.kafka import codec
from streams.kafka.deadletter import Headers, letter_headers
from streams.state.changelog import (
    SEPARATOR,
    Entry,
    all_entries,
    before_input,
    changed_entries,
    encode_memory_record,
    expired_entries,
    restored_user,
)
from streams.state.hot_users import UserStates
from streams.worker_engine import missing_embeddings, with_embedding

log = logging.getLogger("memstream.worker")

JSON_GROWTH = 6  # the most a byte of text grows in JSON: a control character as \u00XX

INTERNAL_ERROR = "internal_error"
"""The dead-letter reason of an input the worker failed on: a bug, not a bad input."""
MAX_ERROR_CHARS = 1000  # of the exception's message, in the dead letter's detail

SavedEntries = Callable[[int, str], Iterable[Entry]]
"""(partition, user id) → the user's state entries as they stood before the current batch,
oldest first (a later entry of a key replaces an earlier one)."""

DEDUPE_WINDOW_SECONDS = 7 * 24 * 3600
"""Input ids are remembered for a week of event time: Kafka producers retry within seconds,
replays of the same file within days. Without a window the set would grow with every input
the user ever sent (state and restore cost would grow with history)."""


@dataclass(frozen=True, slots=True)
class OutRecord:
    key: bytes | None
    value: bytes
    headers: Headers


@dataclass
class Emission:
    """What one input record produced: ledger events, or a dead letter, or nothing."""

    event_type: str | None = None
    ledger: list[OutRecord] = field(default_factory=list)
    ledger_events: list[ConsolidationEvent] = field(default_factory=list)
    deadletter: OutRecord | None = None
    rejection: Rejection | None = None
    duplicate: bool = False
    state: list[Entry] = field(default_factory=list)  # changed state-changelog entries
    seconds: float = 0.0  # the engine step's wall time (a cycle's, when it ran one)
    unsealed: str | None = None  # the user whose ``state`` awaits sealing, at the batch's end
    # the memories whose drafted key its ledger is sealed with, and how to seal it again if
    # one of those drafts is not the key stored (Sealing.store_drafts, at the batch's end)
    drafted: set[tuple[str, str]] = field(default_factory=set)
    reseal: Callable[[], None] | None = None

    @property
    def ran_cycle(self) -> bool:
        return any(d.cycle_id is not None for d in self.ledger_events)


class Input(NamedTuple):
    """One input record as the processor needs it."""

    key: bytes | None
    value: bytes | None
    source: Headers  # topic/partition/offset headers, for a dead letter
    partition: int = 0  # the input partition, which owns the user's state


@lru_cache(maxsize=65536)
def partition_for(key: bytes, partitions: int) -> int:
    """Kafka's default partitioner for keyed records (Java client, aiokafka, librdkafka's
    murmur2_random): every producer sends a user's events to the same partition.

    Memoised: aiokafka's murmur2 is pure Python (~5 µs for a user id), every input is
    checked, and a partition's users write again and again."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


def _written_anew(memories: Mapping[str, MemoryRecord], event: MemoryEvent) -> tuple[str, ...]:
    """The memory a write gives a new life: its id was forgotten (its old keys are to be
    destroyed, so its records from now on take a key of their own)."""
    if not isinstance(event.payload, MemoryWritten):
        return ()
    record = memories.get(event.payload.memory.memory_id)
    return (record.memory.memory_id,) if record is not None and record.forgotten else ()


def _erases(event: MemoryEvent) -> bool:
    return isinstance(event.payload, UserForgotten)


def _erased_entries(held: Sequence[bytes], remaining: Sequence[Entry]) -> list[Entry]:
    """A tombstone for every entry an erased user had, then what the state holds after (the
    erasure's own input id, to deduplicate a redelivery)."""
    kept = {e.key for e in remaining}
    return [Entry(k, None) for k in held if k not in kept] + list(remaining)


def _store_drafts(emissions: Sequence[Emission], sealing: Sealing) -> None:
    """Store the keys the batch drafted for its new memories, in one round trip, and seal
    again the ledger of an input whose draft lost to a key the store already had (the input
    was processed before, by a worker that stopped before its output was committed): its
    output is then the same, byte for byte, as that first run's.

    A cycle that writes new memories needed a round trip to make their keys before its
    records could be sealed (148 of the 150 cycles of 3,000 synthetic writes, ~0.5 ms each);
    now the keys are made here and stored once per batch. Sealing again with a stored key
    fails only when the key store does (:class:`KeysUnavailable`, which stops the batch), never
    for an input's content: the same records were sealed and encoded once already."""
    lost = sealing.store_drafts()
    for emission in emissions:
        if emission.reseal is not None and emission.drafted & lost:
            emission.reseal()
        emission.reseal = None
        emission.drafted = set()


def _seal_state(emissions: Sequence[Emission], sealing: Sealing) -> None:
    """Seal the batch's state entries once per key: each key's last entry, one call per user.

    The changelog is compacted and a batch sends only the last entry of each key
    (:mod:`streams.kafka.output_batch`), so an entry a later input of the batch rewrites is
    never sent: sealing it was wasted (a user's ``meta`` entry changes with every input; on
    RealMem half the entries an input writes are rewritten within its batch). Those entries
    are dropped here, whoever wrote them. An erasure's own entries are never sealed (nothing
    personal is left in them, and sealing would make the user a new key); every entry of the
    user before it is rewritten by its tombstones, so nothing is sealed with the erased key.
    Sealing encoded bytes with an existing key fails only when the key store does
    (:class:`KeysUnavailable`, which stops the batch as it always did), never for an input's
    content."""
    last: dict[bytes, int] = {}
    for index, emission in enumerate(emissions):
        for entry in emission.state:
            last[entry.key] = index
    by_user: dict[str, list[Entry]] = {}
    for index, emission in enumerate(emissions):
        emission.state = [e for e in emission.state if last[e.key] == index]
        if emission.unsealed is not None:
            by_user.setdefault(emission.unsealed, []).extend(emission.state)
    sealed: dict[bytes, Entry] = {}
    for user_id, entries in by_user.items():
        for entry in sealing.seal_entries(user_id, entries):  # same keys, values sealed
            sealed[entry.key] = entry
    for emission in emissions:
        if emission.unsealed is not None:
            emission.state = [sealed[e.key] for e in emission.state]
            emission.unsealed = None


class IngestProcessor:
    """Decode → validate → ingest → state writes → records to emit, for one input record."""

    def __init__(
        self,
        config: EngineConfig | Limits,
        states: UserStates | None = None,
        registry: codec.SchemaRegistry | None = None,
        partitions: int | None = None,
        dedupe_window_seconds: int = DEDUPE_WINDOW_SECONDS,
        embedder: Embedder | None = None,
        saved: SavedEntries | None = None,
        sealing: Sealing | None = None,
    ) -> None:
        """``partitions``: the input topic's partition count; when given, a record on a
        partition its key does not hash to is rejected (its user's state lives elsewhere).
        ``dedupe_window_seconds``: how long (event time) an input id is remembered to drop
        a redelivery of it. ``saved``: each user's state entries as of before the batch, to
        rebuild the state of a user whose input failed midway; without it such a failure
        is raised (nothing could say what the state was). ``sealing``: inputs are opened after
        decoding, ledger records and state entries sealed before encoding (sealing on)."""
        self.sealing = sealing
        self.saved = saved
        self.partitions = partitions
        self.dedupe_window_ms = dedupe_window_seconds * 1000
        self.embedder = embedder
        self.config = config if isinstance(config, EngineConfig) else EngineConfig(limits=config)
        if embedder is not None and self.config.embed is None:
            # what cycles write is embedded like what services write: recall reads one space
            # (streams.worker_engine.engine_config does the same for the worker and oracles)
            self.config = dataclasses.replace(self.config, embed=embedder.embed)
        self.states = states if states is not None else UserStates()
        self.registry = registry or codec.default_registry()

    def process(
        self, key: bytes | None, value: bytes | None, source: Headers, partition: int = 0
    ) -> Emission:
        """``source`` headers (topic/partition/offset) travel with a dead letter; ``partition``
        is the input partition, which owns the user's state."""
        [emission] = self.process_batch([Input(key, value, source, partition)])
        return emission

    def process_batch(self, inputs: Sequence[Input]) -> list[Emission]:
        """Each input's emission, in order. The memories written without an embedding are
        embedded in one call for the whole batch (a model embeds a batch of 32 several times
        faster than 32 single sentences), then each input is processed in turn. An input
        that raises is dead-lettered (``internal_error``) and the batch goes on."""
        decoded = [self._decode_or_fail(i) for i in inputs]
        if self.sealing is not None:
            decoded = self._opened(inputs, decoded, self.sealing)
        events = [d for d in decoded if isinstance(d, MemoryEvent)]
        # what the ledger records, so nothing downstream (cycles, projector, recall)
        # recomputes it (docs/consolidation.md, 'Similarity and embeddings'); invalid content
        # is left to validation to reject
        vectors = iter(self._embeddings(events))
        emissions: list[Emission] = []
        for item, event in zip(inputs, decoded, strict=True):
            if isinstance(event, Emission):
                emissions.append(event)
                continue
            vector = next(vectors)
            if isinstance(vector, Exception):
                emissions.append(self._failed(item, event, vector))
                continue
            try:
                emission = self._step(item, with_embedding(event, vector))
            except KeysUnavailable:
                raise  # not this input's fault: nothing of the batch may be sent
            except Exception as exc:  # noqa: BLE001 - one input's failure is its dead letter
                self._restore_user(event.user_id, item.partition, emissions)
                emission = self._failed(item, event, exc)
            emissions.append(emission)
        if self.sealing is not None:
            _store_drafts(emissions, self.sealing)
            _seal_state(emissions, self.sealing)
            # the keys this batch made or destroyed are durable before its records can be
            self.sealing.flush()
        return emissions

    def _opened(
        self, inputs: Sequence[Input], decoded: list[MemoryEvent | Emission], sealing: Sealing
    ) -> list[MemoryEvent | Emission]:
        """The decoded events with their sealed fields opened; one sealed with an erased key is
        a dead letter (``user_erased``: its bytes stay sealed there, unreadable for ever)."""
        events = [d for d in decoded if isinstance(d, MemoryEvent)]
        # decoded here and held by this batch alone: opened in place where they can be
        opened = iter(sealing.open_inputs(events, in_place=True))  # KeysUnavailable: stop
        out: list[MemoryEvent | Emission] = []
        for item, event in zip(inputs, decoded, strict=True):
            if isinstance(event, Emission):
                out.append(event)
                continue
            result = next(opened)
            if isinstance(result, Unreadable):
                reason = Rejection(
                    "user_erased",
                    "the event is sealed with a data key that no longer exists (its user was "
                    "forgotten, or it was sealed for another user): nothing of it can be read",
                )
                out.append(self._reject(item.key, item.value, reason, item.source, event))
            else:
                out.append(result)
        return out

    def _decode_or_fail(self, item: Input) -> MemoryEvent | Emission:
        try:
            return self._decode(item)
        except Exception as exc:  # noqa: BLE001 - a decoder bug fails this input alone
            return self._failed(item, None, exc)

    def _embeddings(self, events: Sequence[MemoryEvent]) -> list[bytes | None | Exception]:
        """Each event's missing embedding (:func:`missing_embeddings`). If the batch's one
        call raises, each is embedded alone, so only the inputs the embedder fails on fail."""
        try:
            return list(missing_embeddings(events, self.embedder))
        except Exception:  # noqa: BLE001 - found out input by input below
            found: list[bytes | None | Exception] = []
            for event in events:
                try:
                    found += missing_embeddings([event], self.embedder)
                except Exception as exc:  # noqa: BLE001 - this input's dead letter
                    found.append(exc)
            return found

    def _restore_user(self, user_id: str, partition: int, earlier: list[Emission]) -> None:
        """Put back the user's state as it was before the input that failed: its saved
        entries, then those the batch's ``earlier`` inputs changed."""
        if self.saved is None:
            raise RuntimeError(
                "an input failed midway and this processor has no saved state entries to "
                "restore its user from"
            )
        prefix = user_id.encode() + SEPARATOR.encode()
        entries = [(e.key, e.value) for e in self.saved(partition, user_id)]
        entries += [
            (e.key, e.value)
            for emission in earlier
            for e in emission.state
            if e.key.startswith(prefix)
        ]
        open_value = EntryOpening(self.sealing) if self.sealing is not None else None
        state, _ = restored_user(user_id, entries, open_value)
        self.states.replace(user_id, state)

    def _failed(self, item: Input, event: MemoryEvent | None, exc: Exception) -> Emission:
        """The dead letter of an input the worker failed on: the original record, the reason
        ``internal_error``, and the exception's type (``error.type``) and message."""
        key, value, source, _ = item
        if value is not None and len(value) > MAX_EVENT_BYTES:
            value = None  # as _too_large: no dead letter can hold it (the source headers can)
        log.error(
            "input at %s failed (%s); dead-lettered as %s, the batch goes on",
            dict((name, v.decode(errors="replace")) for name, v in source),
            type(exc).__name__,
            INTERNAL_ERROR,
            exc_info=exc,
        )
        message = str(exc)[:MAX_ERROR_CHARS]
        rejection = Rejection(
            INTERNAL_ERROR,
            f"the worker failed on this input ({type(exc).__name__}: {message}); nothing of "
            f"it was applied and the inputs after it were processed. This is a bug in "
            f"memstream, not in the input as far as the contract says: report it with this "
            f"letter",
        )
        emission = self._reject(key, value, rejection, source, event)
        assert emission.deadletter is not None
        emission.deadletter.headers.append(("error.type", type(exc).__name__.encode()))
        return emission

    def _decode(self, item: Input) -> MemoryEvent | Emission:
        key, value, source, partition = item
        if value is not None and len(value) > MAX_EVENT_BYTES:
            return self._too_large(key, len(value), source)
        try:
            event = codec.decode_event(value, self.registry)  # type: ignore[arg-type]
        except codec.DecodeError as exc:
            return self._reject(key, value, Rejection(exc.reason, exc.detail), source, None)
        if key is None:
            reason = Rejection("key_mismatch", "the record has no key: the key must be the user_id")
            return self._reject(key, value, reason, source, event)
        if self.partitions and partition_for(key, self.partitions) != partition:
            reason = Rejection(
                "wrong_partition",
                f"partition {partition} is not where key hashes (murmur2, {self.partitions} "
                f"partitions): publish with the default Kafka partitioner, not a fixed partition",
            )
            return self._reject(key, value, reason, source, event)
        if (stored := self._stored_size(event, len(value or b""))) is not None:
            reason = Rejection(
                "event_too_large",
                f"the memory would take {stored:,} bytes in the worker's state changelog, "
                f"which stores it as JSON (quotes, backslashes and control characters are "
                f"escaped, a control character to six bytes); the limit is "
                f"{MAX_EVENT_BYTES:,}: strip control characters or write less",
            )
            return self._reject(key, value, reason, source, event)
        return event

    def _stored_size(self, event: MemoryEvent, size: int) -> int | None:
        """The size of the state entry a written memory would make, when over the limit.
        JSON may grow text sixfold; a record too small to come near the limit that way is
        not encoded to find out (field names and the worker's embedding add a few KB, which
        the margin below the producer's 1,000,000-byte requests absorbs; the ledger record,
        Avro, does not grow at all)."""
        payload = event.payload
        if not isinstance(payload, MemoryWritten) or JSON_GROWTH * size <= MAX_EVENT_BYTES:
            return None
        memory = payload.memory
        # an embedding the worker computes is added to it, as base64
        added = 0 if memory.embedding is not None else 6 * self.config.limits.embedding_dim
        stored = len(encode_memory_record(MemoryRecord(memory, 1, False))) + added
        return stored if stored > MAX_EVENT_BYTES else None

    def _step(self, item: Input, event: MemoryEvent) -> Emission:
        key, value, source, partition = item
        assert key is not None  # _decode rejected a record without a key
        started = time.perf_counter()
        state = self.states.user(event.user_id, partition)
        before = before_input(state)
        # an erasure empties the user's state: every entry it had gets a tombstone
        held = [e.key for e in all_entries(state)] if _erases(event) else []
        anew = _written_anew(state.memories, event)
        outcome = step(state, event, self.config, key.decode("utf-8", "replace"))
        if isinstance(outcome, Rejection):
            return self._reject(key, value, outcome, source, event)
        if isinstance(outcome, Duplicate):
            return Emission(event_type=event.event_type, duplicate=True)
        emission = self._accept(event, outcome, state.memories, anew)
        expired = state.expire_seen(event.occurred_at - self.dedupe_window_ms)
        emission.state = changed_entries(state, event.event_id, outcome.decisions, before)
        emission.state += expired_entries(state.user_id, expired)
        if held:
            # nothing personal is left to seal (an input id, an empty record), and sealing
            # would make the user a new key
            emission.state = _erased_entries(held, all_entries(state))
            if self.sealing is not None:
                # in the order of the log: inputs sealed with the old key no longer open
                self.sealing.erase(event.user_id)
        elif self.sealing is not None:
            emission.unsealed = state.user_id  # sealed once per key, at the batch's end
        emission.seconds = time.perf_counter() - started
        return emission

    def _accept(
        self,
        event: MemoryEvent,
        outcome: Accepted,
        memories: Mapping[str, MemoryRecord] | None = None,
        anew: Collection[str] = (),
    ) -> Emission:
        """``memories``: the user's records after the input (a contradiction's explanation is
        sealed with its memories' keys at their versions); ``anew``: memories written again
        after their forget, whose records take a new key."""
        emission = Emission(event_type=event.event_type)
        emission.ledger_events.extend(outcome.decisions)
        if self.sealing is None:
            emission.ledger = self._ledger_records(event.user_id, outcome.decisions)
            return emission
        sealing = self.sealing
        held = memories or {}
        versions: dict[str, int | None] = {}  # as they stand now, also when sealed again

        def version_of(_user: str, memory_id: str) -> int | None:
            if memory_id not in versions:
                record = held.get(memory_id)
                versions[memory_id] = None if record is None or record.forgotten else record.version
            return versions[memory_id]

        def seal(drafting: bool = True) -> None:
            sealed = sealing.seal_ledger(outcome.decisions, version_of, anew, drafting=drafting)
            emission.ledger = self._ledger_records(event.user_id, sealed)

        seal()
        emission.drafted = sealing.drafts_used()
        if emission.drafted:
            # never with a draft again: the batch's drafts are stored by then, and a memory
            # no longer remembered (Sealing's memory of keys is bounded) is read, not drafted
            emission.reseal = lambda: seal(drafting=False)
        return emission

    def _ledger_records(
        self, user_id: str, events: Sequence[ConsolidationEvent]
    ) -> list[OutRecord]:
        user_key = user_id.encode()
        return [
            OutRecord(
                user_key,
                codec.encode_ledger(sealed, self.registry),
                [("event_type", sealed.event_type.encode())],
            )
            for sealed in events
        ]

    def _too_large(self, key: bytes | None, size: int, source: Headers) -> Emission:
        """Its dead letter cannot hold the original either: it carries where the record is
        (the source headers) and its size, and no value."""
        rejection = Rejection(
            "event_too_large",
            f"the record is {size:,} bytes; the limit is {MAX_EVENT_BYTES:,} (its ledger "
            f"record must fit the producer's 1,000,000-byte requests): keep large documents "
            f"out of memories and write a reference. The original is at the source topic, "
            f"partition and offset of this letter's headers while that topic retains it",
        )
        headers = [*source, ("source.bytes", str(size).encode())]
        return self._reject(key, None, rejection, headers, None)

    def _reject(
        self,
        key: bytes | None,
        value: bytes | None,
        rejection: Rejection,
        source: Headers,
        event: MemoryEvent | None,
    ) -> Emission:
        headers = letter_headers(rejection.reason, rejection.detail, source)
        event_type = event.event_type if event else None
        if event_type:
            headers.append(("event_type", event_type.encode()))
        letter = OutRecord(key, value or b"", headers)
        return Emission(event_type=event_type, deadletter=letter, rejection=rejection)
