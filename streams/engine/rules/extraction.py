"""Seed 004's pattern-based fact and negation extraction on write, apart from summarisation.

A written memory that states an email address, a phone number or a negation ("I don't use
Jira", "I no longer work at Acme") gets one semantic fact per statement, derived from it
(``evidence``: forgetting the memory forgets the facts), written in the same emission as
the memory itself. The statements are in the third person ("The user does not use Jira"),
so they read as facts about the user in recall and in summaries.
"""

from __future__ import annotations

import uuid

from streams.engine import ledger
from streams.engine.ids import uuid5_text
from streams.engine.model import Memory, MemoryEvent
from streams.engine.policy import Policy
from streams.engine.text.facts import ExtractedFact, extract_facts

EXTRACTION_NAMESPACE = uuid.UUID("0e9f3a52-7c14-4b6e-8d2a-657874726163")
EXTRACTED_LAYERS = ("working", "episodic", "semantic")


def extract_on_write(
    event: MemoryEvent, decisions: tuple[ledger.ConsolidationEvent, ...], policy: Policy
) -> tuple[ledger.ConsolidationEvent, ...]:
    """The facts the memories first stored by ``decisions`` state, as new semantic memories."""
    if not policy.extraction.enabled:
        return ()
    extracted: list[ledger.ConsolidationEvent] = []
    for decision in decisions:
        payload = decision.payload
        if not isinstance(payload, ledger.MemoryStored) or payload.version != 1:
            continue
        source = payload.memory
        if source.layer not in EXTRACTED_LAYERS or source.kind in EXTRACTED_KINDS:
            continue
        for fact in extract_facts(source.content):
            memory = _fact_memory(source, fact, policy.extraction.confidence)
            extracted.append(
                ledger.ConsolidationEvent(
                    event_id=ledger.derived_event_id(
                        event.user_id, event.event_id, "extracted", memory.memory_id
                    ),
                    user_id=event.user_id,
                    occurred_at=event.occurred_at,
                    causation_id=event.event_id,
                    payload=ledger.MemoryStored(memory, 1),
                )
            )
    return tuple(extracted)


EXTRACTED_KINDS = ("fact", "negation")


def _fact_memory(source: Memory, fact: ExtractedFact, confidence: float) -> Memory:
    key = f"{source.user_id}\x1f{source.memory_id}\x1f{fact.kind}\x1f{fact.value}"
    return Memory(
        memory_id=f"fact-{uuid5_text(EXTRACTION_NAMESPACE, key)}",
        user_id=source.user_id,
        content=f"The user {fact.statement}.",
        layer="semantic",
        kind="negation" if fact.kind == "negation" else "fact",
        subtype=fact.kind,
        tags=source.tags,
        importance=source.importance,
        confidence=confidence,
        created_by="system",
        created_at=source.created_at,
        valid_at=source.valid_at,
        embedding=None,
        metadata={"evidence": source.memory_id, "extracted_from": source.memory_id},
    )
