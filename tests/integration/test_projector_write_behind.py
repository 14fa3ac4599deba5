"""The projector writes behind (one batch written while the next is read, decoded, folded and
formatted) on the real broker and PostgreSQL: a failure found when the batch in flight is
collected is handled as a synchronous write's would be, and the batch read past it is never
written before it, nor lost.

The projector runs in this process (batches of two records), so the tests see what each
``run`` reported and the in-flight paths are taken every time, not by chance of timing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from prometheus_client import REGISTRY

from memstream.waiting import wait_until
from projections.projector import Projector
from streams.config.settings import Settings
from streams.kafka import codec
from tests.integration.test_projector_robustness import (
    memory_ids,
    produce_to_ledger,
    stored_event,
    stored_position,
)
from tests.support import Pipeline

pytestmark = pytest.mark.integration

REFUSE_WRITES = """
CREATE FUNCTION refuse_writes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the test refuses writes for now' USING ERRCODE = '55000';
END $$;
CREATE TRIGGER refuse_writes BEFORE INSERT ON consolidation_log
    FOR EACH ROW EXECUTE FUNCTION refuse_writes();
"""
ALLOW_WRITES = "DROP TRIGGER refuse_writes ON consolidation_log"


@contextmanager
def projecting(settings: Settings) -> Iterator[list[int]]:
    """Run a projector in a thread; yield the event counts its ``on_batch`` reported, and
    stop it (checking it ended cleanly) on the way out."""
    reported: list[int] = []
    failures: list[BaseException] = []
    stop = threading.Event()

    def project() -> None:
        try:
            Projector(settings).run(stop, reported.append)
        except BaseException as exc:  # noqa: BLE001 - handed to the test below
            failures.append(exc)

    thread = threading.Thread(target=project, name="test-projector")
    thread.start()
    try:
        yield reported
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not thread.is_alive(), "the projector did not stop"
    assert not failures, failures


def execute(pipeline: Pipeline, sql: str) -> None:
    with psycopg.connect(pipeline.settings.database_url) as conn:
        conn.execute(sql)


def retries() -> float:
    return REGISTRY.get_sample_value("memstream_projector_retries_total") or 0.0


def test_a_record_refused_in_the_batch_in_flight_is_set_aside_and_the_next_batch_follows(
    pipeline: Pipeline,
) -> None:
    """Given six ledger records, the third with text PostgreSQL refuses (a NUL byte), read
    two at a time,
    when the batch holding it fails in the writer thread while the next batch waits,
    then that record alone is dead-lettered, every other one is projected once, and the
    projector reports five events applied."""
    events = [stored_event(n) for n in (1, 2)]
    events += [stored_event(3, content="NUL \x00 in text")]
    events += [stored_event(n) for n in (4, 5, 6)]
    positions = produce_to_ledger(pipeline, [codec.encode_ledger(e) for e in events])
    partition, end = positions[-1][0], positions[-1][1] + 1

    with projecting(pipeline.settings.with_overrides(projector_batch_size=2)) as reported:
        wait_until(
            lambda: stored_position(pipeline, partition) == end,
            timeout=60,
            what="the projector to store a position past every record",
        )
    assert memory_ids(pipeline) == {"m-1", "m-2", "m-4", "m-5", "m-6"}
    (letter,) = pipeline.read_topic(pipeline.settings.deadletter_topic, expected=1)
    assert dict(letter.headers())["reason"] == b"ledger_unprojectable"
    assert sum(reported) == 5
    assert pipeline.query("SELECT count(*) FROM consolidation_log") == [(5,)]


def test_a_database_failure_in_the_batch_in_flight_rewinds_and_loses_or_doubles_nothing(
    pipeline: Pipeline,
) -> None:
    """Given ten ledger records read two at a time and a database that refuses every write
    for a while (an error that is not the records' fault, so no record is set aside),
    when each batch in flight fails after its one attempt while the next batch waits,
    then the projector rewinds to the stored offset and drops the waiting batch, again and
    again, and once writes are allowed every record is projected exactly once."""
    settings = pipeline.settings.with_overrides(
        projector_batch_size=2, retry_attempts=1, retry_backoff_seconds=0
    )
    execute(pipeline, REFUSE_WRITES)
    positions = produce_to_ledger(
        pipeline, [codec.encode_ledger(stored_event(n)) for n in range(1, 11)]
    )
    partition, end = positions[-1][0], positions[-1][1] + 1
    retried_before = retries()

    with projecting(settings) as reported:
        wait_until(
            lambda: retries() >= retried_before + 5,
            timeout=60,
            what="the projector to fail and rewind several times",
        )
        assert stored_position(pipeline, partition) in (None, 0)
        execute(pipeline, ALLOW_WRITES)
        wait_until(
            lambda: stored_position(pipeline, partition) == end,
            timeout=60,
            what="the projector to store a position past every record",
        )
    assert memory_ids(pipeline) == {f"m-{n}" for n in range(1, 11)}
    assert pipeline.query("SELECT count(*) FROM consolidation_log") == [(10,)]
    assert sum(reported) == 10
