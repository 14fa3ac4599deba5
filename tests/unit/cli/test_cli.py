"""The command line's input paths: clear errors and exit codes, nothing half-done.
These run without a broker: each case fails before anything is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstream.cli import main
from streams.config.settings import Settings, SettingsError


@pytest.fixture(autouse=True)
def isolated_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTREAM_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("MEMSTREAM_KAFKA_BOOTSTRAP", "127.0.0.1:1")  # nothing listens


def test_an_unknown_profile_is_refused_before_anything_is_published(capsys):
    code = main(["consolidate", "--user", "u1", "--profile", "lexichrod"])

    assert code == 2
    err = capsys.readouterr().err
    assert "lexichrod" in err
    assert "lexichord" in err  # the known profiles are listed


def test_consolidate_needs_exactly_one_of_user_or_all(capsys):
    assert main(["consolidate"]) == 2
    assert main(["consolidate", "--user", "u1", "--all"]) == 2
    assert "--user U" in capsys.readouterr().err


def test_a_count_beyond_int32_is_reported_with_its_line_number_and_nothing_is_sent(
    tmp_path, capsys
):
    events = tmp_path / "events.jsonl"
    line = {
        "type": "MemoryWritten",
        "user_id": "u1",
        "memory": {"content": "x", "access_count": 2**40},
    }
    events.write_text(json.dumps(line) + "\n")

    code = main(["publish", str(events)])

    assert code == 1
    captured = capsys.readouterr()
    assert f"{events}:1: memory.access_count must be a count" in captured.err
    assert "published 0 event(s)" in captured.out


def test_a_time_beyond_year_9999_is_a_line_error(tmp_path, capsys):
    events = tmp_path / "events.jsonl"
    line = {
        "type": "MemoryWritten",
        "user_id": "u1",
        "occurred_at": 10**16,
        "memory": {"content": "x"},
    }
    events.write_text(json.dumps(line) + "\n")

    assert main(["publish", str(events)]) == 1
    assert "outside 1970..9999" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("MEMSTREAM_PARTITIONS", "0"),
        ("MEMSTREAM_PROJECTOR_BATCH_SIZE", "0"),
        ("MEMSTREAM_EMBEDDING_DIM", "20000"),
        ("MEMSTREAM_RETRY_ATTEMPTS", "0"),
    ],
)
def test_a_setting_outside_its_range_names_the_variable(variable, value):
    with pytest.raises(SettingsError, match=variable):
        Settings.from_env({variable: value})
