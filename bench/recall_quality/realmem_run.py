"""RealMem through the pipeline's engine, honest in time (issue 38).

Per persona (``realmem``), one user: every turn a ``MemoryWritten`` at its time (the user's
side ``created_by="user"`` with the persona's first name as ``speaker``, the assistant's
``created_by="agent"`` with none, as the engine attributes an agent), one conversation per
persona and the session's uuid as its session; a ``SessionEnded`` at each session's end. The
written memories carry the MiniLM vector of their content (the worker embeds every memory
written without one: ``streams.worker_engine.missing_embeddings``), and the engine embeds what
its cycles write with the worker's embedder (``EngineConfig.embed``).

**Event time.** Between inputs the worker's periodic tick (``ConsolidationRequested``,
trigger ``periodic``) comes every ``triggers.periodic_seconds`` to a user whose time-driven
work is due (``streams.engine.rules.due.next_due_at``: a session timing out, the 02:00-05:00
maintenance window, a working memory old enough to promote, a passing state expiring). The
driver sends each such tick at the first period boundary at or after the due time, before
any later input, as a worker's timer would; after the last session it ticks for one more day.

**Questions.** A question is asked at its turn's time, before that turn is written: it is
ranked against the memories recall would return then (``systems.is_recallable``), with the
lineage the ledger had then; the replay goes on from there (one replay per persona, never one
per question). ``raw``: the turns before the question as written (found by their content's
vector, as recall finds a written memory), each read as ``"Name: text"`` in the context. Both
are ranked by plain cosine with the question's MiniLM vector.
"""

from __future__ import annotations

import bisect
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bench import progress
from bench.recall_quality.embeddings import EmbeddingCache
from bench.recall_quality.feed import SOURCE
from bench.recall_quality.rankings import EMBEDDING_DIM, unit
from bench.recall_quality.realmem import ASSISTANT, SIDES, USER, Persona, Question, Turn
from bench.recall_quality.scoring import (
    BUDGETS,
    EVIDENCE_KS,
    POINT_SHARES,
    Lineage,
    Point,
    PointScore,
    Ranked,
    content_words,
    keeps,
    point_decoys,
    point_words,
    score_points,
)
from bench.recall_quality.systems import (
    LINEAGE_KEYS,
    LINK_TYPES_FROM_ORIGIN,
    LINK_TYPES_TO_ORIGIN,
    RAW,
    is_recallable,
    ledger_links,
)
from streams.engine.model import (
    ConsolidationRequested,
    Memory,
    MemoryEvent,
    MemoryWritten,
    SessionEnded,
)
from streams.engine.oracle import OracleRun
from streams.engine.policy import builtin_profile
from streams.engine.rules.due import next_due_at
from streams.engine.step import EngineConfig
from streams.engine.user_state import MemoryRecord

Embed = Callable[[Sequence[str]], list[bytes]]
TAIL_MS = 24 * 3_600_000  # ticks after the last session: one day
BOTH, NEITHER = "both", "neither"


def prefixed(turn: Turn) -> str:
    """The turn as a transcript shows it: what raw retrieval stores and embeds."""
    return f"{turn.speaker}: {turn.text}"


def written_memory(persona: Persona, turn: Turn, embedding: bytes | None) -> Memory:
    user_side = turn.side == USER
    return Memory(
        memory_id=turn.turn_id,
        user_id=persona.user_id,
        content=turn.text,
        created_by="user" if user_side else "agent",
        speaker=turn.speaker if user_side else None,  # the persona's first name, or whoever
        conversation_id=persona.user_id,
        session_id=turn.session_id,
        embedding=embedding,
        created_at=turn.at,
    )


def events_of(persona: Persona, embeddings: dict[str, bytes]) -> list[MemoryEvent]:
    """The persona's input in time order: its turns and a ``SessionEnded`` per session."""
    ids = _EventIds(persona.user_id)
    user = persona.user_id
    events = []
    for session in persona.sessions:
        for turn in session.turns:
            memory = written_memory(persona, turn, embeddings.get(turn.turn_id))
            events.append(MemoryEvent(ids.next(), user, turn.at, MemoryWritten(memory), SOURCE))
        ended = SessionEnded(session.session_id, user)
        events.append(MemoryEvent(ids.next(), user, session.ended_at, ended, SOURCE))
    return events


class _EventIds:
    def __init__(self, namespace: str) -> None:
        self.namespace = uuid.uuid5(uuid.NAMESPACE_URL, f"memstream-realmem/{namespace}")
        self.count = 0

    def next(self) -> str:
        self.count += 1
        return str(uuid.uuid5(self.namespace, str(self.count)))


class EventTimeDriver:
    """The batch oracle for one user, with the worker's periodic ticks in event time."""

    def __init__(self, user_id: str, config: EngineConfig) -> None:
        self.user_id = user_id
        self.config = config
        self.period_ms = config.policy.triggers.periodic_seconds * 1000
        self.run = OracleRun()
        self.ticks = 0
        self.tick_seconds = 0.0
        self.input_seconds = 0.0
        self._last_tick: int | None = None
        self._links: dict[str, set[str]] = defaultdict(set)
        self._seen_decisions = 0

    @property
    def state(self) -> Any:
        return self.run.state(self.user_id)

    def advance(self, until: int) -> None:
        """Send every tick the worker would send at or before ``until``."""
        while True:
            due = next_due_at(self.state, self.config.policy)
            if due is None:
                return
            at = -(-due // self.period_ms) * self.period_ms
            if self._last_tick is not None:
                at = max(at, self._last_tick + self.period_ms)
            if at > until:
                return
            tick = MemoryEvent(
                str(uuid.uuid5(uuid.NAMESPACE_URL, f"realmem-tick/{self.user_id}/{at}")),
                self.user_id,
                at,
                ConsolidationRequested(trigger="periodic"),
                "memstream-worker",
            )
            started = time.perf_counter()
            self.run.feed(tick, self.config)
            self.tick_seconds += time.perf_counter() - started
            self._last_tick = at
            self.ticks += 1

    def feed(self, event: MemoryEvent) -> None:
        self.advance(event.occurred_at)
        started = time.perf_counter()
        self.run.feed(event, self.config)
        self.input_seconds += time.perf_counter() - started

    def recallable(self) -> list[MemoryRecord]:
        return sorted(
            (r for r in self.state.records() if is_recallable(r)),
            key=lambda r: r.memory.memory_id,
        )

    def lineage(self) -> Lineage:
        """What each memory was derived from, as the ledger and the records say now."""
        new = self.run.decisions[self._seen_decisions :]
        self._seen_decisions = len(self.run.decisions)
        for source, target, link_type in ledger_links(new):
            if link_type in LINK_TYPES_TO_ORIGIN:
                self._links[source].add(target)
            elif link_type in LINK_TYPES_FROM_ORIGIN:
                self._links[target].add(source)
        parents: dict[str, set[str]] = {k: set(v) for k, v in self._links.items()}
        for record in self.state.records():
            metadata = record.memory.metadata
            for key in LINEAGE_KEYS:
                value = metadata.get(key)
                if value:
                    parents.setdefault(record.memory.memory_id, set()).update(
                        i for i in value.split(",") if i
                    )
        return Lineage(parents)


class VectorIndex:
    """Unit vectors by memory id, kept while the embedding stays the same."""

    def __init__(self) -> None:
        self._vectors: dict[str, tuple[bytes, np.ndarray]] = {}

    def matrix(self, memories: Sequence[tuple[str, bytes]]) -> np.ndarray:
        rows = []
        for memory_id, embedding in memories:
            known = self._vectors.get(memory_id)
            if known is None or known[0] != embedding:
                known = self._vectors[memory_id] = (embedding, unit(embedding))
            rows.append(known[1])
        return np.vstack(rows) if rows else np.zeros((0, EMBEDDING_DIM))


def rank(
    ids: Sequence[str], contents: Sequence[str], matrix: np.ndarray, vector: bytes
) -> list[Ranked]:
    """By cosine with ``vector``, ties by position (callers pass ids in a fixed order)."""
    if not len(ids):
        return []
    order = np.argsort(-(matrix @ unit(vector)), kind="stable")
    return [Ranked(ids[i], contents[i]) for i in order]


# --- one persona -----------------------------------------------------------------------------


@dataclass
class PersonaOutcome:
    name: str
    corpus: dict[str, Any]
    systems: dict[str, dict[str, Any]] = field(default_factory=dict)
    points: list[dict[str, Any]] = field(default_factory=list)  # per point, both systems
    timing: dict[str, float] = field(default_factory=dict)


def run_persona(
    persona: Persona,
    embedder: Embed,
    cache: EmbeddingCache,
    engine_embed: Embed,
    profile: str = "default",
) -> PersonaOutcome:
    outcome = PersonaOutcome(persona.name, corpus_stats(persona))
    turns = persona.turns
    started = time.perf_counter()
    texts = [t.text for t in turns] + [q.text for q in persona.questions]
    missing = cache.missing(texts)
    progress.note(f"{persona.name}: {len(set(texts))} texts to embed, {missing} not cached")
    vectors = dict(zip(texts, cache.embed(texts, embedder), strict=True))
    cache.save()
    outcome.timing["embedding_seconds"] = round(time.perf_counter() - started, 1)

    turn_words = {t.turn_id: content_words(t.text) for t in turns}
    points = {q.question_id: _points(q, turn_words) for q in persona.questions}
    decoy_index = point_decoys(
        [
            (q.question_id, frozenset(p.words for p in points[q.question_id]))
            for q in persona.questions
        ]
    )
    decoy_of = {
        q.question_id: points[persona.questions[decoy_index[q.question_id]].question_id]
        for q in persona.questions
        if q.question_id in decoy_index
    }
    side_of = {t.turn_id: t.side for t in turns}

    # raw: the turns before the question
    raw_scores: dict[str, PointScore] = {}
    raw_matrix = np.vstack([unit(vectors[t.text]) for t in turns])
    raw_ids = [t.turn_id for t in turns]
    raw_contents = [prefixed(t) for t in turns]
    times = [t.at for t in turns]
    no_lineage = Lineage({})
    for question in persona.questions:
        n = bisect.bisect_left(times, question.at)
        ranked = rank(raw_ids[:n], raw_contents[:n], raw_matrix[:n], vectors[question.text])
        raw_scores[question.question_id] = score_points(
            question.question_id,
            points[question.question_id],
            ranked,
            no_lineage,
            decoy_of.get(question.question_id, ()),
        )
    transcript = transcript_chars(persona)
    outcome.systems[RAW] = {
        "scores": raw_scores,
        "chars": {**transcript, "active_memories": len(turns)},
    }

    # the profile, replayed once, questions asked on the way
    config = EngineConfig(policy=builtin_profile(profile), embed=engine_embed)
    driver = EventTimeDriver(persona.user_id, config)
    index = VectorIndex()
    asked = {q.turn_id: q for q in persona.questions}
    scores: dict[str, PointScore] = {}
    reach: dict[str, list[str]] = {}
    counter = progress.Counter(len(persona.questions), f"{persona.name} questions")
    embedded = {t.turn_id: vectors[t.text] for t in turns}
    for event in events_of(persona, embedded):
        payload = event.payload
        if isinstance(payload, MemoryWritten) and payload.memory.memory_id in asked:
            question = asked[payload.memory.memory_id]
            driver.advance(event.occurred_at)
            records = [r for r in driver.recallable() if r.memory.embedding]
            lineage = driver.lineage()
            ids = [r.memory.memory_id for r in records]
            contents = [r.memory.content for r in records]
            matrix = index.matrix(
                [(r.memory.memory_id, r.memory.embedding or b"") for r in records]
            )
            ranked = rank(ids, contents, matrix, vectors[question.text])
            own = points[question.question_id]
            scores[question.question_id] = score_points(
                question.question_id, own, ranked, lineage, decoy_of.get(question.question_id, ())
            )
            reach[question.question_id] = [_reach(p, records, lineage) for p in own]
            counter.show(len(scores))
        driver.feed(event)
    counter.finish()
    driver.advance(persona.sessions[-1].ended_at + TAIL_MS)
    cache.save()  # what the engine's cycles wrote, if it embeds through the cache
    final = driver.recallable()
    final_lineage = driver.lineage()
    outcome.systems[profile] = {
        "scores": scores,
        "chars": active_chars(final, final_lineage, side_of, transcript),
        "memory_kinds": dict(
            sorted(Counter(f"{r.memory.layer}/{r.memory.kind}" for r in final).items())
        ),
        "ticks": driver.ticks,
        "rejections": len(driver.run.rejections),
        "replay_seconds": round(driver.input_seconds + driver.tick_seconds, 1),
        "tick_seconds": round(driver.tick_seconds, 1),
    }
    outcome.timing["replay_seconds"] = round(driver.input_seconds + driver.tick_seconds, 1)
    outcome.points = point_rows(persona, points, side_of, raw_scores, scores, reach, profile)
    text_of = {t.turn_id: t.text for t in turns}
    for row, point in zip(
        outcome.points, (p for q in persona.questions for p in points[q.question_id]), strict=True
    ):
        # the most of the point's words one of its own turns holds: what a derived memory
        # must keep half of, the turn itself may hold less (it counts as found regardless)
        row["turn_holds"] = (
            round(
                max(
                    (
                        len(point.words & content_words(text_of[t])) / len(point.words)
                        for t in point.evidence
                        if t in text_of
                    ),
                    default=0.0,
                ),
                2,
            )
            if point.words
            else 1.0
        )
    return outcome


def _points(question: Question, turn_words: dict[str, frozenset[str]]) -> list[Point]:
    return [
        Point(
            point_words(p.text),
            frozenset(p.evidence),
            tuple(turn_words[t] for t in p.evidence if t in turn_words),
        )
        for p in question.points
    ]


def _reach(point: Point, records: Sequence[MemoryRecord], lineage: Lineage) -> str:
    """Where a traced point stands in what recall could return at the question's time,
    whatever the ranking: ``turn`` (a source turn is itself active), ``kept`` (a memory derived
    from one keeps half its words and is short enough), ``lost`` (derived memories are active
    and none keeps them), ``gone`` (nothing active comes from its turns), ``untraced``."""
    if not point.evidence:
        return "untraced"
    derived = False
    for record in records:
        memory = record.memory
        if memory.memory_id in point.evidence:
            return "turn"
        if point.evidence & lineage.origins(memory.memory_id):
            derived = True
            if keeps(point, memory.content):
                return "kept"
    return "lost" if derived else "gone"


def point_rows(
    persona: Persona,
    points: dict[str, list[Point]],
    side_of: dict[str, str],
    raw: dict[str, PointScore],
    consolidated: dict[str, PointScore],
    reach: dict[str, list[str]],
    profile: str,
) -> list[dict[str, Any]]:
    """One row per needed point: its side, size, and whether each system found it (the
    per-point detail behind the diagnosis)."""
    rows = []
    for question in persona.questions:
        qid = question.question_id
        for i, (point, scored) in enumerate(zip(question.points, points[qid], strict=True)):
            sides = {side_of[t] for t in point.evidence if t in side_of}
            rows.append(
                {
                    "question_id": qid,
                    "point": i,
                    "side": sides.pop() if len(sides) == 1 else (BOTH if sides else NEITHER),
                    "words": len(scored.words),
                    "chars": len(point.text),
                    "reach": reach[qid][i],
                    "text": point.text[:300],
                    **{
                        f"{name}_found@{k}": s[qid].found[k][i]
                        for name, s in ((RAW, raw), (profile, consolidated))
                        for k in EVIDENCE_KS
                    },
                    **{
                        f"{name}_in_context@{share}": s[qid].held[share][i]
                        for name, s in ((RAW, raw), (profile, consolidated))
                        for share in POINT_SHARES
                    },
                }
            )
    return rows


# --- figures ---------------------------------------------------------------------------------


def corpus_stats(persona: Persona) -> dict[str, Any]:
    turns = persona.turns
    points = [p for q in persona.questions for p in q.points]
    return {
        "sessions": len(persona.sessions),
        "days": len({s.day for s in persona.sessions}),
        "first_day": persona.sessions[0].day,
        "last_day": persona.sessions[-1].day,
        "turns": len(turns),
        "user_turns": sum(t.side == USER for t in turns),
        "questions": len(persona.questions),
        "points": len(points),
        "traced_points": sum(1 for p in points if p.evidence),
    }


def transcript_chars(persona: Persona) -> dict[str, Any]:
    by_side = Counter({side: 0 for side in SIDES})
    for turn in persona.turns:
        by_side[turn.side] += len(prefixed(turn))
    return {
        "user": by_side[USER],
        "assistant": by_side[ASSISTANT],
        "total": by_side[USER] + by_side[ASSISTANT],
    }


def active_chars(
    records: Sequence[MemoryRecord],
    lineage: Lineage,
    side_of: dict[str, str],
    transcript: dict[str, Any],
) -> dict[str, Any]:
    """Active characters by the side they come from: a turn by its own, a derived memory by
    the turns it was derived from (both sides, or neither: said apart)."""
    chars = Counter({side: 0 for side in (*SIDES, BOTH, NEITHER)})
    for record in records:
        memory = record.memory
        if memory.memory_id in side_of:
            side = side_of[memory.memory_id]
        else:
            sides = {side_of[o] for o in lineage.origins(memory.memory_id) if o in side_of}
            side = sides.pop() if len(sides) == 1 else (BOTH if sides else NEITHER)
        chars[side] += len(memory.content)
    total = sum(chars.values())
    return {
        "user": chars[USER],
        "assistant": chars[ASSISTANT],
        "both": chars[BOTH],
        "neither": chars[NEITHER],
        "total": total,
        "active_memories": len(records),
        "transcript": transcript,
    }


def mean_of(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return round(sum(present) / len(present), 3) if present else None


def summary(scores: dict[str, PointScore]) -> dict[str, Any]:
    """Means over questions (evidence recall over the questions with a traced point)."""
    values = list(scores.values())
    figures: dict[str, Any] = {"questions": len(values)}
    for k in EVIDENCE_KS:
        figures[f"evidence_recall@{k}"] = mean_of([s.evidence_recall[k] for s in values])
    figures["evidence_questions"] = sum(
        1 for s in values if s.evidence_recall[EVIDENCE_KS[0]] is not None
    )
    for share in POINT_SHARES:
        figures[f"points_in_context@{share}"] = mean_of([s.in_context[share] for s in values])
        figures[f"chance@{share}"] = mean_of([s.chance[share] for s in values])
    figures["budget"] = BUDGETS[0]
    return figures


# --- all personas ------------------------------------------------------------------------------


def overall(outcomes: Sequence[PersonaOutcome], profile: str) -> dict[str, Any]:
    """The figures over every question of every persona, and the characters summed."""
    figures: dict[str, Any] = {}
    for name in (RAW, profile):
        scores: dict[str, PointScore] = {}
        for outcome in outcomes:
            scores.update(outcome.systems[name]["scores"])
        figures[name] = summary(scores)
    chars: Counter[str] = Counter()
    transcript: Counter[str] = Counter()
    for outcome in outcomes:
        c = outcome.systems[profile]["chars"]
        chars.update({k: c[k] for k in ("user", "assistant", "both", "neither", "total")})
        transcript.update(c["transcript"])
    figures["chars"] = {**chars, "transcript": dict(transcript)}
    return figures


def char_ratios(chars: dict[str, Any]) -> dict[str, float]:
    t = chars["transcript"]
    return {
        "user": round(chars["user"] / t["user"], 3),
        "assistant": round(chars["assistant"] / t["assistant"], 3),
        "total": round(chars["total"] / t["total"], 3),
    }
