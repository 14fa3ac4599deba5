"""The recall-quality benchmark's corpus generator and scoring (bench/recall_quality/):
the corpus looks like long real conversations and its questions follow from its records; the
scoring counts answers, evidence and stale values as documented. Pure and fast: no model, no
database, no engine replay."""

from __future__ import annotations

import json
import re
import statistics
import uuid
from datetime import date
from functools import cache
from pathlib import Path

import pytest

from bench.recall_quality import corpus as corpus_module
from bench.recall_quality.corpus import Corpus, generate
from bench.recall_quality.feed import events_of, prefixed
from bench.recall_quality.report import targets, to_json
from bench.recall_quality.scoring import (
    Lineage,
    Ranked,
    answer_in_context,
    content_words,
    context,
    decoys,
    evidence_found,
    evidence_recall,
    score_question,
    stale_first,
)
from bench.recall_quality.systems import is_recallable, ledger_links, lineage_of, raw_system
from bench.recall_quality.when import future_expressions, ordinal, past_expressions, stated_date
from streams.engine import ledger
from streams.engine.model import (
    ConsolidationRequested,
    Memory,
    MemoryWritten,
    SessionEnded,
)
from streams.engine.user_state import MemoryRecord
from streams.engine.validation import Limits, validate_event

PACKAGE = Path(__file__).resolve().parents[3] / "bench" / "recall_quality"


@cache
def five() -> Corpus:
    return generate(5, 7)


def gold_words_in(text: str, gold: str) -> bool:
    return content_words(gold) <= content_words(text)


# --- the corpus looks like long two-person conversations ---------------------------------


def test_the_same_seed_gives_the_same_corpus_and_another_seed_another() -> None:
    """Given two runs with one seed and one with another, then the first two agree turn for
    turn and question for question, and the third differs."""
    one, again, other = generate(2, 11), generate(2, 11), generate(2, 12)

    assert [t.text for t in one.turns] == [t.text for t in again.turns]
    assert one.questions == again.questions
    assert [t.text for t in one.turns] != [t.text for t in other.turns]


def test_five_conversations_hold_300_questions_of_every_kind() -> None:
    questions = five().questions

    assert len(questions) >= 300
    assert {q.kind for q in questions} == {"single_hop", "multi_hop", "temporal", "update"}
    assert len({q.question_id for q in questions}) == len(questions)


def test_conversations_are_two_named_speakers_over_20_sessions_days_apart() -> None:
    for conversation in five().conversations:
        assert len(set(conversation.speakers)) == 2
        assert len(conversation.sessions) >= 20
        days = [s.day for s in conversation.sessions]
        gaps = [(b - a).days for a, b in zip(days, days[1:], strict=False)]
        assert all(3 <= gap <= 14 for gap in gaps)
        assert days[0].year == 2023
        for session in conversation.sessions:
            assert 18 <= len(session.turns) <= 32
            speakers = [t.speaker for t in session.turns]
            assert all(a != b for a, b in zip(speakers, speakers[1:], strict=False))
            times = [t.at for t in session.turns]
            assert all(50_000 <= b - a <= 70_000 for a, b in zip(times, times[1:], strict=False))
    names = {n for c in five().conversations for n in c.speakers}
    assert len(names) >= 8


def test_turns_are_about_130_characters_of_1_to_3_sentences_40_percent_phatic() -> None:
    turns = five().turns
    fragments = [f for t in turns for f in t.fragments]

    assert 95 <= statistics.mean(len(t.text) for t in turns) <= 160
    assert all(1 <= len(t.fragments) <= 3 for t in turns)
    assert 0.3 <= sum(f.phatic for f in fragments) / len(fragments) <= 0.5


def test_facts_are_stated_in_lower_case_and_phatic_talk_names_the_listener() -> None:
    turns = five().turns
    facts = [f.text for t in turns for f in t.fragments if f.role == "fact"]
    lower = sum(1 for text in facts if text[0].islower())
    vocatives = [
        t
        for c in five().conversations
        for t in c.turns
        for f in t.fragments
        if f.phatic and any(n.split()[0] in f.text for n in c.speakers if n != t.speaker)
    ]

    assert lower / len(facts) >= 0.8
    assert len(vocatives) >= 100


def test_at_least_15_percent_of_fact_turns_carry_a_relative_date() -> None:
    facts = five().facts
    fact_turns = {f.turn_id for f in facts}
    relative = {f.turn_id for f in facts if f.relative}
    turn_text = {t.turn_id: t.text for t in five().turns}

    assert len(relative) / len(fact_turns) >= 0.15
    for fact in facts:
        if fact.relative:
            assert fact.when and fact.when in turn_text[fact.turn_id]


def test_third_parties_are_introduced_by_relation_and_name() -> None:
    introduced = [f for f in five().facts if f.attribute == "relation"]
    turn_text = {t.turn_id: t.text for t in five().turns}

    assert introduced
    for fact in introduced:
        assert f"my {fact.value} {fact.subject}" in turn_text[fact.turn_id]


def test_some_facts_answer_the_other_speakers_question_in_the_next_turn() -> None:
    answered = 0
    for conversation in five().conversations:
        for session in conversation.sessions:
            for asked, answer in zip(session.turns, session.turns[1:], strict=False):
                if asked.text.endswith("?") and asked.phatic and not answer.phatic:
                    answered += 1
    assert answered >= 50


# --- questions follow from the records -----------------------------------------------------


def test_every_gold_answer_except_a_date_is_in_its_evidence_turns_words() -> None:
    """Given the questions, then each evidence turn belongs to the question's conversation
    and, except for temporal ones, the gold answer's words are in the evidence turns."""
    for conversation in five().conversations:
        turns = {t.turn_id: t for t in conversation.turns}
        for question in conversation.questions:
            assert question.evidence and all(t in turns for t in question.evidence)
            if question.kind != "temporal":
                text = " ".join(turns[t].text for t in question.evidence)
                assert gold_words_in(text, question.gold), question


def test_a_relative_temporal_answer_is_not_written_in_its_turn() -> None:
    """The absolute date must be worked out from the turn's day: "yesterday" never says
    "7 May 2023"."""
    facts = {f.fact_id: f for f in five().facts}
    turns = {t.turn_id: t for t in five().turns}
    relative = [q for q in five().questions if q.kind == "temporal" and facts[q.facts[0]].relative]

    assert len(relative) >= 80
    for question in relative:
        assert not gold_words_in(turns[question.evidence[0]].text, question.gold)


def test_questions_are_paraphrases_not_copies_of_their_turns() -> None:
    turns = {t.turn_id: t for t in five().turns}
    overlaps = []
    for question in five().questions:
        names = {w for c in five().conversations for n in c.speakers for w in content_words(n)}
        asked = content_words(question.text) - names
        said = frozenset().union(*(content_words(turns[t].text) for t in question.evidence))
        assert question.text.lower() not in " ".join(
            turns[t].text.lower() for t in question.evidence
        )
        assert asked - said, question  # at least one word of its own
        overlaps.append(len(asked & said) / len(asked))
    assert statistics.mean(overlaps) <= 0.5


def test_no_two_asked_about_facts_of_a_conversation_share_a_value() -> None:
    """A question has one right answer: its value is stated once (and a correction's new
    value differs from the old)."""
    for conversation in five().conversations:
        facts = {f.fact_id: f for f in conversation.facts}
        asked = {fid for q in conversation.questions for fid in q.facts}
        per_speaker = ("club", "standup")  # weekdays and times: drawn per speaker
        values = [
            (
                facts[f].attribute,
                facts[f].value,
                facts[f].subject * (facts[f].attribute in per_speaker),
            )
            for f in asked
            if facts[f].attribute not in ("event", "relation")
        ]
        assert len(values) == len(set(values))


def test_multi_hop_questions_need_turns_from_two_sessions() -> None:
    turns = {t.turn_id: t for t in five().turns}
    for question in five().questions:
        if question.kind == "multi_hop":
            assert len({turns[t].session_id for t in question.evidence}) == 2


def test_an_update_question_asks_for_the_value_that_corrected_an_earlier_one() -> None:
    facts = {f.fact_id: f for f in five().facts}
    turns = {t.turn_id: t for t in five().turns}
    for question in five().questions:
        if question.kind != "update":
            continue
        fact = facts[question.facts[0]]
        corrected = facts[fact.corrects or ""]
        assert question.stale == corrected.value != question.gold
        assert turns[corrected.turn_id].session_index < turns[fact.turn_id].session_index


def test_the_corpus_modules_never_import_the_engines_text_or_judge() -> None:
    pattern = re.compile(r"^\s*(from|import)\s+streams\.engine\.(text|judge)\b", re.M)
    sources = sorted(PACKAGE.glob("*.py"))

    assert sources
    for path in sources:
        assert not pattern.search(path.read_text()), path


# --- relative dates -----------------------------------------------------------------------

WEDNESDAY = date(2023, 5, 10)


def said(today: date, phrase: str, future: bool = False) -> str:
    options = future_expressions(today) if future else past_expressions(today, long_ago=True)
    [found] = [w for w in options if w.phrase == phrase]
    return found.gold


@pytest.mark.parametrize(
    ("today", "phrase", "future", "gold"),
    [
        (WEDNESDAY, "yesterday", False, "9 May 2023"),
        (date(2023, 1, 1), "yesterday", False, "31 December 2022"),
        (date(2023, 3, 1), "yesterday", False, "28 February 2023"),
        (WEDNESDAY, "last Fri", False, "5 May 2023"),
        (WEDNESDAY, "last Friday", False, "5 May 2023"),
        (WEDNESDAY, "last Sun", False, "7 May 2023"),
        (date(2023, 5, 8), "last weekend", False, "6 May 2023"),
        (WEDNESDAY, "two weeks ago", False, "26 April 2023"),
        (date(2023, 1, 3), "three days ago", False, "31 December 2022"),
        (date(2023, 1, 20), "last month", False, "December 2022"),
        (date(2023, 3, 20), "last summer", False, "summer 2022"),
        (WEDNESDAY, "last year", False, "2022"),
        (date(2023, 12, 31), "tomorrow", True, "1 January 2024"),
        (date(2023, 5, 11), "this weekend", True, "13 May 2023"),
        (date(2023, 12, 5), "next month", True, "January 2024"),
        (WEDNESDAY, "last night", False, "9 May 2023"),
        (WEDNESDAY, "earlier today", False, "10 May 2023"),
        (date(2023, 3, 1), "the day before yesterday", False, "27 February 2023"),
        (WEDNESDAY, "three weeks ago", False, "19 April 2023"),
        (WEDNESDAY, "earlier this month", False, "May 2023"),
        (date(2023, 2, 27), "the day after tomorrow", True, "1 March 2023"),
        (date(2023, 12, 20), "in two weeks", True, "3 January 2024"),
        (WEDNESDAY, "this Sat", True, "13 May 2023"),
        (WEDNESDAY, "later this month", True, "May 2023"),
    ],
)
def test_a_relative_expression_means_an_absolute_date_on_the_day_it_is_said(
    today: date, phrase: str, future: bool, gold: str
) -> None:
    assert said(today, phrase, future) == gold


def test_only_unambiguous_expressions_are_offered() -> None:
    """Said on a Wednesday, "last Mon" could mean two days or nine days ago; "this weekend" on a
    Saturday today or next week, "last summer" in July this one or last year's."""
    phrases = {w.phrase for w in past_expressions(WEDNESDAY, long_ago=True)}
    saturday = {w.phrase for w in future_expressions(date(2023, 5, 13))}
    july = {w.phrase for w in past_expressions(date(2023, 7, 3), long_ago=True)}

    assert "last Mon" not in phrases and "last Tuesday" not in phrases
    assert "last Thu" in phrases
    assert "this weekend" not in saturday
    assert "last summer" not in july


def test_a_date_named_outright_is_said_with_an_ordinal_and_without_its_year() -> None:
    when = stated_date(WEDNESDAY, 24)

    assert when.phrase == "on June 3rd" and when.gold == "3 June 2023" and not when.relative
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "31st",
    ]  # fmt: skip


# --- memstream input -----------------------------------------------------------------------


def test_each_turn_is_a_valid_memory_written_by_the_user_with_its_speaker() -> None:
    corpus = generate(1, 3)
    events = events_of(corpus, "speaker")
    conversation = corpus.conversations[0]
    written = [(e, e.payload) for e in events if isinstance(e.payload, MemoryWritten)]
    ended = [e.payload for e in events if isinstance(e.payload, SessionEnded)]

    assert [p.memory.memory_id for _, p in written] == [t.turn_id for t in corpus.turns]
    for (event, payload), turn in zip(written, corpus.turns, strict=True):
        memory = payload.memory
        assert memory.content == turn.text and memory.speaker == turn.speaker
        assert memory.created_by == "user" and memory.user_id == conversation.user_id
        assert memory.session_id == turn.session_id and memory.created_at == event.occurred_at
    assert [p.session_id for p in ended] == [s.session_id for s in conversation.sessions]
    assert isinstance(events[-1].payload, ConsolidationRequested)
    assert events[-1].payload.conversation_id is None
    assert [e.occurred_at for e in events] == sorted(e.occurred_at for e in events)
    assert len({e.event_id for e in events}) == len(events)
    assert all(uuid.UUID(e.event_id) for e in events)
    assert all(validate_event(e, Limits()) is None for e in events)


def test_the_prefixed_style_writes_name_colon_text_and_no_speaker() -> None:
    corpus = generate(1, 3)
    events = events_of(corpus, "prefixed")
    written = [e.payload.memory for e in events if isinstance(e.payload, MemoryWritten)]

    assert all(m.speaker is None for m in written)
    assert [m.content for m in written] == [prefixed(t) for t in corpus.turns]
    assert written[0].content.startswith(f"{corpus.turns[0].speaker}: ")


def test_raw_retrieval_keeps_every_turn_as_name_colon_text() -> None:
    corpus = generate(1, 3)
    vectors = {t.turn_id: b"\x00" * 1536 for t in corpus.turns}
    raw = raw_system(corpus, vectors)

    assert [m.content for m in raw.all_memories] == [prefixed(t) for t in corpus.turns]
    assert len(raw.ledger) == len(corpus.turns)


# --- scoring -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "Caroline went to the LGBTQ support group",
            {"caroline", "went", "lgbtq", "support", "group"},
        ),
        ("on May 7th, 2023", {"may", "7", "2023"}),
        ("2023-05-07", {"7", "may", "2023"}),
        ("standup is at 9:30 now", {"standup", "9", "30"}),
        ("book club on Thursdays", {"book", "club", "thursday"}),
        ("two classes, strawberries and buses", {"two", "class", "strawberry", "bus"}),
        ("Mel's sister's tomatoes", {"mel", "sister", "tomato"}),
        ("the 03rd of June", {"3", "june"}),
    ],
)
def test_content_words_keep_months_numbers_and_names_and_drop_stop_words(
    text: str, words: set[str]
) -> None:
    assert content_words(text) == words


@pytest.mark.parametrize(
    ("pieces", "held"),
    [
        (["Caroline, 8 May 2023: went to a support group (7 May 2023)"], True),
        (["she went on May 7th, 2023"], True),
        (["2023-05-07: support group"], True),
        (["went to a support group on 7 May"], False),  # 2 of 3 words: under 80 %
        (["7 May", "2023 was a year"], True),  # the context is read as a whole
    ],
)
def test_an_answer_is_in_context_when_80_percent_of_its_words_are(
    pieces: list[str], held: bool
) -> None:
    assert answer_in_context("7 May 2023", pieces) is held


def test_the_context_takes_memories_in_rank_order_up_to_the_budget_cutting_the_last() -> None:
    assert context(["a" * 10, "b" * 10, "c" * 10], 15) == ["a" * 10, "bbbb"]
    assert context(["a" * 10, "b" * 10], 21) == ["a" * 10, "b" * 10]
    assert context(["a" * 10, "b" * 10], 10) == ["a" * 10]


TURN = "turn-1"
KEY = content_words("i've been going to a pottery class on tuesdays")


def test_evidence_is_found_in_the_turn_itself_or_a_short_derived_memory_keeping_its_words() -> None:
    lineage = Lineage({"obs": {TURN}, "narrative": {"obs"}, "other": {"turn-2"}})
    observation = Ranked("obs", "Mel, 9 May 2023: goes to a pottery class on Tuesdays")
    narrative = Ranked("narrative", "Mel goes to pottery class on Tuesdays. " * 50)

    assert evidence_found(
        TURN, KEY, Ranked(TURN, "i've been going to a pottery class"), Lineage({})
    )
    assert evidence_found(TURN, KEY, observation, lineage)
    assert evidence_found(TURN, KEY, Ranked("narrative", "Pottery class on tuesdays."), lineage)
    assert not evidence_found(TURN, KEY, narrative, lineage)  # over 1,500 characters
    assert not evidence_found(TURN, KEY, Ranked("obs", "Mel, 9 May 2023: likes clay"), lineage)
    assert not evidence_found(TURN, KEY, Ranked("other", observation.content), lineage)


def test_evidence_recall_is_the_share_of_evidence_turns_carried_by_the_top() -> None:
    evidence = {TURN: KEY, "turn-2": content_words("my sister Ana moved to Leeds")}
    top = [Ranked(TURN, "pottery class on tuesdays"), Ranked("x", "nothing")]

    assert evidence_recall(evidence, top, Lineage({})) == 0.5
    assert evidence_recall(evidence, [], Lineage({})) == 0.0


def test_lineage_is_followed_transitively_and_survives_cycles() -> None:
    lineage = Lineage({"summary": {"narrative"}, "narrative": {"a", "b"}, "a": {"summary"}})

    assert lineage.origins("summary") == {"narrative", "a", "b"}
    assert lineage.origins("b") == frozenset()


def test_a_stale_value_counts_when_it_comes_before_the_current_one() -> None:
    assert stale_first("Leeds", "Bristol", ["we live in Bristol", "we moved to Leeds"])
    assert not stale_first("Leeds", "Bristol", ["moved from Bristol to Leeds", "Bristol"])
    assert not stale_first("Leeds", "Bristol", ["Leeds", "Bristol"])
    assert not stale_first("Leeds", "Bristol", ["nothing"])


def test_a_question_is_scored_at_both_budgets_and_both_depths() -> None:
    ranked = [Ranked(f"m{i}", "x" * 300) for i in range(10)] + [Ranked(TURN, "Leeds now")]

    score = score_question("q", "update", "Leeds", "Bristol", {TURN: KEY}, ranked, Lineage({}))

    assert score.answer_in_context == {2_000: False, 7_000: True}
    assert score.evidence_recall == {5: 0.0, 10: 0.0}
    assert score.stale_first is False
    assert score.chance == {2_000: False, 7_000: False}  # no decoy given


def test_chance_is_a_decoy_answer_found_in_the_same_context() -> None:
    """Given a context of dated memories, then another event's date is "in context" too
    when its words are scattered over several memories: that is the chance level."""
    ranked = [Ranked("a", "3 May 2023: went hiking"), Ranked("b", "7 June 2023: a picnic")]

    score = score_question(
        "q", "temporal", "3 May 2023", None, {}, ranked, Lineage({}), "7 May 2023"
    )

    assert score.answer_in_context[2_000] and score.chance[2_000]


def test_a_decoy_is_another_gold_of_the_same_conversation_and_kind() -> None:
    questions = [
        ("q1", "c1", "temporal", "7 May 2023"),
        ("q2", "c1", "single_hop", "pottery"),
        ("q3", "c1", "temporal", "9 May 2023"),
        ("q4", "c2", "temporal", "1 June 2023"),
        ("q5", "c1", "temporal", "7 may 2023"),
    ]

    assert decoys(questions) == {"q1": "9 May 2023", "q3": "7 may 2023", "q5": "9 May 2023"}


# --- what the systems keep and how lineage is read -------------------------------------------


def memory(memory_id: str, **changes: object) -> Memory:
    return Memory(memory_id, "u", f"content of {memory_id}").evolve(**changes)


def test_only_active_not_invalidated_unforgotten_records_are_recalled() -> None:
    assert is_recallable(MemoryRecord(memory("a"), 1))
    assert not is_recallable(MemoryRecord(memory("b", status="archived"), 2))
    assert not is_recallable(MemoryRecord(memory("c", invalid_at=5), 2))
    assert not is_recallable(MemoryRecord(memory("d"), 2, forgotten=True))


def test_lineage_comes_from_metadata_keys_and_from_the_ledgers_links() -> None:
    records = [
        MemoryRecord(memory("obs", metadata={"derived_from": "t1,t2"}), 1),
        MemoryRecord(memory("sum", metadata={"source_episode_ids": "obs"}), 1),
    ]
    decisions = [
        ledger.ConsolidationEvent(
            "e1", "u", 1, "c", ledger.EpisodesSummarized(memory("digest"), 1, ("t3", "t4"))
        ),
        ledger.ConsolidationEvent(
            "e2", "u", 1, "c", ledger.MemoryArchived("t5", "working", 2, "x", carried_by="digest")
        ),
    ]

    lineage = lineage_of(records, decisions)

    assert lineage.origins("sum") == {"obs", "t1", "t2"}
    assert lineage.origins("digest") == {"t3", "t4", "t5"}
    assert ("digest", "t3", "derived_from") in ledger_links(decisions)


def test_the_generator_is_seeded_and_reads_no_clock() -> None:
    source = Path(corpus_module.__file__).read_text()

    assert "random.Random" not in source or "Random(seed)" in source
    assert "datetime.now" not in source and "time.time" not in source


# --- the report's targets (issue 30, "Done when" 1) ------------------------------------------


def figures(answer: float, temporal: float, evidence: float) -> dict[str, object]:
    overall = {"answer_in_context@2000": answer, "evidence_recall@5": evidence}
    return {
        "overall": overall,
        "by_question_kind": {"temporal": {"answer_in_context@2000": temporal}},
    }


def test_the_targets_compare_default_with_raw_retrieval_by_plain_cosine() -> None:
    systems = {
        "raw": {"rankings": {"cosine": figures(0.34, 0.0, 0.30)}, "chars_ratio": 1.0},
        "default": {
            "rankings": {"cosine": figures(0.45, 0.61, 0.59), "recall": figures(0.5, 0.7, 0.6)},
            "chars_ratio": 0.3,
        },
    }

    checks = [(t["value"], t["met"]) for t in targets(systems)]

    assert checks == [(0.45, True), (0.61, True), (0.59, False), (0.3, True), (0.5, True)]
    assert targets({"raw": systems["raw"]}) == []


def test_the_json_results_read_back_unchanged_with_number_lists_on_one_line() -> None:
    data = {"scores": {"cosine": [1, 0, 0.5, -2]}, "ids": ["q1", "q2"], "n": 3}

    text = to_json(data)

    assert json.loads(text) == data
    assert '"cosine": [1, 0, 0.5, -2]' in text
