"""When a user next has time-driven work (docs/consolidation.md, "Triggers", periodic: a per-user
next-due time in
event time; idle users cost nothing).

Most consolidation is driven by inputs. What a user's own inputs cannot trigger is work that
becomes due with time alone: a session that times out, the maintenance window, a working
memory old enough to promote, a memory whose salience falls below the archive threshold,
a passing state whose period is over.
The worker's periodic tick goes only to users whose earliest such time has come; a user
with none is never ticked.
"""

from __future__ import annotations

import math

from streams.engine.policy import Policy
from streams.engine.rules.maintenance import DAY_MS, WEEK_MS, window_start
from streams.engine.user_state import InMemoryUserState

HOUR_MS = 3_600_000


def next_due_at(state: InMemoryUserState, policy: Policy) -> int | None:
    """The earliest event time at which a tick would find work for this user, or None."""
    times = [
        *_session_timeouts(state, policy),
        *_maintenance(state, policy),
        *_promotions(state, policy),
        *_archives(state, policy),
        *_passing_states(state, policy),
    ]
    return min(times, default=None)


def _session_timeouts(state: InMemoryUserState, policy: Policy) -> list[int]:
    if not policy.sessions.enabled:
        return []
    wait = (policy.triggers.session_inactivity_seconds + policy.sessions.grace_seconds) * 1000
    return [w.last_event_at + wait + 1 for w in state.facets.active_sessions()]


def _passing_states(state: InMemoryUserState, policy: Policy) -> list[int]:
    """When the oldest passing-state observation expires (``rules.observations``)."""
    seconds = policy.observations.passing_state_seconds
    if not policy.observations.enabled or seconds is None:
        return []
    oldest = state.passing_index().oldest_at()
    return [] if oldest is None else [oldest + seconds * 1000 + 1]


def _maintenance(state: InMemoryUserState, policy: Policy) -> list[int]:
    """The next window's start after the last pass, or after the user's newest memory when
    there was none yet (a user without memories needs no maintenance)."""
    if not policy.maintenance.enabled or not state.memories:
        return []
    last = state.facets.last_maintenance_at
    if last is None:
        last = max((r.memory.created_at or 0) for r in state.memories.values())
    return [_next_window(last + 1, policy)]


def _next_window(after: int, policy: Policy) -> int:
    """The start of the first maintenance window at or after ``after``."""
    if policy.maintenance.weekly:
        sunday = window_start(after, policy)
        assert sunday is not None  # a weekly window always has a start
        return sunday if sunday >= after else sunday + WEEK_MS
    start = after - after % DAY_MS + policy.maintenance.start_hour * HOUR_MS
    return start if start >= after else start + DAY_MS


def _promotions(state: InMemoryUserState, policy: Policy) -> list[int]:
    """Seed 000's age rule: a working memory older than ``promotion.max_age_seconds``."""
    if not policy.promotion.enabled:
        return []
    created = [
        r.memory.created_at
        for r in state.live_memories()
        if r.memory.layer == "working" and r.memory.created_at is not None
    ]
    return [min(created) + policy.promotion.max_age_seconds * 1000 + 1] if created else []


def _archives(state: InMemoryUserState, policy: Policy) -> list[int]:
    """Seed 001's archive: when the first live memory's salience falls below the threshold
    (salience = base · 0.5 ** (idle / half-life), so the crossing time is closed-form)."""
    rule, decay = policy.archive, policy.decay
    if not rule.enabled:
        return []
    crossings = []
    for record in state.live_memories():
        memory = record.memory
        if memory.pinned or memory.priority == "critical":
            continue
        base = min(1.0, memory.importance + decay.access_reinforcement * memory.access_count)
        touched = memory.last_accessed or memory.created_at or 0
        if base < rule.salience_threshold:
            crossings.append(touched)
            continue
        halvings = math.log2(base / rule.salience_threshold)
        crossings.append(touched + math.ceil(halvings * decay.half_life_seconds * 1000) + 1)
    return [min(crossings)] if crossings else []
