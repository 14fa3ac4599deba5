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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["content_bytes", "fitting_groups", "largest_fitting"]

T = TypeVar("T")


def content_bytes(text: str) -> int:
    """The size the contract limits: UTF-8 bytes, as validation measures an input's."""
    return len(text.encode("utf-8"))


def fitting_groups(
    sources: Sequence[T], write: Callable[[Sequence[T]], str], limit: int
) -> list[tuple[Sequence[T], str]]:
    """``sources`` split into consecutive groups whose ``write`` fits ``limit``, with their
    texts: all of them in one group when that fits, else each half split again."""
    text = write(sources)
    if len(sources) <= 1 or content_bytes(text) <= limit:
        return [(sources, text)]
    half = len(sources) // 2
    return fitting_groups(sources[:half], write, limit) + fitting_groups(
        sources[half:], write, limit
    )


def largest_fitting(count: int, write: Callable[[int], str], limit: int) -> tuple[int, str]:
    """The largest ``n`` in 1..``count`` whose ``write(n)`` fits ``limit`` (1 when none
    does), with its text. A binary search: ``write(n)`` is expected to grow with ``n``."""
    text = write(count)
    if count <= 1 or content_bytes(text) <= limit:
        return count, text
    best, best_text = 1, write(1)
    low, high = 2, count - 1
    while low <= high:
        middle = (low + high) // 2
        candidate = write(middle)
        if content_bytes(candidate) <= limit:
            best, best_text, low = middle, candidate, middle + 1
        else:
            high = middle - 1
    return best, best_text
