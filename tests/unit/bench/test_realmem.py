"""The RealMem corpus of the recall-quality benchmark (bench/recall_quality/realmem*.py and
the memory-point scoring of scoring.py): the loader puts sessions in time and traces each
needed memory point to the turn it came from, as RealMem's NOTICE describes its quirks; the
scoring counts a point found, in context or by chance as documented; the feed writes what
a user and an assistant said as the engine attributes them. Pure and fast: no model, no
database (one small engine replay with the built-in hashing embedder)."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from bench.recall_quality import realmem
from bench.recall_quality.realmem import (
    ASSISTANT,
    USER,
    Persona,
    day_of,
    load,
    midnight_ms,
    persona_names,
    persona_of,
    point_text,
    turn_id,
)
from bench.recall_quality.realmem_run import (
    EventTimeDriver,
    active_chars,
    events_of,
    prefixed,
    transcript_chars,
)
from bench.recall_quality.scoring import (
    Lineage,
    Point,
    Ranked,
    content_words,
    point_decoys,
    point_found,
    point_recall,
    point_words,
    points_in_context,
    score_points,
)
from streams.engine.model import MemoryWritten, SessionEnded
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig

MINUTE, HOUR = 60_000, 3_600_000


def _turn(speaker: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"speaker": speaker, "content": content, "is_query": False, "query_id": None, **extra}


def _item(index: str, content: Any, source_turn: int, session: str) -> dict[str, Any]:
    return {
        "index": index,
        "type": "Dynamic",
        "content": content,
        "source_turn": source_turn,
        "source_role_snapshot": "User",
        "session_uuid": session,
    }


def _file() -> dict[str, Any]:
    """Three sessions listed out of time order; the last asks a question needing three
    points of the first: one extracted from turn 1, a rewrite (source_turn 0) of an item of
    turn 3, and a schedule item (-1)."""
    extracted = [
        _item("T-01", "【Travel Plan】 User wants a quiet ryokan in Kyoto in mid-May.", 1, "aaaa"),
        _item("T-02", "User's budget is 30,000-50,000 yen per night.", 3, "aaaa"),
        _item("T-02", "User's budget: 30,000 to 50,000 yen per night, for a week.", 0, "aaaa"),
        _item("T:schedule-1", "Check ryokan prices every Monday", -1, "aaaa"),
    ]
    first = {
        "session_identifier": "Travel:S1_01",
        "session_uuid": "aaaa",
        "current_time": "2025-12-18 (Thursday)",
        "dialogue_turns": [
            _turn(USER, "I want a quiet ryokan in Kyoto for mid-May."),
            _turn(ASSISTANT, "Shiraume and Ryokan Shimizu are both quiet."),
            _turn(USER, "My budget is 30,000 to 50,000 yen a night."),
            _turn(ASSISTANT, "Noted."),
        ],
        "extracted_memory": extracted,
    }
    same_day = {
        "session_identifier": "Fitness:S1_01",
        "session_uuid": "bbbb",
        "current_time": "2025-12-18 (Thursday)",
        "dialogue_turns": [_turn(USER, "I run on Sundays."), _turn(ASSISTANT, "Great.")],
        "extracted_memory": [],
    }
    later = {
        "session_identifier": "Travel:S2_01",
        "session_uuid": "cccc",
        "current_time": "2026-01-05 (Monday)",
        "dialogue_turns": [
            _turn(USER, "Hello again."),
            _turn(ASSISTANT, "Welcome back."),
            _turn(USER, "Which ryokan fits my budget?", is_query=True, query_id="Q-0001"),
            _turn(
                ASSISTANT,
                "Shiraume fits.",
                memory_used=[
                    {"session_uuid": "aaaa", "content": extracted[0]["content"]},
                    {"session_uuid": "aaaa", "content": extracted[2]["content"]},
                    {"session_uuid": "aaaa", "content": "Check ryokan prices every Monday"},
                ],
            ),
        ],
        "extracted_memory": [],
    }
    return {"_metadata": {"person_name": "Kenta_Tanaka"}, "dialogues": [later, first, same_day]}


@cache
def _persona() -> Persona:
    return persona_of("Kenta_Tanaka", _file())


# --- the loader ------------------------------------------------------------------------------


def test_sessions_are_put_in_time_order_and_a_day_s_sessions_keep_the_file_s_order() -> None:
    assert [s.session_id for s in _persona().sessions] == ["aaaa", "bbbb", "cccc"]


def test_a_day_s_first_session_starts_at_nine_its_turns_a_minute_apart() -> None:
    first = _persona().sessions[0]
    nine = midnight_ms("2025-12-18") + 9 * HOUR
    assert [t.at for t in first.turns] == [
        nine,
        nine + MINUTE,
        nine + 2 * MINUTE,
        nine + 3 * MINUTE,
    ]
    assert first.ended_at == first.turns[-1].at + MINUTE


def test_the_day_s_next_session_starts_an_hour_after_the_last_ended() -> None:
    first, second, _ = _persona().sessions
    assert second.turns[0].at == first.ended_at + HOUR


def test_turns_keep_their_text_side_and_speak_by_the_persona_s_first_name() -> None:
    turns = _persona().sessions[0].turns
    assert turns[0].turn_id == "Kenta_Tanaka/aaaa/1"
    assert (turns[0].side, turns[0].speaker) == (USER, "Kenta")
    assert (turns[1].side, turns[1].speaker) == (ASSISTANT, "Assistant")
    assert turns[2].text == "My budget is 30,000 to 50,000 yen a night."


def test_a_question_is_its_query_turn_with_the_points_of_the_answer_after_it() -> None:
    (question,) = _persona().questions
    assert question.question_id == "Kenta_Tanaka/Q-0001"
    assert question.turn_id == turn_id("Kenta_Tanaka", "cccc", 3)
    assert question.text == "Which ryokan fits my budget?"
    assert len(question.points) == 3


def test_a_point_is_traced_to_its_1_based_source_turn_without_its_topic_label() -> None:
    point = _persona().questions[0].points[0]
    assert point.text == "User wants a quiet ryokan in Kyoto in mid-May."
    assert point.evidence == ("Kenta_Tanaka/aaaa/1",)


def test_a_rewrite_s_evidence_is_the_turn_of_the_item_it_rewrites() -> None:
    point = _persona().questions[0].points[1]
    assert point.evidence == ("Kenta_Tanaka/aaaa/3",)


def test_a_schedule_point_has_no_evidence_turn() -> None:
    assert _persona().questions[0].points[2].evidence == ()


def test_dates_and_labels() -> None:
    assert day_of("2025-12-18 (Thursday)") == "2025-12-18"
    with pytest.raises(ValueError, match="does not start with a date"):
        day_of("Thursday")
    assert point_text({"trip": "Lhasa"}) == '{"trip": "Lhasa"}'


def test_sessions_limit_takes_the_first_in_time() -> None:
    persona = persona_of("Kenta_Tanaka", _file(), sessions=2)
    assert [s.session_id for s in persona.sessions] == ["aaaa", "bbbb"]
    assert persona.questions == ()


def test_an_unknown_persona_names_the_ones_there() -> None:
    with pytest.raises(FileNotFoundError, match="Kenta_Tanaka"):
        load("Nobody")


@cache
def _real() -> dict[str, Persona]:
    return {name: load(name) for name in persona_names()}


def test_the_repository_holds_five_personas_with_their_licence_and_notice() -> None:
    assert len(_real()) == 5
    assert (realmem.DATA_DIR / "LICENSE").is_file()
    assert "Apache" in (realmem.DATA_DIR / "NOTICE").read_text()


def test_real_personas_have_hundreds_of_sessions_and_every_point_comes_before_its_question() -> (
    None
):
    for persona in _real().values():
        assert len(persona.sessions) > 150
        assert len(persona.questions) > 100
        at = {t.turn_id: t.at for t in persona.turns}
        times = [t.at for t in persona.turns]
        assert times == sorted(times)
        for question in persona.questions:
            assert question.points
            for point in question.points:
                assert all(at[t] < question.at for t in point.evidence)


def test_most_real_points_are_traced_to_a_turn() -> None:
    points = [p for persona in _real().values() for q in persona.questions for p in q.points]
    assert sum(1 for p in points if p.evidence) / len(points) > 0.9


# --- scoring ---------------------------------------------------------------------------------

BUDGET_WORDS = point_words("User's budget is 30,000 to 50,000 yen per night")
POINT = Point(BUDGET_WORDS, frozenset({"t3"}))
LINEAGE = Lineage({"obs": {"t3"}, "summary": {"obs"}, "other": {"t9"}})


def test_point_words_leave_out_the_annotator_s_user() -> None:
    assert "user" not in BUDGET_WORDS
    assert {"budget", "30", "0", "50", "yen", "per", "night"} == BUDGET_WORDS


def test_the_source_turn_counts_whatever_its_words() -> None:
    assert point_found(POINT, Ranked("t3", "ok, that range"), LINEAGE)


def test_a_memory_derived_from_the_turn_counts_when_it_keeps_half_the_words() -> None:
    kept = Ranked("summary", "Kenta's budget is 30,000 to 50,000 yen.")
    lost = Ranked("obs", "Kenta talked about money.")
    assert point_found(POINT, kept, LINEAGE)
    assert not point_found(POINT, lost, LINEAGE)


def test_a_memory_derived_from_the_turn_counts_when_it_keeps_the_turn_whole() -> None:
    # The annotator's point says more than the turn: the turn holds 2 of its 7 words, and
    # counts as the turn; a memory keeping every content word of the turn counts the same.
    turn = "ok, that range works per night"
    point = Point(BUDGET_WORDS, frozenset({"t3"}), (content_words(turn),))
    assert point_found(
        point, Ranked("obs", "9 June 2023, Kenta: ok, that range works per night."), LINEAGE
    )
    assert not point_found(point, Ranked("obs", "9 June 2023, Kenta: that range works."), LINEAGE)
    assert not point_found(point, Ranked("other", turn), LINEAGE)  # not derived from it


def test_a_memory_not_derived_from_the_turn_or_too_long_does_not_count() -> None:
    words = "Kenta's budget is 30,000 to 50,000 yen per night."
    assert not point_found(POINT, Ranked("other", words), LINEAGE)
    assert not point_found(POINT, Ranked("obs", words + " x" * 800), LINEAGE)


def test_point_recall_is_over_traced_points_only() -> None:
    untraced = Point(point_words("Check prices every Monday"), frozenset())
    top = [Ranked("t3", "budget")]
    assert point_recall([POINT, untraced], top, LINEAGE) == 1.0
    assert point_recall([untraced], top, LINEAGE) is None


def test_a_point_is_in_context_when_the_context_holds_the_share_of_its_words() -> None:
    pieces = ["Kenta: budget 30,000", "yen per night"]  # 6 of the 7 words, across pieces
    assert points_in_context([POINT], pieces, 0.8) == 1.0
    assert points_in_context([POINT], ["budget 30,000 yen"], 0.5) == 1.0  # 4 of 7
    assert points_in_context([POINT], ["budget 30,000 yen"], 0.8) == 0.0
    assert points_in_context([POINT], ["budget and yen"], 0.5) == 0.0
    assert points_in_context([], pieces, 0.5) == 1.0


def test_score_points_reads_the_context_within_its_budget() -> None:
    ranked = [Ranked("a", "x" * 30), Ranked("t3", "budget 30,000 to 50,000 yen per night")]
    score = score_points("q", [POINT], ranked, LINEAGE, budget=20, ks=(1, 2))
    assert score.evidence_recall == {1: 0.0, 2: 1.0}
    assert score.in_context == {0.5: 0.0, 0.8: 0.0}  # the budget ends inside the first memory
    wide = score_points("q", [POINT], ranked, LINEAGE, decoy=[POINT], budget=2000)
    assert wide.in_context[0.8] == 1.0
    assert wide.chance[0.8] == 1.0


def test_a_decoy_is_the_next_question_whose_points_differ() -> None:
    a, b = frozenset({"budget"}), frozenset({"gym"})
    questions = [("q1", frozenset({a})), ("q2", frozenset({a})), ("q3", frozenset({b}))]
    assert point_decoys(questions) == {"q1": 2, "q2": 2, "q3": 0}


# --- the feed and the replay -----------------------------------------------------------------


def test_the_user_speaks_by_name_and_the_assistant_as_the_agent() -> None:
    persona = _persona()
    events = events_of(persona, {})
    writes = [e.payload.memory for e in events if isinstance(e.payload, MemoryWritten)]
    assert (writes[0].created_by, writes[0].speaker) == ("user", "Kenta")
    assert (writes[1].created_by, writes[1].speaker) == ("agent", None)
    assert writes[0].content == persona.turns[0].text
    assert {w.conversation_id for w in writes} == {persona.user_id}
    ends = [e for e in events if isinstance(e.payload, SessionEnded)]
    assert [e.occurred_at for e in ends] == [s.ended_at for s in persona.sessions]
    assert [e.occurred_at for e in events] == sorted(e.occurred_at for e in events)


def test_ticks_come_at_period_boundaries_when_work_is_due() -> None:
    persona = _persona()
    config = EngineConfig(policy=builtin_profile("default"))
    driver = EventTimeDriver(persona.user_id, config)
    for event in events_of(persona, {}):
        driver.feed(event)
    driver.advance(persona.sessions[-1].ended_at + 24 * HOUR)
    period = config.policy.triggers.periodic_seconds * 1000
    last_input = persona.sessions[-1].ended_at
    after = [d for d in driver.run.decisions if d.occurred_at > last_input]
    assert driver.ticks > 0
    assert after  # the maintenance pass of the night after the last session
    assert all(d.occurred_at % period == 0 for d in after)
    assert not driver.run.rejections


def test_active_characters_are_counted_by_the_side_they_come_from() -> None:
    persona = _persona()
    config = EngineConfig(policy=builtin_profile("default"))
    driver = EventTimeDriver(persona.user_id, config)
    for event in events_of(persona, {}):
        driver.feed(event)
    records = driver.recallable()
    side_of = {t.turn_id: t.side for t in persona.turns}
    transcript = transcript_chars(persona)
    assert transcript["total"] == sum(len(prefixed(t)) for t in persona.turns)
    chars = active_chars(records, driver.lineage(), side_of, transcript)
    assert chars["total"] == sum(len(r.memory.content) for r in records)
    assert chars["user"] + chars["assistant"] + chars["both"] + chars["neither"] == chars["total"]
