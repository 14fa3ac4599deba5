"""Building blocks for seed scenarios: events at chosen event times, embeddings with a chosen
similarity. Shared by the engine-level (oracle) tests and the end-to-end tests."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np

from streams.engine.model import (
    ConsolidationRequested,
    ForgetRequested,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryPinned,
    MemoryWritten,
    SessionEnded,
)
from streams.kafka import codec

NOW = 1_795_000_000_000  # event time of the scenarios (2026-11-17)
MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR
DIM = 384


class Scenario:
    """Events for one user, with deterministic ids."""

    def __init__(self, user_id: str, namespace: str = "scenario") -> None:
        self.user_id = user_id
        self.events: list[MemoryEvent] = []
        self._ns = uuid.uuid5(uuid.NAMESPACE_URL, f"{namespace}/{user_id}")

    def _id(self) -> str:
        return str(uuid.uuid5(self._ns, str(len(self.events))))

    def write(self, memory_id: str, content: str, *, at: int = NOW, **fields: Any) -> Memory:
        for name in ("tags", "trigger_conditions"):
            if name in fields:
                fields[name] = tuple(fields[name])
        memory = Memory(memory_id=memory_id, user_id=self.user_id, content=content, **fields)
        self.events.append(MemoryEvent(self._id(), self.user_id, at, MemoryWritten(memory)))
        return memory

    def access(self, memory_id: str, *, at: int = NOW) -> None:
        self.events.append(MemoryEvent(self._id(), self.user_id, at, MemoryAccessed(memory_id)))

    def forget(self, memory_id: str, *, at: int = NOW) -> None:
        payload = ForgetRequested(memory_id)
        self.events.append(MemoryEvent(self._id(), self.user_id, at, payload))

    def pin(self, memory_id: str, *, at: int = NOW, reason: str = "permanent") -> None:
        payload = MemoryPinned(memory_id, reason)
        self.events.append(MemoryEvent(self._id(), self.user_id, at, payload))

    def end_session(self, session_id: str, *, at: int = NOW) -> None:
        payload = SessionEnded(session_id)
        self.events.append(MemoryEvent(self._id(), self.user_id, at, payload))

    def synthesize(self, *, at: int = NOW) -> None:
        """``memstream procedural``: one procedural-profile synthesis (seed 004)."""
        payload = ConsolidationRequested(trigger="procedural")
        self.events.append(MemoryEvent(self._id(), self.user_id, at, payload))

    def tick(self, *, at: int = NOW) -> None:
        """The worker's periodic tick for this user."""
        payload = ConsolidationRequested(trigger="periodic")
        self.events.append(MemoryEvent(self._id(), self.user_id, at, payload))

    def consolidate(self, *, at: int = NOW, **options: Any) -> str:
        event_id = self._id()
        payload = ConsolidationRequested(**options)
        self.events.append(MemoryEvent(event_id, self.user_id, at, payload))
        return event_id


def unit(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)


def random_unit(seed: int) -> np.ndarray:
    return unit(np.random.default_rng(seed).standard_normal(DIM))


def with_similarity(base: np.ndarray, cosine: float, seed: int) -> bytes:
    """A packed embedding whose cosine with ``base`` is exactly ``cosine``."""
    noise = np.random.default_rng(seed).standard_normal(DIM)
    noise = unit(noise - np.dot(noise, base) * base)  # orthogonal to base
    vector = cosine * base + np.sqrt(1 - cosine**2) * noise
    return codec.pack_embedding(vector)


def cluster(base: np.ndarray, count: int, pairwise: float, seed: int) -> list[bytes]:
    """``count`` embeddings whose pairwise cosine is about ``pairwise`` (each has cosine
    sqrt(pairwise) with ``base``, and their noises are nearly orthogonal in 384 dims)."""
    return [with_similarity(base, float(np.sqrt(pairwise)), seed + i) for i in range(count)]


# --- seed 001's Gherkin scenarios, shared by the oracle and the end-to-end tests -------------


def episodes_of_testing_before_commits(user: str) -> Scenario:
    """Given 10 episodic memories about testing before commits (pairwise similarity ~0.9;
    the first is the most central)."""
    s = Scenario(user)
    base = random_unit(5)
    vectors = cluster(base, 10, pairwise=0.9, seed=50)
    s.write(
        "e0",
        "User runs tests before committing",
        layer="episodic",
        kind="workflow",
        embedding=with_similarity(base, 0.99, seed=49),
        at=NOW - DAY,
    )
    for i in range(1, 10):
        s.write(
            f"e{i}",
            f"Ran the test suite before commit #{i}",
            layer="episodic",
            kind="workflow",
            embedding=vectors[i],
            at=NOW - DAY + i,
        )
    s.consolidate()
    return s


DATABASE_TOPIC = random_unit(6)


def postgres_then_mysql(
    user: str, older: str = "Project uses PostgreSQL", **fields: Any
) -> Scenario:
    """Given "Project uses PostgreSQL" (older, or ``older`` with ``fields``) and "Project uses
    MySQL" (newer), similar (0.85) but not duplicates."""
    s = Scenario(user)
    s.write(
        "pg",
        older,
        layer="semantic",
        embedding=with_similarity(DATABASE_TOPIC, 1.0, 1),
        at=NOW - 2 * DAY,
        **fields,
    )
    s.write(
        "my",
        "Project uses MySQL",
        layer="semantic",
        embedding=with_similarity(DATABASE_TOPIC, 0.85, 2),
        at=NOW - DAY,
    )
    s.consolidate()
    return s


API_TOPIC = random_unit(7)


def rest_duplicates(user: str, request_cycle: bool = True) -> Scenario:
    """Given "API uses REST" and "The API is RESTful" with similarity 0.97 (> 0.95)."""
    s = Scenario(user)
    s.write(
        "a",
        "API uses REST",
        layer="semantic",
        tags=["api"],
        importance=0.9,
        embedding=with_similarity(API_TOPIC, 1.0, 3),
    )
    s.write(
        "b",
        "The API is RESTful",
        layer="semantic",
        tags=["style"],
        importance=0.4,
        embedding=with_similarity(API_TOPIC, 0.97, 4),
    )
    if request_cycle:
        s.consolidate()
    return s


def stale_memory(user: str, request_cycle: bool = True) -> Scenario:
    """Given a memory of salience 0.05 last accessed 30 days ago, and a fresh one."""
    s = Scenario(user)
    s.write(
        "stale",
        "Old trivia",
        layer="semantic",
        importance=0.05,
        created_at=NOW - 31 * DAY,
        last_accessed=NOW - 30 * DAY,
        at=NOW - 30 * DAY,
    )
    s.write("fresh", "Current project", layer="semantic", importance=0.8, at=NOW)
    if request_cycle:
        s.consolidate()
    return s


# --- seeds 002-004: sessions, summaries, profiles, scope, exclusions, drift ------------------

FIFTY_FACTS = (
    "My sister Alice moved to Lisbon in March 2024.",
    "The Atlas launch is on June 14 at 10:30.",
    "Our budget for the Porto offsite is 12000 euros.",
    "Bruno from Equinor called about contract 4471.",
    "The standup moved to 9:15 on Mondays.",
    "Carmen recommends the Kyoto guide by Lonely Planet.",
    "We signed with Stripe for 2.9% per transaction.",
    "Dario runs the Berlin office with 42 engineers.",
)
FILLER = (
    "ok, that sounds good to me",
    "sure, go on, I am listening",
    "thanks a lot, that really helps!",
    "haha yes, that is so true",
    "got it, makes sense now",
    "right, I remember you said something like that",
    "cool, tell me more about it",
    "hmm, let me think about that for a second",
)


def fifty_message_session(user: str, *, start: int = NOW) -> Scenario:
    """A 50-message session (user and agent alternating, 30 s apart): eight facts with
    names, numbers, dates and times among chit-chat, ended by ``SessionEnded``."""
    s = Scenario(user)
    for i in range(50):
        fact = FIFTY_FACTS[i // 6] if i % 6 == 0 and i // 6 < len(FIFTY_FACTS) else None
        s.write(
            f"turn-{i:02d}",
            fact or FILLER[i % len(FILLER)],
            layer="working",
            kind="message",
            created_by="user" if i % 2 == 0 else "agent",
            conversation_id="chat",
            session_id="session-1",
            valence=round(-0.5 + i / 50, 3),
            at=start + i * 30_000,
        )
    s.end_session("session-1", at=start + 50 * 30_000)
    return s


def eighty_episodes_in_ten_sessions(user: str) -> Scenario:
    """Ten sessions of eight distinct episodes each, a day apart, each ended explicitly."""
    s = Scenario(user)
    for session in range(10):
        start = NOW + session * DAY
        for i in range(8):
            n = session * 8 + i
            s.write(
                f"ep-{n:02d}",
                f"Episode {n}: reviewed ticket PROJ-{100 + n} with Mia on day {session + 1}.",
                layer="episodic",
                kind="occurrence",
                conversation_id="work",
                session_id=f"s-{session}",
                at=start + i * MINUTE,
            )
        s.end_session(f"s-{session}", at=start + 10 * MINUTE)
    return s


def semantic_preferences(user: str) -> Scenario:
    """Semantic facts about how the user works, then two procedural syntheses."""
    s = Scenario(user)
    facts = (
        "The user prefers short answers with code examples.",
        "The user works in Python and prefers pytest.",
        "The user reviews pull requests every morning.",
        "The user prefers dark mode in every editor.",
        "The user deploys on Fridays after lunch.",
    )
    for i, fact in enumerate(facts):
        s.write(f"pref-{i}", fact, layer="semantic", kind="preference", at=NOW + i * MINUTE)
    s.synthesize(at=NOW + HOUR)
    s.write(
        "pref-5", "The user prefers Rust for new services.", layer="semantic", at=NOW + 2 * HOUR
    )
    s.synthesize(at=NOW + 3 * HOUR)
    return s


def decayed_with_pins(user: str) -> Scenario:
    """Old, unimportant, never-used memories; some pinned or referenced by a belief, one
    emotional, one of the minimum emotional set; then a tick in the 02:00-05:00 window."""
    s = Scenario(user)
    old = NOW - 90 * DAY
    common = {"layer": "episodic", "importance": 0.05, "created_at": old, "at": old}
    s.write("plain-1", "Looked at the weather", **common)
    s.write("plain-2", "Opened the settings page", **common)
    s.write("pinned", "Chose the team name Orion", **common)
    s.pin("pinned", at=old)
    s.write("belief", "Finished the first marathon", **common)
    s.pin("belief", at=old, reason="belief")
    s.write("emotional", "Got the offer letter", emotional_salience=0.8, **common)
    s.write("joyful", "Wedding day", valence=0.9, emotional_salience=0.2, **common)
    s.tick(at=three_am_after(NOW))
    return s


def three_am_after(at: int) -> int:
    """03:00 UTC of the day after ``at``: inside the default maintenance window."""
    return at - at % DAY + DAY + 3 * HOUR


def well_used_procedure(user: str) -> Scenario:
    """A procedural memory accessed 5 times (→ team copy), then its team copy 10 times
    (→ global copy), with a manual cycle after each."""
    s = Scenario(user)
    s.write(
        "deploy",
        "Run the smoke tests before every deploy",
        layer="procedural",
        kind="procedure",
        at=NOW,
    )
    for i in range(5):
        s.access("deploy", at=NOW + (i + 1) * MINUTE)
    s.consolidate(at=NOW + HOUR)
    return s


def access_team_copy(s: Scenario, team_copy_id: str, times: int = 10) -> None:
    for i in range(times):
        s.access(team_copy_id, at=NOW + 2 * HOUR + i * MINUTE)
    s.consolidate(at=NOW + 3 * HOUR)


def rulebook_exclusions(user: str) -> Scenario:
    """One never-accessed memory per 003 exclusion, and one that nothing protects; all
    episodic, written long ago except the young one; then a manual cycle."""
    s = Scenario(user)
    old = NOW - 40 * DAY
    s.write(
        "critical",
        "Incident runbook owner is Priya",
        layer="episodic",
        priority="critical",
        created_at=old,
        at=old,
    )
    s.write(
        "permanent",
        "Company founded in 2011",
        layer="episodic",
        tags=["permanent"],
        created_at=old,
        at=old,
    )
    s.write(
        "protected",
        "Board meeting notes",
        layer="episodic",
        tags=["protected"],
        created_at=old,
        at=old,
    )
    s.write(
        "user-no-consent",
        "My diary entry",
        layer="episodic",
        created_by="user",
        consent=False,
        created_at=old,
        at=old,
    )
    s.write(
        "decision",
        "We chose Postgres over MySQL",
        layer="semantic",
        subtype="decision",
        created_at=old,
        at=old,
    )
    s.write(
        "young",
        "Sprint planning notes",
        layer="episodic",
        created_at=NOW - 2 * DAY,
        at=NOW - 2 * DAY,
    )
    s.write("unprotected", "Lunch menu of last month", layer="episodic", created_at=old, at=old)
    s.consolidate(at=NOW)
    return s


def drifting_identity(user: str, sessions: int = 11) -> Scenario:
    """A first session about one topic, then ``sessions - 1`` about an unrelated one: the
    anchor moves 10 % of the way each time, so drift from the origin crosses 0.2 and 0.4."""
    s = Scenario(user)
    origin, elsewhere = random_unit(301), random_unit(302)
    elsewhere = unit(elsewhere - np.dot(elsewhere, origin) * origin)  # orthogonal topics
    for session in range(sessions):
        topic = origin if session == 0 else elsewhere
        start = NOW + session * DAY
        for i in range(3):
            s.write(
                f"d{session}-{i}",
                f"Session {session} note {i} about Topic{session}",
                layer="working",
                conversation_id="diary",
                session_id=f"ds-{session}",
                embedding=with_similarity(topic, 0.999, seed=1000 * session + i),
                at=start + i * MINUTE,
            )
        s.end_session(f"ds-{session}", at=start + 5 * MINUTE)
    return s


def contradiction_and_stale_memory(user: str, namespace: str = "scenario") -> Scenario:
    """Two facts the contradiction check pairs and reports ("uses PostgreSQL" / "uses MySQL"),
    a stale memory the archiver (a later rule) archives, then a cycle: what shows a failing
    rule's decisions dropped while the rules after it go on."""
    s = Scenario(user, namespace)
    base = random_unit(9)
    s.write(
        "pg", "Project uses PostgreSQL", layer="semantic", embedding=with_similarity(base, 1.0, 7)
    )
    s.write("my", "Project uses MySQL", layer="semantic", embedding=with_similarity(base, 0.85, 8))
    s.write(
        "stale",
        "Old trivia",
        layer="semantic",
        importance=0.05,
        last_accessed=NOW - 30 * DAY,
        created_at=NOW - 31 * DAY,
        at=NOW - 30 * DAY,
    )
    s.consolidate()
    return s
