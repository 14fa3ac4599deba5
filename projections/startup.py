"""Starting the projector before its database is up (docs/failure-semantics.md, 'The projector':
PostgreSQL unavailable means retry with backoff). In compose or Kubernetes the projector may start
first: it waits, saying so, and if the database never answers it ends with one line instead of a
traceback.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg
from psycopg.conninfo import conninfo_to_dict

from projections.failures import is_transient, one_line
from projections.schema import migrate
from streams.config.settings import Settings


def migrate_when_reachable(
    settings: Settings, say: Callable[[str], None] = lambda line: print(line, flush=True)
) -> None:
    """Apply the migrations, waiting for PostgreSQL with the usual backoff
    (``retry_backoff_seconds × attempt``, ``retry_attempts`` tries); ``SystemExit`` with one
    line if it never answers or the read models cannot be used."""
    where = database_name(settings.database_url)
    attempts = max(1, settings.retry_attempts)
    for attempt in range(1, attempts + 1):
        try:
            migrate(settings.database_url, settings.embedding_dim, settings.vector_index)
            return
        except psycopg.Error as exc:
            if not is_transient(exc) or attempt == attempts:
                raise SystemExit(
                    f"memstream projector: cannot prepare the read models at {where} after "
                    f"{attempt} attempt(s): {one_line(exc)}"
                ) from None
            delay = min(settings.retry_backoff_seconds * attempt, 60.0)
            say(
                f"memstream projector: waiting for PostgreSQL at {where} ({one_line(exc)}); "
                f"attempt {attempt} of {attempts}, retrying in {delay:.1f}s"
            )
            time.sleep(delay)
        except RuntimeError as exc:  # read models built for another embedding dimension
            raise SystemExit(f"memstream projector: {exc}") from None


def database_name(database_url: str) -> str:
    """Which database a connection string names, without credentials."""
    try:
        params = conninfo_to_dict(database_url)
    except psycopg.ProgrammingError:
        return "(unparsable database URL)"
    host = str(params.get("host") or "localhost")
    port = f":{params['port']}" if params.get("port") else ""
    return f"{params.get('dbname') or '(default database)'} on {host}{port}"
