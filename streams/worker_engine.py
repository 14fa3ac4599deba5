"""The engine a worker runs, built from its settings in one place.

The worker, and every batch oracle the stream is compared with (tests, ``memstream demo``,
the benchmarks), take their engine from here, so they cannot drift apart: the same policy,
limits, judge and pattern writer, and the same embedder both for the memories services write
without a vector and for the memories cycles write. (The demo once replayed its sample with
the hashing embedder while the worker embedded with MiniLM; similarity-driven decisions
differed and the demo waited for decisions the worker never made.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path

from streams.config.settings import Settings
from streams.embedders.base import Embedder
from streams.embedders.factory import embedder_for
from streams.engine.model import MemoryEvent, MemoryWritten
from streams.engine.oracle import OracleRun, replay
from streams.engine.policy import builtin_profile, load_policy
from streams.engine.step import EngineConfig
from streams.engine.validation import Limits
from streams.llm import ChatClient, LLMJudge, LLMPatternWriter, LLMSettings


def worker_embedder(settings: Settings) -> Embedder:
    """The embedder named by ``MEMSTREAM_EMBEDDER`` (a process shares one loaded model)."""
    return embedder_for(settings.embedder.lower(), settings.embedding_dim)


def engine_config(settings: Settings, embedder: Embedder | None = None) -> EngineConfig:
    """The deployment's policy (a TOML file, or a built-in profile), contract limits, optional
    LLM adapter, and ``embedder`` for what cycles write (None: the engine's built-in hashing)."""
    policy = (
        load_policy(Path(settings.policy_file))
        if settings.policy_file
        else builtin_profile(settings.profile)
    )
    limits = Limits(settings.embedding_dim, settings.max_content_bytes)
    # what cycles write is embedded like what services write: recall reads one space
    config = EngineConfig(policy, limits, embed=embedder.embed if embedder else None)
    llm = LLMSettings.from_env()
    if llm is None:
        return config
    # The policy's retry rule (seed 000: 3 attempts, 5 s × attempt) governs the one step of
    # a cycle that can fail transiently: the call out to the model.
    llm = dataclasses.replace(
        llm, attempts=policy.retry.attempts, backoff_seconds=policy.retry.backoff_seconds
    )
    # Optional: an OpenAI-compatible model judges and writes patterns, falling back to the
    # built-in ones on any failure. Its verdicts are recorded in the ledger like any other.
    return dataclasses.replace(
        config,
        judge=LLMJudge(ChatClient(llm)),
        pattern_writer=LLMPatternWriter(ChatClient(llm), fallback=lambda contents: contents[0]),
    )


def missing_embeddings(
    events: Sequence[MemoryEvent], embedder: Embedder | None
) -> list[bytes | None]:
    """For each event, in order, the embedding its written memory lacks (None where it has one,
    has no content, or is no write). The vectors are computed in one call (a model embeds a
    batch several times faster than single sentences) and matched to their events by
    position, never by event id: ids are the producers' and two inputs may share one."""
    found: list[bytes | None] = [None] * len(events)
    if embedder is None:
        return found
    waiting = [
        (i, payload.memory.content)
        for i, event in enumerate(events)
        if isinstance(payload := event.payload, MemoryWritten)
        and payload.memory.embedding is None
        and payload.memory.content
    ]
    if not waiting:
        return found
    vectors = embedder.embed([content for _, content in waiting])
    for (i, _), vector in zip(waiting, vectors, strict=True):
        found[i] = vector
    return found


def with_embedding(event: MemoryEvent, vector: bytes | None) -> MemoryEvent:
    """``event`` with ``vector`` as its written memory's embedding (unchanged for None)."""
    if vector is None:
        return event
    assert isinstance(event.payload, MemoryWritten)  # missing_embeddings gives writes only
    return event.with_written(event.payload.memory.evolve(embedding=vector))


def replay_as_worker(
    events: Iterable[MemoryEvent], settings: Settings, embedder: Embedder | None = None
) -> OracleRun:
    """The batch oracle run as a worker of ``settings`` would process ``events``: the same
    engine configuration, and the written memories that lack a vector embedded by the same
    embedder first. ``embedder``: one already loaded for ``settings`` (default: loaded here)."""
    embedder = embedder or worker_embedder(settings)
    events = list(events)
    vectors = missing_embeddings(events, embedder)
    embedded = [with_embedding(e, v) for e, v in zip(events, vectors, strict=True)]
    return replay(embedded, engine_config(settings, embedder))
