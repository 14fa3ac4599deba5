"""The engine's identity memo: answers by object, bounded, oldest entry out first."""

from __future__ import annotations

from collections.abc import Callable

from streams.engine.memo import by_identity


class Box:
    """An argument compared by identity (equal boxes are still different arguments)."""

    def __init__(self, value: int) -> None:
        self.value = value


def counting_memo(maxsize: int) -> tuple[list[int], Callable[[Box], int]]:
    calls: list[int] = []

    @by_identity(maxsize=maxsize)
    def double(box: Box) -> int:
        calls.append(box.value)
        return box.value * 2

    return calls, double


def test_the_same_object_is_answered_from_the_memo_and_an_equal_one_is_not() -> None:
    calls, double = counting_memo(maxsize=4)
    box = Box(3)
    assert double(box) == 6 and double(box) == 6
    assert double(Box(3)) == 6
    assert calls == [3, 3]


def test_a_full_memo_forgets_its_oldest_entry_first() -> None:
    calls, double = counting_memo(maxsize=2)
    first, second, third = Box(1), Box(2), Box(3)
    for box in (first, second, third):  # the third pushes the first out
        double(box)
    double(second)
    double(third)
    assert calls == [1, 2, 3]
    double(first)
    assert calls == [1, 2, 3, 1]


def test_a_memo_churned_far_past_its_size_still_holds_its_newest_entries() -> None:
    """Many more arguments than the memo holds (a worker with more live memories than
    the memo's size): every answer stays right and the newest ``maxsize`` are kept."""
    calls, double = counting_memo(maxsize=64)
    boxes = [Box(i) for i in range(10_000)]
    assert [double(box) for box in boxes] == [2 * i for i in range(10_000)]
    calls.clear()
    for box in boxes[-64:]:
        double(box)
    assert calls == []
    double(boxes[-65])
    assert calls == [9_935]
