"""The consolidation policy: every trigger and threshold of docs/consolidation.md as one typed,
frozen value.

A :class:`Policy` is a tree of frozen dataclasses, one section per consolidation step. Each
field says what it controls and which seed it comes from (000 MemoryKit, 001 Lexichord,
002 Astra, 003 the rulebook, 004 Engram). The defaults are the ladder of docs/consolidation.md,
the ``default``
profile.

Policies are written in TOML::

    profile = "lexichord"            # optional: start from a built-in profile (else: base/default)
    name = "tenant-a"                # optional: defaults to the starting policy's name
    max_memories_per_cycle = 500
    manual_only_users = ["u-17"]     # per-tenant auto_consolidation = false (001)

    [duplicates]                     # one table per section; keys left out keep their value
    threshold = 0.9

Every value is checked (unknown sections and keys, types, ranges, layers, choices) when the
policy is built, from TOML or from Python, and a problem raises :class:`PolicyError` naming
the key path, the problem and what to do. Integers are accepted where a float is expected;
booleans are never numbers. TOML has no null: an optional value is left out to keep the
starting policy's value, or set to the string ``"none"`` to clear it
(``archive.max_age_seconds``).

The built-in profiles are TOML files in ``streams/engine/profiles/`` read through
:mod:`importlib.resources` and parsed by the same loader, so they are validated too. Apart from
reading those files and :func:`load_policy`'s one file, nothing here does I/O.
"""

from __future__ import annotations

import difflib
import functools
import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar, get_args

from streams.engine.model import LAYERS, Layer

__all__ = [
    "AgingPolicy",
    "ArchivePolicy",
    "ContradictionPolicy",
    "DecayPolicy",
    "DuplicateKeep",
    "DuplicatePolicy",
    "Layer",
    "PatternPolicy",
    "Policy",
    "PolicyError",
    "ProceduralPolicy",
    "PromotionPolicy",
    "RetryPolicy",
    "ExtractionPolicy",
    "StalePolicy",
    "VerbosePolicy",
    "ScopePolicy",
    "MaintenancePolicy",
    "IdentityPolicy",
    "PruningPolicy",
    "InsightPolicy",
    "ProfileSynthesisPolicy",
    "SummaryPolicy",
    "SessionPolicy",
    "TriggerPolicy",
    "builtin_profile",
    "load_policy",
    "policy_from_toml",
    "profile_names",
]

DuplicateKeep = Literal["highest_salience", "newest"]
"""Which memory of a duplicate group survives: 001 keeps the highest salience, 003 the newest."""

_BUILTIN_PROFILES: tuple[str, ...] = (
    "default",
    "memorykit",
    "lexichord",
    "astra",
    "rulebook",
    "engram",
)
_PROFILE_PACKAGE = "streams.engine"
_PROFILE_DIR = "profiles"


class PolicyError(ValueError):
    """A policy value, section or document is invalid.

    The message names the key path, the problem and what to do, e.g.
    ``promotion.min_importance = 1.5 is out of range [0, 1]; use a value from 0 to 1``.
    ``key`` is the dotted key path (``None`` when the problem is not one key, e.g. bad TOML).
    """

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


# --- value rules ------------------------------------------------------------------------------
# A rule checks one value at a key path and returns it normalised (ints become floats where a
# float is expected, arrays of user ids become frozensets), or raises PolicyError.

_Rule = Callable[[str, object], object]
_T = TypeVar("_T")


def _show(value: object) -> str:
    """A value as it would be written in TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple | set | frozenset):
        return "[" + ", ".join(_show(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{...}"
    return repr(value)


def _type_name(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple | set | frozenset):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"  # TOML dates and times


def _wrong_type(path: str, value: object, expected: str) -> PolicyError:
    return PolicyError(
        f"{path} = {_show(value)} has the wrong type: expected {expected}, got {_type_name(value)}",
        path,
    )


def _suggestion(word: str, known: tuple[str, ...] | list[str]) -> str:
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else ""


def _bool(path: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _wrong_type(path, value, "true or false")
    return value


def _int(path: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong_type(path, value, "an integer")
    return value


def _float(path: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _wrong_type(path, value, "a number")
    number = float(value)
    if not math.isfinite(number):
        raise PolicyError(f"{path} = {_show(value)} is not a finite number; use a number", path)
    return number


def _count(path: str, value: object) -> int:
    """A whole number of things, at least 1."""
    number = _int(path, value)
    if number < 1:
        raise PolicyError(
            f"{path} = {number} is out of range [1, ∞); use a whole number of at least 1", path
        )
    return number


def _seconds(path: str, value: object) -> int:
    """A duration in whole seconds, greater than 0."""
    number = _int(path, value)
    if number <= 0:
        raise PolicyError(
            f"{path} = {number} is out of range (0, ∞); use a number of seconds greater than 0",
            path,
        )
    return number


def _optional_seconds(path: str, value: object) -> int | None:
    """Like ``_seconds``, or no limit: None (the string "none" in TOML, which has no null)."""
    if value is None or value == "none":
        return None
    if isinstance(value, str):
        raise _wrong_type(path, value, 'a number of seconds or "none"')
    return _seconds(path, value)


def _positive_float(path: str, value: object) -> float:
    number = _float(path, value)
    if number <= 0:
        raise PolicyError(
            f"{path} = {_show(value)} is out of range (0, ∞); use a number greater than 0", path
        )
    return number


def _non_negative_float(path: str, value: object) -> float:
    number = _float(path, value)
    if number < 0:
        raise PolicyError(
            f"{path} = {_show(value)} is out of range [0, ∞); use 0 or a positive number", path
        )
    return number


def _unit(path: str, value: object) -> float:
    """A probability, similarity, confidence or threshold in [0, 1]."""
    number = _float(path, value)
    if not 0.0 <= number <= 1.0:
        raise PolicyError(
            f"{path} = {_show(value)} is out of range [0, 1]; use a value from 0 to 1", path
        )
    return number


def _text(path: str, value: object) -> str:
    if not isinstance(value, str):
        raise _wrong_type(path, value, "a string")
    if not value.strip():
        raise PolicyError(f"{path} = {_show(value)} is empty; give it a non-empty string", path)
    return value


def _one_of(options: tuple[str, ...], what: str) -> _Rule:
    def rule(path: str, value: object) -> str:
        if not isinstance(value, str):
            raise _wrong_type(path, value, f"a string naming {what}")
        if value not in options:
            listed = ", ".join(repr(option) for option in options)
            raise PolicyError(
                f"{path} = {_show(value)} is not {what}; {_suggestion(value, options)}"
                f"use one of {listed}",
                path,
            )
        return value

    return rule


_layer = _one_of(LAYERS, "a layer")


def _words(path: str, value: object) -> tuple[str, ...]:
    """A list of non-empty strings (kinds, tags), kept in order."""
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise _wrong_type(path, value, "an array of strings")
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise PolicyError(
                f"{path} contains {_show(item)}; every entry must be a non-empty string", path
            )
    return tuple(value)


def _hour(path: str, value: object) -> int:
    """An hour of the day, 0 to 24 (24: the end of the day)."""
    number = _int(path, value)
    if not 0 <= number <= 24:
        raise PolicyError(f"{path} = {number} is out of range [0, 24]; use an hour", path)
    return number


_keep = _one_of(get_args(DuplicateKeep), "a duplicate survivor rule")


def _user_ids(path: str, value: object) -> frozenset[str]:
    if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
        raise _wrong_type(path, value, "an array of user id strings")
    for item in value:
        if not isinstance(item, str) or not item:
            raise PolicyError(
                f"{path} contains {_show(item)}; every entry must be a non-empty user id string",
                path,
            )
    return frozenset(value)


def _setting(default: _T, rule: _Rule) -> _T:
    """A dataclass field with a default and the rule its values must follow."""
    return field(default=default, metadata={"rule": rule})


def _check_fields(instance: Any, prefix: str) -> None:
    """Run every field's rule; store the normalised value (frozen, hence object.__setattr__)."""
    for spec in fields(instance):
        rule: _Rule | None = spec.metadata.get("rule")
        if rule is None:
            continue
        value = getattr(instance, spec.name)
        checked = rule(f"{prefix}{spec.name}", value)
        if checked is not value:
            object.__setattr__(instance, spec.name, checked)


class _Section:
    """Validation shared by the sections; ``SECTION`` is the section's TOML table name."""

    SECTION: ClassVar[str]

    def __post_init__(self) -> None:
        _check_fields(self, f"{self.SECTION}.")
        self._check_together()

    def _check_together(self) -> None:
        """Rules that involve several fields of the section."""


# --- the sections -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TriggerPolicy(_Section):
    """When a consolidation cycle runs (docs/consolidation.md, "Triggers")."""

    SECTION: ClassVar[str] = "triggers"

    messages_per_conversation: int = _setting(20, _count)
    """On write: run a cycle when a conversation has at least this many messages since its
    last cycle. (000 on-demand trigger: ``workingMemoryCount >= 20``)"""

    max_working_items: int = _setting(1000, _count)
    """On write: run a cycle when the user has MORE than this many working memories.
    (000 on-demand trigger: ``workingMemoryItems > 1000``)"""

    on_write: bool = _setting(True, _bool)
    """Run the on-write triggers above. (000; off in seed profiles without them)"""

    index_overflow_enabled: bool = _setting(False, _bool)
    """Run the index-overflow trigger below. (003)"""

    index_overflow: int = _setting(100, _count)
    """Run a cycle when one (user, layer) holds more than this many live memories.
    (003 index overflow: ``entry_count > 100``)"""

    periodic_seconds: int = _setting(300, _seconds)
    """Interval of the periodic cycle over the users this worker owns. (000: every 5 minutes)"""

    session_inactivity_seconds: int = _setting(1800, _seconds)
    """A session closes (session-end cycle) after this much event-time inactivity.
    (002, 003, 004 session end; 30 minutes)"""

    auto_consolidation: bool = _setting(True, _bool)
    """False: only manual cycles (``ConsolidationRequested``) run, for every user. Per-user
    switch: ``Policy.manual_only_users``. (001 licence gate: automatic needs Teams)"""


@dataclass(frozen=True)
class PromotionPolicy(_Section):
    """Working → semantic promotion (docs/consolidation.md, "promotion"; 000 operation 1)."""

    SECTION: ClassVar[str] = "promotion"

    enabled: bool = _setting(True, _bool)
    """Run the promotion step. (000; 001 has no working layer: off in ``lexichord``)"""

    min_importance: float = _setting(0.7, _unit)
    """Promote when importance is greater than this ... (000: ``importance > 0.7``)"""

    min_access_count: int = _setting(3, _count)
    """... or access_count is at least this ... (000: ``access_count >= 3``)"""

    max_age_seconds: int = _setting(900, _seconds)
    """... or the memory is older than this. (000: ``age_minutes > 15``)"""

    confidence_boost: float = _setting(0.25, _unit)
    """The semantic fact's confidence is ``min(1, importance + confidence_boost)``.
    (000: ``importance + 0.25``; the cap at 1 is docs/consolidation.md)"""

    fact_type: str = _setting("working_promotion", _text)
    """The promoted fact's kind. (000: ``fact_type = 'working_promotion'``)"""

    remove_source: bool = _setting(True, _bool)
    """Remove the working memory once promoted (a ``promoted_to`` link is kept).
    (000: ``DELETE FROM working_memories ... promoted_to IS NOT NULL``)"""


@dataclass(frozen=True)
class AgingPolicy(_Section):
    """Semantic → episodic aging of confident, old facts (000 operation 2; ``memorykit`` only)."""

    SECTION: ClassVar[str] = "aging"

    enabled: bool = _setting(False, _bool)
    """Run the aging step. Off in the ladder of docs/consolidation.md; on in ``memorykit``. (000)"""

    min_confidence: float = _setting(0.8, _unit)
    """Age a semantic fact whose confidence is greater than this ... (000: ``confidence > 0.8``)"""

    min_age_seconds: int = _setting(7200, _seconds)
    """... and that is older than this. (000: ``created_at < NOW() - INTERVAL '2 hours'``)"""


@dataclass(frozen=True)
class PatternPolicy(_Section):
    """Pattern detection over similar memories (docs/consolidation.md, "patterns"; 000 operation
    2, 001)."""

    SECTION: ClassVar[str] = "patterns"

    enabled: bool = _setting(True, _bool)
    """Run pattern detection. (000; 001 ``ExtractPatterns = true``)"""

    source_layer: Layer = _setting("semantic", _layer)
    """Layer whose memories are grouped. (000: semantic facts; 001: episodic memories)"""

    target_layer: Layer = _setting("semantic", _layer)
    """Layer of the memory a detected pattern becomes. (000: an episodic
    ``<fact_type>_pattern_detected`` event; 001 and docs/consolidation.md: a semantic memory)"""

    min_support: int = _setting(3, _count)
    """At least this many similar memories make a pattern.
    (000: ``HAVING COUNT(*) >= 3``; 001: fewer than 3 episodic memories yield nothing)"""

    min_similarity: float = _setting(0.85, _unit)
    """Pairwise similarity must be greater than this. (000: ``similarity > 0.85``)"""

    window_seconds: int = _setting(604800, _seconds)
    """Only memories from this far back are grouped.
    (000: ``INTERVAL '7 days'``; 001: ``UtcNow.AddDays(-7)``)"""


@dataclass(frozen=True)
class ProceduralPolicy(_Section):
    """Episodic → procedural rules (docs/consolidation.md, "procedures"; 000 operation 3)."""

    SECTION: ClassVar[str] = "procedural"

    enabled: bool = _setting(True, _bool)
    """Run the procedural step. (000; 001 has none: off in ``lexichord``)"""

    min_occurrences: int = _setting(3, _count)
    """An event type seen at least this many times ... (000: ``HAVING COUNT(*) >= 3``)"""

    window_seconds: int = _setting(2592000, _seconds)
    """... within this window ... (000: ``INTERVAL '30 days'``)"""

    min_success: float = _setting(0.6, _unit)
    """... with average success greater than this becomes ``<event_type>_learned_pattern``.
    (000: ``avg_success > 0.6``)"""


@dataclass(frozen=True)
class DecayPolicy(_Section):
    """Salience decay (docs/consolidation.md, "decay"; 001 ``DecaySalience``, 002)."""

    SECTION: ClassVar[str] = "decay"

    enabled: bool = _setting(True, _bool)
    """Apply decay. (001 ``DecaySalience = true``; 000 has none: off in ``memorykit``)"""

    half_life_seconds: float = _setting(604800.0, _positive_float)
    """Salience halves per this much event time since the last access. (001, 002 exponential
    decay; the rate is not given there: one week)"""

    access_reinforcement: float = _setting(0.1, _unit)
    """Each access adds this much to the base salience, capped at 1. (001 "strengthen
    frequently accessed memories", 002 reinforcement)"""


@dataclass(frozen=True)
class DuplicatePolicy(_Section):
    """Duplicate merging (docs/consolidation.md, "duplicates"; 001, with 003's variant as
    options)."""

    SECTION: ClassVar[str] = "duplicates"

    enabled: bool = _setting(True, _bool)
    """Merge duplicates. (001 ``MergeDuplicates = true``; 000 has none: off in ``memorykit``)"""

    threshold: float = _setting(0.95, _unit)
    """Memories with similarity at least this are duplicates.
    (001 ``DuplicateThreshold = 0.95``; 003: content similarity > 80 %)"""

    keep: DuplicateKeep = _setting("highest_salience", _keep)
    """Which memory survives: ``"highest_salience"`` (001) or ``"newest"`` (003)."""

    require_same_kind: bool = _setting(False, _bool)
    """Only memories of the same kind and subtype are duplicates. (003: same type and subtype)"""

    min_tag_overlap: float = _setting(0.0, _unit)
    """Minimum tag overlap (0..1) for duplicates; 0 ignores tags. (003: tag overlap > 80 %)"""


@dataclass(frozen=True)
class ContradictionPolicy(_Section):
    """Contradiction detection (docs/consolidation.md, "contradictions"; 001, resolution per
    003)."""

    SECTION: ClassVar[str] = "contradictions"

    enabled: bool = _setting(True, _bool)
    """Detect contradictions. (001 ``DetectContradictions = true``; off in ``memorykit``)"""

    min_similarity: float = _setting(0.7, _unit)
    """Candidate pairs have similarity greater than this ... (001: ``similarity > 0.7f``)"""

    max_similarity: float = _setting(0.95, _unit)
    """... and less than this (above it they are duplicates). (001: ``similarity < 0.95f``)"""

    min_confidence: float = _setting(0.7, _unit)
    """The judge must be more confident than this. (001: ``result.Confidence > 0.7f``)"""

    entity_candidates: bool = _setting(True, _bool)
    """Also judge pairs that name the same entity whatever their similarity, so a correction
    worded unlike the fact it corrects is still found. (memstream; off in the seed profiles,
    which judge the similarity band only)"""

    def _check_together(self) -> None:
        if self.min_similarity >= self.max_similarity:
            raise PolicyError(
                f"contradictions.min_similarity = {self.min_similarity!r} must be less than "
                f"contradictions.max_similarity = {self.max_similarity!r}; lower min_similarity "
                "or raise max_similarity",
                "contradictions.min_similarity",
            )


@dataclass(frozen=True)
class ArchivePolicy(_Section):
    """Archiving low-salience memories (docs/consolidation.md, "archive"; 001 ``PruneArchived``)."""

    SECTION: ClassVar[str] = "archive"

    enabled: bool = _setting(False, _bool)
    """Archive low-salience memories. (001 ``PruneArchived = true``: on in ``lexichord``; off
    in ``default``, where a fact leaves active memory only when superseded, merged,
    invalidated or carried by a narrative/summary: docs/consolidation.md, "archive")"""

    salience_threshold: float = _setting(0.1, _unit)
    """Archive when current salience is below this. (001 ``ArchivalThreshold = 0.1``)"""

    max_age_seconds: int | None = _setting(None, _optional_seconds)
    """... and the memory was not accessed within this; None: no age condition.
    (001 ``MaxAge = null``; ``"none"`` in TOML)"""


@dataclass(frozen=True)
class SessionPolicy(_Section):
    """Event-time sessions and their narratives (docs/consolidation.md, "sessions and
    observations"; seed 002's Session
    Consolidator; the session-end trigger of 003 and 004). Inactivity is
    ``triggers.session_inactivity_seconds``."""

    SECTION: ClassVar[str] = "sessions"

    enabled: bool = _setting(True, _bool)
    """Track sessions (memories without a session id join their conversation's open session,
    or start one) and close them on ``SessionEnded`` or inactivity. (002, 003, 004)"""

    grace_seconds: int = _setting(300, _seconds)
    """A session closes only once event time is this far past its inactivity timeout, so a
    late event inside the grace still joins it. (memstream; Faust has no grace period)"""

    narratives: bool = _setting(True, _bool)
    """Write ONE episodic narrative per closed session; its sources are archived, carried
    by the narrative. (002 Session Consolidator)"""

    min_duration_seconds: int = _setting(60, _seconds)
    """A session shorter than this is closed without a narrative; its memories stay as they
    are. (002 ``min_session_duration_seconds = 60``)"""

    min_memories: int = _setting(2, _count)
    """A session with fewer memories is closed without a narrative. (memstream)"""

    max_per_narrative: int = _setting(50, _count)
    """At most this many memories (by priority) go into a narrative; the rest stay active.
    (002 ``max_experiences_per_narrative = 50``)"""

    priority_kinds: tuple[str, ...] = _setting(
        ("occurrence", "dissonance_event", "task_execution"), _words
    )
    """Memory kinds a narrative takes first. (002: OCCURRENCE, DISSONANCE_EVENT,
    TASK_EXECUTION)"""


@dataclass(frozen=True)
class ObservationPolicy(_Section):
    """Session → observations (docs/consolidation.md, "sessions and observations"): each
    content-bearing turn of a closed
    session becomes a short semantic memory that says who said it and when, with relative
    dates resolved; the turn is archived, carried by it. (memstream: what recall answers
    from; off in the seed profiles, whose seeds do not have it)"""

    SECTION: ClassVar[str] = "observations"

    enabled: bool = _setting(True, _bool)
    """Write observations at session end (``default``); the session's narrative then tells
    the session in brief (participants, topics, open questions), the observations carrying
    its facts."""

    passing_state_seconds: int | None = _setting(7 * 86_400, _optional_seconds)
    """Archive an observation that only says how something has been for the present period
    ("the gym has been a mess lately") once it is this old: true when said, not known to be
    true later. It stays searchable with the archived memories. ``"none"``: keep them."""


@dataclass(frozen=True)
class SummaryPolicy(_Section):
    """Episodes → ONE semantic summary (docs/consolidation.md, "summaries"; seed 004)."""

    SECTION: ClassVar[str] = "summaries"

    enabled: bool = _setting(True, _bool)
    """Summarize the unsummarized episodes. (004 ``run_consolidation``)"""

    on_session_end: bool = _setting(False, _bool)
    """Also summarize at every session end, whatever is waiting. (004: "auto triggers on
    session end"; ``default`` waits for ``min_episodes``)"""

    min_episodes: int = _setting(10, _count)
    """Summarize once at least this many episodes are unsummarized (all of them, in one
    summary; a manual cycle summarizes whatever there is). (004: batch_size = 10)"""

    chunk_size: int = _setting(10, _count)
    """Map-reduce: summarize chunks of this many, then the chunk summaries. (004)"""


@dataclass(frozen=True)
class ProfileSynthesisPolicy(_Section):
    """ONE procedural behavioural profile per user from all semantic memories
    (docs/consolidation.md, "the procedural profile"; seed 004 ``create_procedural_memory``)."""

    SECTION: ClassVar[str] = "synthesis"

    enabled: bool = _setting(True, _bool)
    """Synthesize the profile automatically (``memstream procedural`` always can). (004)"""

    on_session_end: bool = _setting(False, _bool)
    """Auto: re-synthesize at every session end. (004: "auto triggers on session end"; off in
    ``default``, where a profile over all semantic memories at every session end would make
    each session cost the user's whole history)"""

    min_new_semantic: int = _setting(25, _count)
    """Auto: re-synthesize once this many semantic memories were written since the last
    profile. (004: "or a configurable threshold")"""


@dataclass(frozen=True)
class InsightPolicy(_Section):
    """Learning patterns from recent narratives (seed 002's Insight Extractor)."""

    SECTION: ClassVar[str] = "insights"

    enabled: bool = _setting(True, _bool)
    """Cluster recent narratives into learning patterns. (002)"""

    window_seconds: int = _setting(604800, _seconds)
    """Narratives of this recent past are clustered. (002 ``insight_lookback_days = 7``)"""

    min_cluster_size: int = _setting(3, _count)
    """A cluster of at least this many narratives becomes a pattern. (002 ``min_cluster_size``)"""

    min_similarity: float = _setting(0.5, _unit)
    """Narratives at least this similar join one cluster. (memstream)"""


@dataclass(frozen=True)
class PruningPolicy(_Section):
    """Seed 002's Memory Pruner: decayed memories archived (narrative members, to cold storage)
    or deleted, with its safety rules."""

    SECTION: ClassVar[str] = "pruning"

    enabled: bool = _setting(False, _bool)
    """Run the pruner (in maintenance passes). (002; off in ``default``, which never deletes)"""

    decay_threshold: float = _setting(0.1, _unit)
    """Prune when salience (the decay factor) is below this. (002 ``decay_threshold``)"""

    max_emotional_salience: float = _setting(0.3, _unit)
    """... and emotional salience is below this. (002 ``emotional_salience < 0.3``)"""

    keep_emotional_above: float = _setting(0.5, _unit)
    """Emotional salience above this always keeps a memory. (002 ``salience_preserve``)"""

    idle_seconds: int = _setting(2592000, _seconds)
    """... and it was not accessed for this long. (002 ``min_age_days_for_prune = 30``)"""

    preserve_valence_above: float = _setting(0.7, _unit)
    """Memories with valence above this are the minimum emotional set: never pruned. (002)"""


@dataclass(frozen=True)
class IdentityPolicy(_Section):
    """Seed 002's Temporal Continuity Anchor."""

    SECTION: ClassVar[str] = "identity"

    enabled: bool = _setting(True, _bool)
    """Update the anchor after cycles that write narratives. (002)"""

    update_weight: float = _setting(0.1, _unit)
    """anchor = (1 - w) · current + w · new narratives. (002 ``anchor_update_weight_new``)"""

    warning_drift: float = _setting(0.2, _unit)
    """Drift from the origin above this warns. (002 ``anchor_drift_warning_threshold``)"""

    critical_drift: float = _setting(0.4, _unit)
    """Drift above this is critical. (002 ``anchor_drift_critical_threshold``)"""


@dataclass(frozen=True)
class MaintenancePolicy(_Section):
    """The maintenance window for decay, pruning and insights (seed 002's MAINTENANCE mode,
    seed 003's weekly pass), in event time (UTC)."""

    SECTION: ClassVar[str] = "maintenance"

    enabled: bool = _setting(True, _bool)
    """Run a maintenance pass once a day inside the window. (002)"""

    start_hour: int = _setting(2, _hour)
    """Window start, hour of the day. (002: 2 am)"""

    end_hour: int = _setting(5, _hour)
    """Window end, hour of the day. (002: 5 am)"""

    weekly: bool = _setting(False, _bool)
    """Instead, one full pass a week, from Sunday 00:00. (003)"""


@dataclass(frozen=True)
class ScopePolicy(_Section):
    """Procedural scope promotion (docs/consolidation.md, "scope promotion"; seed 003)."""

    SECTION: ClassVar[str] = "scope"

    enabled: bool = _setting(True, _bool)
    """Copy well-used procedures to a wider scope. (003)"""

    team_min_accesses: int = _setting(5, _count)
    """Agent-scope procedural with at least this many accesses → a team copy. (003)"""

    global_min_accesses: int = _setting(10, _count)
    """Team-scope procedural with at least this many accesses → a global copy. (003)"""

    team_id: str = _setting("team", _text)
    """The scope id a team copy gets when the memory has none. (003: "team name")"""


@dataclass(frozen=True)
class VerbosePolicy(_Section):
    """Verbose old episodes summarized in place (docs/consolidation.md, "verbose episodes"; seed
    003)."""

    SECTION: ClassVar[str] = "verbose"

    enabled: bool = _setting(True, _bool)
    """Summarize verbose episodes. (003)"""

    min_age_seconds: int = _setting(2592000, _seconds)
    """Older than this. (003: 30 days)"""

    min_chars: int = _setting(5000, _count)
    """Content longer than this. (003: 5000 chars)"""

    timeline_entries: int = _setting(3, _count)
    """First and last entries of the timeline kept. (003: 3)"""


@dataclass(frozen=True)
class StalePolicy(_Section):
    """Seed 003's "Archive Stale": unused memories archived, with its exclusions."""

    SECTION: ClassVar[str] = "stale"

    enabled: bool = _setting(False, _bool)
    """Archive unused memories. (003; off in ``default``, which never forgets a true fact)"""

    idle_seconds: int = _setting(7776000, _seconds)
    """Never accessed, or last accessed longer ago than this. (003: 90 days)"""

    min_age_seconds: int = _setting(604800, _seconds)
    """Memories younger than this are excluded. (003: 7 days)"""

    max_per_run: int = _setting(50, _count)
    """At most this many archived per cycle. (003: max 50 memories per run)"""

    protected_tags: tuple[str, ...] = _setting(("permanent", "protected"), _words)
    """Tags that exclude a memory. (003)"""


@dataclass(frozen=True)
class ExtractionPolicy(_Section):
    """Pattern-based fact and negation extraction on write (seed 004 ``run_extraction``)."""

    SECTION: ClassVar[str] = "extraction"

    enabled: bool = _setting(False, _bool)
    """Extract emails, phone numbers and negations from written memories into semantic facts
    derived from them. (004)"""

    confidence: float = _setting(0.9, _unit)
    """Confidence of an extracted fact. (004: "high confidence")"""


@dataclass(frozen=True)
class RetryPolicy(_Section):
    """Retrying a failed cycle (000 ``ConsolidateWithRetryAsync``)."""

    SECTION: ClassVar[str] = "retry"

    attempts: int = _setting(3, _count)
    """Attempts in all, the first included. (000: ``maxRetries = 3``)"""

    backoff_seconds: float = _setting(5.0, _non_negative_float)
    """Wait ``backoff_seconds * attempt`` before the next attempt; 0: no wait.
    (000: ``TimeSpan.FromSeconds(5 * attempt)``)"""


_SECTIONS: dict[str, type[Any]] = {
    cls.SECTION: cls
    for cls in (
        TriggerPolicy,
        PromotionPolicy,
        AgingPolicy,
        PatternPolicy,
        ProceduralPolicy,
        DecayPolicy,
        DuplicatePolicy,
        ContradictionPolicy,
        ArchivePolicy,
        SessionPolicy,
        ObservationPolicy,
        SummaryPolicy,
        ProfileSynthesisPolicy,
        InsightPolicy,
        PruningPolicy,
        IdentityPolicy,
        MaintenancePolicy,
        ScopePolicy,
        VerbosePolicy,
        StalePolicy,
        ExtractionPolicy,
        RetryPolicy,
    )
}


@dataclass(frozen=True)
class Policy:
    """The whole consolidation policy: top-level settings and one section per step."""

    name: str = _setting("default", _text)
    """The policy's name, reported with decisions. (memstream)"""

    max_memories_per_cycle: int = _setting(1000, _count)
    """A cycle considers at most this many memories. (001 ``MaxMemoriesPerCycle = 1000``)"""

    max_memory_chars: int = _setting(1000, _count)
    """The most characters an observation, narrative or summary a cycle writes may hold:
    what the embedder reads (all-MiniLM-L6-v2 reads 256 tokens, ~1,000 characters). More
    becomes several memories. (memstream)"""

    triggers: TriggerPolicy = TriggerPolicy()
    """When cycles run."""

    promotion: PromotionPolicy = PromotionPolicy()
    """Working → semantic."""

    aging: AgingPolicy = AgingPolicy()
    """Semantic → episodic (memorykit)."""

    patterns: PatternPolicy = PatternPolicy()
    """Pattern detection."""

    procedural: ProceduralPolicy = ProceduralPolicy()
    """Episodic → procedural."""

    decay: DecayPolicy = DecayPolicy()
    """Salience decay."""

    duplicates: DuplicatePolicy = DuplicatePolicy()
    """Duplicate merging."""

    contradictions: ContradictionPolicy = ContradictionPolicy()
    """Contradiction detection."""

    archive: ArchivePolicy = ArchivePolicy()
    """Archiving low-salience memories."""

    sessions: SessionPolicy = SessionPolicy()
    """Sessions and narratives (002)."""

    observations: ObservationPolicy = ObservationPolicy()
    """Attributed, dated observations of a session's turns."""

    summaries: SummaryPolicy = SummaryPolicy()
    """Episodes → semantic summary (004)."""

    synthesis: ProfileSynthesisPolicy = ProfileSynthesisPolicy()
    """The procedural behavioural profile (004); ``[synthesis]`` in TOML, because the
    top-level ``profile`` key names the profile a policy starts from."""

    insights: InsightPolicy = InsightPolicy()
    """Learning patterns from narratives (002)."""

    pruning: PruningPolicy = PruningPolicy()
    """Seed 002's pruner."""

    identity: IdentityPolicy = IdentityPolicy()
    """The identity anchor (002)."""

    maintenance: MaintenancePolicy = MaintenancePolicy()
    """The maintenance window (002, 003)."""

    scope: ScopePolicy = ScopePolicy()
    """Scope promotion (003)."""

    verbose: VerbosePolicy = VerbosePolicy()
    """Verbose episodes (003)."""

    stale: StalePolicy = StalePolicy()
    """Seed 003's archive stale."""

    extraction: ExtractionPolicy = ExtractionPolicy()
    """Fact and negation extraction on write (004)."""

    retry: RetryPolicy = RetryPolicy()
    """Retrying a failed cycle."""

    manual_only_users: frozenset[str] = _setting(frozenset(), _user_ids)
    """Users for whom only manual cycles run: per-tenant ``auto_consolidation = false``.
    (001: manual consolidation without the Teams licence)"""

    def __post_init__(self) -> None:
        _check_fields(self, "")
        for section, cls in _SECTIONS.items():
            value = getattr(self, section)
            if not isinstance(value, cls):
                raise PolicyError(
                    f"{section} has the wrong type: expected a {cls.__name__}, "
                    f"got {type(value).__name__}",
                    section,
                )


_TOP_LEVEL_KEYS = (
    "profile",
    "name",
    "max_memories_per_cycle",
    "max_memory_chars",
    "manual_only_users",
)


# --- loading ----------------------------------------------------------------------------------


def profile_names() -> tuple[str, ...]:
    """The built-in profiles' names, ``"default"`` first."""
    return _BUILTIN_PROFILES


def builtin_profile(name: str) -> Policy:
    """The built-in profile ``name`` (see :func:`profile_names`), validated like any file.

    An unknown name raises :class:`PolicyError` listing the known ones. Each profile is read
    once per process (policies are immutable, so the same value is shared).
    """
    return _cached_builtin(name)


@functools.cache
def _cached_builtin(name: str) -> Policy:
    return _builtin(name, ())


def policy_from_toml(text: str, base: Policy | None = None) -> Policy:
    """The policy a TOML document describes.

    The document starts from the built-in profile it names in a top-level ``profile`` key (the
    document's own choice wins over ``base``), else from ``base``, else from the ``default``
    profile; every key it sets replaces that starting policy's value, keys it leaves out keep
    it. Raises :class:`PolicyError` for invalid TOML or any invalid section, key or value.
    """
    return _from_text(text, base, ())


def load_policy(path: Path) -> Policy:
    """The policy in the TOML file at ``path`` (see :func:`policy_from_toml`).

    Errors, including a missing or unreadable file, are :class:`PolicyError` naming the file.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PolicyError(
            f"{path}: policy file not found; check the path, or use a built-in profile "
            f"({', '.join(_BUILTIN_PROFILES)})"
        ) from None
    except UnicodeDecodeError as error:
        raise PolicyError(f"{path}: policy file is not UTF-8 text ({error.reason})") from None
    except OSError as error:
        raise PolicyError(f"{path}: cannot read the policy file: {error.strerror}") from None
    try:
        return policy_from_toml(text)
    except PolicyError as error:
        raise PolicyError(f"{path}: {error}", error.key) from None


def _builtin(name: str, chain: tuple[str, ...]) -> Policy:
    if name not in _BUILTIN_PROFILES:
        known = ", ".join(repr(known) for known in _BUILTIN_PROFILES)
        raise PolicyError(
            f"profile = {_show(name)} is not a built-in profile; "
            f"{_suggestion(name, _BUILTIN_PROFILES)}use one of {known}",
            "profile",
        )
    if name in chain:
        cycle = " -> ".join((*chain, name))
        raise PolicyError(f"built-in profiles refer to each other in a cycle: {cycle}", "profile")
    resource = resources.files(_PROFILE_PACKAGE) / _PROFILE_DIR / f"{name}.toml"
    text = resource.read_text(encoding="utf-8")
    try:
        # Built-in files start from the dataclass defaults, never from the cached default.
        return _from_text(text, Policy(), (*chain, name))
    except PolicyError as error:
        raise PolicyError(
            f"built-in profile {name!r} ({_PROFILE_DIR}/{name}.toml): {error}", error.key
        ) from None


def _from_text(text: str, base: Policy | None, chain: tuple[str, ...]) -> Policy:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PolicyError(f"invalid TOML: {error}; fix the syntax") from None
    return _from_document(document, base, chain)


def _from_document(
    document: Mapping[str, Any], base: Policy | None, chain: tuple[str, ...]
) -> Policy:
    known = (*_TOP_LEVEL_KEYS, *_SECTIONS)
    for key, value in document.items():
        if key in _TOP_LEVEL_KEYS or key in _SECTIONS:
            continue
        if isinstance(value, dict):
            raise PolicyError(
                f"[{key}] is not a known section; {_suggestion(key, list(_SECTIONS))}"
                f"known sections: {', '.join(_SECTIONS)}",
                key,
            )
        raise PolicyError(
            f"{key} is not a known top-level key; {_suggestion(key, known)}"
            f"known keys: {', '.join(_TOP_LEVEL_KEYS)}, and the sections {', '.join(_SECTIONS)}",
            key,
        )

    start = base
    if "profile" in document:
        profile = document["profile"]
        if not isinstance(profile, str):
            raise _wrong_type("profile", profile, "a string naming a built-in profile")
        start = _builtin(profile, chain)
    if start is None:
        start = _cached_builtin("default")

    changes: dict[str, Any] = {}
    for key in ("name", "max_memories_per_cycle", "max_memory_chars", "manual_only_users"):
        if key in document:
            changes[key] = document[key]
    for section, cls in _SECTIONS.items():
        if section not in document:
            continue
        table = document[section]
        if not isinstance(table, dict):
            raise PolicyError(
                f"{section} = {_show(table)} has the wrong type: expected a table "
                f"([{section}]), got {_type_name(table)}",
                section,
            )
        names = [spec.name for spec in fields(cls)]
        for key in table:
            if key not in names:
                raise PolicyError(
                    f"{section}.{key} is not a known key of [{section}]; "
                    f"{_suggestion(key, names)}known keys: {', '.join(names)}",
                    f"{section}.{key}",
                )
        changes[section] = replace(getattr(start, section), **table)
    return replace(start, **changes)
