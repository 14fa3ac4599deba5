"""The memories each compared system leaves a user with, and how they were derived.

``raw``: nothing consolidated; every turn is an active memory, written ``"Name: text"``
(speaker-attributed, a fair plain retrieval over the transcript) with that text's embedding.
A profile: the corpus's input replayed through the pure engine (the batch oracle) under that
built-in profile, timed; its memories are the user's records that recall returns without
``include_archived`` (``projections/queries.py``: status ``active`` and not invalidated; a
forgotten record is deleted from the read models).

Lineage (what a memory was derived from) is read from two places, both followed
transitively by :class:`bench.recall_quality.scoring.Lineage`:

- the memory's metadata, each key of :data:`LINEAGE_KEYS` holding one id or comma-joined ids
  (``derived_from`` is the key the observation writer is to use);
- the ledger's links as the projector writes them to ``memory_links``
  (``projections.rows.RowBatch``): ``derived_from`` (narratives, summaries, patterns,
  promotions), ``supersedes`` (the survivor of a merge stands for the merged memory) and
  ``summarized_into`` (an archived memory is carried by its narrative).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from bench.recall_quality.corpus import Corpus
from bench.recall_quality.feed import SOURCE, Embed, prefixed
from bench.recall_quality.scoring import Lineage
from projections.rows import RowBatch
from streams.engine import ledger
from streams.engine.model import Memory, MemoryEvent
from streams.engine.oracle import OracleRun, replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from streams.engine.user_state import LIVE_STATUS, MemoryRecord

RAW = "raw"
LINEAGE_KEYS = (
    "derived_from",
    "parents",
    "source_episode_ids",
    "evidence_ids",
    "evidence",
    "pattern_of",
    "source_semantic_ids",
    "extracted_from",
    "promoted_from",
    "promoted_from_id",
    "supersedes",
)
LINK_TYPES_TO_ORIGIN = ("derived_from", "supersedes")  # source was made from target
LINK_TYPES_FROM_ORIGIN = ("summarized_into",)  # target carries source
LEDGER_TOPIC = "bench.recall_quality.ledger"


@dataclass(frozen=True, slots=True)
class ActiveMemory:
    memory_id: str
    user_id: str
    content: str
    layer: str
    kind: str
    embedding: bytes | None  # None: recall cannot return it (it filters on an embedding)


@dataclass
class System:
    """One compared system: its active memories per user, their lineage, the ledger that
    built them (to project into PostgreSQL) and what the consolidation cost."""

    name: str
    memories: dict[str, list[ActiveMemory]]
    lineage: Lineage
    ledger: list[ledger.ConsolidationEvent]
    inputs: int
    replay_seconds: float | None = None
    replay_cpu_seconds: float | None = None  # the process's, all its threads
    rejections: int = 0

    @property
    def all_memories(self) -> list[ActiveMemory]:
        return [m for ms in self.memories.values() for m in ms]

    @property
    def cycle_us_per_input(self) -> float | None:
        """Wall-clock replay time per input event, in µs."""
        if self.replay_seconds is None or not self.inputs:
            return None
        return self.replay_seconds / self.inputs * 1e6


def raw_system(corpus: Corpus, embeddings: dict[str, bytes]) -> System:
    """Every turn active as ``"Name: text"``; ``embeddings``: turn id → that text's vector."""
    memories: dict[str, list[ActiveMemory]] = defaultdict(list)
    stored: list[ledger.ConsolidationEvent] = []
    for conversation in corpus.conversations:
        user = conversation.user_id
        for turn in conversation.turns:
            content = prefixed(turn)
            memories[user].append(
                ActiveMemory(
                    turn.turn_id, user, content, "working", "note", embeddings[turn.turn_id]
                )
            )
            memory = Memory(
                memory_id=turn.turn_id,
                user_id=user,
                content=content,
                created_by="user",
                conversation_id=conversation.conversation_id,
                session_id=turn.session_id,
                embedding=embeddings[turn.turn_id],
                created_at=turn.at,
            )
            stored.append(
                ledger.ConsolidationEvent(
                    f"raw-{turn.turn_id}",
                    user,
                    turn.at,
                    SOURCE,
                    ledger.MemoryStored(memory, 1),
                )
            )
    return System(RAW, dict(memories), Lineage({}), stored, len(stored))


def profile_system(name: str, events: list[MemoryEvent], embed: Embed | None) -> System:
    """``events`` replayed by the batch oracle under the built-in profile ``name``."""
    config = EngineConfig(policy=builtin_profile(name), embed=embed)
    started, cpu = time.perf_counter(), time.process_time()
    run = replay(events, config)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    return System(
        name,
        active_memories(run),
        _lineage(run),
        run.decisions,
        len(events),
        seconds,
        cpu_seconds,
        len(run.rejections),
    )


def active_memories(run: OracleRun) -> dict[str, list[ActiveMemory]]:
    """Per user, the records recall returns without ``include_archived``."""
    found: dict[str, list[ActiveMemory]] = {}
    for user, state in sorted(run.users.items()):
        found[user] = [
            ActiveMemory(
                r.memory.memory_id,
                user,
                r.memory.content,
                r.memory.layer,
                r.memory.kind,
                r.memory.embedding,
            )
            for r in sorted(state.records(), key=lambda r: r.memory.memory_id)
            if is_recallable(r)
        ]
    return found


def is_recallable(record: MemoryRecord) -> bool:
    """What ``projections.queries.recall`` keeps by default: ``status = 'active' AND
    invalid_at IS NULL`` (forgotten records are deleted from the read models)."""
    memory = record.memory
    return not record.forgotten and memory.status == LIVE_STATUS and memory.invalid_at is None


def _lineage(run: OracleRun) -> Lineage:
    records = [r for state in run.users.values() for r in state.records()]
    return lineage_of(records, run.decisions)


def lineage_of(
    records: Iterable[MemoryRecord], decisions: list[ledger.ConsolidationEvent]
) -> Lineage:
    """Lineage from every record's metadata (archived ones too: a chain may pass through
    them) and from the links the projector derives from the ledger."""
    parents: dict[str, set[str]] = defaultdict(set)
    for record in records:
        memory = record.memory
        for key in LINEAGE_KEYS:
            value = memory.metadata.get(key)
            if value:
                parents[memory.memory_id].update(i for i in value.split(",") if i)
    for source, target, link_type in ledger_links(decisions):
        if link_type in LINK_TYPES_TO_ORIGIN:
            parents[source].add(target)
        elif link_type in LINK_TYPES_FROM_ORIGIN:
            parents[target].add(source)
    return Lineage(parents)


def ledger_links(decisions: list[ledger.ConsolidationEvent]) -> list[tuple[str, str, str]]:
    """(source id, target id, link type) of every ``memory_links`` row the projector writes
    for ``decisions``."""
    return [(link[1], link[2], link[3]) for link in row_batch(decisions).links]


def row_batch(decisions: list[ledger.ConsolidationEvent], first_offset: int = 0) -> RowBatch:
    """``decisions`` folded into rows by the projector's own code, as if read from one
    ledger partition from ``first_offset`` on."""
    batch = RowBatch()
    for offset, decision in enumerate(decisions, first_offset):
        batch.add(decision, LEDGER_TOPIC, 0, offset)
    return batch
