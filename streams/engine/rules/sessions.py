"""Event-time sessions (seed 002's Session lifecycle; the session-end trigger of 003/004).

Faust has no session windows and no grace for late events, so sessions are kept here, in
event time, as part of the user's state (``UserFacets.sessions``, folded from the ledger):

- A memory written without a ``session_id`` joins the open session of its conversation when
  it arrives within the inactivity timeout of that session's last event (late events
  included), and otherwise starts a new one. Only experiences (working and episodic memories)
  belong to sessions; facts written straight to the semantic or procedural layer do not.
- A session ends on ``SessionEnded`` for it, or once an input of the user is later than its
  last event + inactivity + grace. A late event inside the grace still joins the session.
- Ending is a cycle decision (``SessionClosed``, then the narrative), so a restart rebuilds
  exactly the same sessions from the ledger.
"""

from __future__ import annotations

import uuid

from streams.engine.context import SessionEnd
from streams.engine.ids import uuid5_text
from streams.engine.model import MemoryEvent, MemoryWritten, SessionEnded
from streams.engine.policy import Policy
from streams.engine.user_state import SessionWindow, UserFacets

SESSION_NAMESPACE = uuid.UUID("3f6b1c0e-5a2d-4c8e-9b71-73657373696f")
SESSION_LAYERS = ("working", "episodic")


def session_id_for(user_id: str, conversation_id: str | None, first_event_id: str) -> str:
    """A new session's id: derived from the input that opened it (deterministic)."""
    key = f"{user_id}\x1f{conversation_id or ''}\x1f{first_event_id}"
    return f"session-{uuid5_text(SESSION_NAMESPACE, key)}"


def assign_session(
    facets: UserFacets, event: MemoryEvent, policy: Policy, is_new: bool
) -> MemoryEvent:
    """``event`` with its memory placed in a session, when it is a new experience that does
    not name one; otherwise ``event`` unchanged."""
    payload = event.payload
    if not (policy.sessions.enabled and is_new and isinstance(payload, MemoryWritten)):
        return event
    memory = payload.memory
    if memory.session_id is not None or memory.layer not in SESSION_LAYERS:
        return event
    at = memory.created_at if memory.created_at is not None else event.occurred_at
    window = open_session(facets, memory.conversation_id, at, policy)
    session_id = (
        window.session_id
        if window is not None
        else session_id_for(event.user_id, memory.conversation_id, event.event_id)
    )
    placed = memory.evolve(session_id=session_id)
    return event.with_written(placed)


def open_session(
    facets: UserFacets, conversation_id: str | None, at: int, policy: Policy
) -> SessionWindow | None:
    """The conversation's active session an experience at ``at`` belongs to, if any: one
    whose events lie within the inactivity timeout of ``at``."""
    timeout_ms = policy.triggers.session_inactivity_seconds * 1000
    candidates = [
        w
        for w in facets.active_sessions()
        if w.conversation_id == conversation_id
        and at <= w.last_event_at + timeout_ms
        and at >= w.started_at - timeout_ms
    ]
    # A late event belongs to the session that was running at its time: the latest one
    # started at or before it; failing that, the one that starts soonest after it.
    running = [w for w in candidates if w.started_at <= at]
    if running:
        return max(running, key=lambda w: (w.started_at, w.session_id))
    return min(candidates, key=lambda w: (w.started_at, w.session_id), default=None)


def ending_sessions(
    facets: UserFacets, event: MemoryEvent, policy: Policy
) -> tuple[SessionEnd, ...]:
    """The active sessions ``event`` ends: the one a ``SessionEnded`` names, and every one
    whose inactivity timeout plus grace lies before the event's time."""
    if not policy.sessions.enabled:
        return ()
    payload = event.payload
    now = event.occurred_at
    expired_before = (
        now - (policy.triggers.session_inactivity_seconds + policy.sessions.grace_seconds) * 1000
    )
    ends: list[SessionEnd] = []
    for window in facets.active_sessions():  # by session id
        if isinstance(payload, SessionEnded) and payload.session_id == window.session_id:
            ends.append(
                SessionEnd(window.session_id, "session_ended", max(now, window.last_event_at))
            )
        elif window.last_event_at < expired_before:
            timeout = window.last_event_at + policy.triggers.session_inactivity_seconds * 1000
            ends.append(SessionEnd(window.session_id, "inactivity", timeout))
    return tuple(ends)


def has_active_session(facets: UserFacets, now: int, policy: Policy) -> bool:
    """Someone is still talking: a session whose timeout has not passed at ``now``."""
    timeout_ms = policy.triggers.session_inactivity_seconds * 1000
    return any(now <= w.last_event_at + timeout_ms for w in facets.active_sessions())
