"""The API's read side: a small pool of :class:`MemoryReader` s, one call each at a time.

Every reader is made by :func:`open_reader`, the one place that says how the API connects
to the read models (which login, and whatever proof of identity the database asks of it).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from projections.reader import MemoryReader
from streams.config.settings import Settings


def open_reader(settings: Settings) -> MemoryReader:
    """A reader on its own connection, as the API's reader login, signing each call's grant
    with the database's reader key (``MEMSTREAM_READER_GRANT_KEY_FILE``; the table owner,
    which row-level security does not bind, reads without one)."""
    return MemoryReader.connect(
        settings.http_database_url or settings.database_url,
        grant_key_file=settings.reader_grant_key_file or None,
    )


class ReaderPool:
    """Up to ``size`` readers, opened on first need; a reader whose connection broke is
    dropped and a new one opened by the next caller."""

    def __init__(self, settings: Settings, size: int) -> None:
        self.settings = settings
        self._idle: queue.LifoQueue[MemoryReader] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(size)
        self._closed = False

    @contextmanager
    def reader(self, timeout: float = 10.0) -> Iterator[MemoryReader]:
        if not self._slots.acquire(timeout=timeout):
            raise TimeoutError(f"no database reader free within {timeout:g} s")
        reader: MemoryReader | None = None
        try:
            try:
                reader = self._idle.get_nowait()
            except queue.Empty:
                reader = open_reader(self.settings)
            yield reader
        except psycopg.OperationalError:
            if reader is not None:
                reader.close()
                reader = None
            raise
        finally:
            if reader is not None:
                if reader.conn.closed or self._closed:
                    reader.close()
                else:
                    self._idle.put(reader)
            self._slots.release()

    def close(self) -> None:
        self._closed = True
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return
