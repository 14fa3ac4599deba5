"""Patterns group facts that are each similar to every other (greedy cliques, in window
order), with the similarities of a group from one product (pure: the engine over events)."""

from __future__ import annotations

import numpy as np

from streams.engine import ledger
from streams.engine.oracle import replay
from streams.engine.validation import Limits
from tests.scenarios import DIM, MINUTE, NOW, Scenario


def unit_mix(*parts: tuple[int, float]) -> bytes:
    vector = np.zeros(DIM, dtype="<f4")
    for axis, weight in parts:
        vector[axis] = weight
    return (vector / np.linalg.norm(vector)).astype("<f4").tobytes()


def facts(user: str, embeddings: dict[str, bytes]) -> Scenario:
    s = Scenario(user)
    for i, (memory_id, embedding) in enumerate(embeddings.items()):
        s.write(
            memory_id,
            f"Fact {memory_id}: the deploy ran on host {i}.",
            layer="semantic",
            embedding=embedding,
            at=NOW + i * MINUTE,
        )
    s.consolidate(at=NOW + 10 * MINUTE)
    return s


def test_a_fact_unlike_one_member_stays_out_of_the_group_the_others_form() -> None:
    """A, B, C, D in window order; C is like A and D (0.95, 0.90) but not like B (0.81 <
    0.85): the group is A, B, D, and C, alone, makes no pattern."""
    w = (1 - 0.95**2) ** 0.5
    scenario = facts(
        "cliques-1",
        {
            "a": unit_mix((0, 1.0)),
            "b": unit_mix((0, 0.95), (1, w)),
            "c": unit_mix((0, 0.95), (1, -w)),
            "d": unit_mix((0, 0.95), (2, w)),
        },
    )
    run = replay(scenario.events, Limits())

    [pattern] = [d.payload for d in run.decisions if isinstance(d.payload, ledger.PatternDetected)]
    assert pattern.evidence_ids == ("a", "b", "d")
    assert pattern.support == 3
    assert abs(pattern.consistency - round((0.95 + 0.95 + 0.95**2) / 3, 6)) < 1e-6
    assert pattern.pattern.content.startswith("Fact a:")  # the most central member


def test_hundreds_of_near_identical_facts_make_one_pattern_and_merge_into_one() -> None:
    """300 facts around one direction: one pattern of all of them, and 299 merged as
    duplicates until one is left (each group's similarities from one product)."""
    rng = np.random.default_rng(7)
    base = rng.standard_normal(DIM)
    embeddings = {}
    for i in range(300):
        vector = base / np.linalg.norm(base) + 0.005 * rng.standard_normal(DIM)
        embeddings[f"f{i:03d}"] = (vector / np.linalg.norm(vector)).astype("<f4").tobytes()
    run = replay(facts("cliques-2", embeddings).events, Limits())

    patterns = [d.payload for d in run.decisions if isinstance(d.payload, ledger.PatternDetected)]
    merged = [d.payload for d in run.decisions if isinstance(d.payload, ledger.MemoryMerged)]
    assert [p.support for p in patterns] == [300]
    state = run.users["cliques-2"]
    assert len(merged) == 299
    assert [i for i in embeddings if state.memories[i].is_live] == [merged[-1].survivor.memory_id]


def test_row_totals_read_in_chunks_equal_the_whole_matrix_s(monkeypatch) -> None:
    """Each member's similarities to the others, summed a chunk of rows at a time (so no
    ``n × n`` matrix is held), equal those of the whole rounded matrix."""
    from streams.engine import similarity
    from streams.engine.model import Memory

    rng = np.random.default_rng(3)
    memories = [
        Memory(
            f"m{i}", "u", f"fact {i}", embedding=rng.standard_normal(DIM).astype("<f4").tobytes()
        )
        for i in range(23)
    ]
    vectors = similarity.matrix_of(memories, DIM)
    whole = np.round(vectors @ vectors.T, 6)
    expected = whole.sum(axis=1) - np.diag(whole)

    monkeypatch.setattr(similarity, "ROWS_PER_PRODUCT", 5)
    assert np.allclose(similarity.row_totals(memories, DIM), expected, rtol=0, atol=1e-9)
