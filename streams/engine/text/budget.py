"""Keeping a consolidated memory within the contract's content limit.

A narrative, summary or profile is written to the ledger as one Kafka record (and to the
state changelog as another). Written from many memories, its text grows with them: a
summary of 1,000 episodes of twelve fact-laden sentences each kept every fact term in 1 MB,
more than the broker takes in one record. The broker refuses such a record, the worker cannot
commit the input that made it (``streams.transactional_output``), and every restart would
stop on the same input again: one large consolidation would stall its partition for good.

So a consolidated memory holds at most the limit the contract sets on any memory's content
(``Limits.max_content_bytes``), as a memory a service writes does; what does not fit is left
to another memory, never cut from one:

* :func:`fitting_groups` splits the sources into consecutive groups, each written as one
  memory (summaries: each episode is still carried by a summary that keeps its facts);
* :func:`largest_fitting` takes the most sources, in the caller's order, whose text fits
  (narratives and the profile: the sources left out stay live and keep their facts).

Both write the whole text first, so a memory that fits (every one, in practice) costs what it
did; only one that does not is written again, from fewer sources. A single source's text is
taken whatever its size: it derives from one memory the contract admitted, and the worker's
setting bounds that (``memstream.settings``) so that it fits a record.

The text is not all that grows with the sources. A consolidated memory lists the ids of what
it derives from, in its metadata and again in its ledger payload: a pattern over 3,000 alike
facts made a 224 KB ledger record, and 20,000 occurrences of one event type in a procedure's
window would list 740 KB. So the sources a memory lists are bounded too
(:data:`LISTED_IDS_BYTES`, :func:`listed_prefix`; both functions above take the ids of a
group as a second measure of fit), and so are the unions of tags or trigger conditions a
memory gathers from its sources (:func:`bounded_union`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

__all__ = [
    "LISTED_IDS_BYTES",
    "UNION_BYTES",
    "bounded_union",
    "content_bytes",
    "fitting_groups",
    "largest_fitting",
    "json_bytes",
    "listed_bytes",
    "listed_prefix",
    "listed_tail",
]

T = TypeVar("T")

LISTED_IDS_BYTES = 65_536
"""The most a consolidated memory's list of source ids takes, joined by commas in a JSON
string (~1,700 UUIDs). A record lists them at most twice (metadata and payload) beside content
of at most 131,072 bytes (six times that in JSON, escaped), so every record stays within the
worker's 900,000-byte bound (``streams.engine.validation.MAX_EVENT_BYTES``)."""

UNION_BYTES = 16_384
"""The most a memory's tags (or trigger conditions) gathered from many sources take."""


def listed_bytes(items: Iterable[str]) -> int:
    """The bytes ``items`` take joined by commas in a JSON string, escapes included."""
    total = -1
    for item in items:
        total += json_bytes(item) + 1
    return max(0, total)


def listed_prefix(items: Sequence[str], limit: int = LISTED_IDS_BYTES) -> int:
    """How many of the first ``items`` can be listed within ``limit`` bytes (at least one)."""
    total = -1
    for count, item in enumerate(items):
        total += json_bytes(item) + 1
        if total > limit:
            return max(1, count)
    return len(items)


def listed_tail(items: Sequence[T], id_of: Callable[[T], str]) -> Sequence[T]:
    """The last (newest) of ``items`` whose ids can be listed within
    :data:`LISTED_IDS_BYTES`: all of them when they fit, at least one."""
    newest_first = [id_of(item) for item in reversed(items)]
    return items[len(items) - listed_prefix(newest_first) :]


def bounded_union(groups: Iterable[Iterable[str]], limit: int = UNION_BYTES) -> tuple[str, ...]:
    """The sorted union of ``groups``; when it would take more than ``limit`` bytes listed,
    the values most of the groups hold that fit (ties by value)."""
    counts = Counter(value for group in groups for value in set(group))
    union = sorted(counts)
    if listed_bytes(union) <= limit:
        return tuple(union)
    by_use = sorted(union, key=lambda value: (-counts[value], value))
    return tuple(sorted(by_use[: listed_prefix(by_use, limit)]))


def json_bytes(text: str) -> int:
    """The UTF-8 bytes ``text`` takes inside a JSON string, escapes included."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return len(text)
    return len(json.dumps(text, ensure_ascii=False).encode()) - 2


def content_bytes(text: str) -> int:
    """The size the contract limits: UTF-8 bytes, as validation measures an input's."""
    return len(text.encode("utf-8"))


def fitting_groups(
    sources: Sequence[T],
    write: Callable[[Sequence[T]], str],
    limit: int,
    ids: Callable[[Sequence[T]], Iterable[str]] = lambda _: (),
) -> list[tuple[Sequence[T], str]]:
    """``sources`` split into consecutive groups whose ``write`` fits ``limit`` and whose
    ``ids`` fit :data:`LISTED_IDS_BYTES`, with their texts: all of them in one group when
    that fits, else each half split again."""
    if len(sources) > 1 and listed_bytes(ids(sources)) > LISTED_IDS_BYTES:
        return _halves(sources, write, limit, ids)
    text = write(sources)
    if len(sources) <= 1 or content_bytes(text) <= limit:
        return [(sources, text)]
    return _halves(sources, write, limit, ids)


def _halves(
    sources: Sequence[T],
    write: Callable[[Sequence[T]], str],
    limit: int,
    ids: Callable[[Sequence[T]], Iterable[str]],
) -> list[tuple[Sequence[T], str]]:
    half = len(sources) // 2
    return fitting_groups(sources[:half], write, limit, ids) + fitting_groups(
        sources[half:], write, limit, ids
    )


def largest_fitting(
    count: int,
    write: Callable[[int], str],
    limit: int,
    ids: Sequence[str] = (),
) -> tuple[int, str]:
    """The largest ``n`` in 1..``count`` whose ``write(n)`` fits ``limit`` (1 when none
    does), with its text. ``write(n)`` is expected to grow with ``n``. ``ids``: the sources'
    ids in the same order, of which the first ``n`` are listed; ``n`` is also at most what
    :func:`listed_prefix` lets them list.

    When all ``count`` do not fit, the search gallops up from 1 (1, 2, 4, …) and then
    halves the last step: every text it writes is from at most twice the sources that fit.
    A binary search over 1..``count`` wrote texts from half of all the sources and more, so
    a narrative or profile that outgrew the limit cost more with every source the user
    added, however few of them fit."""
    if ids:
        count = min(count, listed_prefix(ids))
    text = write(count)
    if count <= 1 or content_bytes(text) <= limit:
        return count, text
    best, best_text = 1, write(1)
    if content_bytes(best_text) > limit:
        return best, best_text
    step = 2
    while step < count:
        candidate = write(step)
        if content_bytes(candidate) > limit:
            break
        best, best_text, step = step, candidate, step * 2
    low, high = best + 1, min(step, count) - 1  # write(min(step, count)) does not fit
    while low <= high:
        middle = (low + high) // 2
        candidate = write(middle)
        if content_bytes(candidate) <= limit:
            best, best_text, low = middle, candidate, middle + 1
        else:
            high = middle - 1
    return best, best_text
