"""The services' entry point to the read models: one user's memories at a time.

A service connects as a login role that is a member of ``memstream_reader`` (migration 004)
and holds the database's reader key (migration 008, :mod:`projections.grants`). Each call here
opens a transaction, presents a grant for the user signed with that key and valid for a
minute (``memstream.grant``, transaction-local), and runs one query of
:mod:`projections.queries`. Row-level security verifies the grant inside PostgreSQL and then
returns that user's rows only, even if a query (or a bug, or an injected filter) asks for
more; without the key, or with a grant for another user, the reader role sees nothing. The
table owner, which row-level security does not apply to, needs no key.

>>> with MemoryReader.connect(  # doctest: +SKIP
...     "postgresql://chat_backend@db/memstream", grant_key_file="/run/secrets/reader.key"
... ) as reader:
...     reader.nearest("user-42", embedding, k=5)

This module must never write: it is the read side.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

import psycopg

from projections import queries
from projections.grants import DEFAULT_TTL_SECONDS, GrantKey, load_grant_key
from projections.queries import Link, NearMemory, Ranking, Recalled
from projections.recall_order import DEFAULT_DIVERSITY
from streams.embedders.base import Embedder


class MemoryReader:
    """Reads the read models on behalf of one user per call."""

    def __init__(
        self,
        conn: psycopg.Connection,
        grant_key: GrantKey | None = None,
        grant_ttl_seconds: int = DEFAULT_TTL_SECONDS,
    ) -> None:
        """``conn``: a connection outside any transaction (autocommit suits best), so that the
        grant of one call ends with that call's transaction. ``grant_key``: the database's
        reader key, which signs a grant per call (needed by a ``memstream_reader`` login; the
        table owner reads without one)."""
        self.conn = conn
        self.grant_key = grant_key
        self.grant_ttl_seconds = grant_ttl_seconds

    @classmethod
    def connect(
        cls,
        conninfo: str,
        *,
        grant_key: GrantKey | str | Path | None = None,
        grant_key_file: str | Path | None = None,
        grant_ttl_seconds: int = DEFAULT_TTL_SECONDS,
    ) -> MemoryReader:
        """A reader on its own autocommit connection (closed by :meth:`close`).

        ``grant_key``: the reader key as a :class:`~projections.grants.GrantKey`, its text
        (``memstream-reader-key-v1:...``) or a ``Path`` to its file; or ``grant_key_file``,
        the file's path (``MEMSTREAM_READER_GRANT_KEY_FILE``). The key is read before the
        connection is opened, so a bad one fails here, not at the first call."""
        key = load_grant_key(grant_key, grant_key_file)
        return cls(psycopg.connect(conninfo, autocommit=True), key, grant_ttl_seconds)

    @contextmanager
    def as_user(self, user_id: str) -> Iterator[psycopg.Connection]:
        """A transaction in which row-level security shows ``user_id``'s rows only; for
        queries of your own on the same tables."""
        if self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            raise RuntimeError(
                "MemoryReader needs its connection outside a transaction: commit or roll back "
                "first, or give it an autocommit connection, so that each call's grant ends "
                "with the call"
            )
        with self.conn.transaction():
            queries.scope_to_user(self.conn, user_id, self.grant_key, self.grant_ttl_seconds)
            yield self.conn

    def nearest(
        self, user_id: str, embedding: bytes, k: int = 5, include_inactive: bool = False
    ) -> list[NearMemory]:
        """The user's ``k`` memories closest to ``embedding`` (see
        :func:`projections.queries.nearest_memories`)."""
        with self.as_user(user_id) as conn:
            return queries.nearest_memories(conn, user_id, embedding, k, include_inactive)

    def recall(
        self,
        user_id: str,
        text: str,
        embedder: Embedder,
        k: int = 5,
        include_archived: bool = False,
        ranking: Ranking = "hybrid",
        diversity: float = DEFAULT_DIVERSITY,
    ) -> list[Recalled]:
        """The user's memories for ``text`` (embedded with ``embedder``, the worker's): by
        default ranked by meaning and by words (``hybrid``), or by meaning alone (``vector``,
        to measure what the words add), weighted by current salience, and chosen so that
        they do not repeat each other (``diversity``, 0 for none); see
        :func:`projections.queries.recall`."""
        [embedding] = embedder.embed([text])
        with self.as_user(user_id) as conn:
            return queries.recall(
                conn,
                user_id,
                embedding,
                k,
                include_archived,
                text=text,
                ranking=ranking,
                diversity=diversity,
            )

    def contradictions(self, user_id: str) -> list[Link]:
        with self.as_user(user_id) as conn:
            return queries.contradictions(conn, user_id)

    def lineage(self, user_id: str, memory_id: str) -> list[Link]:
        """Every link into or out of one of the user's memories."""
        with self.as_user(user_id) as conn:
            return queries.lineage(conn, user_id, memory_id)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> MemoryReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
