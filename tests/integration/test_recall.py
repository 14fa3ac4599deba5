"""Recall by meaning, end to end (issue: the read path): the worker embeds memories written
without an embedding with all-MiniLM-L6-v2 and records the vector in the ledger; a service
recalls by a paraphrase; archived memories are left out unless asked for."""

from __future__ import annotations

import time

import psycopg
import pytest

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
    """Given memories written as plain text (no embeddings), one of them inside a session that
    ends and is narrated (its turns archived), when the user's memories are recalled by a
    paraphrase that shares no content word with the memory, then that memory comes first;
    the archived turns come back only with include_archived, ranked below current ones, each
    with the narrative that carries it, and the narrative with the turns it was made from."""
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
            occurred_at=now + 10_000 + i * 60_000,
        )
        for i, text in enumerate(("We talked about Lisbon.", "The flight to Lisbon is at 9:30."))
    ]
    memory.end_session(USER, "s1", "chat")
    memory.flush()
    p.wait_for_log_count(11)  # 6 stored + session closed, narrative, 2 archived, report

    with MemoryReader.connect(p.settings.database_url) as reader:
        embedder = embedder_for("minilm")
        found = reader.recall(USER, "What note-taking app does she use?", embedder, k=3)
        everything = reader.recall(USER, "Lisbon flight", embedder, k=10, include_archived=True)
        current = reader.recall(USER, "Lisbon flight", embedder, k=10)

    assert found[0].memory_id == notes
    assert all(r.memory_id != "someone-else" for r in found)
    assert not {r.memory_id for r in current} & set(turns)
    archived = [r for r in everything if r.memory_id in turns]
    assert len(archived) == 2 and all(not r.current for r in archived)
    assert everything.index(archived[0]) > max(i for i, r in enumerate(everything) if r.current)
    # lineage: each turn says which narrative carries it, the narrative what it was made from
    [carrier] = {r.summarized_into for r in archived}
    assert len(carrier) == 1
    [narrative] = [r for r in everything if r.memory_id == carrier[0]]
    assert narrative.current and set(narrative.derived_from) == set(turns)
    with psycopg.connect(p.settings.database_url) as conn:
        stored = conn.execute(
            "SELECT count(*) FROM semantic_facts WHERE user_id = %s AND embedding IS NOT NULL",
            (USER,),
        ).fetchone()
    assert stored is not None and stored[0] == 3

    printed = p.cli("recall", "--user", USER, "Which app holds her notes?", "--k", "1")
    assert printed.returncode == 0, printed.stderr
    assert notes in printed.stdout
