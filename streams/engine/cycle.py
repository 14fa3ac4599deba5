"""One consolidation cycle for one user: the ordered steps of docs/consolidation.md, nothing else.

``run_cycle(state, request, policy, dim) -> decisions``. Each step is a rule from
``streams.engine.rules`` working on a :class:`CycleContext` (the user's working copy); the
order below is the order the rules run in, so later steps see what earlier ones decided.

A rule is all or nothing. One that raises contributes nothing: neither the decisions it made
before raising nor its effect on the cycle's working copies; the cycle's context is rebuilt
from the user's state and the decisions of the rules before it, and the other rules go on
(seed 001: a failing step is a warning). The report says which rule failed and why
(:func:`failed_rules` reads it back, so a driver can count failures by rule).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from streams.engine import ledger
from streams.engine.context import (
    CycleContext,
    CycleMode,
    CycleRequest,
    Embed,
    Judge,
    PatternWriter,
    SessionEnd,
    cycle_id_of,
)
from streams.engine.judge import judge_contradiction
from streams.engine.policy import Policy
from streams.engine.rules.archive import archive_stale_memories
from streams.engine.rules.contradictions import detect_contradictions
from streams.engine.rules.decay import count_decayed_memories
from streams.engine.rules.duplicates import merge_duplicates
from streams.engine.rules.identity import reset_identity_origin, update_identity_anchor
from streams.engine.rules.insights import extract_insights
from streams.engine.rules.narratives import consolidate_ended_sessions
from streams.engine.rules.observations import expire_passing_states
from streams.engine.rules.patterns import detect_patterns
from streams.engine.rules.procedures import learn_procedures
from streams.engine.rules.promotion import age_semantic_facts, promote_working_memories
from streams.engine.rules.pruning import prune_decayed_memories
from streams.engine.rules.scope import promote_scopes
from streams.engine.rules.stale import archive_unused_memories
from streams.engine.rules.summaries import summarize_episodes
from streams.engine.rules.synthesis import synthesize_profile
from streams.engine.rules.verbose import summarize_verbose_episodes
from streams.engine.user_state import InMemoryUserState, pair_key
from streams.engine.validation import DEFAULT_MAX_CONTENT_BYTES

__all__ = [
    "STEPS",
    "CycleContext",
    "CycleRequest",
    "Judge",
    "PatternWriter",
    "SessionEnd",
    "cycle_id_of",
    "failed_rules",
    "run_cycle",
]

Step = Callable[[CycleContext], None]


def run_cycle(
    state: InMemoryUserState,
    request: CycleRequest,
    policy: Policy,
    dim: int,
    judge: Judge = judge_contradiction,
    pattern_writer: PatternWriter | None = None,
    max_content_bytes: int = DEFAULT_MAX_CONTENT_BYTES,
    embed: Embed | None = None,
) -> list[ledger.ConsolidationEvent]:
    """The decisions of one cycle, ending with its ``ConsolidationCompleted`` report.

    ``state`` is read, not changed: the caller folds the decisions."""

    def fresh() -> CycleContext:
        """The user's working copy, as the cycle's first rule sees it."""
        return CycleContext(
            state.user_id,
            request,
            policy,
            dim,
            dict(state.memories),
            set(state.flagged_pairs),
            state.facets.copy(),
            judge,
            pattern_writer,
            state.occurrences().copy(),
            state.fact_index(_blocks_on_keys(policy)).overlay(),
            state.live_index().copy(),
            state.narrative_index().copy(),
            state.passing_index().copy(),
            max_content_bytes,
            embed,
        )

    cycle = fresh()
    processed = len(cycle.live())
    for step in steps_for(request.mode):
        decided, warned, counts = len(cycle.decisions), len(cycle.warnings), dict(cycle.counts)
        try:
            step(cycle)
        except Exception as exc:  # noqa: BLE001 - seed 001: a failing step is a warning
            # all or nothing: what the rule did before raising is dropped with it
            warnings = [*cycle.warnings[:warned], rule_failure(step.__name__, exc)]
            cycle = _replayed(fresh(), cycle.decisions[:decided])
            cycle.counts, cycle.warnings = counts, warnings
    report = ledger.ConsolidationCompleted(
        profile=policy.name,
        processed=processed,
        patterns=cycle.counts.get("patterns", 0),
        archived=cycle.counts.get("archived", 0),
        contradictions=cycle.counts.get("contradictions", 0),
        duplicates_merged=cycle.counts.get("duplicates", 0),
        links_created=cycle.counts.get("links", 0),
        decayed=cycle.counts.get("decayed", 0),
        duration_ms=0,  # the cycle is instantaneous in event time; wall time is a metric
        warnings=tuple(cycle.warnings),
    )
    cycle.emit("completed", cycle.cycle_id, report)
    return cycle.decisions


STEPS: tuple[Step, ...] = (
    consolidate_ended_sessions,  # 002: a closed session → ONE narrative
    expire_passing_states,  # memstream: "lately"/"this week" states end with their period
    promote_working_memories,  # 000 op 1: working → semantic
    age_semantic_facts,  # 000: semantic → episodic (memorykit)
    detect_patterns,  # 000 op 2, 001: similar facts → pattern
    extract_insights,  # 002: recent narratives → learning patterns
    learn_procedures,  # 000 op 3: episodic event types → procedures
    merge_duplicates,  # 001, 003: near-identical memories merge
    detect_contradictions,  # 001, 003: the latest wins, never deleting
    summarize_verbose_episodes,  # 003: long old episodes summarized in place
    summarize_episodes,  # 004: unsummarized episodes → ONE semantic summary
    count_decayed_memories,  # 001: salience decay, derived; counted for the report
    archive_stale_memories,  # 001: low salience → archived
    archive_unused_memories,  # 003: archive stale, with its exclusions
    prune_decayed_memories,  # 002: the pruner, in maintenance passes
    promote_scopes,  # 003: procedural agent → team → global
    synthesize_profile,  # 004: ONE procedural profile per user
    update_identity_anchor,  # 002: the temporal anchor and its drift
)
"""A full cycle, in order. Each rule checks its own policy section and does nothing when off."""

OPERATIONS: dict[CycleMode, tuple[Step, ...]] = {
    "full": STEPS,
    "procedural": (synthesize_profile,),  # memstream procedural (004)
    "identity_reset": (reset_identity_origin,),  # memstream identity reset (002)
}


def steps_for(mode: CycleMode) -> tuple[Step, ...]:
    return OPERATIONS[mode]


RULE_NAMES = frozenset(step.__name__ for steps in OPERATIONS.values() for step in steps)
_FAILED = re.compile(r"^(\w+): [A-Z]\w*: ")


def rule_failure(rule: str, exc: Exception) -> str:
    """The report's warning for a rule that raised: ``rule: ExceptionType: message``, a
    form no rule's own warning takes (:func:`failed_rules` reads it back)."""
    return f"{rule}: {type(exc).__name__}: {exc}"


def failed_rules(report: ledger.ConsolidationCompleted) -> list[str]:
    """The rules that raised in the cycle ``report`` closes, in the order they ran: what a
    driver counts (the engine itself counts nothing)."""
    found = (_FAILED.match(warning) for warning in report.warnings)
    return [m.group(1) for m in found if m is not None and m.group(1) in RULE_NAMES]


def _replayed(cycle: CycleContext, decisions: Sequence[ledger.ConsolidationEvent]) -> CycleContext:
    """``cycle`` (a fresh context) as it was after ``decisions``: what the rules before a
    failed one decided, without anything of the failed one. Contradiction checks mark the
    pairs they report as they report them; the mark is kept as the fold keeps it."""
    for decision in decisions:
        cycle.take(decision)
        payload = decision.payload
        if isinstance(payload, ledger.ContradictionDetected):
            cycle.flagged_pairs.add(pair_key(payload.memory_id, payload.other_memory_id))
    return cycle


def _blocks_on_keys(policy: Policy) -> bool:
    """Whether contradiction checks pair facts on blocking keys (and so need them read)."""
    return policy.contradictions.enabled and policy.contradictions.entity_candidates
