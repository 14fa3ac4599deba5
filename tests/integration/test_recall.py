"""Recall by meaning, end to end (issue: the read path): the worker embeds memories written
without an embedding with all-MiniLM-L6-v2 and records the vector in the ledger; a service
recalls by a paraphrase; archived memories are left out unless asked for."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector

from projections.queries import recall
from projections.reader import MemoryReader
from streams.embedders.factory import embedder_for
from tests.support import Pipeline

pytestmark = pytest.mark.integration

USER = "reader-1"


@pytest.fixture
def minilm_pipeline(stack, tmp_path_factory):
    p = Pipeline.create(stack, tmp_path_factory.mktemp("recall"))
    p.settings = p.settings.with_overrides(embedder="MINILM")
    p.start_all()
    try:
        yield p
    finally:
        p.close()


def test_a_paraphrase_recalls_the_memory_by_meaning_and_archived_ones_only_on_request(
    minilm_pipeline,
):
    """Given memories written as plain text (no embeddings), two of them turns of a session
    that ends (each becomes an observation that carries it), when the user's memories are
    recalled by a paraphrase that shares no content word with the memory, then that memory
    comes first; a question about the session is answered by an observation whose source
    turn is archived; the archived turns come back only with include_archived, ranked below
    current ones, each with the observation that carries it."""
    p = minilm_pipeline
    now = int(time.time() * 1000) - 3_600_000
    memory = p.publisher
    notes = memory.write(
        USER, "She keeps her notes in Obsidian.", layer="semantic", occurred_at=now
    )
    memory.write(
        USER, "The team ships a release every Friday.", layer="semantic", occurred_at=now + 1
    )
    memory.write(USER, "Her favourite food is ramen.", layer="semantic", occurred_at=now + 2)
    memory.write(
        "someone-else", "Her note-taking app is Notion.", layer="semantic", occurred_at=now + 3
    )
    turns = [
        memory.write(
            USER,
            text,
            layer="working",
            session_id="s1",
            conversation_id="chat",
            speaker="Ana",
            created_by="user",
            occurred_at=now + 10_000 + i * 60_000,
        )
        for i, text in enumerate(("Hi there!", "My flight to Lisbon leaves at 9:30 tomorrow."))
    ]
    memory.end_session(USER, "s1", "chat")
    memory.flush()
    # 6 stored + session closed, 1 observation, narrative, 2 archived, report
    p.wait_for_log_count(12)

    question = "What time does Ana's plane to Portugal depart?"
    with MemoryReader.connect(p.settings.database_url) as reader:
        embedder = embedder_for("minilm")
        found = reader.recall(USER, "What note-taking app does she use?", embedder, k=3)
        answer = reader.recall(USER, question, embedder, k=3)
        everything = reader.recall(USER, "Lisbon flight", embedder, k=10, include_archived=True)
        current = reader.recall(USER, "Lisbon flight", embedder, k=10)

    assert found[0].memory_id == notes
    assert all(r.memory_id != "someone-else" for r in found)
    observation = answer[0]
    assert observation.memory_id not in turns and observation.current
    assert "Ana" in observation.content and "9:30" in observation.content
    assert observation.derived_from == (turns[1],)
    assert not {r.memory_id for r in current} & set(turns)
    archived = {r.memory_id: r for r in everything if r.memory_id in turns}
    assert set(archived) == set(turns) and all(not r.current for r in archived.values())
    assert archived[turns[1]].summarized_into == (observation.memory_id,)
    last_current = max(i for i, r in enumerate(everything) if r.current)
    assert all(everything.index(r) > last_current for r in archived.values())
    with psycopg.connect(p.settings.database_url) as conn:
        stored = conn.execute(
            "SELECT count(*) FROM semantic_facts WHERE user_id = %s AND embedding IS NOT NULL",
            (USER,),
        ).fetchone()
    assert stored is not None and stored[0] == 4  # three written, one observed

    printed = p.cli("recall", "--user", USER, question, "--k", "1")
    assert printed.returncode == 0, printed.stderr
    assert observation.memory_id in printed.stdout and "9:30" in printed.stdout


# -- hybrid ranking: meaning and words ---------------------------------------------------------
# Rows written straight into the read model (real PostgreSQL, as the projector leaves them), with
# the hashing embedder's vectors: it embeds every token, function words and their bigrams
# included, so a question's "what is the" pulls memories that share only those, while full text
# drops stop words and weighs a rare token by how few of the user's memories hold it.

HASHING = embedder_for("hashing")
ASKER = "asker-1"
# Memories that share the question's function words and nothing else.
FUNCTION_WORD_ECHOES = (
    "what is the plan for it",
    "what is the time for the call",
    "what is the name of the dog",
    "what is the best way to go",
    "what is the weather for the day",
)
# One time for every row: equal salience, so the rankings alone order the memories.
WRITTEN = datetime.now(UTC) - timedelta(hours=1)
GATE = "The gate code QX7Z42 opens the garden shed behind the old apple tree near the house."
GATE_QUESTION = "what is the code QX7Z42 for?"


def _put(
    url: str,
    user: str,
    memory_id: str,
    content: str,
    *,
    status: str = "active",
    invalid: bool = False,
    embedded: bool = True,
    speaker: str | None = None,
    said_at: datetime = WRITTEN,
    vector: np.ndarray | None = None,
) -> None:
    [embedding] = HASHING.embed([content]) if embedded and vector is None else [None]
    if vector is not None:
        embedding = vector.astype("<f4").tobytes()
    with psycopg.connect(url) as conn:
        register_vector(conn)
        conn.execute(
            "INSERT INTO semantic_facts (user_id, memory_id, version, kind, content, importance, "
            "confidence, emotional_salience, valence, priority, scope, created_by, consent, "
            "embedding, created_at, valid_at, invalid_at, status, speaker) VALUES (%s, %s, 1, "
            "'fact', %s, 0.5, 0.8, 0, 0, 'normal', 'user', 'user', true, %s, "
            "%s, %s, CASE WHEN %s THEN %s END, %s, %s)",
            (
                user,
                memory_id,
                content,
                None if embedding is None else np.frombuffer(embedding, dtype="<f4"),
                WRITTEN,
                said_at,
                invalid,
                WRITTEN + timedelta(minutes=1),
                status,
                speaker,
            ),
        )


def _recall(url: str, user: str, question: str, **options) -> list[str]:
    with MemoryReader.connect(url) as reader:
        return [r.memory_id for r in reader.recall(user, question, HASHING, **options)]


@pytest.fixture
def asked(database):
    for i, content in enumerate(FUNCTION_WORD_ECHOES):
        _put(database, ASKER, f"echo-{i}", content)
    _put(database, ASKER, "gate", GATE)
    return database


def test_a_code_the_embedder_blurs_is_found_by_its_words_and_not_by_meaning_alone(asked):
    """Given memories that echo a question's function words and one that holds its rare code,
    when recalled by cosine alone the echoes fill the top three; by the hybrid ranking the code's
    memory comes first."""
    by_meaning = _recall(asked, ASKER, GATE_QUESTION, k=3, ranking="vector")
    hybrid = _recall(asked, ASKER, GATE_QUESTION, k=3)

    assert "gate" not in by_meaning
    assert hybrid[0] == "gate"


def test_words_find_a_memory_that_has_no_embedding(asked):
    _put(asked, ASKER, "unembedded", "Invoice 88-1907 was paid by Ilse.", embedded=False)

    assert "unembedded" in _recall(asked, ASKER, "who paid invoice 88-1907?", k=3)
    assert "unembedded" not in _recall(asked, ASKER, "who paid invoice 88-1907?", ranking="vector")


def test_a_superseded_memory_ranks_below_its_correction_whatever_its_words(database):
    """The stale fact repeats the question's words exactly; its correction shares fewer. Current
    recall leaves the stale fact out; with archived memories it comes back below the
    correction and below an archived memory that still holds."""
    _put(database, ASKER, "stale", "standup is at 9:00 in room Tarn", invalid=True)
    _put(database, ASKER, "merged", "standup is at 9:00 in room Tarn daily", status="superseded")
    _put(database, ASKER, "correction", "Correction: the daily meeting moved to 9:30")
    _put(database, ASKER, "old-note", "standup notes are kept in Tarn", status="archived")
    question = "standup is at 9:00 in room Tarn"

    current = _recall(database, ASKER, question, k=5)
    everything = _recall(database, ASKER, question, k=5, include_archived=True)

    assert current == ["correction"]
    assert everything[:2] == ["correction", "old-note"]
    assert set(everything[2:]) == {"stale", "merged"}


@pytest.mark.parametrize("ranking", ["hybrid", "vector"])
def test_a_restated_fact_gives_its_place_to_the_next_thing_the_question_asks(database, ranking):
    """Given one fact said three times and another fact the question also asks about, less
    alike to it than the restatements, when recalled for two memories, then the two facts come
    back; with diversity 0 the ranking's order gives the fact and its restatement."""
    for memory_id, content in (
        ("standup", "Priya's standup is at 9:30 in room Tarn"),
        ("again", "Priya's standup is at 9:30 in room Tarn again"),
        ("today", "Priya's standup is at 9:30 in room Tarn today"),
        ("dog", "Priya walks her dog Biscuit before standup"),
    ):
        _put(database, ASKER, memory_id, content)
    question = "when is Priya's standup and who is Biscuit"

    diverse = _recall(database, ASKER, question, k=2, ranking=ranking)
    ranked = _recall(database, ASKER, question, k=2, ranking=ranking, diversity=0.0)

    assert diverse[0] in {"standup", "again", "today"} and diverse[1] == "dog"
    assert "dog" not in ranked


@pytest.mark.parametrize("ranking", ["hybrid", "vector"])
def test_a_stated_change_the_judge_missed_comes_before_what_it_changes(database, ranking):
    """Given Priya's "we have standup at 10:30" and, a month later, her "standup moved to 9:15"
    (both current: the judge did not read them as one attribute), when recalled by a question
    whose words are the older one's, then her change comes before it, with diversity or
    without."""
    month_ago = WRITTEN - timedelta(days=30)
    stale = "we have standup at 10:30 sharp"
    # what an embedder that reads meaning gives and the hashing one does not: the change is
    # alike to what it changes (cosine 0.96), a little less like the question (0.44 to 0.46)
    [said_before] = (np.frombuffer(v, dtype="<f4") for v in HASHING.embed([stale]))
    [moved_words] = (np.frombuffer(v, dtype="<f4") for v in HASHING.embed(["moved to 9:15"]))
    alike = said_before + 0.3 * moved_words
    _put(database, ASKER, "stale", stale, speaker="Priya", said_at=month_ago)
    _put(database, ASKER, "moved", "standup moved to 9:15", speaker="Priya", vector=alike)
    _put(database, ASKER, "theirs", "standup moved to 8:45", speaker="Ana", vector=alike)
    question = "when do we have standup"

    found = _recall(database, ASKER, question, k=3, ranking=ranking)
    unordered = _recall(database, ASKER, question, k=3, ranking=ranking, diversity=0.0)

    assert found.index("moved") < found.index("stale")
    assert unordered.index("moved") < unordered.index("stale")


def test_archived_memories_come_back_only_with_include_archived(database):
    _put(database, ASKER, "archived", "the locker combination is 4417", status="archived")
    _put(database, ASKER, "current", "the gym opens at six")

    assert "archived" not in _recall(database, ASKER, "locker combination 4417", k=5)
    everything = _recall(database, ASKER, "locker combination 4417", k=5, include_archived=True)
    assert everything == ["current", "archived"]


def test_another_users_memory_never_comes_back_however_well_it_matches(asked):
    _put(asked, "someone-else", "theirs", GATE)

    for ranking in ("hybrid", "vector"):
        found = _recall(asked, ASKER, GATE, k=10, include_archived=True, ranking=ranking)
        assert "theirs" not in found and "gate" in found


def test_a_question_of_stop_words_ranks_by_meaning_alone(asked):
    """Without any lexeme there is nothing to match: the cosine order alone ranks."""
    question = "the of and is what"  # stop words only: no lexeme at all

    hybrid = _recall(asked, ASKER, question, k=3)

    assert len(hybrid) == 3
    assert hybrid == _recall(asked, ASKER, question, k=3, ranking="vector")


def _recall_zero_vector(url: str, question: str, ranking: str) -> list:
    zero = np.zeros(HASHING.dim, dtype="<f4").tobytes()
    with psycopg.connect(url, autocommit=True) as conn:
        return recall(conn, ASKER, zero, k=3, text=question, ranking=ranking)


def test_a_question_the_embedder_reads_as_nothing_ranks_by_its_words_alone(asked):
    """Given a question whose embedding is all zeros (its cosine to anything is NaN, which
    PostgreSQL sorts first), when recalled by the hybrid ranking, then its words alone rank:
    the memory holding its code comes first, and every similarity is 0, every score a number."""
    found = _recall_zero_vector(asked, GATE_QUESTION, "hybrid")

    assert found[0].memory_id == "gate"
    assert [r.similarity for r in found] == [0.0] * len(found)
    assert all(math.isfinite(r.score) and r.score > 0 for r in found)


def test_a_question_the_embedder_reads_as_nothing_has_no_nearest_memories(asked):
    assert _recall_zero_vector(asked, GATE_QUESTION, "vector") == []


@pytest.mark.parametrize(
    "question",
    [
        "!!! ??? ... ---",
        "' '' \\ & | ! ( ) :* <-> \" -",  # tsquery's own syntax, no word
        "",
    ],
)
@pytest.mark.parametrize("ranking", ["hybrid", "vector"])
def test_a_question_of_punctuation_only_finds_nothing_rather_than_anything(
    asked, question, ranking
):
    """Neither words nor meaning (the hashing embedder reads punctuation as nothing): no
    tsquery syntax error, no NaN-ordered garbage, no memory."""
    [embedding] = HASHING.embed([question])
    assert not np.frombuffer(embedding, dtype="<f4").any()

    assert _recall(asked, ASKER, question, k=3, ranking=ranking) == []


def test_tsquery_syntax_in_a_question_is_read_as_words(asked):
    assert _recall(asked, ASKER, "o'neil's C:\\temp\\x 'QX7Z42' & !code | (<->)", k=1) == ["gate"]


def test_a_huge_question_is_handled(asked):
    """A pasted megabyte: the words read are capped, so neither to_tsvector's 1 MB limit nor
    a huge OR query is reached; the rare code at its start still finds its memory."""
    question = "QX7Z42 " + "lorem ipsum dolor sit amet " * 40_000

    assert _recall(asked, ASKER, question, k=1) == ["gate"]


def test_the_cli_ranks_by_words_by_default_and_by_meaning_on_request(asked):
    env = {**os.environ, "MEMSTREAM_DATABASE_URL": asked, "MEMSTREAM_EMBEDDER": "HASHING"}
    args = [sys.executable, "-m", "memstream.cli", "recall", "--user", ASKER, "--k", "3"]

    hybrid = subprocess.run([*args, GATE_QUESTION], env=env, capture_output=True, text=True)
    vector = subprocess.run(
        [*args, "--ranking", "vector", GATE_QUESTION], env=env, capture_output=True, text=True
    )

    assert hybrid.returncode == 0 and vector.returncode == 0, hybrid.stderr + vector.stderr
    assert "gate" in hybrid.stdout.split()
    assert "gate" not in vector.stdout.split()
