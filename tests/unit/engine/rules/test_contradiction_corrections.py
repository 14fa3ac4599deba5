"""A contradiction corrects the older memory when it states more than what is contradicted
(pure): the other facts of a person's turn stay true, and active."""

from __future__ import annotations

from streams.engine import ledger
from streams.engine.model import CLAIM, Memory
from streams.engine.oracle import replay
from streams.engine.policy import builtin_profile
from streams.engine.rules.contradictions import CORRECTED_BY, corrected_memory
from streams.engine.step import EngineConfig
from tests.scenarios import DATABASE_TOPIC, DAY, NOW, Scenario, postgres_then_mysql, with_similarity


def _run(older: str, created_by: str) -> tuple[dict[str, Memory], list[object]]:
    """``older`` (about PostgreSQL), a day later "Project uses MySQL", one cycle: the user's
    memories after it and the decisions."""
    s = postgres_then_mysql("corrections", older, created_by=created_by)
    run = replay(s.events, EngineConfig(policy=builtin_profile("default")))
    state = run.state("corrections")
    memories = {r.memory.memory_id: r.memory for r in state.records()}
    return memories, [d.payload for d in run.decisions]


def test_a_memory_the_engine_wrote_loses_only_the_contradicted_sentence() -> None:
    """Given an engine-written memory "Project uses PostgreSQL. The team deploys on
    Fridays." and a later "Project uses MySQL", when a cycle runs, then the contradiction
    invalidates nothing: the older memory is corrected to "The team deploys on Fridays."
    (a new version, re-embedded, naming the memory that corrected it) and stays active."""
    memories, decisions = _run("Project uses PostgreSQL. The team deploys on Fridays.", "system")

    [found] = [d for d in decisions if isinstance(d, ledger.ContradictionDetected)]
    assert (found.memory_id, found.other_memory_id) == ("my", "pg")
    assert found.resolution == "latest_wins" and found.invalidated_memory_id is None
    [stored] = [
        d
        for d in decisions
        if isinstance(d, ledger.MemoryStored) and d.memory.memory_id == "pg" and d.version > 1
    ]
    assert stored.memory.content == "The team deploys on Fridays."
    assert stored.memory.metadata[CORRECTED_BY] == "my"
    assert stored.memory.embedding is not None
    assert stored.memory.embedding != with_similarity(DATABASE_TOPIC, 1.0, 1)
    pg = memories["pg"]
    assert pg.content == "The team deploys on Fridays." and pg.invalid_at is None


def test_a_single_fact_or_a_clients_memory_is_invalidated_whole_as_before() -> None:
    """Given the same correction, when the older memory states only what is contradicted, or
    a client wrote it (its words are the client's), then it is invalidated whole, unchanged."""
    for older, created_by in (
        ("Project uses PostgreSQL.", "system"),
        ("Project uses PostgreSQL. The team deploys on Fridays.", "user"),
    ):
        memories, decisions = _run(older, created_by)

        [found] = [d for d in decisions if isinstance(d, ledger.ContradictionDetected)]
        assert found.invalidated_memory_id == "pg", (older, created_by)
        assert memories["pg"].content == older and memories["pg"].invalid_at is not None


def _observation(content: str, claim: str) -> Memory:
    return Memory(
        memory_id="o",
        user_id="u",
        content=content,
        created_by="system",
        metadata={CLAIM: claim, "derived_from": "t1"},
    )


def test_a_correction_cuts_the_sentence_from_the_content_and_the_claim() -> None:
    """Given an observation "3 May 2026, Kenta: I live in Osaka. My son is 7." (its claim
    without the prefix), when "I live in Osaka." is contradicted, then both lose it, the
    prefix and the other metadata stay."""
    memory = _observation(
        "3 May 2026, Kenta: I live in Osaka. My son is 7.", "I live in Osaka. My son is 7."
    )

    corrected = corrected_memory(memory, frozenset({"I live in Osaka."}))

    assert corrected is not None
    assert corrected.content == "3 May 2026, Kenta: My son is 7."
    assert corrected.metadata == {CLAIM: "My son is 7.", "derived_from": "t1"}


def test_nothing_is_corrected_when_nothing_true_is_left_or_the_sentence_is_not_there() -> None:
    """Given the same observation, when what would be left says nothing ("Thanks."), or the
    contradicted sentence is not found verbatim in it, then there is no correction (the
    caller invalidates the memory whole)."""
    thanks = _observation("3 May 2026, Kenta: I live in Osaka. Thanks.", "I live in Osaka. Thanks.")
    assert corrected_memory(thanks, frozenset({"I live in Osaka."})) is None
    other = _observation("3 May 2026, Kenta: I live in Kyoto now.", "I live in Kyoto now.")
    assert corrected_memory(other, frozenset({"I live in Osaka."})) is None
    assert corrected_memory(other, frozenset()) is None


def _kenta_forgets_the_answer(moved: bool) -> dict[str, Memory]:
    """Kenta replies to an assistant's answer ("I live in Osaka. My son is 7."); a week later,
    when ``moved``, he says "I live in Kyoto now."; then the answer is forgotten. The user's
    memories after it, by id."""
    s = Scenario("kenta")

    def turn(memory_id: str, text: str, session: str, at: int, *, agent: bool = False) -> None:
        s.write(
            memory_id,
            text,
            created_by="agent" if agent else "user",
            speaker=None if agent else "Kenta",
            conversation_id="c",
            session_id=session,
            created_at=at,
            at=at,
        )

    turn(
        "answer", "I recommend the Kansai Thru Pass for your weekend trips.", "s1", NOW, agent=True
    )
    turn("reply", "Great, I'll get it. I live in Osaka. My son is 7.", "s1", NOW + 60_000)
    s.end_session("s1", at=NOW + 120_000)
    if moved:
        turn("asked", "Welcome back! How was the week?", "s2", NOW + 7 * DAY, agent=True)
        turn("moved", "I live in Kyoto now.", "s2", NOW + 7 * DAY + 60_000)
        s.end_session("s2", at=NOW + 7 * DAY + 120_000)
    s.consolidate(at=NOW + 7 * DAY + 180_000)
    s.forget("answer", at=NOW + 8 * DAY)
    run = replay(s.events, EngineConfig(policy=builtin_profile("default")))
    return {r.memory.memory_id: r.memory for r in run.state("kenta").records()}


def _reply_observation(memories: dict[str, Memory]) -> Memory:
    [observed] = [
        m for m in memories.values() if m.metadata.get("derived_from", "").endswith("reply")
    ]
    return observed


def test_a_forget_does_not_bring_back_what_a_correction_took_out() -> None:
    """Given Kenta's reply observed with the answer it replies to, corrected by "I live in
    Kyoto now." a week later, when the answer is forgotten, then the observation keeps Kenta's
    words as corrected, and nothing of the answer (written again from his turn alone it said
    "Kenta lives in Osaka. Kenta's son is 7.")."""
    memories = _kenta_forgets_the_answer(moved=True)

    observed = _reply_observation(memories)
    assert observed.content == "18 November 2026, Kenta: Great, I'll get it. My son is 7."
    assert observed.metadata[CORRECTED_BY] and observed.metadata["derived_from"] == "reply"
    assert observed.metadata[CLAIM] == "Great, I'll get it. My son is 7."
    assert memories["reply"].status == "archived"  # not brought back whole


def test_a_reply_whose_answer_is_forgotten_keeps_its_own_words() -> None:
    """Given the same reply, not corrected, when the answer is forgotten, then the observation
    is what Kenta said to the assistant, whole and in his words, not a third-person rewrite."""
    observed = _reply_observation(_kenta_forgets_the_answer(moved=False))

    assert observed.content == (
        "18 November 2026, Kenta: Great, I'll get it. I live in Osaka. My son is 7."
    )
    assert "Kansai" not in observed.content and observed.metadata["derived_from"] == "reply"


def test_two_corrections_of_one_memory_in_one_cycle_are_two_decisions() -> None:
    """Given an engine-written memory of two facts and, in one cycle, a later statement
    against each, then both sentences go, in two versions whose decisions have distinct ids
    (one id for both would make the second a duplicate to every reader of the ledger)."""
    s = Scenario("two-corrections")
    s.write(
        "pg",
        "Project uses PostgreSQL. Our office is in Berlin. The team deploys on Fridays.",
        layer="semantic",
        created_by="system",
        embedding=with_similarity(DATABASE_TOPIC, 1.0, 1),
        at=NOW - 2 * DAY,
    )
    for memory_id, text, seed in (
        ("my", "Project uses MySQL", 2),
        ("paris", "Our office is in Paris", 3),
    ):
        s.write(
            memory_id,
            text,
            layer="semantic",
            embedding=with_similarity(DATABASE_TOPIC, 0.85, seed),
            at=NOW - DAY,
        )
    s.consolidate()

    run = replay(s.events, EngineConfig(policy=builtin_profile("default")))

    ids = [d.event_id for d in run.decisions]
    assert len(ids) == len(set(ids))
    corrections = [
        d.payload
        for d in run.decisions
        if isinstance(d.payload, ledger.MemoryStored) and d.payload.memory.memory_id == "pg"
    ][1:]
    assert [c.version for c in corrections] == [2, 3]
    pg = run.state("two-corrections").memories["pg"].memory
    assert pg.content == "The team deploys on Fridays." and pg.invalid_at is None


def _two_changes(older: str, newer: str) -> tuple[dict[str, Memory], list[object]]:
    """``older``, a day later ``newer`` (similar, 0.85), one cycle: the memories and the
    decisions."""
    s = Scenario("changes")
    for memory_id, text, similarity, seed, at in (
        ("old", older, 1.0, 1, NOW - 2 * DAY),
        ("new", newer, 0.85, 2, NOW - DAY),
    ):
        s.write(
            memory_id,
            text,
            layer="semantic",
            created_by="system",
            embedding=with_similarity(DATABASE_TOPIC, similarity, seed),
            at=at,
        )
    s.consolidate()
    run = replay(s.events, EngineConfig(policy=builtin_profile("default")))
    memories = {r.memory.memory_id: r.memory for r in run.state("changes").records()}
    return memories, [d.payload for d in run.decisions]


def test_a_later_move_leaves_the_earlier_move_true() -> None:
    """Given "I moved to Boston last month." and, later, "I moved to Chicago.", when a cycle
    runs, then the contradiction is recorded (the latest wins: Chicago is where I live) but
    the earlier move is neither invalidated nor cut: that it happened, and when, is still
    true ("When did I move to Boston?")."""
    memories, decisions = _two_changes("I moved to Boston last month.", "I moved to Chicago.")

    [found] = [d for d in decisions if isinstance(d, ledger.ContradictionDetected)]
    assert found.resolution == "latest_wins" and found.invalidated_memory_id is None
    old = memories["old"]
    assert old.invalid_at is None and old.content == "I moved to Boston last month."


def test_a_state_or_a_thing_moved_to_a_new_time_is_still_replaced() -> None:
    """Given what a later change ends (where I live, the standup's time), when a cycle runs,
    then the older memory is invalidated, as before: a thing moved to a time has only its
    latest time, and a state ends."""
    for older, newer in (
        ("I live in Boston.", "I moved to Chicago."),
        ("Standup moved to 9:15.", "Standup moved to 10:30."),
    ):
        memories, decisions = _two_changes(older, newer)

        [found] = [d for d in decisions if isinstance(d, ledger.ContradictionDetected)]
        assert found.invalidated_memory_id == "old", older
        assert memories["old"].invalid_at is not None, older
