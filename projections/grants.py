"""Grants: the per-call proof that lets a ``memstream_reader`` login see one user's rows.

Row-level security (migration 008) shows a reader the rows of the user named by the setting
``memstream.grant``, and only if that grant carries a valid HMAC-SHA-256 signature under one of
the database's reader keys, which the reader role cannot read. A grant is

    v1:<key id>:<expires, unix seconds>:<signature, 64 hex>:<user id>

signed over ``memstream-grant-v1:<key id>:<expires>:<user id>``. Whoever holds a key (the
HTTP API, a service reading through :class:`projections.reader.MemoryReader`) signs one per
call, short-lived, for the user it acts for; a stolen reader *credential* without the key signs
nothing and reads nothing. Holding the key is holding every user's reads: keep it like a
password (a mounted secret file, 0600).

Keys live in the database (``memstream_grant_keys``); the owner exports them to files and
rotates them, from Python or with ``python -m projections.grants``:

    python -m projections.grants export FILE        # the current key, to a 0600 file
    python -m projections.grants rotate FILE        # a new key (the old ones still verify)
    python -m projections.grants retire --keep ID   # refuse every other key from now on

The connection string is ``MEMSTREAM_DATABASE_URL`` (the owner's), or ``--database-url``.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

# The transaction-local setting the policies of migration 008 read.
GRANT_SETTING = "memstream.grant"
# A grant lives for one call. A minute leaves room for a slow call and for clocks that
# disagree by seconds; the database refuses any grant valid for more than an hour.
DEFAULT_TTL_SECONDS = 60
MAX_TTL_SECONDS = 3600
KEY_FILE_PREFIX = "memstream-reader-key-v1"
SECRET_BYTES = 32
_KEY_TEXT = re.compile(rf"^{KEY_FILE_PREFIX}:([1-9][0-9]{{0,8}}):([0-9a-f]{{64}})$")


class GrantKeyError(ValueError):
    """A reader key is missing or malformed; the message says where to get a good one."""


@dataclass(frozen=True)
class GrantKey:
    """One of a database's reader keys: its id (which grants name) and its 32-byte secret."""

    key_id: int
    secret: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if not 0 < self.key_id < 10**9 or len(self.secret) != SECRET_BYTES:
            raise GrantKeyError(
                f"a reader key is a positive id and {SECRET_BYTES} secret bytes: export one "
                f"with `python -m projections.grants export FILE` as the database owner"
            )

    @classmethod
    def parse(cls, text: str) -> GrantKey:
        """The key in its file form, ``memstream-reader-key-v1:<id>:<64 hex>``."""
        match = _KEY_TEXT.match(text.strip())
        if match is None:
            # Never echo the text: it may be a key with a typo.
            raise GrantKeyError(
                f"this is not a memstream reader key ({KEY_FILE_PREFIX}:<id>:<64 hex digits>); "
                f"export one with `python -m projections.grants export FILE` as the database "
                f"owner (or pass a key file, not its path as the key)"
            )
        return cls(int(match.group(1)), bytes.fromhex(match.group(2)))

    @classmethod
    def from_file(cls, path: str | Path) -> GrantKey:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise GrantKeyError(
                f"cannot read the reader key file {path}: {exc.strerror}; check "
                f"MEMSTREAM_READER_GRANT_KEY_FILE (`memstream up` writes the local stack's)"
            ) from None
        try:
            return cls.parse(text)
        except GrantKeyError as exc:
            raise GrantKeyError(f"{path}: {exc}") from None

    def to_text(self) -> str:
        """The file form, as :meth:`parse` reads it."""
        return f"{KEY_FILE_PREFIX}:{self.key_id}:{self.secret.hex()}"

    def sign(self, user_id: str, expires_at: int) -> str:
        """A grant for ``user_id`` valid until ``expires_at`` (unix seconds)."""
        if not user_id or "\x00" in user_id:
            raise ValueError("user_id is empty or holds a NUL: a grant names one real user")
        signature = hmac.new(
            self.secret, grant_message(self.key_id, expires_at, user_id), hashlib.sha256
        ).hexdigest()
        return f"v1:{self.key_id}:{expires_at}:{signature}:{user_id}"

    def grant(
        self, user_id: str, ttl_seconds: int = DEFAULT_TTL_SECONDS, now: float | None = None
    ) -> str:
        """A grant for ``user_id`` valid for ``ttl_seconds`` from ``now`` (default: the clock)."""
        if not 0 < ttl_seconds <= MAX_TTL_SECONDS:
            raise ValueError(f"a grant lives 1..{MAX_TTL_SECONDS} seconds, not {ttl_seconds}")
        issued = time.time() if now is None else now
        return self.sign(user_id, int(issued) + ttl_seconds)


def grant_message(key_id: int, expires_at: int, user_id: str) -> bytes:
    """What a grant's signature covers: the version, the key, the expiry and the user. The
    fields before the user are digits, so no two grants share a message."""
    return f"memstream-grant-v1:{key_id}:{expires_at}:{user_id}".encode()


def load_grant_key(
    grant_key: GrantKey | str | Path | None = None, grant_key_file: str | Path | None = None
) -> GrantKey | None:
    """The key a reader was given: a :class:`GrantKey`, its text, or a file (a ``Path`` in
    ``grant_key``, or ``grant_key_file``); ``None`` for none."""
    if grant_key is not None and grant_key_file is not None:
        raise GrantKeyError("give the reader key or a key file, not both")
    if isinstance(grant_key, Path):
        return GrantKey.from_file(grant_key)
    if isinstance(grant_key, str):
        return GrantKey.parse(grant_key)
    if grant_key_file is not None and str(grant_key_file):
        return GrantKey.from_file(grant_key_file)
    return grant_key


# ---- the owner's side: keys in the database, and their files --------------------------------


def current_key(conn: psycopg.Connection) -> GrantKey:
    """The newest key the database accepts (read as the owner: nobody else may)."""
    row = conn.execute(
        "SELECT key_id, secret FROM memstream_grant_keys "
        "WHERE retired_at IS NULL OR retired_at > statement_timestamp() "
        "ORDER BY key_id DESC LIMIT 1"
    ).fetchone()
    if row is None:
        raise GrantKeyError(
            "the database accepts no reader key: make one with "
            "`python -m projections.grants rotate FILE` as the owner"
        )
    return GrantKey(row[0], bytes(row[1]))


def new_key(conn: psycopg.Connection) -> GrantKey:
    """A new key, made by the database (the owner only). Earlier keys still verify until
    :func:`retire_keys`: deploy the new one to every reader first."""
    made = conn.execute("SELECT memstream_new_grant_key()").fetchone()
    assert made is not None, "a scalar SELECT returns one row"
    # A second statement: the first one's snapshot does not see the row it inserted.
    row = conn.execute(
        "SELECT key_id, secret FROM memstream_grant_keys WHERE key_id = %s", (made[0],)
    ).fetchone()
    assert row is not None, "memstream_new_grant_key() returns the id of the row it inserted"
    return GrantKey(row[0], bytes(row[1]))


def retire_keys(conn: psycopg.Connection, keep: int, grace_seconds: float = 0) -> list[int]:
    """Refuse grants signed with any key but ``keep``, ``grace_seconds`` from now; the ids
    retired."""
    if conn.execute("SELECT 1 FROM memstream_grant_keys WHERE key_id = %s", (keep,)).fetchone():
        rows = conn.execute(
            "UPDATE memstream_grant_keys SET retired_at = statement_timestamp() + %s "
            "WHERE key_id <> %s AND (retired_at IS NULL OR retired_at > statement_timestamp() + %s)"
            " RETURNING key_id",
            (timedelta(seconds=grace_seconds), keep, timedelta(seconds=grace_seconds)),
        ).fetchall()
        return sorted(r[0] for r in rows)
    raise GrantKeyError(f"the database has no reader key {keep}: nothing was retired")


def write_key_file(path: str | Path, key: GrantKey) -> None:
    """Write ``key`` to ``path`` readable by its owner only (0600, also when it existed)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(key.to_text() + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m projections.grants",
        description="export, rotate and retire the read models' reader keys (as the owner)",
    )
    parser.add_argument(
        "--database-url", help="the owner's connection string (default: MEMSTREAM_DATABASE_URL)"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser("export", help="write the current key to a 0600 file")
    export.add_argument("file", type=Path)
    rotate = commands.add_parser("rotate", help="make a new key and write it to a 0600 file")
    rotate.add_argument("file", type=Path)
    retire = commands.add_parser("retire", help="refuse every key but one")
    retire.add_argument("--keep", type=int, required=True, help="the key id still accepted")
    retire.add_argument(
        "--grace-seconds", type=float, default=0, help="accept the others this much longer"
    )
    args = parser.parse_args(argv)
    if args.database_url is None:
        from streams.config.settings import Settings

        args.database_url = Settings.from_env().database_url
    try:
        with psycopg.connect(args.database_url) as conn:
            if args.command == "retire":
                retired = retire_keys(conn, args.keep, args.grace_seconds)
                at = datetime.now(UTC) + timedelta(seconds=args.grace_seconds)
                print(f"keys {retired or 'none'} refused from {at:%Y-%m-%d %H:%M:%S} UTC")
                return 0
            key = current_key(conn) if args.command == "export" else new_key(conn)
        write_key_file(args.file, key)
    except psycopg.errors.InsufficientPrivilege:
        print(
            "error: only the database owner (the role that runs `memstream migrate`) may read "
            "or make reader keys: connect as it with --database-url",
            file=sys.stderr,
        )
        return 2
    except psycopg.OperationalError as exc:
        print(f"error: cannot reach the database: {exc}", file=sys.stderr)
        return 2
    except psycopg.errors.UndefinedTable:
        print("error: no reader keys here: run `memstream migrate` first", file=sys.stderr)
        return 2
    except GrantKeyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"reader key {key.key_id} written to {args.file}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
