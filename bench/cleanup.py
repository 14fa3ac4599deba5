"""Removing what benchmark runs leave on the local stack: topics, consumer groups, databases.

Every phase of a run gets fresh topics and, when it projects, a fresh database, all named
``bench<run id>…`` (bench/harness.py). Kept, they add up: after a day of runs the local
stack held 1,132 topics (10,954 partitions) and 184 databases (11 GB), and a broker with
that many partitions is slower for every later run. So a run removes its own when it ends
(``--keep`` keeps them for inspection), and ``--clean`` removes what earlier runs kept.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import psycopg
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from psycopg import sql

from bench import progress
from memstream.consumer_groups import delete_group
from memstream.stack import LocalStack, StackError
from streams.config.settings import Settings

# bench<8 hex digits> then the separator of a topic prefix ("-", "."), an app id ("-") or a
# database name ("_"): nothing but a bench run's own objects matches.
_RUN_NAME = re.compile(r"^(bench[0-9a-f]{8})[-_.]")
_RUN_DIR = re.compile(r"^[0-9a-f]{8}$")  # <state dir>/bench/<run id>: a run's files
_DELETE_CHUNK = 200  # topics per DeleteTopics request
_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Removed:
    topics: int
    groups: int
    databases: int

    def __str__(self) -> str:
        return (
            f"{self.topics} topic(s), {self.groups} consumer group(s), {self.databases} database(s)"
        )


def bench_names(names: Iterable[str], run_id: str | None = None) -> list[str]:
    """The names among ``names`` that belong to run ``run_id`` (to any bench run when None)."""
    wanted = None if run_id is None else f"bench{run_id}"
    chosen = []
    for name in names:
        match = _RUN_NAME.match(name)
        if match is not None and (wanted is None or match.group(1) == wanted):
            chosen.append(name)
    return sorted(chosen)


def remove_work_files(bench_dir: Path, run_id: str | None = None) -> int:
    """Delete run ``run_id``'s working files (every run's when None) under ``bench_dir``,
    keeping its logs: a worker's local state store is ~300 MB in the state bench. Returns
    how many directories were removed."""
    runs = [bench_dir / run_id] if run_id is not None else sorted(bench_dir.glob("*"))
    removed = 0
    for run in runs:
        if not (run.is_dir() and _RUN_DIR.match(run.name)):
            continue
        for entry in run.iterdir():
            if entry.is_dir() and entry.name != "logs":
                shutil.rmtree(entry, ignore_errors=True)
                removed += 1
    return removed


def remove_bench_objects(
    admin: AdminClient, server_conninfo: str, run_id: str | None = None
) -> Removed:
    """Delete the topics, consumer groups and databases of run ``run_id`` (of every run when
    None). Processes using them must have stopped: their groups must be empty."""
    topics = bench_names(admin.list_topics(timeout=30).topics, run_id)
    for start in range(0, len(topics), _DELETE_CHUNK):
        chunk = topics[start : start + _DELETE_CHUNK]
        _wait_all(admin.delete_topics(chunk, operation_timeout=_TIMEOUT_S).values())
        progress.note(f"deleted {start + len(chunk)}/{len(topics)} bench topics")
    databases = _drop_databases(server_conninfo, run_id)
    listed = admin.list_consumer_groups(request_timeout=30).result(timeout=_TIMEOUT_S)
    groups = bench_names((g.group_id for g in listed.valid), run_id)
    kept = _delete_groups(admin, groups)
    return Removed(len(topics), len(groups) - kept, databases)


def _delete_groups(admin: AdminClient, groups: list[str]) -> int:
    """Delete ``groups`` one by one, each once its coordinator answers (``--clean`` right
    after ``memstream up`` meets a broker still loading its groups); the first failure is
    raised once all have been tried. Returns how many were kept: a static member that was
    stopped stays in its group until its session times out, and such a group is left for
    the next ``--clean`` rather than failing the cleanup."""
    errors = []
    kept = 0
    for group in groups:
        try:
            delete_group(admin, group, timeout=_TIMEOUT_S)
        except KafkaException as exc:
            code = _code(exc)
            if code == KafkaError.NON_EMPTY_GROUP:
                kept += 1
            elif code not in _ALREADY_GONE:
                errors.append(exc)
    if errors:
        raise errors[0]
    return kept


# Gone already (another cleanup, or the broker's own): nothing left to remove.
_ALREADY_GONE = (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError.GROUP_ID_NOT_FOUND)


def _wait_all(futures: Iterable[object]) -> None:
    """Wait for every admin future; the first failure is raised once all have finished."""
    errors = []
    for future in futures:
        result: Callable[..., object] = future.result  # type: ignore[attr-defined]
        try:
            result(timeout=_TIMEOUT_S)
        except KafkaException as exc:
            if _code(exc) not in _ALREADY_GONE:
                errors.append(exc)
    if errors:
        raise errors[0]


def _code(exc: KafkaException) -> int | None:
    error = exc.args[0] if exc.args else None
    return error.code() if isinstance(error, KafkaError) else None


def _drop_databases(server_conninfo: str, run_id: str | None) -> int:
    with psycopg.connect(server_conninfo, autocommit=True) as conn:
        names = bench_names((r[0] for r in conn.execute("SELECT datname FROM pg_database")), run_id)
        for name in names:
            # FORCE ends connections a killed process may have left open.
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
    if names:
        progress.note(f"dropped {len(names)} bench database(s)")
    return len(names)


def clean_bench(settings: Settings) -> int:
    """Remove every topic, consumer group and database earlier bench runs left on the local
    stack (runs with ``--keep``, or runs that were killed), a run in progress's too: run it
    when no bench is running. Returns 0, or 1 on failure."""
    try:
        local = LocalStack(settings)
        stack = local.up(progress=progress.note)
        removed = remove_bench_objects(local.kafka_admin(), stack.database_url)
    except (StackError, KafkaException, psycopg.Error, TimeoutError) as exc:
        print(f"error: {exc or type(exc).__name__}; run `memstream status`", file=sys.stderr)
        return 1
    work = remove_work_files(Path(settings.state_dir) / "bench")
    print(f"removed what earlier bench runs left: {removed}, {work} working dir(s) (logs kept)")
    return 0


def remove_run(settings: Settings, server_conninfo: str, run_id: str) -> None:
    """Remove one run's objects; a failure only warns (the results are already in)."""
    try:
        removed = remove_bench_objects(LocalStack(settings).kafka_admin(), server_conninfo, run_id)
    except Exception as exc:  # noqa: BLE001 - whatever failed, the run's results come first
        print(
            f"warning: could not remove run {run_id}'s topics and databases ({exc}); "
            f"`memstream bench --clean` removes them later",
            file=sys.stderr,
        )
        return
    remove_work_files(Path(settings.state_dir) / "bench", run_id)
    progress.note(f"removed run {run_id}'s {removed} and working files (--keep keeps them)")
