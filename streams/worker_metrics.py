"""The worker's Prometheus metrics (docs/operations.md, 'Metrics'): base units, ``_total`` counters,
``_seconds`` histograms, prefix ``memstream_``. Labels never carry user ids or content.

Faust's own Prometheus monitor is not enabled: its names are unprefixed and in milliseconds.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from prometheus_client import Counter, Gauge, Histogram

from streams.engine import ledger as ledger_types
from streams.engine.cycle import failed_rules
from streams.kafka.consumer_lag import consumer_lag as consumer_lag  # one gauge, both processes

if TYPE_CHECKING:
    import faust
    from faust.types import TP

    from streams.ingest_processor import Emission

log = logging.getLogger("memstream.worker")

LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600)

events_ingested = Counter(
    "memstream_events_ingested",
    "Input events accepted by the ingest agent.",
    ["event_type"],
)
events_rejected = Counter(
    "memstream_events_rejected",
    "Input events sent to the dead-letter topic.",
    ["reason"],
)
events_duplicate = Counter(
    "memstream_events_duplicate",
    "Input events ignored because their event_id was already processed.",
)
ledger_events = Counter(
    "memstream_ledger_events",
    "Events appended to memory.consolidation.",
    ["event_type"],
)
event_lag = Histogram(
    "memstream_event_lag_seconds",
    "Event time of the input to the moment its decision was emitted.",
    buckets=LAG_BUCKETS,
)
partitions_assigned = Gauge(
    "memstream_worker_partitions_assigned",
    "Partitions of memory.events this worker owns.",
)
state_rebuild = Histogram(
    "memstream_worker_state_rebuild_seconds",
    "Time to rebuild one assigned partition's state from the ledger.",
    buckets=(0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
)
state_rebuild_events = Counter(
    "memstream_worker_state_rebuild_events",
    "Ledger events folded while rebuilding partition state (only when a partition has no "
    "state changelog yet: the disaster-recovery path).",
)
state_restore_entries = Counter(
    "memstream_worker_state_restore_entries",
    "State-changelog records read while restoring assigned partitions (the normal path).",
)
state_checkpoint_pending = Gauge(
    "memstream_worker_state_checkpoint_pending",
    "State keys whose latest entry is sent to the changelog but not yet in the local "
    "checkpoint (a restart reads them from the changelog's tail).",
)
worker_batch_size = Histogram(
    "memstream_worker_batch_inputs",
    "Inputs per partition in one sent batch (MEMSTREAM_WORKER_BATCH_SIZE/_MS bound it).",
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000),
)
hot_users = Gauge(
    "memstream_worker_hot_users",
    "Users held in memory (MEMSTREAM_HOT_USERS bounds it; the others are read back from "
    "the local store when an input of theirs comes).",
)
user_loads = Counter(
    "memstream_worker_user_loads_total",
    "Cold users read back from the local store (an input of theirs came after eviction).",
)
known_users = Gauge(
    "memstream_worker_users",
    "Users of the partitions this worker owns, in memory or in its local store.",
)
ticked_users = Gauge(
    "memstream_worker_ticked_users",
    "Users the last periodic tick went to: those with time-driven work due (not every user).",
)
state_restores = Counter(
    "memstream_worker_state_restores",
    "Partition state restores, by source: changelog, ledger (rebuild) or empty.",
    ["source"],
)
state_rebuild_partial_events = Counter(
    "memstream_worker_state_rebuild_partial_events",
    "Ledger events of inputs whose output was only partly committed, skipped by rebuilds "
    "(those inputs are processed again). Anything above zero is worth a look.",
)
consolidation_cycle = Histogram(
    "memstream_consolidation_cycle_seconds",
    "Wall time to process an input event that ran a consolidation cycle.",
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
promotions = Counter(
    "memstream_promotions", "Memories promoted between layers.", ["from_layer", "to_layer"]
)
patterns_extracted = Counter("memstream_patterns_extracted", "Patterns detected.")
contradictions_found = Counter("memstream_contradictions_found", "Contradictions detected.")
duplicates_merged = Counter("memstream_duplicates_merged", "Duplicate memories superseded.")
memories_archived = Counter("memstream_memories_archived", "Memories archived.")
memories_retired = Counter(
    "memstream_memories_retired",
    "Memories that left active memory, by action (archived, deleted) and rule reason "
    "(summarized_into_narrative, summarized_into_summary, stale, low_salience, pruned, ...).",
    ["action", "reason"],
)
sessions_consolidated = Counter(
    "memstream_sessions_consolidated", "Sessions closed into a narrative (seed 002)."
)
sessions_closed = Counter(
    "memstream_sessions_closed", "Event-time sessions closed, by why.", ["reason"]
)
session_compression = Histogram(
    "memstream_session_compression_ratio",
    "Memories per narrative: how much a session was compressed (seed 002 targets >= 10).",
    buckets=(1, 2, 5, 10, 15, 20, 30, 40, 50, 100),
)
episodes_summarized = Counter(
    "memstream_episodes_summarized", "Episodes carried by a new semantic summary (seed 004)."
)
insights_extracted = Counter(
    "memstream_insights_extracted", "Learning patterns from recent narratives (seed 002)."
)
identity_drift = Counter(
    "memstream_identity_drift_measurements",
    "Identity anchor updates, by drift level (ok, warning > 0.2, critical > 0.4).",
    ["level"],
)
profiles_synthesized = Counter(
    "memstream_profiles_synthesized", "Procedural profiles synthesized (seed 004)."
)
cycle_rule_failures = Counter(
    "memstream_cycle_rule_failures",
    "Consolidation rules that raised in a cycle, by rule: their decisions were dropped and "
    "the cycle's other rules went on (the report's warnings say why). Any is a bug to report.",
    ["rule"],
)
scope_promotions = Counter(
    "memstream_scope_promotions", "Procedural memories copied to a wider scope.", ["to_scope"]
)


# What the worker observes of each input's emission, as the metrics above and one log line per
# consolidation cycle: kept beside the metrics so the app stays a map.


def observe_emission(emission: Emission) -> None:
    if emission.rejection is not None:
        events_rejected.labels(emission.rejection.reason).inc()
        return
    if emission.duplicate:
        events_duplicate.inc()
        return
    events_ingested.labels(emission.event_type or "unknown").inc()
    now = time.time()
    for decision in emission.ledger_events:
        ledger_events.labels(decision.event_type).inc()
        event_lag.observe(max(0.0, now - decision.occurred_at / 1000))
        count_decision(decision.payload)


def log_cycle(emission: Emission) -> None:
    """One line per cycle with its counts (seed 000's consolidation log)."""
    for decision in emission.ledger_events:
        report = decision.payload
        if isinstance(report, ledger_types.ConsolidationCompleted):
            log.info(
                "consolidation cycle %s (%s, profile %s) for user %s: processed=%d "
                "patterns=%d archived=%d contradictions=%d duplicates=%d links=%d decayed=%d "
                "warnings=%s",
                decision.cycle_id,
                decision.trigger,
                report.profile,
                decision.user_id,
                report.processed,
                report.patterns,
                report.archived,
                report.contradictions,
                report.duplicates_merged,
                report.links_created,
                report.decayed,
                list(report.warnings) or "none",
            )


def count_decision(payload: object) -> None:
    """The counters of consolidation decisions (docs/operations.md, 'Metrics')."""
    if isinstance(payload, ledger_types.MemoryPromoted):
        promotions.labels(payload.source_layer, payload.promoted.layer).inc()
    elif isinstance(payload, ledger_types.PatternDetected):
        patterns_extracted.inc()
        if payload.pattern.kind == "learning_pattern":
            insights_extracted.inc()
    elif isinstance(payload, ledger_types.ContradictionDetected):
        contradictions_found.inc()
    elif isinstance(payload, ledger_types.MemoryMerged):
        duplicates_merged.inc()
    elif isinstance(payload, ledger_types.MemoryArchived):
        memories_archived.inc()
        memories_retired.labels("archived", payload.reason).inc()
    elif isinstance(payload, ledger_types.MemoryDeleted):
        memories_retired.labels("deleted", payload.reason).inc()
    elif isinstance(payload, ledger_types.SessionClosed):
        sessions_closed.labels(payload.reason).inc()
    elif isinstance(payload, ledger_types.SessionConsolidated):
        sessions_consolidated.inc()
        session_compression.observe(payload.compression_ratio)
    elif isinstance(payload, ledger_types.EpisodesSummarized):
        episodes_summarized.inc(len(payload.episode_ids))
    elif isinstance(payload, ledger_types.IdentityDriftMeasured):
        identity_drift.labels(payload.level).inc()
    elif isinstance(payload, ledger_types.ProceduralSynthesized):
        profiles_synthesized.inc()
    elif isinstance(payload, ledger_types.ScopePromoted):
        scope_promotions.labels(payload.to_scope).inc()
    elif isinstance(payload, ledger_types.ConsolidationCompleted):
        for rule in failed_rules(payload):
            cycle_rule_failures.labels(rule).inc()


class PartitionProgress:
    """Last processed offset per input partition, to export consumer lag.

    The lag is what this worker has not processed: from the offset after its last sent
    input, or, on a partition it has sent nothing of since it got it, from the group's
    committed offset (the start of the log when there is none). A partition nothing is
    processed on shows its whole backlog, never 0 (it once read 0 while the agent was dead)."""

    def __init__(self, topic: str) -> None:
        self.topic = topic
        self.next_offsets: dict[int, int] = {}

    def processed(self, partition: int, offset: int) -> None:
        self.next_offsets[partition] = offset + 1

    def forget(self, partitions: Iterable[int]) -> None:
        """Partitions this worker lost: their progress is their next owner's to report."""
        for partition in partitions:
            self.next_offsets.pop(partition, None)
            with contextlib.suppress(KeyError):
                consumer_lag.remove(self.topic, str(partition))

    def report(self, app: faust.App) -> None:
        consumer = app.consumer
        # Faust's record of the group's committed offsets (the next offset to read), kept
        # from assignment on; not part of its typed interface
        committed: Mapping[TP, int | None] = getattr(consumer, "_committed_offset", {})
        for tp in consumer.assignment():
            if tp.topic != self.topic:
                continue
            highwater = consumer.highwater(tp)
            if highwater is None:
                continue
            done = self.next_offsets.get(tp.partition)
            if done is None:
                done = committed.get(tp) or 0
            consumer_lag.labels(tp.topic, str(tp.partition)).set(max(0, highwater - done))
