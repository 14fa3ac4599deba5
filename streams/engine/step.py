"""The engine's one entry point: an input event against a user's state → decisions.

``step`` runs the ingest step, folds what it decided into the state, asks whether a
consolidation cycle is due (manual request, periodic tick, or the on-write thresholds of
seed 000), and if so runs the cycle and folds that too. The Faust agent and the batch
oracle both call exactly this, so they cannot disagree. The state passed in is updated in
place to the new state; the decisions returned are what changed it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from streams.engine.context import CycleMode, Embed
from streams.engine.cycle import CycleRequest, Judge, PatternWriter, run_cycle
from streams.engine.emissions import numbered
from streams.engine.forgetting import Rewriting
from streams.engine.ingest import Accepted, IngestOutcome, ingest
from streams.engine.judge import judge_contradiction
from streams.engine.model import (
    ConsolidationRequested,
    MemoryEvent,
    MemoryWritten,
    SessionEnded,
    Trigger,
)
from streams.engine.policy import Policy, PolicyError, builtin_profile
from streams.engine.rules.extraction import extract_on_write
from streams.engine.rules.maintenance import maintenance_due
from streams.engine.rules.sessions import assign_session, ending_sessions
from streams.engine.user_state import InMemoryUserState, apply_outcome
from streams.engine.validation import Limits, Rejection


@dataclass(frozen=True)
class EngineConfig:
    """Everything the engine needs besides state and event: the deployment's policy, the
    contract's limits, how to resolve a per-request profile override, and the judge."""

    policy: Policy = field(default_factory=Policy)
    limits: Limits = field(default_factory=Limits)
    profiles: Callable[[str], Policy] = builtin_profile
    judge: Judge = judge_contradiction
    pattern_writer: PatternWriter | None = None  # None: extractive (the most central member)
    embed: Embed | None = None
    """Embeds the memories a cycle writes (texts → packed float32 vectors, in order); the
    ledger records the vectors, so a replay recomputes nothing. It must be deterministic.
    None: the built-in hashing embedder."""


def step(
    state: InMemoryUserState, event: MemoryEvent, config: EngineConfig, key: str | None = None
) -> IngestOutcome:
    """Apply ``event`` to ``state`` (in place) and return the outcome with every decision."""
    due = _requested_policy(event, config)
    if isinstance(due, Rejection):
        return due
    policy = config.policy
    event = assign_session(state.facets, event, policy, _writes_new_memory(state, event))
    outcome = ingest(state, event, config.limits, key, _rewriting(config))
    if not isinstance(outcome, Accepted):
        return outcome
    outcome = Accepted(outcome.decisions + extract_on_write(event, outcome.decisions, policy))
    apply_outcome(state, event.event_id, event.occurred_at, outcome.decisions)
    request = due_cycle(state, event, due)
    if request is None:
        return Accepted(numbered(outcome.decisions))
    cycle = run_cycle(
        state,
        request,
        due,
        config.limits.embedding_dim,
        config.judge,
        config.pattern_writer,
        config.limits.max_content_bytes,
        config.embed,
    )
    if request.trigger == "periodic" and len(cycle) == 1:
        # A tick that found nothing to do leaves no trace: otherwise every user would add a
        # report to the ledger every few minutes forever.
        return Accepted(numbered(outcome.decisions))
    for decision in cycle:
        state.fold(decision)
    # Numbered as one emission: a reader treats the input as processed only when all of
    # them are in the ledger (see ``emissions``).
    return Accepted(numbered(outcome.decisions + tuple(cycle)))


def _rewriting(config: EngineConfig) -> Rewriting:
    """How a forget writes derived memories again: with the deployment's policy and
    embedder, as the cycle that made them."""
    return Rewriting(
        config.policy, config.limits.embedding_dim, config.embed, config.limits.max_content_bytes
    )


def _requested_policy(event: MemoryEvent, config: EngineConfig) -> Policy | Rejection:
    payload = event.payload
    if isinstance(payload, ConsolidationRequested) and payload.profile:
        try:
            return config.profiles(payload.profile)
        except PolicyError as exc:
            return Rejection("unknown_profile", str(exc))
    return config.policy


def auto_consolidation_allowed(policy: Policy, user_id: str) -> bool:
    """Seed 001's licence gate: a tenant without it gets manual cycles only."""
    return policy.triggers.auto_consolidation and user_id not in policy.manual_only_users


def due_cycle(state: InMemoryUserState, event: MemoryEvent, policy: Policy) -> CycleRequest | None:
    """The cycle ``event`` triggers for a user now in ``state``, if any."""
    payload = event.payload
    now = event.occurred_at
    automatic = auto_consolidation_allowed(policy, event.user_id)
    if isinstance(payload, ConsolidationRequested):
        if payload.trigger in OPERATIONS:
            return CycleRequest(event.event_id, "manual", now, mode=OPERATIONS[payload.trigger])
        ends = ending_sessions(state.facets, event, policy)
        if payload.trigger == "periodic":
            if not (automatic or payload.force):
                return None
            maintenance = maintenance_due(state.facets, now, policy)
            trigger: Trigger = (
                "maintenance" if maintenance else "inactivity" if ends else "periodic"
            )
            return CycleRequest(
                event.event_id, trigger, now, payload.conversation_id, ends, maintenance
            )
        # A manual cycle; ``force`` also makes it a maintenance pass (decay, prune, insights).
        maintenance = payload.force and policy.maintenance.enabled
        return CycleRequest(
            event.event_id, "manual", now, payload.conversation_id, ends, maintenance
        )
    if not automatic:
        return None
    ends = ending_sessions(state.facets, event, policy)
    if isinstance(payload, SessionEnded) and any(e.reason == "session_ended" for e in ends):
        return CycleRequest(event.event_id, "session_end", now, payload.conversation_id, ends)
    if isinstance(payload, MemoryWritten):
        trigger_on_write = _on_write_trigger(state, payload, policy)
        if trigger_on_write is not None:
            name, conversation = trigger_on_write
            return CycleRequest(event.event_id, name, now, conversation, ends)
    if ends:
        return CycleRequest(event.event_id, "inactivity", now, None, ends)
    return None


OPERATIONS: dict[str, CycleMode] = {"procedural": "procedural", "identity_reset": "identity_reset"}
"""Requests for one operation rather than a cycle (``memstream procedural``, ``memstream
identity reset``)."""


def _on_write_trigger(
    state: InMemoryUserState, payload: MemoryWritten, policy: Policy
) -> tuple[Trigger, str | None] | None:
    """Seed 000's on-write thresholds and seed 003's index overflow."""
    limits = policy.triggers
    memory = payload.memory
    if limits.on_write:
        conversation = memory.conversation_id
        if (
            conversation is not None
            and state.conversation_messages.get(conversation, 0) >= limits.messages_per_conversation
        ):
            return "on_write", conversation
        if (
            memory.layer == "working"
            and len(state.memories) > limits.max_working_items  # O(1) bound before counting
            and state.working_count() > limits.max_working_items
        ):
            return "on_write", None
    if (
        limits.index_overflow_enabled
        and len(state.memories) > limits.index_overflow  # O(1) bound before counting
        and state.live_count(memory.layer) > limits.index_overflow
    ):
        return "index_overflow", None
    return None


def _writes_new_memory(state: InMemoryUserState, event: MemoryEvent) -> bool:
    payload = event.payload
    if not isinstance(payload, MemoryWritten):
        return False
    current = state.memory(payload.memory.memory_id)
    return current is None or current.forgotten
