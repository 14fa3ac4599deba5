"""Read helpers over the read models: what services ask memstream's PostgreSQL side.

The functions filter by ``user_id`` themselves, and a connection of the ``memstream_reader``
role is additionally held to one user by row-level security (migrations 004 and 008): inside a
transaction, :func:`scope_to_user` presents a grant for the user signed with the reader key,
and PostgreSQL returns no other user's rows whatever the query says.
:class:`projections.reader.MemoryReader` does both for each call.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

import numpy as np
import psycopg
from pgvector import Vector
from pgvector.psycopg import register_vector

from projections.grants import DEFAULT_TTL_SECONDS, GRANT_SETTING, GrantKey
from projections.recall_order import DEFAULT_DIVERSITY, Candidate, recall_order
from projections.schema import LAYER_TABLES
from streams.engine.text.changes import states_a_change


@dataclass(frozen=True)
class NearMemory:
    layer: str
    memory_id: str
    content: str
    distance: float


@dataclass(frozen=True)
class Link:
    source_id: str
    target_id: str
    link_type: str
    confidence: float | None
    created_at: datetime


def scope_to_user(
    conn: psycopg.Connection,
    user_id: str,
    grant_key: GrantKey | None = None,
    ttl_seconds: int = DEFAULT_TTL_SECONDS,
) -> None:
    """Show the ``memstream_reader`` role ``user_id``'s rows until the current transaction
    ends: a grant for the user, signed with ``grant_key`` and valid ``ttl_seconds``, goes in
    the setting the policies verify (migration 008). ``set_config(..., true)`` is ``SET
    LOCAL``: a pooled connection cannot carry one caller's grant into the next caller's
    transaction.

    Without a key the setting is cleared for the transaction: a reader role then sees no row
    (the table owner, which row-level security does not apply to, sees every row either way)."""
    if not user_id:
        raise ValueError("user_id is empty: a reader must say whose memories it reads")
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.INTRANS:
        raise RuntimeError(
            "scope_to_user needs an open transaction (inside `with conn.transaction():`); "
            "outside one the grant would end at once and the reader would see nothing"
        )
    grant = grant_key.grant(user_id, ttl_seconds) if grant_key is not None else ""
    conn.execute("SELECT set_config(%s, %s, true)", (GRANT_SETTING, grant))


def nearest_memories(
    conn: psycopg.Connection,
    user_id: str,
    embedding: bytes,
    k: int = 5,
    include_inactive: bool = False,
) -> list[NearMemory]:
    """The user's ``k`` memories closest to ``embedding`` (exact cosine distance over the
    user's rows, found by the primary key; with ``MEMSTREAM_VECTOR_INDEX=hnsw``, the HNSW
    indexes).

    By default only current memories: not archived or superseded, and not invalidated by a
    newer contradicting fact (their history stays queryable with ``include_inactive``).

    With HNSW, the indexes hold every user's memories, and the user/status filter applies to
    what the index returns: with a plain scan (``hnsw.ef_search`` candidates) a user with few
    memories among many could get fewer than ``k``. pgvector's iterative scan keeps searching until
    ``k`` rows pass the filter; its ``relaxed_order`` may return them slightly out of order,
    so the outer query sorts again by the exact distance (``+ 0``: an expression the planner
    cannot take from the index's ordering)."""
    register_vector(conn)
    query = np.frombuffer(embedding, dtype="<f4")
    current = "" if include_inactive else " AND status = 'active' AND invalid_at IS NULL"
    union = " UNION ALL ".join(
        f"(SELECT '{layer}' AS layer, memory_id, content, embedding <=> %(q)s AS distance "
        f"FROM {table} WHERE user_id = %(u)s AND embedding IS NOT NULL{current} "
        f"ORDER BY embedding <=> %(q)s LIMIT %(k)s)"
        for layer, table in LAYER_TABLES.items()
    )
    with conn.transaction():
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        rows = conn.execute(
            f"SELECT layer, memory_id, content, distance FROM ({union}) AS near "
            f"ORDER BY distance + 0, memory_id LIMIT %(k)s",
            {"q": query, "u": user_id, "k": k},
        ).fetchall()
    return [NearMemory(*row) for row in rows]


def contradictions(conn: psycopg.Connection, user_id: str) -> list[Link]:
    return _links(conn, "user_id = %s AND link_type = 'contradicts'", (user_id,))


def lineage(conn: psycopg.Connection, user_id: str, memory_id: str) -> list[Link]:
    """Every link into or out of a memory: where it came from and what it became."""
    return _links(
        conn, "user_id = %s AND (source_id = %s OR target_id = %s)", (user_id, memory_id, memory_id)
    )


def _links(conn: psycopg.Connection, where: str, params: tuple[str, ...]) -> list[Link]:
    rows = conn.execute(
        f"SELECT source_id, target_id, link_type, confidence, created_at FROM memory_links "
        f"WHERE {where} ORDER BY created_at, source_id, target_id",
        params,
    ).fetchall()
    return [Link(*row) for row in rows]


Ranking = Literal["hybrid", "vector"]
RANKINGS: tuple[Ranking, ...] = ("hybrid", "vector")


@dataclass(frozen=True)
class Recalled:
    """One recalled memory: how similar it is, how present (current salience), its fate."""

    layer: str
    memory_id: str
    content: str
    status: str
    current: bool  # active and not invalidated
    similarity: float  # cosine to the question; 0 for a memory without an embedding
    salience: float
    score: float  # the ranking's score, within its tier; the order is recall_order's
    lexical: float = 0.0  # its words' BM25 score for the question (hybrid ranking; else 0)
    derived_from: tuple[str, ...] = ()  # the memories it was made from (its sources)
    summarized_into: tuple[str, ...] = ()  # the narratives/summaries that carry it now


RECALL_CANDIDATES_PER_LAYER = 4  # × k nearest per layer, then ranked by score
# ... and never fewer: with k=1 four candidates are too few for rank fusion, where a memory
# first by its words needs its place in the cosine order to outrank one first by cosine alone.
RECALL_MIN_CANDIDATES = 20
# Reciprocal-rank fusion's constant (Cormack et al. 2009): a memory's fused score is the sum
# over the two rankings of 1 / (RRF_K + its rank there). 60 keeps the top of either list from
# drowning the other, and needs no calibration between cosine and BM25 scales.
LEXICAL_WEIGHT = 0.1
"""What a place in the words' order counts against one in the meaning's, unless the memory
matches a number or code of the question (then 1: what an embedder blurs most). On the
recall-quality corpus, whose questions paraphrase what was said, equal weights lost answers
(answer in context @2,000: 0.65 against 0.73 for meaning alone, at 48cda73). With recall's
diversity (``projections.recall_order``), on three corpus seeds, 0.1 found more evidence in the
top five than 0.25 (0.69 / 0.69 / 0.67 against 0.67 / 0.66 / 0.65) and answered as much
(0.83 / 0.81 / 0.81 against 0.82 / 0.79 / 0.82). Meaning alone did as well or a little better
there, but would lose the names and codes that words find and such paraphrases never ask
for (``docs/benchmarks.md``)."""
RRF_K = 60
# BM25's usual term-saturation and length-normalisation constants.
BM25_K1 = 1.2
BM25_B = 0.75
# The question's characters read for the lexical ranking: a question is a sentence or two
# (and the embedder reads ~1,000 characters); a pasted document would only make a huge OR
# query, and to_tsvector refuses text whose lexemes pass 1 MB.
QUESTION_CHARS = 4_000
# A memory's characters read for the lexical ranking: consolidated memories are bounded
# (~1,000 characters); the cap keeps one oversized memory from failing the user's every
# recall with to_tsvector's 1 MB limit.
MEMORY_CHARS = 100_000


def recall(
    conn: psycopg.Connection,
    user_id: str,
    embedding: bytes,
    k: int = 5,
    include_archived: bool = False,
    half_life_seconds: float = 604800.0,
    access_reinforcement: float = 0.1,
    *,
    text: str | None = None,
    ranking: Ranking = "hybrid",
    diversity: float = DEFAULT_DIVERSITY,
) -> list[Recalled]:
    """The user's memories for a question: its ``embedding`` and, for the ``hybrid`` ranking
    (the default), its ``text``.

    ``vector``: nearest by cosine, ranked by similarity weighted by current salience (computed
    now, SQL ``memstream_salience``). ``hybrid``: the same cosine order fused by reciprocal
    rank with an order by the memories' words (PostgreSQL full text, English stemming, BM25
    over the user's own memories), then weighted by current salience. Names, numbers and rare
    words, which an embedder blurs, are what the words find. BM25 rather than ``ts_rank``:
    ``ts_rank`` has no inverse document frequency, so to it "flight" in fifty of the user's
    memories weighs as much as the booking code in one. The question's words are ORed (a
    plain ``to_tsquery`` ANDs them and finds almost nothing), from the lexemes PostgreSQL
    itself extracts, so no question, however punctuated, is a tsquery syntax error; a question
    of stop words only ranks by cosine alone. The words also find memories that have no
    embedding, where the meaning's candidates leave room or by a number or code (a memory
    only the words find never outranks the meaning's candidates otherwise: ``_hybrid_sql``).

    A question the embedder reads as nothing (an all-zero ``embedding``) has no cosine to
    anything (it is NaN, which PostgreSQL sorts first): ``hybrid`` then ranks by the words
    alone, every similarity 0 and the words' order kept as it is (no diversity: there is no
    similarity scale to weigh a repeat against); ``vector`` returns no memory.

    Either way, current memories come first, then archived ones that still hold, then
    superseded or invalidated ones, so a stale fact never outranks its correction; archived,
    superseded and invalidated memories come back only with ``include_archived``.

    Within each of these tiers the ``k`` are ordered among the ranking's best candidates by
    :mod:`projections.recall_order`: a newer statement of the same speaker that says something
    changed ("standup moved to 9:15") goes before the older, alike one it likely changes, which
    the judge did not read as contradicting; then, by maximal marginal relevance, a memory
    that repeats one already chosen gives its place to the next thing the question needs
    (``diversity=0``: no such trade). ``score`` is the ranking's either way.
    """
    if ranking not in RANKINGS:
        raise ValueError(f"ranking must be one of {', '.join(RANKINGS)}, not {ranking!r}")
    if not 0.0 <= diversity <= 1.0:
        raise ValueError(f"diversity must be between 0 (no diversification) and 1, not {diversity}")
    if ranking == "hybrid" and text is None:
        raise ValueError(
            "the hybrid ranking needs the question's words: pass text=..., or ranking='vector' "
            "to rank by the embedding alone"
        )
    register_vector(conn)
    question = np.frombuffer(embedding, dtype="<f4")
    by_meaning = bool(np.any(question) and np.isfinite(question).all())
    if not by_meaning and ranking == "vector":
        return []  # nothing is similar to a question without meaning: no cosine order
    candidates = max(k * RECALL_CANDIDATES_PER_LAYER, RECALL_MIN_CANDIDATES)
    params = {
        "q": question,
        "u": user_id,
        "n": candidates,
        "pool": candidates,
        "h": half_life_seconds,
        "r": access_reinforcement,
        "text": (text or "")[:QUESTION_CHARS],
    }
    sql = _VECTOR_SQL if ranking == "vector" else _HYBRID_SQL if by_meaning else _WORDS_SQL
    rows = conn.execute(sql[include_archived], params).fetchall()
    # Without meaning the similarities are all 0: no scale to weigh a repeat against, so
    # the words' order stands (stated changes still go first).
    found = _in_recall_order(rows, k, diversity if by_meaning else 0.0)
    lineage = _lineage_of(conn, user_id, [r.memory_id for r in found])
    return [
        replace(
            r,
            derived_from=lineage.get((r.memory_id, "derived_from"), ()),
            summarized_into=lineage.get((r.memory_id, "summarized_into"), ()),
        )
        for r in found
    ]


def _in_recall_order(rows: list[tuple[Any, ...]], k: int, diversity: float) -> list[Recalled]:
    """The first ``k`` of ``rows`` (ranked, tier by tier, each ending in its speaker, the time
    it was stated, its stale flag and its embedding), each tier in :func:`recall_order`."""
    tiers: dict[tuple[bool, bool], list[tuple[Any, ...]]] = {}
    for row in rows:
        tiers.setdefault((row[4], row[-2]), []).append(row)  # (current, stale)
    found: list[Recalled] = []
    for tier in tiers.values():  # in the rows' order: current, archived, stale
        candidates = [
            Candidate(
                similarity=row[5],
                vector=_array(row[-1]),
                speaker=row[-4],
                stated_at=row[-3] or 0.0,
                states_change=states_a_change(row[2]),
            )
            for row in tier
        ]
        order = recall_order(candidates, k - len(found), diversity)
        found.extend(Recalled(*tier[i][:-4]) for i in order)
        if len(found) == k:
            break
    return found


def _array(vector: Vector | np.ndarray | None) -> np.ndarray | None:
    """An embedding as read (pgvector gives a ``Vector`` for the binary format)."""
    return vector.to_numpy() if isinstance(vector, Vector) else vector


_CURRENT = "status = 'active' AND invalid_at IS NULL"
# Superseded by a correction or invalidated by a newer contradicting fact.
_STALE = "(status = 'superseded' OR invalid_at IS NOT NULL)"
_SALIENCE = (
    "memstream_salience(importance, access_count, COALESCE(last_accessed, created_at), "
    "now(), %(h)s, %(r)s)"
)
# Who said a memory and when, for recall's order (projections.recall_order): the speaker, or
# without one who created it; when it became true, or without that when it was written.
_SAID_BY = "COALESCE(speaker, created_by) AS speaker"
_SAID_AT = "extract(epoch FROM COALESCE(valid_at, created_at))::float8 AS stated_at"
# The tiers every ranking keeps: current, then archived but still true, then stale.
_TIERS = "current DESC, stale, score DESC, memory_id"
# A lexeme quoted as tsquery input (backslashes and single quotes escaped), so that the cast
# reads it as one literal lexeme whatever characters it holds.
_QUOTED_LEXEME = r"'''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || ''''"


def _vector_sql(include_archived: bool) -> str:
    """Nearest by cosine per layer, ranked by similarity weighted by current salience.

    The nearest are chosen by id and distance alone and their rows read afterwards (by the
    primary key): choosing them with every column sorted 50,000 wide rows (content and
    embedding) and computed each row's distance twice and its salience, for the ``n`` kept
    (p50 68 → 44 ms at 50,000 memories, ``docs/benchmarks.md``, "Recall latency")."""
    only_current = "" if include_archived else f" AND {_CURRENT}"
    union = " UNION ALL ".join(
        f"(SELECT '{layer}' AS layer, memory_id, content, status, ({_CURRENT}) AS current, "
        f"{_STALE} AS stale, 1 - v.distance AS similarity, {_SALIENCE} AS salience, "
        f"{_SAID_BY}, {_SAID_AT}, embedding "
        f"FROM (SELECT memory_id, embedding <=> %(q)s AS distance FROM {table} "
        f"WHERE user_id = %(u)s AND embedding IS NOT NULL{only_current} "
        f"ORDER BY embedding <=> %(q)s LIMIT %(n)s) AS v "
        f"JOIN {table} USING (memory_id) WHERE user_id = %(u)s)"
        for layer, table in LAYER_TABLES.items()
    )
    return (
        f"SELECT layer, memory_id, content, status, current, similarity, salience, "
        f"similarity * (0.5 + 0.5 * salience) AS score, 0.0::float8 AS lexical, "
        f"speaker, stated_at, stale, embedding FROM ({union}) AS found ORDER BY {_TIERS} "
        f"LIMIT %(pool)s"
    )


def _hybrid_sql(include_archived: bool, by_meaning: bool = True) -> str:
    """Reciprocal-rank fusion of the cosine order and the BM25 order of the user's memories
    (without ``by_meaning``: the BM25 order alone, every similarity 0).

    The words come from each row's stored ``tsv`` (``to_tsvector('english', left(content,
    MEMORY_CHARS))``, a generated column, migration 010). BM25's document frequencies are the
    question's lexemes' counts among the user's memories, each counted through the GIN index
    on ``tsv``; its corpus statistics (how many memories, their mean length in distinct
    lexemes) come from ``lexemes``, the stored length of the same tsvector, by an index-only
    scan of ``(user_id) INCLUDE (lexemes, status, invalid_at)``.

    Which memories the words rank (``scored``): where they can change the answer. A memory
    only the words find, by words an embedder also reads, weighs a tenth of a place in the
    meaning's order (``LEXICAL_WEIGHT``): at its best, 0.1 / 61, below the worst of the
    meaning's candidates (1 / (60 + 4n), halved by salience). So when the meaning's
    candidates fill the pool and only current memories are asked for, the words rank those
    candidates and the memories holding a number or code of the question (weight 1, found
    through the index), and read nothing else: at 50,000 memories the words read tens of rows
    where they read every one of the ~15,000 that shared a common word with the question
    (``docs/benchmarks.md``, "Recall latency"). Otherwise (archived memories asked for: a
    current memory the words alone find goes before the archived ones; fewer candidates than
    the pool, e.g. memories without an embedding; no meaning at all) the words rank every
    memory that holds one of the question's lexemes. ``tests/integration/test_recall_words.py``
    holds the scores to a query that reads every row's words at query time. Ties share a rank
    (``rank()``), so equal distances or equal word scores give equal credit and salience, then
    the id, decide between them as in the vector ranking."""
    only_current = "" if include_archived else f" AND {_CURRENT}"
    nearest = " UNION ALL ".join(
        f"(SELECT '{layer}' AS layer, memory_id, embedding <=> %(q)s AS distance "
        f"FROM {table} WHERE user_id = %(u)s AND embedding IS NOT NULL{only_current} "
        f"ORDER BY embedding <=> %(q)s LIMIT %(n)s)"
        for layer, table in LAYER_TABLES.items()
    )
    if not by_meaning:
        nearest = (
            "SELECT NULL::text AS layer, NULL::text AS memory_id, 0.0::float8 AS distance "
            "WHERE false"
        )
    similarity = "COALESCE(1 - (m.embedding <=> %(q)s), 0)" if by_meaning else "0.0::float8"

    def holding(query: str, columns: str = "memory_id") -> str:
        """The user's memories whose words match ``query`` (a tsquery of ``terms``)."""
        return " UNION ALL ".join(
            f"SELECT '{layer}' AS layer, {columns} FROM {table}, terms "
            f"WHERE user_id = %(u)s AND tsv @@ terms.{query}{only_current}"
            for layer, table in LAYER_TABLES.items()
        )

    if by_meaning and not include_archived:
        # the meaning's candidates, the memories holding a number or code, or (when the
        # candidates do not fill the pool) every match; each word's frequency by the index
        candidates = (
            f"SELECT layer, memory_id FROM nearest UNION {holding('exact_q')} "
            f"UNION SELECT * FROM ({holding('q')}) AS every_match "
            "WHERE (SELECT count(*) FROM nearest) < %(pool)s"
        )
        their_words = " UNION ALL ".join(
            f"SELECT c.layer, m.memory_id, m.tsv FROM candidates c JOIN {table} m "
            f"ON m.user_id = %(u)s AND m.memory_id = c.memory_id, terms "
            f"WHERE c.layer = '{layer}' AND m.tsv @@ terms.q"
            for layer, table in LAYER_TABLES.items()
        )
        words = f"candidates AS MATERIALIZED ({candidates}), words AS ({their_words})"
        document_frequency = " + ".join(
            f"(SELECT count(*) FROM {table} WHERE user_id = %(u)s "
            f"AND tsv @@ ({_QUOTED_LEXEME})::tsquery{only_current})"
            for table in LAYER_TABLES.values()
        )
        counted = (
            f"SELECT lexeme, ({document_frequency}) AS df "
            "FROM (SELECT DISTINCT lexeme FROM hits) AS found"
        )
    else:
        # every match is scored: the frequencies are the counts among them
        words = f"words AS ({holding('q', 'memory_id, tsv')})"
        counted = "SELECT lexeme, count(*) AS df FROM hits GROUP BY lexeme"
    sizes = " UNION ALL ".join(
        f"SELECT count(*) AS n, sum(lexemes) AS lexemes FROM {table} "
        f"WHERE user_id = %(u)s{only_current}"
        for table in LAYER_TABLES.values()
    )
    chosen = " UNION ALL ".join(
        f"SELECT f.layer, m.memory_id, m.content, m.status, ({_CURRENT}) AS current, "
        f"{_STALE} AS stale, {similarity} AS similarity, "
        f"{_SALIENCE} AS salience, f.fused, f.lexical, {_SAID_BY}, {_SAID_AT}, m.embedding "
        f"FROM fused f JOIN {table} m ON m.user_id = %(u)s AND m.memory_id = f.memory_id "
        f"WHERE f.layer = '{layer}'"
        for layer, table in LAYER_TABLES.items()
    )
    return f"""
        WITH nearest AS MATERIALIZED (
            SELECT layer, memory_id, rank() OVER (ORDER BY distance) AS rank
            FROM ({nearest}) AS v
        ),
        terms AS MATERIALIZED (
            SELECT array_agg(lexeme) AS lexemes,
                   coalesce(array_agg(lexeme) FILTER (WHERE coded), '{{}}') AS exact,
                   string_agg({_QUOTED_LEXEME}, ' | ')::tsquery AS q,
                   string_agg({_QUOTED_LEXEME}, ' | ') FILTER (WHERE coded)::tsquery AS exact_q
            FROM (
                SELECT lexeme, lexeme ~ '[0-9]' AS coded  -- a number or a code
                FROM unnest(to_tsvector('english', %(text)s))
            ) AS asked
        ),
        {words},
        matched AS MATERIALIZED (
            SELECT m.layer, m.memory_id, length(m.tsv) AS dl,
                   ts_filter(setweight(m.tsv, 'A', terms.lexemes), '{{a}}') AS tsv
            FROM words AS m, terms
        ),
        corpus AS (
            SELECT sum(n)::bigint AS n, sum(lexemes)::numeric / sum(n)::numeric AS avgdl
            FROM ({sizes}) AS s
            WHERE EXISTS (SELECT FROM matched)
        ),
        hits AS (
            SELECT m.layer, m.memory_id, m.dl, t.lexeme, cardinality(t.positions) AS tf
            FROM matched m CROSS JOIN LATERAL unnest(m.tsv) AS t
        ),
        -- materialized: inlined, each df's counting subplans ran once per use of df (twice)
        counted AS MATERIALIZED ({counted}),
        frequency AS MATERIALIZED (
            SELECT lexeme, ln(1 + (c.n - df + 0.5) / (df + 0.5)) AS idf,
                   lexeme = ANY(t.exact) AS exact
            FROM counted CROSS JOIN corpus c CROSS JOIN terms t
        ),
        scored AS (
            SELECT h.layer, h.memory_id,
                   sum(f.idf * h.tf * ({BM25_K1} + 1)
                       / (h.tf + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * h.dl / c.avgdl)))
                       AS bm25,
                   bool_or(f.exact) AS exact
            FROM hits h JOIN frequency f USING (lexeme) CROSS JOIN corpus c
            GROUP BY h.layer, h.memory_id
        ),
        lexical AS (
            SELECT layer, memory_id, bm25,
                   CASE WHEN exact THEN 1.0 ELSE {LEXICAL_WEIGHT} END AS weight,
                   rank() OVER (ORDER BY bm25 DESC) AS rank
            FROM scored ORDER BY bm25 DESC, memory_id LIMIT %(n)s * {len(LAYER_TABLES)}
        ),
        fused AS (
            SELECT layer, memory_id, sum(weight / ({RRF_K} + rank)) AS fused,
                   COALESCE(max(bm25), 0) AS lexical
            FROM (
                SELECT layer, memory_id, rank, NULL::float8 AS bm25, 1.0 AS weight FROM nearest
                UNION ALL SELECT layer, memory_id, rank, bm25, weight FROM lexical
            ) AS both_rankings
            GROUP BY layer, memory_id
        )
        SELECT layer, memory_id, content, status, current, similarity, salience,
               fused * (0.5 + 0.5 * salience) AS score, lexical, speaker, stated_at, stale,
               embedding
        FROM ({chosen}) AS found
        ORDER BY {_TIERS} LIMIT %(pool)s
    """


# Built once: (current only, with archived) for each ranking.
_VECTOR_SQL = (_vector_sql(False), _vector_sql(True))
_HYBRID_SQL = (_hybrid_sql(False), _hybrid_sql(True))
_WORDS_SQL = (_hybrid_sql(False, by_meaning=False), _hybrid_sql(True, by_meaning=False))


def _lineage_of(
    conn: psycopg.Connection, user_id: str, memory_ids: list[str]
) -> dict[tuple[str, str], tuple[str, ...]]:
    """(memory id, link type) → the linked memory ids, oldest link first, for what a memory
    was derived from and what it was summarized into: one query for all recalled memories."""
    if not memory_ids:
        return {}
    rows = conn.execute(
        "SELECT source_id, link_type, target_id FROM memory_links "
        "WHERE user_id = %s AND source_id = ANY(%s) "
        "AND link_type IN ('derived_from', 'summarized_into') "
        "ORDER BY created_at, target_id",
        (user_id, memory_ids),
    ).fetchall()
    lineage: dict[tuple[str, str], tuple[str, ...]] = {}
    for source, link_type, target in rows:
        lineage[(source, link_type)] = (*lineage.get((source, link_type), ()), target)
    return lineage
