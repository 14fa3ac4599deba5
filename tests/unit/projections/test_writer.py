"""A batch built before a rebalance must not be applied over newer work (docs/failure-semantics.md,
'The projector': offsets are stored with the rows): the writer compares where the batch starts with
the stored position."""

from __future__ import annotations

from projections.writer import StaleBatch, stale_partitions

TOPIC = "memory.consolidation"


def test_a_batch_starting_at_the_stored_position_is_not_stale() -> None:
    assert stale_partitions({(TOPIC, 0): 10}, {(TOPIC, 0): 10}) == {}


def test_a_batch_starting_after_the_stored_position_is_not_stale() -> None:
    # offsets have gaps: transaction markers take offsets of their own
    assert stale_partitions({(TOPIC, 0): 12}, {(TOPIC, 0): 10}) == {}


def test_a_partition_never_stored_is_not_stale() -> None:
    assert stale_partitions({(TOPIC, 3): 0}, {}) == {}


def test_a_batch_starting_before_the_stored_position_is_stale_in_that_partition() -> None:
    stale = stale_partitions({(TOPIC, 0): 5, (TOPIC, 1): 9}, {(TOPIC, 0): 8, (TOPIC, 1): 9})

    assert stale == {(TOPIC, 0): (5, 8)}


def test_a_stale_batch_says_where_it_starts_and_where_the_stored_position_is() -> None:
    assert str(StaleBatch({(TOPIC, 0): (5, 8)})) == (
        f"{TOPIC}[0] batch starts at 5, stored position is 8"
    )
