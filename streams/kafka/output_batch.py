"""What a batch of inputs sends, per input partition: every input's ledger records in input
order, the state entries they changed coalesced to the last value per key, and their dead
letters.

The worker takes its input in batches (``MEMSTREAM_WORKER_BATCH_SIZE`` inputs or
``MEMSTREAM_WORKER_BATCH_MS``, whichever comes first) and sends a partition's batch in one
hold of the emission guard, so a batch is atomic exactly as one input was: its offsets are
acked after the whole batch is sent, and a commit never lands inside it.

Coalescing is what makes batching pay. The state changelog is a compacted topic: only the last
value of a key is ever read back (restore, checkpoints), so a user's ``meta`` entry, rewritten
by each of their inputs, is sent once per batch instead of once per input. Ledger records are
never coalesced: each is a decision, and their order is the fold order.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from streams.config.settings import Settings
from streams.ingest_processor import Emission
from streams.kafka.transactional_output import OutgoingRecord
from streams.state.changelog import Entry
from streams.state.restore import state_topic


@dataclass
class PartitionBatch:
    """One input partition's share of a batch."""

    partition: int
    emissions: list[Emission] = field(default_factory=list)
    state: dict[bytes, Entry] = field(default_factory=dict)  # key → last entry, first-seen order
    last_offset: int = -1

    def add(self, emission: Emission, offset: int, snapshot: list[Entry] | None = None) -> None:
        """``snapshot``: state entries a restore owes the changelog (all of them after a ledger
        rebuild), which the input's own entries then supersede key by key."""
        self.emissions.append(emission)
        for entry in [*(snapshot or ()), *emission.state]:
            self.state[entry.key] = entry
        self.last_offset = offset

    @property
    def state_entries(self) -> list[Entry]:
        return list(self.state.values())

    def records(self, settings: Settings) -> list[OutgoingRecord]:
        """Ledger records first (input order), then the coalesced state entries, then dead
        letters; the ledger and changelog on the input's partition number (co-partitioned:
        they hold that partition's users), dead letters partitioned by key."""
        ledger = settings.ledger_topic
        records = [
            OutgoingRecord(ledger, r.key, r.value, r.headers, self.partition)
            for emission in self.emissions
            for r in emission.ledger
        ]
        changelog = state_topic(settings)
        records += [
            OutgoingRecord(changelog, e.key, e.value, [], self.partition)
            for e in self.state.values()
        ]
        records += [
            OutgoingRecord(settings.deadletter_topic, e.key, e.value, e.headers)
            for emission in self.emissions
            if (e := emission.deadletter) is not None
        ]
        return records


class OutputBatch:
    """A batch of inputs, grouped by input partition in first-seen order."""

    def __init__(self) -> None:
        self.partitions: dict[int, PartitionBatch] = {}

    def add(
        self, partition: int, emission: Emission, offset: int, snapshot: list[Entry] | None = None
    ) -> None:
        batch = self.partitions.get(partition)
        if batch is None:
            batch = self.partitions[partition] = PartitionBatch(partition)
        batch.add(emission, offset, snapshot)

    def __iter__(self) -> Iterator[PartitionBatch]:
        return iter(self.partitions.values())
