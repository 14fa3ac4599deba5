"""The demo's progress line as a log (not a terminal) shows it: a line per quarter crossed."""

from __future__ import annotations

import pytest

from memstream.demo import ProgressBar


def test_a_log_gets_a_line_each_time_another_quarter_is_done(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bar = ProgressBar(373, "ledger events projected")
    bar.tty = False
    for done in (0, 0, 12, 97, 98, 190, 364, 373):
        bar.show(done)
    lines = capsys.readouterr().out.splitlines()
    # 97/373 is 26 %, 190 is 50 %, 364 is 97 %: a poll rarely lands on an exact quarter
    assert [line.split("] ")[1] for line in lines] == [
        "0/373 ledger events projected",
        "97/373 ledger events projected",
        "190/373 ledger events projected",
        "364/373 ledger events projected",
        "373/373 ledger events projected",
    ]


def test_a_terminal_gets_one_rewritten_line(capsys: pytest.CaptureFixture[str]) -> None:
    bar = ProgressBar(4, "done")
    bar.tty = True
    for done in (0, 1, 1, 4):
        bar.show(done)
    bar.finish()
    out = capsys.readouterr().out
    assert out.count("\r") == 3 and out.endswith("4/4 done\n")
