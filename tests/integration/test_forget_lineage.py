"""Forgetting through Kafka and PostgreSQL forgets what consolidation made (issue 42).

Given a user whose 43 dialog turns, said by two named speakers over two sessions, were
consolidated (observations, digests, a summary, a behavioural profile), when each turn is
forgotten as ``memory.forget`` sends it, then no row of the read models still quotes a
forgotten turn, recall over the turns' words returns none of them, and the streamed read
models equal the batch oracle's.
"""

from __future__ import annotations

import uuid

import pytest

from projections.reader import MemoryReader
from projections.schema import LAYER_TABLES
from streams.embedders.factory import embedder_for
from streams.engine.model import ForgetRequested, MemoryEvent
from streams.engine.oracle import replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from tests.dialogs import markers, scripted_sessions, write_dialog
from tests.workloads import LINK_QUERY, expected_links, expected_rows

pytestmark = pytest.mark.integration

USER = "forget-e2e"


def test_forgetting_every_turn_leaves_no_row_or_recall_quoting_them(pipeline):
    pipeline.start_all()
    dialog = write_dialog(USER, scripted_sessions(43))
    last = dialog.events[-1].occurred_at
    forgets = [
        MemoryEvent(
            str(uuid.uuid5(uuid.NAMESPACE_URL, f"forget-e2e/{turn_id}")),
            USER,
            last + (n + 1) * 1000,
            ForgetRequested(turn_id, "user request"),
        )
        for n, turn_id in enumerate(dialog.turn_ids)
    ]
    consolidated = replay(dialog.events, EngineConfig(policy=builtin_profile("default")))
    oracle = replay([*dialog.events, *forgets], EngineConfig(policy=builtin_profile("default")))
    derived_before = [
        m
        for m, r in consolidated.state(USER).memories.items()
        if m not in dialog.texts and r.memory.status == "active"
    ]
    assert len(derived_before) >= 20, "the dialog should have been consolidated first"

    for event in [*dialog.events, *forgets]:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()
    pipeline.wait_for_log_count(len(oracle.decisions))

    said = set().union(*(markers(text) for text in dialog.texts.values()))
    quoting = [
        (table, memory_id, content)
        for table in LAYER_TABLES.values()
        for memory_id, content in pipeline.query(
            f"SELECT memory_id, content FROM {table} WHERE user_id = %s AND status = 'active'",
            (USER,),
        )
        if markers(content) & said
    ]
    assert quoting == []
    turns_left = pipeline.query(
        " UNION ALL ".join(
            f"SELECT memory_id FROM {t} WHERE user_id = %s AND memory_id = ANY(%s)"
            for t in LAYER_TABLES.values()
        ),
        tuple(x for _ in LAYER_TABLES for x in (USER, dialog.turn_ids)),
    )
    assert turns_left == []
    rows = {k: v for k, v in pipeline.memory_rows().items() if k[1] == USER}
    assert rows == expected_rows(oracle)

    embedder = embedder_for("hashing")
    with MemoryReader.connect(pipeline.settings.database_url) as reader:
        for turn_id, text in dialog.texts.items():
            if not markers(text):
                continue
            found = reader.recall(USER, text, embedder, k=10, include_archived=True)
            assert [r.memory_id for r in found if r.memory_id in dialog.texts] == []
            assert [r.content for r in found if markers(r.content) & said] == [], turn_id


def test_no_lineage_names_a_forgotten_memory(pipeline):
    """Given a consolidated dialog (observations, digests, a summary, all linked to the turns
    they came from), when half of its turns are forgotten, then no stored link, no lineage of
    a memory left and no recall's derived_from or summarized_into names a forgotten turn, and
    the links equal the batch oracle's."""
    pipeline.start_all()
    dialog = write_dialog(USER, scripted_sessions(43))
    last = dialog.events[-1].occurred_at
    forgotten = dialog.turn_ids[::2]
    forgets = [
        MemoryEvent(
            str(uuid.uuid5(uuid.NAMESPACE_URL, f"forget-lineage/{turn_id}")),
            USER,
            last + (n + 1) * 1000,
            ForgetRequested(turn_id, "user request"),
        )
        for n, turn_id in enumerate(forgotten)
    ]
    oracle = replay([*dialog.events, *forgets], EngineConfig(policy=builtin_profile("default")))

    for event in [*dialog.events, *forgets]:
        pipeline.publisher.publish(event)
    pipeline.publisher.flush()
    pipeline.wait_for_log_count(len(oracle.decisions))

    gone = set(forgotten)
    links = pipeline.query(LINK_QUERY + " WHERE user_id = %s", (USER,))
    assert links, "what consolidation made should still be linked to the turns left"
    assert [link for link in links if {link[1], link[2]} & gone] == []
    assert sorted(links, key=repr) == [link for link in expected_links(oracle) if link[0] == USER]
    left = [
        memory_id
        for table in LAYER_TABLES.values()
        for (memory_id,) in pipeline.query(
            f"SELECT memory_id FROM {table} WHERE user_id = %s", (USER,)
        )
    ]
    embedder = embedder_for("hashing")
    with MemoryReader.connect(pipeline.settings.database_url) as reader:
        for memory_id in left:
            named = {
                end
                for link in reader.lineage(USER, memory_id)
                for end in (link.source_id, link.target_id)
            }
            assert named & gone == set(), memory_id
        for text in dialog.texts.values():
            for found in reader.recall(USER, text, embedder, k=10, include_archived=True):
                assert set(found.derived_from) & gone == set(), found.memory_id
                assert set(found.summarized_into) & gone == set(), found.memory_id
