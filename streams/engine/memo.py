"""Memoising by the argument's identity, for values the engine meets again and again as
the same object: the judge's clauses (from the memoised ``parse``) and the embeddings of
the memories a user's state holds.

``functools.lru_cache`` keys on the argument's hash, and a clause's hash is recomputed
from every field of every word each time (frozen dataclasses do not cache it): hashing cost
more than the work it saved. Keying on ``id()`` costs nothing. The cache
holds the argument itself, so an id cannot be reused by another object while its entry
lives. Results depend on the argument's value only: memoising changes no answer.

Entries leave first in, first out, from an ``OrderedDict``: deleting a plain dict's oldest
key as ``next(iter(cache))`` walks past every slot deleted before it until the dict is
rebuilt, so a memo that churned (more live memories than it holds) spent more time evicting
than computing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import wraps
from typing import TypeVar

A = TypeVar("A")
R = TypeVar("R")


def by_identity(maxsize: int) -> Callable[[Callable[[A], R]], Callable[[A], R]]:
    """Remember ``fn(arg)`` for the last ``maxsize`` argument objects (first in, first out)."""

    def decorate(fn: Callable[[A], R]) -> Callable[[A], R]:
        cache: OrderedDict[int, tuple[A, R]] = OrderedDict()

        @wraps(fn)
        def memoised(arg: A) -> R:
            hit = cache.get(id(arg))
            if hit is not None and hit[0] is arg:
                return hit[1]
            result = fn(arg)
            if len(cache) >= maxsize:
                cache.popitem(last=False)  # the oldest
            cache[id(arg)] = (arg, result)
            return result

        return memoised

    return decorate
