"""Seed 001's decayed count: a memory has decayed once it lost ``DECAYED_BY`` of its
salience. Recent memories are answered without computing salience; the answer must be the
one the salience gives, for every importance, access count, half-life and idle time."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from streams.engine.model import Memory
from streams.engine.rules.decay import DECAYED_BY, FRESH_HALF_LIVES, has_decayed
from streams.engine.salience import current_salience

T0 = 1_790_000_000_000


def memory(importance: float, access_count: int, last_accessed: int | None) -> Memory:
    return Memory(
        memory_id="m-1",
        user_id="u-1",
        content="The user prefers tea.",
        layer="semantic",
        importance=importance,
        access_count=access_count,
        last_accessed=last_accessed,
        created_at=T0,
    )


def salience_says(m: Memory, now: int, half_life: float, reinforcement: float) -> bool:
    """The definition, with no shortcut."""
    return min(1.0, m.importance) - current_salience(m, now, half_life, reinforcement) >= DECAYED_BY


@settings(max_examples=3000, deadline=None)
@given(
    importance=st.floats(0.0, 1.0),
    access_count=st.integers(0, 40),
    reinforcement=st.floats(0.0, 1.0),
    half_life=st.floats(1.0, 1e8),
    idle_half_lives=st.floats(0.0, 0.3),
    touched_later=st.booleans(),
)
def test_the_count_agrees_with_salience_everywhere_near_the_shortcut(
    importance: float,
    access_count: int,
    reinforcement: float,
    half_life: float,
    idle_half_lives: float,
    touched_later: bool,
) -> None:
    m = memory(importance, access_count, T0 + 5_000 if touched_later else None)
    now = T0 + 5_000 * touched_later + int(idle_half_lives * half_life * 1000)
    assert has_decayed(m, now, half_life, reinforcement) == salience_says(
        m, now, half_life, reinforcement
    )


def test_the_first_memory_to_decay_does_so_just_past_the_shortcut_s_horizon() -> None:
    """Importance 1, never accessed: the fastest decay there is. It decays at -log2(0.95)
    = 0.0740 half-lives, past ``FRESH_HALF_LIVES``, and the count sees it then."""
    half_life = 604_800.0
    m = memory(1.0, 0, None)

    def at(half_lives: float) -> int:
        return T0 + int(half_lives * half_life * 1000)

    assert not has_decayed(m, at(FRESH_HALF_LIVES), half_life, 0.1)
    assert not has_decayed(m, at(0.0739), half_life, 0.1)
    assert has_decayed(m, at(0.0741), half_life, 0.1)
    assert salience_says(m, at(0.0741), half_life, 0.1)
