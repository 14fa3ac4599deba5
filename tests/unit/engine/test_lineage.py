"""One lineage for every rule (issue 42): whatever a rule writes from other memories is
reachable from them through ``streams.engine.lineage``, and the walk orders it after them."""

from __future__ import annotations

import pytest

from streams.engine import ledger
from streams.engine.lineage import (
    FORWARD_KEYS,
    SOURCE_KEYS,
    LineageIndex,
    descendants,
    sources_of,
)
from streams.engine.model import Memory, MemoryEvent
from streams.engine.oracle import OracleRun, replay
from streams.engine.policy import builtin_profile, profile_names
from streams.engine.step import EngineConfig
from streams.engine.user_state import MemoryRecord, records_after
from tests import scenarios
from tests.dialogs import Turn, write_dialog
from tests.scenarios import HOUR, NOW, cluster, random_unit

DIALOG = [
    [Turn("statement", i) for i in range(4)]
    + [Turn("question", 5), Turn("answer", 1), Turn("negation", 0)],
    [Turn("repeat", 0), Turn("statement", 7), Turn("repeat", 0), Turn("phatic", 1)]
    + [Turn("repeat", 0), Turn("statement", 9)],
]


def _workloads() -> list[MemoryEvent]:
    """Every scenario of the seeds (each exercises one rule or two), dialogs in every layer,
    and alike facts that form patterns and merge: together, every rule that derives."""
    events: list[MemoryEvent] = []
    for name, make in (
        ("testing", scenarios.episodes_of_testing_before_commits),
        ("postgres", scenarios.postgres_then_mysql),
        ("rest", scenarios.rest_duplicates),
        ("fifty", scenarios.fifty_message_session),
        ("eighty", scenarios.eighty_episodes_in_ten_sessions),
        ("preferences", scenarios.semantic_preferences),
        ("pins", scenarios.decayed_with_pins),
        ("identity", scenarios.drifting_identity),
    ):
        events += make(f"lineage-{name}").events
    procedure = scenarios.well_used_procedure("lineage-procedure")
    scenarios.access_team_copy(procedure, _scope_copy_id("lineage-procedure"))
    events += procedure.events
    for layer in ("working", "episodic", "semantic"):
        events += write_dialog(f"lineage-dialog-{layer}", DIALOG, layer, 0.9).events
    events += _alike_facts("lineage-alike").events
    corrected = "Project uses PostgreSQL. The team deploys on Fridays."  # one sentence corrected
    events += scenarios.postgres_then_mysql(
        "lineage-corrected", corrected, created_by="system"
    ).events
    return events


def _scope_copy_id(user: str) -> str:
    from streams.engine.context import MEMORY_NAMESPACE
    from streams.engine.ids import uuid5_text

    return uuid5_text(MEMORY_NAMESPACE, "\x1f".join((user, "scope", "deploy", "team")))


def _alike_facts(user: str) -> scenarios.Scenario:
    """Five alike semantic facts (a pattern), two near-identical ones (a merge), and a
    consolidation two hours later (memorykit ages confident facts into events)."""
    s = scenarios.Scenario(user)
    vectors = cluster(random_unit(7), 5, 0.9, seed=3)
    for i, vector in enumerate(vectors):
        s.write(
            f"alike-{i}",
            f"Runs the test suite before commit number {i}",
            layer="semantic",
            kind="fact",
            confidence=0.9,
            embedding=vector,
            at=NOW + i,
        )
    twin = cluster(random_unit(8), 2, 0.99, seed=4)
    for i, vector in enumerate(twin):
        s.write(f"twin-{i}", "Prefers tea", layer="semantic", embedding=vector, at=NOW + 10 + i)
    s.consolidate(at=NOW + HOUR)
    s.consolidate(at=NOW + 3 * HOUR)
    return s


@pytest.fixture(scope="module", params=profile_names())
def run(request) -> OracleRun:
    return replay(_workloads(), EngineConfig(policy=builtin_profile(request.param)))


def _written(run: OracleRun) -> list[tuple[ledger.ConsolidationEvent, Memory]]:
    """Every memory a decision of the run wrote, created or rewritten, with the decision."""
    latest: dict[str, MemoryRecord] = {}
    found = []
    for decision in run.decisions:
        for record in records_after(latest.get, decision.payload):
            latest[record.memory.memory_id] = record
            if not record.forgotten:
                found.append((decision, record.memory))
    return found


def test_every_id_a_written_memory_names_is_a_source_the_walk_knows_or_a_forward_link(run):
    """A rule that named another memory under a key the lineage does not list would make a
    memory no forget can reach."""
    known = {m for state in run.users.values() for m in state.memories}
    unknown = set()
    for _, memory in _written(run):
        for key, value in memory.metadata.items():
            named = set(value.split(",")) & known - {memory.memory_id}
            if named and key not in SOURCE_KEYS and key not in FORWARD_KEYS:
                unknown.add((memory.kind, key))
    assert unknown == set()


DECLARED = {
    ledger.PatternDetected: lambda p: (p.pattern, set(p.evidence_ids)),
    ledger.SessionConsolidated: lambda p: (p.narrative, set(p.source_ids)),
    ledger.EpisodesSummarized: lambda p: (p.summary, set(p.episode_ids)),
    ledger.MemoryPromoted: lambda p: (p.promoted, {p.source_memory_id}),
    ledger.ScopePromoted: lambda p: (p.copy, {p.source_memory_id}),
    ledger.MemoryMerged: lambda p: (p.survivor, {p.merged_memory_id}),
}


def test_what_each_derivation_says_it_was_made_from_the_walk_finds(run):
    """The ledger payloads name their sources too; each of those is a source by the lineage,
    so the read models' links and the engine's walk agree."""
    missing = []
    for decision, _ in _written(run):
        declared = DECLARED.get(type(decision.payload))
        if declared is None:
            continue
        memory, sources = declared(decision.payload)
        if not sources <= set(sources_of(memory)):
            missing.append((decision.event_type, memory.kind, sources - set(sources_of(memory))))
    assert missing == []


def test_every_memory_a_cycle_creates_from_others_lists_them(run):
    """A memory a rule creates (not an input's, not a rewrite in place of one) has sources."""
    inputs = {
        d.payload.memory.memory_id
        for d in run.decisions
        if d.trigger == "ingest"
        and isinstance(d.payload, ledger.MemoryStored)
        and d.payload.version == 1
        and d.payload.memory.created_by != "system"
    }
    orphans = set()
    for decision, memory in _written(run):
        if memory.memory_id in inputs or decision.event_type in ("MemoryStored",):
            continue
        if decision.event_type == "MemoryMerged":
            continue  # the survivor is an input; its link is checked above
        if not sources_of(memory):
            orphans.add((decision.event_type, memory.kind))
    assert orphans == set()


def test_the_workloads_exercise_every_kind_of_derivation():
    """Else the enumeration above proves nothing: across the profiles, every rule that
    derives wrote at least once."""
    kinds: set[str] = set()
    for name in profile_names():
        run = replay(_workloads(), EngineConfig(policy=builtin_profile(name)))
        for decision, memory in _written(run):
            kinds.add(decision.event_type)
            kinds.update(k for k in memory.metadata if k in SOURCE_KEYS)
    assert set(SOURCE_KEYS) <= kinds
    assert {
        "PatternDetected",
        "SessionConsolidated",
        "EpisodesSummarized",
        "ProceduralSynthesized",
        "MemoryPromoted",
        "ScopePromoted",
        "MemoryMerged",
    } <= kinds


def test_the_walk_orders_a_summary_after_the_narrative_it_summarizes():
    made = {
        "narrative": ("turn",),
        "observation": ("turn",),
        "summary": ("narrative", "other"),
        "profile": ("summary", "observation"),
    }
    derived: dict[str, list[str]] = {}
    for memory_id, sources in made.items():
        for source in sources:
            derived.setdefault(source, []).append(memory_id)

    order = descendants(["turn"], lambda m: derived.get(m, []), lambda m: made.get(m, ()))

    assert set(order) == {"narrative", "observation", "summary", "profile"}
    assert order.index("narrative") < order.index("summary") < order.index("profile")
    assert order.index("observation") < order.index("profile")


def test_the_index_follows_a_memory_whose_sources_change():
    def record(metadata: dict[str, str], forgotten: bool = False) -> MemoryRecord:
        return MemoryRecord(Memory("d", "u", "x", metadata=metadata), 1, forgotten)

    index = LineageIndex.of([record({"parents": "a,b", "supersedes": "c"})])
    assert index.derived("a") == index.derived("c") == {"d"}

    index.move(record({"parents": "a,b", "supersedes": "c"}), record({"parents": "b"}))

    assert index.derived("a") == set() and index.derived("c") == set()
    assert index.derived("b") == {"d"}
