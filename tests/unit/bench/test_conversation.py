"""A conversation file scored by ``python -m bench.recall_quality.conversation``: the loader
reads both shapes (a person with an assistant, people texting) as the engine attributes them
and says what is wrong with a file that is neither; the score asks every question of the raw
turns and of the replayed profile. Pure: the engine's hashing embedder, no model."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from bench.recall_quality.conversation import (
    ALL,
    ConversationError,
    conversation_of,
    load,
    main,
    report,
    score,
)
from bench.recall_quality.realmem import ASSISTANT, USER
from bench.recall_quality.realmem_run import events_of
from streams.engine.embedder import hashing_embedding
from streams.engine.model import MemoryWritten, SessionEnded

WITH_AN_ASSISTANT: dict[str, Any] = {
    "user_name": "Noreen",
    "sessions": [
        {
            "date": "2025-03-04",
            "time": "19:05",
            "turns": [
                {"role": "user", "content": "We got a Jack Russell yesterday, his name is Toby."},
                {"role": "assistant", "content": "Congratulations! Toby is a great name."},
            ],
        },
        {
            "date": "2025-03-10",
            "turns": [{"role": "user", "content": "Toby chewed my good slippers, the rascal."}],
        },
    ],
    "questions": [
        {"question": "What is my dog called?", "answer": "Toby", "category": "single-hop"},
        {"question": "When did I get Toby?", "answer": "3 March 2025", "category": "temporal"},
    ],
}
TEXTING: dict[str, Any] = {
    "speakers": ["Hannah", "Rory"],
    "sessions": [
        {
            "date": "2024-06-02",
            "time": "20:00",
            "turns": [
                {"speaker": "Hannah", "content": "how's work"},
                {"speaker": "Rory", "content": "busy! we're moving everything to playwright"},
                {"speaker": "Rory", "content": "fiona asked me to lead it"},
            ],
        }
    ],
    "questions": [{"question": "Who asked Rory to lead it?", "answer": "Fiona"}],
}


def _embed(texts: Sequence[str]) -> list[bytes]:
    return [hashing_embedding(text) for text in texts]


def test_a_person_with_an_assistant_speaks_by_name_and_the_assistant_as_the_agent() -> None:
    conversation = conversation_of("c", WITH_AN_ASSISTANT)
    first, second = conversation.persona.sessions
    assert conversation.agent and conversation.persona.speaker == "Noreen"
    assert [(t.side, t.speaker) for t in first.turns] == [(USER, "Noreen"), (ASSISTANT, ASSISTANT)]
    assert first.turns[1].at - first.turns[0].at == 60_000  # a minute apart
    assert second.turns[0].at == 1_741_597_200_000  # 2025-03-10 09:00 UTC: the default time
    written = [
        e.payload.memory
        for e in events_of(conversation.persona, {})
        if isinstance(e.payload, MemoryWritten)
    ]
    assert [(m.created_by, m.speaker) for m in written] == [
        ("user", "Noreen"),
        ("agent", None),
        ("user", "Noreen"),
    ]
    ended = [e for e in events_of(conversation.persona, {}) if isinstance(e.payload, SessionEnded)]
    assert [e.occurred_at for e in ended] == [first.ended_at, second.ended_at]


def test_people_texting_each_speak_by_their_own_name() -> None:
    conversation = conversation_of("c", TEXTING)
    written = [
        e.payload.memory
        for e in events_of(conversation.persona, {})
        if isinstance(e.payload, MemoryWritten)
    ]
    assert not conversation.agent
    assert [(m.created_by, m.speaker) for m in written] == [
        ("user", "Hannah"),
        ("user", "Rory"),
        ("user", "Rory"),
    ]
    assert conversation.questions[0].category == "-"  # none given


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"speakers": ["A", "B"]}, "either user_name"),
        ({"user_name": ""}, "non-empty text"),
        ({"sessions": []}, "no sessions"),
        ({"sessions": "none"}, "c: sessions must be a list"),
        ({"sessions": [{"date": "4 March", "turns": []}]}, "date YYYY-MM-DD"),
        (
            {"sessions": [{"date": "2025-03-04", "turns": [{"role": "bot", "content": "hi"}]}]},
            "role is user or assistant",
        ),
        ({"sessions": [{"date": "2025-03-04", "turns": [{"role": "user"}]}]}, "turn 1: no content"),
        ({"questions": [{"question": "Why?"}]}, "question 1 needs question and answer"),
    ],
)
def test_a_file_of_another_shape_says_what_is_wrong_and_where(
    change: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConversationError, match=message):
        conversation_of("c", {**WITH_AN_ASSISTANT, **change})


def test_sessions_out_of_time_order_and_unknown_speakers_are_refused() -> None:
    backwards = {**WITH_AN_ASSISTANT, "sessions": WITH_AN_ASSISTANT["sessions"][::-1]}
    with pytest.raises(ConversationError, match="not in time order"):
        conversation_of("c", backwards)
    stranger = json.loads(json.dumps(TEXTING))
    stranger["sessions"][0]["turns"][0]["speaker"] = "Fiona"
    with pytest.raises(ConversationError, match="'Fiona' is not in speakers"):
        conversation_of("c", stranger)
    with pytest.raises(ConversationError, match="not an object"):
        conversation_of("c", [])


def test_every_question_is_asked_of_the_raw_turns_and_of_the_profile() -> None:
    """The temporal answer is a date in words: no raw turn says it, the dated memory does."""
    result = score(conversation_of("c", WITH_AN_ASSISTANT), _embed, _embed)
    assert result.answered[ALL] == (2, 1, 2)
    assert result.answered["temporal"] == (1, 0, 1)
    assert [(q.answer, raw, kept) for q, raw, kept in result.per_question] == [
        ("Toby", True, True),
        ("3 March 2025", False, True),
    ]
    assert result.transcript_chars == sum(
        len(t["content"]) for s in WITH_AN_ASSISTANT["sessions"] for t in s["turns"]
    )
    table = report("c.json", result, "default")
    assert "| all | 2 | 0.50 | 1.00 |" in table and "| temporal | 1 | 0.00 | 1.00 |" in table


def test_the_command_names_the_file_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert main([str(broken)]) == 2
    assert "broken.json: cannot read it as UTF-8 JSON" in capsys.readouterr().err
    with pytest.raises(ConversationError, match="no sessions"):
        load(_written(tmp_path, {**TEXTING, "sessions": []}))


def _written(directory: Path, data: dict[str, Any]) -> Path:
    path = directory / "c.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
