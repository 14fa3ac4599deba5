"""One benchmark run: corpus → embeddings → each system → each ranking → scores.

The phases print their progress (``bench.progress``). Per system, the consolidation is
replayed once (timed), scored with plain cosine, then, when PostgreSQL answers, projected
into a fresh database, scored with recall and the database dropped; the oracle's state is
let go before the next profile.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from bench import progress
from bench.recall_quality.corpus import QUESTION_KINDS, Corpus, Question, generate
from bench.recall_quality.embeddings import EmbeddingCache
from bench.recall_quality.feed import Style, content_of, events_of, prefixed
from bench.recall_quality.rankings import (
    RECALL_K,
    CosineRanking,
    QuestionVectors,
    RecallDatabase,
    new_run_id,
    server_problem,
)
from bench.recall_quality.scoring import (
    BUDGETS,
    EVIDENCE_KS,
    QuestionScore,
    Ranked,
    content_words,
    decoys,
    score_question,
)
from bench.recall_quality.systems import RAW, System, profile_system, raw_system
from projections.queries import Ranking
from projections.recall_order import DEFAULT_DIVERSITY
from streams.embedders.base import Embedder

RANKINGS = ("cosine", "recall")
RECALL_THREADS = 2  # recall questions in flight at once (PostgreSQL does the work)
Ranker = Callable[[str, str, bytes], list[Ranked]]


@dataclass
class Options:
    conversations: int = 5
    seed: int = 7
    style: Style = "speaker"
    profiles: Sequence[str] = ()
    rankings: Sequence[str] = RANKINGS
    server_url: str | None = None  # PostgreSQL for the recall ranking
    recall_ranking: Ranking = "hybrid"  # MemoryReader.recall's ranking: hybrid or vector
    diversity: float = DEFAULT_DIVERSITY  # MemoryReader.recall's (0: none)


@dataclass
class Outcome:
    """Everything a report needs."""

    corpus: dict[str, Any]
    systems: dict[str, dict[str, Any]] = field(default_factory=dict)
    recall_note: str = ""
    timing: dict[str, float] = field(default_factory=dict)
    question_ids: list[str] = field(default_factory=list)


def run(
    options: Options, embedder: Embedder, cache: EmbeddingCache, engine_embedder: Embedder
) -> Outcome:
    """``embedder`` embeds the corpus (through ``cache``); ``engine_embedder`` is the engine's
    ``EngineConfig.embed`` during the timed replays: the worker's (one onnxruntime thread),
    so the cost per input is what a worker pays."""
    started = time.perf_counter()
    progress.phase(f"corpus: {options.conversations} conversations, seed {options.seed}")
    corpus = generate(options.conversations, options.seed)
    outcome = Outcome(corpus_stats(corpus), question_ids=[q.question_id for q in corpus.questions])
    shown = outcome.corpus
    progress.note(
        f"{shown['sessions']} sessions, {shown['turns']} turns, {shown['questions']} questions "
        f"({', '.join(f'{k} {v}' for k, v in shown['questions_by_kind'].items())})"
    )

    turns = corpus.turns
    raw_vectors, input_vectors, question_vectors = _embed(
        corpus, options.style, embedder, cache, outcome
    )
    rankings = _available_rankings(options, outcome)

    turn_of = {t.turn_id: t for t in turns}
    evidence = {
        q.question_id: {t: content_words(turn_of[t].fact_text) for t in q.evidence}
        for q in corpus.questions
    }
    events = events_of(corpus, options.style, input_vectors)
    decoy_of = decoys(
        [(q.question_id, q.conversation_id, q.kind, q.gold) for q in corpus.questions]
    )
    run_id = new_run_id()
    names = [RAW, *options.profiles]
    for name in names:
        progress.phase(f"{name}: " + ("every turn active" if name == RAW else "replaying"))
        system = (
            raw_system(corpus, raw_vectors)
            if name == RAW
            else profile_system(name, events, engine_embedder.embed)
        )
        summary = system_summary(system, shown["transcript_chars"])
        progress.note(_summary_line(summary))
        for ranking in rankings:
            progress.note(f"scoring {len(corpus.questions)} questions by {ranking}")
            if ranking == "cosine":
                cosine = CosineRanking(system)
                scores = score_all(
                    corpus.questions, cosine.rank, question_vectors, evidence, decoy_of, system
                )
            else:
                scores = _recall_scores(
                    options.server_url or "",
                    run_id,
                    system,
                    corpus,
                    question_vectors,
                    evidence,
                    decoy_of,
                    options.recall_ranking,
                    options.diversity,
                )
            summary.setdefault("rankings", {})[ranking] = aggregate(scores)
            summary.setdefault("per_question", {})[ranking] = per_question(scores)
            overall = summary["rankings"][ranking]["overall"]
            progress.note(
                f"{ranking}: answer in context @2000 {overall['answer_in_context@2000']:.2f}, "
                f"@7000 {overall['answer_in_context@7000']:.2f}, "
                f"evidence @5 {overall['evidence_recall@5']:.2f}"
            )
        outcome.systems[name] = summary
        del system
    outcome.timing["total_seconds"] = round(time.perf_counter() - started, 1)
    return outcome


def _embed(
    corpus: Corpus, style: Style, embedder: Embedder, cache: EmbeddingCache, outcome: Outcome
) -> tuple[dict[str, bytes], dict[str, bytes], dict[str, bytes]]:
    """Turn id → the vector of ``Name: text`` (raw retrieval's memories), turn id → the
    vector of the input's content in ``style``, question id → the question's vector."""
    progress.phase("embedding turns and questions with MiniLM")
    started = time.perf_counter()
    turns = corpus.turns
    texts = [prefixed(t) for t in turns]
    if style == "speaker":
        texts += [content_of(t, "speaker") for t in turns]
    texts += [q.text for q in corpus.questions]
    missing = cache.missing(texts)
    progress.note(f"{len(set(texts))} texts, {len(set(texts)) - missing} from the cache")
    vectors = dict(zip(texts, cache.embed(texts, embedder.embed), strict=True))
    cache.save()
    outcome.timing["embedding_seconds"] = round(time.perf_counter() - started, 1)
    outcome.timing["texts_embedded"] = missing
    progress.note(f"embedded in {outcome.timing['embedding_seconds']:.1f} s")
    return (
        {t.turn_id: vectors[prefixed(t)] for t in turns},
        {t.turn_id: vectors[content_of(t, style)] for t in turns},
        {q.question_id: vectors[q.text] for q in corpus.questions},
    )


def _available_rankings(options: Options, outcome: Outcome) -> list[str]:
    """The rankings asked for, less recall when PostgreSQL does not answer (said so)."""
    rankings = list(options.rankings)
    if "recall" not in rankings:
        outcome.recall_note = "not requested (--ranking cosine)"
        return rankings
    problem = "no database URL" if not options.server_url else server_problem(options.server_url)
    if problem:
        outcome.recall_note = (
            f"PostgreSQL is not reachable ({problem}); start the local stack with "
            "`memstream up` (or set MEMSTREAM_DATABASE_URL) for the recall ranking"
        )
        progress.note(f"recall ranking not run: {outcome.recall_note}")
        rankings.remove("recall")
    else:
        outcome.recall_note = (
            f"MemoryReader.recall on PostgreSQL, ranking={options.recall_ranking}, "
            f"diversity={options.diversity}"
        )
    return rankings


def _recall_scores(
    server_url: str,
    run_id: str,
    system: System,
    corpus: Corpus,
    question_vectors: dict[str, bytes],
    evidence: dict[str, dict[str, frozenset[str]]],
    decoy_of: dict[str, str],
    ranking: Ranking = "hybrid",
    diversity: float = DEFAULT_DIVERSITY,
) -> list[QuestionScore]:
    by_text = {q.text: question_vectors[q.question_id] for q in corpus.questions}
    database = RecallDatabase(
        server_url,
        run_id,
        system.name,
        QuestionVectors(by_text),
        ranking=ranking,
        diversity=diversity,
    )
    try:
        progress.note(f"projecting {len(system.ledger)} ledger events into {database.dbname}")
        database.create(system.ledger)
        return score_all(
            corpus.questions,
            database.rank,
            question_vectors,
            evidence,
            decoy_of,
            system,
            RECALL_THREADS,
        )
    finally:
        database.drop()


def score_all(
    questions: Sequence[Question],
    rank: Ranker,
    vectors: dict[str, bytes],
    evidence: dict[str, dict[str, frozenset[str]]],
    decoy_of: dict[str, str],
    system: System,
    threads: int = 1,
) -> list[QuestionScore]:
    """Every question ranked and scored, in question order; ``threads`` > 1 asks ``rank``
    from that many threads at once (it must be thread-safe)."""
    counter = progress.Counter(len(questions), "questions")

    def one(question: Question) -> QuestionScore:
        ranked = rank(question.user_id, question.text, vectors[question.question_id])
        return score_question(
            question.question_id,
            question.kind,
            question.gold,
            question.stale,
            evidence[question.question_id],
            ranked,
            system.lineage,
            decoy_of.get(question.question_id),
        )

    scores = []
    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        for done, score in enumerate(pool.map(one, questions), 1):
            scores.append(score)
            counter.show(done)
    counter.finish()
    return scores


# --- figures ------------------------------------------------------------------------------


def corpus_stats(corpus: Corpus) -> dict[str, Any]:
    turns = corpus.turns
    fragments = [f for t in turns for f in t.fragments]
    fact_turns = {f.turn_id for f in corpus.facts}
    relative = {f.turn_id for f in corpus.facts if f.relative}
    kinds = Counter(q.kind for q in corpus.questions)
    return {
        "conversations": len(corpus.conversations),
        "seed": corpus.seed,
        "sessions": sum(len(c.sessions) for c in corpus.conversations),
        "turns": len(turns),
        "transcript_chars": sum(len(prefixed(t)) for t in turns),
        "mean_turn_chars": round(statistics.mean(len(t.text) for t in turns), 1),
        "phatic_sentence_share": round(sum(f.phatic for f in fragments) / len(fragments), 3),
        "phatic_turn_share": round(sum(t.phatic for t in turns) / len(turns), 3),
        "fact_turns": len(fact_turns),
        "relative_date_share_of_fact_turns": round(len(relative) / len(fact_turns), 3),
        "questions": len(corpus.questions),
        "questions_by_kind": {k: kinds[k] for k in QUESTION_KINDS},
    }


def system_summary(system: System, transcript_chars: int) -> dict[str, Any]:
    memories = system.all_memories
    chars = sum(len(m.content) for m in memories)
    us = system.cycle_us_per_input
    return {
        "active_memories": len(memories),
        "retrievable": sum(1 for m in memories if m.embedding),
        "active_chars": chars,
        "chars_ratio": round(chars / transcript_chars, 3) if transcript_chars else None,
        "memory_kinds": dict(sorted(Counter(f"{m.layer}/{m.kind}" for m in memories).items())),
        "longest_memory_chars": max((len(m.content) for m in memories), default=0),
        "inputs": system.inputs,
        "replay_seconds": round(system.replay_seconds, 2) if system.replay_seconds else None,
        "cycle_us_per_input": round(us, 1) if us is not None else None,
        "cycle_cpu_us_per_input": (
            round(system.replay_cpu_seconds / system.inputs * 1e6, 1)
            if system.replay_cpu_seconds is not None and system.inputs
            else None
        ),
        "rejections": system.rejections,
    }


def _summary_line(summary: dict[str, Any]) -> str:
    line = (
        f"{summary['active_memories']} active memories ({summary['retrievable']} with an "
        f"embedding), {summary['active_chars']:,} characters ({summary['chars_ratio']:.2f} of "
        f"the transcript)"
    )
    if summary["replay_seconds"] is not None:
        line += (
            f"; replay {summary['replay_seconds']:.1f} s, "
            f"{summary['cycle_us_per_input']:.0f} µs per input "
            f"({summary['cycle_cpu_us_per_input']:.0f} µs of CPU)"
        )
    return line


def per_question(scores: Sequence[QuestionScore]) -> dict[str, list[float]]:
    """Each figure's value for every question, in question order (``question_ids``)."""
    figures: dict[str, list[float]] = {}
    for budget in BUDGETS:
        figures[f"answer_in_context@{budget}"] = [int(s.answer_in_context[budget]) for s in scores]
    for k in EVIDENCE_KS:
        figures[f"evidence_recall@{k}"] = [round(s.evidence_recall[k], 3) for s in scores]
    return figures


def aggregate(scores: Sequence[QuestionScore]) -> dict[str, Any]:
    by_kind = {kind: [s for s in scores if s.kind == kind] for kind in QUESTION_KINDS}
    updates = [s.stale_first for s in scores if s.stale_first is not None]
    return {
        "overall": _means(scores),
        "by_question_kind": {kind: _means(group) for kind, group in by_kind.items() if group},
        "stale_first": round(sum(updates) / len(updates), 3) if updates else None,
    }


def _means(scores: Sequence[QuestionScore]) -> dict[str, float]:
    figures: dict[str, float] = {}
    for budget in BUDGETS:
        figures[f"answer_in_context@{budget}"] = _mean(s.answer_in_context[budget] for s in scores)
    for k in EVIDENCE_KS:
        figures[f"evidence_recall@{k}"] = _mean(s.evidence_recall[k] for s in scores)
    for budget in BUDGETS:
        figures[f"chance@{budget}"] = _mean(s.chance[budget] for s in scores)
    figures["questions"] = len(scores)
    return figures


def _mean(values: Any) -> float:
    values = [float(v) for v in values]
    return round(sum(values) / len(values), 3) if values else 0.0


__all__ = ["Options", "Outcome", "RANKINGS", "RECALL_K", "run"]
