"""The garbage-collector settings the worker and the projector start with."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from streams.runtime.collector import YOUNG_THRESHOLD, tune_collector


@pytest.fixture
def restored_collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("restored_collector")
def test_start_up_objects_are_frozen_and_young_collections_are_rarer() -> None:
    gc.unfreeze()
    start_up_object: list[object] = [[]]  # a list is always tracked by the collector
    assert any(o is start_up_object for o in gc.get_objects())
    tune_collector()
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD > 700
    assert not any(o is start_up_object for o in gc.get_objects())  # frozen: never scanned


@pytest.mark.usefixtures("restored_collector")
def test_cyclic_garbage_made_after_start_up_is_still_collected() -> None:
    tune_collector()

    class Node:
        other: object = None

    first, second = Node(), Node()
    first.other, second.other = second, first
    del first, second
    assert gc.collect() >= 2
