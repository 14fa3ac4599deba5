"""Seed 004's semantic summary: many episodes → ONE third-person summary that forgets nothing.

Separate from :mod:`.narrative` only to keep each writer readable; import it from there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from streams.engine.text.facts import fact_terms
from streams.engine.text.observation import digest_header, people_named
from streams.engine.text.prose import (
    deduplicated,
    grouped,
    join_sentences,
    reported,
    sentences,
    speaker_of,
    split_reports,
    with_missing_lines,
)

__all__ = ["write_summary"]

_HEADER = re.compile(r"^Session of ([0-9]+ turns?): (?:topics .*|no named topics\.)$")
_EPISODES = re.compile(r"^Episodes of (.+)\.$")
_ARC = re.compile(r"^Emotional arcs?: (.+)\.$")
_OPEN = re.compile(r"^(?:Unresolved|Open items): (.+)$")
_THREAD_BREAK = " | "
_SESSIONS = re.compile(
    r"^Sessions of (?P<who>.+?) (?:from (?P<first>.+?) to (?P<last>.+?)|on (?P<day>.+?))\.$"
)


def write_summary(texts: Sequence[str], chunk_size: int = 10) -> str:
    """ONE semantic summary of ``texts`` (narratives, or any memories) in the third person.

    Map-reduce when there are more than ``chunk_size`` texts: each chunk is summarised, then
    the chunk summaries are (recursively), so no step reads more than ``chunk_size`` texts and
    each step keeps the terms of what it reads. Statements repeated across texts are kept once
    (see :func:`~.prose.deduplicated`: one that another states in full goes); consecutive
    statements of one speaker share one "The user said a; b; c.". An open question whose fact
    terms the statements state is answered and dropped; other open items stay. Every fact term
    of ``texts`` is kept, but for a session digest's header ("2 April 2025, Niamh and the agent:
    corolla, car, dealer."): its session's observations carry its day, people and topics, and
    ten such lines, naming the person ten times, were a third of most questions' context in a
    conversation with an assistant while answering none (issue 38, conversation 15). A summary
    of digests alone says whose sessions and when ("Sessions of Niamh and the agent from 4
    March 2025 to 2 April 2025.").

    Layout: the statements as one paragraph, then "Open items: … | …", "Episodes of 24 turns,
    …" and "Emotional arcs: …; …" lines, gathered from the narratives' own lines.
    """
    if chunk_size < 2:
        raise ValueError(f"chunk_size must be at least 2, not {chunk_size}")
    return _summary(list(texts), chunk_size, digests=True)


def _summary(texts: list[str], chunk_size: int, *, digests: bool) -> str:
    """:func:`write_summary`; ``digests``: whether a line may be a session digest's header.
    A summary of summaries reads none: the summaries leave headers out (their sessions'
    span is a "Sessions of" line), so a line shaped like one is a statement that a summary
    ended with a full stop ("14 March 2026, Alice" became "14 March 2026, Alice.", and then
    a header, and was lost)."""
    if len(texts) > chunk_size:
        partial = [
            _summary(texts[start : start + chunk_size], chunk_size, digests=digests)
            for start in range(0, len(texts), chunk_size)
        ]
        return _summary(partial, chunk_size, digests=False)
    parts = _Parts(digests)
    for text in texts:
        for line in text.split("\n"):
            parts.read(line.strip())
    statements = grouped(deduplicated(parts.statements))
    stated: set[str] = set()
    for statement in statements:
        stated |= fact_terms(statement)
    threads = [
        thread
        for thread in dict.fromkeys(parts.threads)
        if not (thread.endswith("?") and fact_terms(thread) and fact_terms(thread) <= stated)
    ]
    lines = [join_sentences(statements)]
    if threads:
        lines.append("Open items: " + _THREAD_BREAK.join(threads))
    if parts.episodes:
        lines.append("Episodes of " + ", ".join(dict.fromkeys(parts.episodes)) + ".")
    if parts.arcs:
        lines.append("Emotional arcs: " + "; ".join(dict.fromkeys(parts.arcs)) + ".")
    if not any(lines):  # sessions whose observations carry every fact: when, and whose
        for who, first, last in parts.sessions.values():
            when = f"on {first}" if first == last else f"from {first} to {last}"
            lines.append(f"Sessions of {who} {when}.")
    content = "\n".join(line for line in lines if line)
    sources = [
        "\n".join(line for line in text.split("\n") if line.strip() not in parts.carried)
        for text in texts
    ]
    return with_missing_lines(content, [(None, text) for text in sources])


class _Parts:
    """Input lines sorted into statements, open threads, episode sizes and arcs."""

    def __init__(self, digests: bool = True) -> None:
        self.digests = digests  # whether a line may be a session digest's header
        self.statements: list[str] = []
        self.threads: list[str] = []
        self.episodes: list[str] = []
        self.arcs: list[str] = []
        # the people (as first named) → first and last day; keyed by who they are, not by
        # who spoke first ("Niamh and Ciaran", "Ciaran and Niamh")
        self.sessions: dict[frozenset[str], tuple[str, str, str]] = {}
        # the digest headers read, and the spans a summary wrote of them: the sessions'
        # observations carry their terms, which the summary need not keep
        self.carried: set[str] = set()

    def read(self, line: str) -> None:
        if not line:
            return
        if self.digests and (digest := digest_header(line)) is not None:
            self._spans(line, digest[2], digest[0], digest[1])
        elif span := _SESSIONS.match(line):
            day = span["day"]
            self._spans(line, span["who"], span["first"] or day, span["last"] or day)
        elif header := _HEADER.match(line):
            self.episodes.append(header.group(1))  # its topics are stated again in the turns
        elif sizes := _EPISODES.match(line):
            self.episodes.extend(size.strip() for size in sizes.group(1).split(", "))
        elif arc := _ARC.match(line):
            self.arcs.extend(part.strip() for part in arc.group(1).split("; "))
        elif open_line := _OPEN.match(line):
            for thread in open_line.group(1).split(_THREAD_BREAK):
                speaker, body = speaker_of(thread.strip())
                said = [reported(sentence, speaker) for sentence in sentences(body)]
                if said:
                    self.threads.append(join_sentences(said))
        else:
            speaker, body = speaker_of(line)
            for sentence in sentences(body):
                self.statements.extend(split_reports(reported(sentence, speaker)))

    def _spans(self, line: str, who: str, first: str, last: str) -> None:
        """The sessions of ``who`` now span to ``last`` (episodes come in time order)."""
        self.carried.add(line)
        people = people_named(who)
        known = self.sessions.get(people)
        self.sessions[people] = (known[0], known[1], last) if known else (who, first, last)
