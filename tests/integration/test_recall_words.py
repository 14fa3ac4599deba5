"""The words side of hybrid recall, read from the stored ``tsv`` (migration 010) with document
frequencies counted through the GIN index, scores and orders exactly as a query that runs
``to_tsvector`` over every row of the user at query time and counts the frequencies from those
(issue 39: BM25 semantics preserved). :func:`_reference_sql` is that query, kept here as the
reference; both run on the same real PostgreSQL data and must return the same rows, scores
included. Both rank by words only the memories that can change the answer
(``projections.queries._hybrid_sql``): the reference scores every match and keeps those."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector

from projections import queries, schema
from projections.queries import (
    _CURRENT,
    _QUOTED_LEXEME,
    _SAID_AT,
    _SAID_BY,
    _SALIENCE,
    _STALE,
    _TIERS,
    BM25_B,
    BM25_K1,
    LEXICAL_WEIGHT,
    MEMORY_CHARS,
    RRF_K,
)
from projections.schema import LAYER_TABLES
from streams.embedders.factory import embedder_for
from tests.support import new_migrated_database

pytestmark = pytest.mark.integration

USER = "words-1"
HASHING = embedder_for("hashing")
WRITTEN = datetime(2026, 11, 1, tzinfo=UTC)
# Few words, so that lexemes repeat across memories (document frequencies from 1 to most of
# them), within memories (term frequencies above 1) and whole memories repeat (equal scores).
WORDS = [
    "standup",
    "moved",
    "room",
    "Tarn",
    "Priya",
    "Lisbon",
    "flight",
    "invoice",
    "paid",
    "garden",
    "shed",
    "code",
    "booking",
    "coffee",
    "dentist",
    "Friday",
    "release",
    "notes",
    "Obsidian",
    "ramen",
    "team",
    "lead",
    "Kai",
    "Felix",
    "running",
    "running",
]
CODES = ("QX7Z42", "88-1907", "4417", "9:30")
STOP = "the of and is what it was a to"


def _reference_sql_text(include_archived: bool) -> str:
    return _reference_sql(include_archived)


def _contents(rng: random.Random, n: int) -> list[str]:
    contents = []
    for i in range(n):
        if i % 17 == 0:
            contents.append(STOP)  # no lexeme at all: length 0, still in the corpus
        elif i % 13 == 0 and contents:
            contents.append(contents[-1])  # a repeat: an equal score
        else:
            words = rng.choices(WORDS, k=rng.randint(2, 25))
            if rng.random() < 0.2:
                words.append(rng.choice(CODES))
            contents.append(" ".join(words))
    return contents


@pytest.fixture(scope="module")
def words_database(stack) -> str:
    url = new_migrated_database(stack.database_url)  # type: ignore[attr-defined]
    rng = random.Random(39)
    statuses = ["active"] * 6 + ["archived", "superseded"]
    with psycopg.connect(url) as conn:
        register_vector(conn)
        for user, count in ((USER, 240), ("someone-else", 60)):
            for i, content in enumerate(_contents(rng, count)):
                layer = rng.choice(list(LAYER_TABLES))
                [embedding] = HASHING.embed([content])
                conn.execute(
                    f"INSERT INTO {LAYER_TABLES[layer]} (user_id, memory_id, version, kind, "
                    "content, importance, confidence, emotional_salience, valence, priority, "
                    "scope, created_by, consent, embedding, created_at, valid_at, invalid_at, "
                    "status) VALUES (%s, %s, 1, 'fact', %s, %s, 0.8, 0, 0, 'normal', 'user', "
                    "'user', true, %s, %s, %s, %s, %s)",
                    (
                        user,
                        f"{user}-m{i:03}",
                        content,
                        rng.choice((0.2, 0.5, 0.9)),
                        None if i % 11 == 0 else np.frombuffer(embedding, dtype="<f4"),
                        WRITTEN + timedelta(minutes=i),
                        WRITTEN + timedelta(minutes=i),
                        WRITTEN + timedelta(days=1) if i % 19 == 0 else None,
                        rng.choice(statuses),
                    ),
                )
    return url


QUESTIONS = [
    "when is Priya's standup in room Tarn",
    "what is the code QX7Z42 for?",
    "who paid invoice 88-1907 running running",
    "Lisbon",
    "coffee dentist Friday release notes Obsidian ramen team lead Kai Felix",
    STOP,  # no lexeme: the cosine order alone
    "nothing here matches zyzzyva",
]


@pytest.mark.parametrize("candidates", [20, 200])
@pytest.mark.parametrize("include_archived", [False, True])
@pytest.mark.parametrize("question", QUESTIONS)
def test_the_stored_words_rank_exactly_as_the_words_read_at_query_time(
    words_database, question, include_archived, candidates
):
    """Given 240 memories of one user over the four layers (repeated words and memories,
    codes, stop words only, no embedding, archived, superseded, invalidated) and another
    user's, when the hybrid recall's query and the reference query run for the same
    question, with 20 candidates per layer (the meaning's fill the pool: the words rank
    those and the memories holding a code) or 200 (fewer than the pool: the words rank every
    match), then they return the same candidates in the same order with the same scores."""
    [embedding] = HASHING.embed([question])
    params = {
        "q": np.frombuffer(embedding, dtype="<f4"),
        "u": USER,
        "n": candidates,
        "pool": candidates,
        "h": 604800.0,
        "r": 0.1,
        "text": question,
    }
    with psycopg.connect(words_database, autocommit=True) as conn:
        register_vector(conn)
        with conn.transaction():  # one now() for both
            stored = conn.execute(queries._HYBRID_SQL[include_archived], params).fetchall()
            reference = conn.execute(_reference_sql_text(include_archived), params).fetchall()

    assert [row[:-1] for row in stored] == [row[:-1] for row in reference]
    assert len(stored) == 20 if candidates == 20 else len(stored) > 20
    if question not in (STOP, "nothing here matches zyzzyva"):
        assert any(row[8] > 0 for row in stored), "the words should have found something"


def test_a_database_written_before_the_stored_words_is_backfilled(stack, monkeypatch):
    """Given rows written under migrations up to 009, when 010 is applied, then every row has
    the tsvector and length that recall reads."""
    files = schema.migration_files()
    monkeypatch.setattr(schema, "migration_files", lambda: [f for f in files if f.stem < "010"])
    url = new_migrated_database(stack.database_url)  # type: ignore[attr-defined]
    with psycopg.connect(url) as conn:
        for layer, table in LAYER_TABLES.items():
            conn.execute(
                f"INSERT INTO {table} (user_id, memory_id, version, kind, content, importance, "
                "confidence, emotional_salience, valence, priority, scope, created_by, consent, "
                "created_at) VALUES ('u', %s, 1, 'fact', %s, 0.5, 0.8, 0, 0, 'normal', 'user', "
                "'user', true, now())",
                (f"m-{layer}", f"Running {layer} notes about the garden shed code QX7Z42"),
            )
    monkeypatch.setattr(schema, "migration_files", lambda: files)

    assert schema.migrate(url, 384) == [f.stem for f in files if f.stem >= "010"]
    with psycopg.connect(url) as conn:
        for table in LAYER_TABLES.values():
            rows = conn.execute(
                f"SELECT tsv = to_tsvector('english', content), lexemes, length(tsv) FROM {table}"
            ).fetchall()
            assert rows == [(True, 7, 7)], table


def _reference_sql(include_archived: bool) -> str:
    """Reciprocal-rank fusion of the cosine order and the BM25 order of the user's memories.

    The words are read at query time from the user's rows, found by the primary key: no
    tsvector column and no GIN index, so the projector's COPY pays nothing for them
    (``bench/results/recall_latency-*.md`` has what this costs a recall at 1k and 10k
    memories). Ties share a rank (``rank()``), so equal distances or equal word scores give
    equal credit and salience, then the id, decide between them as in the vector ranking."""
    only_current = "" if include_archived else f" AND {_CURRENT}"
    # every match scored, then only those that can change the answer ranked (see the module)
    may_matter = (
        "true"
        if include_archived
        else "(layer, memory_id) IN (SELECT layer, memory_id FROM nearest) OR exact "
        "OR (SELECT count(*) FROM nearest) < %(pool)s"
    )
    nearest = " UNION ALL ".join(
        f"(SELECT '{layer}' AS layer, memory_id, embedding <=> %(q)s AS distance "
        f"FROM {table} WHERE user_id = %(u)s AND embedding IS NOT NULL{only_current} "
        f"ORDER BY embedding <=> %(q)s LIMIT %(n)s)"
        for layer, table in LAYER_TABLES.items()
    )
    documents = " UNION ALL ".join(
        f"SELECT '{layer}' AS layer, memory_id, "
        f"to_tsvector('english', left(content, {MEMORY_CHARS})) AS tsv "
        f"FROM {table} WHERE user_id = %(u)s{only_current}"
        for layer, table in LAYER_TABLES.items()
    )
    chosen = " UNION ALL ".join(
        f"SELECT f.layer, m.memory_id, m.content, m.status, ({_CURRENT}) AS current, "
        f"{_STALE} AS stale, COALESCE(1 - (m.embedding <=> %(q)s), 0) AS similarity, "
        f"{_SALIENCE} AS salience, f.fused, f.lexical, {_SAID_BY}, {_SAID_AT}, m.embedding "
        f"FROM fused f JOIN {table} m ON m.user_id = %(u)s AND m.memory_id = f.memory_id "
        f"WHERE f.layer = '{layer}'"
        for layer, table in LAYER_TABLES.items()
    )
    return f"""
        WITH nearest AS (
            SELECT layer, memory_id, rank() OVER (ORDER BY distance) AS rank
            FROM ({nearest}) AS v
        ),
        terms AS (
            SELECT array_agg(lexeme) AS lexemes,
                   coalesce(array_agg(lexeme) FILTER (WHERE lexeme ~ '[0-9]'), '{{}}') AS exact,
                   string_agg({_QUOTED_LEXEME}, ' | ')::tsquery AS q
            FROM unnest(to_tsvector('english', %(text)s))
        ),
        documents AS MATERIALIZED (
            SELECT d.layer, d.memory_id, d.tsv FROM ({documents}) AS d, terms
            WHERE terms.q IS NOT NULL
        ),
        corpus AS (
            SELECT count(*) AS n, avg(length(tsv)) AS avgdl FROM documents
        ),
        matched AS MATERIALIZED (
            SELECT d.layer, d.memory_id, d.tsv FROM documents d, terms WHERE d.tsv @@ terms.q
        ),
        hits AS (
            SELECT m.layer, m.memory_id, length(m.tsv) AS dl, t.lexeme,
                   cardinality(t.positions) AS tf
            FROM matched m CROSS JOIN LATERAL unnest(m.tsv) AS t, terms
            WHERE t.lexeme = ANY(terms.lexemes)
        ),
        frequency AS (
            SELECT lexeme, count(*) AS df FROM hits GROUP BY lexeme
        ),
        scored AS (
            SELECT h.layer, h.memory_id,
                   sum(ln(1 + (c.n - f.df + 0.5) / (f.df + 0.5)) * h.tf * ({BM25_K1} + 1)
                       / (h.tf + {BM25_K1} * (1 - {BM25_B} + {BM25_B} * h.dl / c.avgdl)))
                       AS bm25,
                   bool_or(h.lexeme = ANY(t.exact)) AS exact
            FROM hits h JOIN frequency f USING (lexeme) CROSS JOIN corpus c CROSS JOIN terms t
            GROUP BY h.layer, h.memory_id
        ),
        lexical AS (
            SELECT layer, memory_id, bm25,
                   CASE WHEN exact THEN 1.0 ELSE {LEXICAL_WEIGHT} END AS weight,
                   rank() OVER (ORDER BY bm25 DESC) AS rank
            FROM scored WHERE {may_matter}
            ORDER BY bm25 DESC, memory_id LIMIT %(n)s * {len(LAYER_TABLES)}
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
