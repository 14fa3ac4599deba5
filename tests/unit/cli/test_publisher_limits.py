"""The publisher refuses an event the worker would refuse for its size, before sending it
(no broker: the refusal comes before anything is handed to the producer)."""

from __future__ import annotations

import pytest

from memstream.publisher import EventTooLarge, MemoryPublisher
from streams.config.settings import Settings
from streams.engine.model import MemoryWritten
from streams.engine.validation import MAX_EVENT_BYTES
from streams.kafka import codec


def test_an_event_over_the_worker_limit_is_refused_with_what_to_do_and_nothing_is_queued() -> None:
    # a port nothing listens on: the producer is never reached
    publisher = MemoryPublisher(Settings().with_overrides(kafka_bootstrap="127.0.0.1:9"))
    sent: list[int] = []
    publisher.publish_raw = lambda key, value, *rest: sent.append(len(value))  # type: ignore[method-assign]

    with pytest.raises(EventTooLarge, match=r"write a reference") as refused:
        publisher.write("u-1", "a note", metadata={"blob": "x" * MAX_EVENT_BYTES})

    assert refused.value.size > MAX_EVENT_BYTES
    assert sent == []  # nothing handed to the producer
    publisher.write("u-1", "a note that fits")
    assert len(sent) == 1 and sent[0] <= MAX_EVENT_BYTES


def test_a_write_names_its_speaker_or_leaves_it_to_created_by() -> None:
    """``write(..., speaker=...)`` puts the name on the memory it publishes; without it the
    memory has none, and ``created_by`` says who."""
    publisher = MemoryPublisher(Settings().with_overrides(kafka_bootstrap="127.0.0.1:9"))
    sent: list[bytes] = []
    publisher.publish_raw = lambda key, value, *rest: sent.append(value)  # type: ignore[method-assign]

    publisher.write("u-1", "I went to a support group yesterday.", speaker="Caroline")
    publisher.write("u-1", "Noted.", created_by="agent")

    named, unnamed = (codec.decode_event(value).payload for value in sent)
    assert isinstance(named, MemoryWritten) and isinstance(unnamed, MemoryWritten)
    assert named.memory.speaker == "Caroline"
    assert named.memory.content == "I went to a support group yesterday."
    assert unnamed.memory.speaker is None
    assert unnamed.memory.created_by == "agent"
