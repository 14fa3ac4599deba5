"""Statements that say something changed: "standup moved to 9:15", "Kai took over as team
lead", "we're in Lisbon now".

Two places read this cue. The contradictions rule also judges such a statement against what
the same speaker said that is only loosely alike (an update shares fewer words with what it
updates than a restatement does). Recall puts such a statement ahead of an older, alike
statement of the same speaker that the judge did not find it contradicts
(``projections.recall_order``): people state changes in more ways than the judge reads, and
the newer statement is the one a question about the present needs.

A cue, not a verdict: "now" also says "I'm reading Dune now". Neither reader archives or
invalidates anything on the cue alone.
"""

from __future__ import annotations

import re

_STATED_CHANGE = re.compile(
    r"\b(?:now|anymore|no longer|moved|switched|slipped|pushed back|took over|changed|"
    r"update|correction|actually|these days|as of|starting)\b",
    re.IGNORECASE,
)


def states_a_change(text: str) -> bool:
    """Whether ``text`` says, in words, that something is different from before."""
    return _STATED_CHANGE.search(text) is not None
