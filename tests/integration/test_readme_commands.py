"""The README's first command, run as a newcomer runs it: ``make demo`` on a fresh state
directory with default settings (the default MiniLM embedder, the default profile).

The demo waits until the read models hold every ledger event its batch oracle predicts; the
oracle once ran the engine with the hashing embedder while the worker embedded with MiniLM,
so it expected decisions the worker never made and the demo failed on every fresh clone
while the suite stayed green. Only the Kafka jar cache is shared with the rest of the suite,
so nothing is downloaded twice.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def newcomer_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The environment of a shell with no memstream settings, on a state dir of its own;
    whatever the demo leaves running is stopped afterwards, as the README says to."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTREAM_")}
    env["MEMSTREAM_STATE_DIR"] = str(tmp_path / "state")
    try:
        yield env
    finally:
        subprocess.run(
            [str(REPO / ".venv" / "bin" / "memstream"), "down"],
            env=env,
            cwd=REPO,
            capture_output=True,
            timeout=120,
            check=False,
        )


def test_make_demo_on_a_fresh_state_dir(newcomer_env: dict[str, str]) -> None:
    run = subprocess.run(
        ["make", "demo"],
        env=newcomer_env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = run.stdout
    assert run.returncode == 0, f"make demo exited {run.returncode}\n{out}\n{run.stderr}"
    held = re.search(r"the read models hold all (\d+) ledger events the oracle predicts", out)
    assert held and int(held.group(1)) > 0, out
    # the progress line reached the end, not only its start
    assert f"{held.group(1)}/{held.group(1)} ledger events projected" in out, out
    # what reached PostgreSQL: every demo user's layer counts, the ledger's actions, the
    # cycles' reports and the dead letters
    for user in range(1, 6):
        assert re.search(rf"^\s+demo-user-{user}(\s+\d+){{6}}\s*$", out, re.MULTILINE), out
    assert "MemoryForgotten 5" in out, out
    assert re.search(r"demo-user-1\s+processed\s+\d+", out), out
    for reason in ("undecodable", "not_a_number", "embedding_dimension", "unknown_memory"):
        assert re.search(rf"^\s+{reason}\s+1$", out, re.MULTILINE), out
    # recall by meaning: the paraphrased question finds the note-taking memory first
    recall = out.split("recall by meaning", 1)[1].splitlines()
    first = next(line for line in recall[1:] if line.strip())
    assert "Obsidian" in first, out
