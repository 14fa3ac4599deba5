"""When a maintenance pass is due, in event time (seed 002's daily MAINTENANCE window
02:00–05:00; seed 003's weekly pass from Sunday 00:00). All times are UTC epoch ms; the
calendar is arithmetic on them, never the wall clock.

A pass is due once per window: the user's last maintenance pass (``UserFacets``, folded from
the reports of ``maintenance`` cycles) must be older than the window's start. A user with an
active session gets no pass (002: no heavy consolidation while someone is talking); the next
input or tick after the session ends gets it, if the window is still open.
"""

from __future__ import annotations

from streams.engine.policy import Policy
from streams.engine.rules.sessions import has_active_session
from streams.engine.user_state import UserFacets

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
WEEK_MS = 7 * DAY_MS
EPOCH_WEEKDAY = 3  # 1970-01-01 was a Thursday (Monday = 0)
SUNDAY = 6


def window_start(now: int, policy: Policy) -> int | None:
    """Start of the maintenance window ``now`` falls in, or None outside any window."""
    rule = policy.maintenance
    if rule.weekly:
        day = now // DAY_MS
        days_since_sunday = (day + EPOCH_WEEKDAY - SUNDAY) % 7
        return (day - days_since_sunday) * DAY_MS
    midnight = now - now % DAY_MS
    start, end = midnight + rule.start_hour * HOUR_MS, midnight + rule.end_hour * HOUR_MS
    return start if start <= now < end else None


def maintenance_due(facets: UserFacets, now: int, policy: Policy) -> bool:
    if not policy.maintenance.enabled:
        return False
    start = window_start(now, policy)
    if start is None:
        return False
    if facets.last_maintenance_at is not None and facets.last_maintenance_at >= start:
        return False
    return not has_active_session(facets, now, policy)
