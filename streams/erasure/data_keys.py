"""Each user's data key, kept wrapped by a master key in a PostgreSQL table operators already run.

Erasing a user is deleting one row: every copy of what was sealed with that key, on every
topic, in every backup and in every analytics consumer's copy, stops opening at once, while
the log itself stays replayable (readers show an erased field as erased).

The master key never leaves its holder: :class:`MasterKey` wraps and unwraps data keys, and is
the seam for a KMS (AWS KMS, GCP KMS, Vault transit: an ``Encrypt``/``Decrypt`` call each). The
local implementation, :class:`LocalMasterKey`, reads 32 bytes from a file or an environment
variable. Rotating it re-wraps the data keys (:meth:`PostgresKeyStore.rewrap`) and touches no
log record: they are sealed with the data keys, which do not change.

A data key is made once per user, by whichever process first needs it; concurrent makers agree
on the first one stored (``INSERT … ON CONFLICT DO NOTHING``, then read back). The same goes
for the per-memory keys (``memstream_memory_keys``, :mod:`streams.erasure.memory_keys`), which
are wrapped under their user's data key rather than the master: rotation re-wraps the users'
keys alone, and a forgotten user's memory keys open nothing even before they are deleted.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import psycopg
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from streams.erasure.cipher import KEY_BYTES, NONCE_BYTES, FieldCipher, Unreadable
from streams.erasure.memory_keys import (
    INPUT_GENERATIONS,
    MemoryCipher,
    MemoryKeyId,
    unwrap_memory_key,
    wrap_context,
)

TABLE = "memstream_data_keys"  # projections/migrations/011_data_keys.sql
MEMORY_TABLE = "memstream_memory_keys"  # projections/migrations/012_memory_keys.sql
CACHED_KEYS = 10_000
"""Unwrapped keys a process keeps: a hot user's records are sealed and opened without a query
(the worker holds up to MEMSTREAM_HOT_USERS users, 10,000 by default)."""
CACHED_MEMORY_KEYS = 200_000
"""Memories whose unwrapped keys a process keeps (about 200 bytes a key; most memories have
one generation): a user's recent memories."""

MemoryPair = tuple[str, str]  # (user id, memory id)
BY_KEY_ONLY = ("SET enable_hashjoin = off", "SET enable_mergejoin = off")
"""The key store's session joins only by primary-key lookups. Each of its statements reads or
makes the keys of one batch (a few hundred memories) among all keys ever made; from a few
thousand keys to about a million, PostgreSQL's planner prefers scanning and hashing or sorting
the whole table over a few hundred index probes: 12 ms for 500 keys among 17,652 against 3.6 ms
by index (docs/benchmarks.md, "Sealing cost"), a cost that grew with every key ever made."""
LIVE_KEYS_SQL = (
    f"SELECT w.i, k.generation, k.wrapped_key "
    f"FROM {MEMORY_TABLE} k JOIN unnest(%s::text[], %s::text[]) WITH ORDINALITY AS w(u, m, i) "
    f"ON k.key_user_id = w.u AND k.key_memory_id = w.m"
)
"""Every key of the (user, memory) pairs given as two array literals (:func:`text_array`),
each row naming its pair by its 1-based position in them."""


def text_array(values: Iterable[str]) -> str:
    """``values`` as one PostgreSQL array literal of text, for a ``%s::text[]`` parameter:
    each element quoted, its backslashes and double quotes escaped (PostgreSQL's array input
    syntax). psycopg dumps a list element by element in Python; a reader sends two such lists
    of a few hundred ids per batch, and this literal and rows that name a pair by position
    instead of by its two ids take ~0.5 µs less of the projector's CPU per memory opened
    (docs/benchmarks.md, "Sealing cost")."""
    escaped = [v.replace("\\", "\\\\").replace('"', '\\"') for v in values]
    return '{"' + '","'.join(escaped) + '"}' if escaped else "{}"


DURABLE_COMMIT = (
    "BEGIN; SET LOCAL synchronous_commit = on; "
    "SELECT pg_current_xact_id(); "  # a commit record to wait for
    "COMMIT"
)
"""A commit that waits for the WAL to be flushed up to it, and so for every commit before it
(made with ``synchronous_commit = off``): no parameters, so one simple query holds it all."""


class MasterKeyError(ValueError):
    """The master key is missing, malformed, or not the one a data key was wrapped with."""


class MasterKey(Protocol):
    """Wraps and unwraps data keys; ``key_id`` names it without revealing it, so a store knows
    which master wrapped each data key and rotation can find the ones still to re-wrap."""

    @property
    def key_id(self) -> str: ...

    def wrap(self, data_key: bytes, context: bytes) -> bytes: ...

    def unwrap(self, wrapped: bytes, context: bytes) -> bytes: ...


@dataclass(frozen=True)
class LocalMasterKey:
    """A 32-byte master key held by this process (from a file or the environment)."""

    secret: bytes

    def __post_init__(self) -> None:
        if len(self.secret) != KEY_BYTES:
            raise MasterKeyError(
                f"a master key is {KEY_BYTES} bytes, not {len(self.secret)}: make one with "
                f"`head -c 32 /dev/urandom | base64 > master.key`"
            )

    @classmethod
    def from_text(cls, text: str, where: str) -> LocalMasterKey:
        """32 bytes written as base64 (what ``base64`` prints), from ``where`` (for errors)."""
        try:
            secret = base64.b64decode(text.strip(), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise MasterKeyError(
                f"{where} is not base64: write the key as `head -c 32 /dev/urandom | base64`"
            ) from exc
        try:
            return cls(secret)
        except MasterKeyError as exc:
            raise MasterKeyError(f"{where}: {exc}") from None

    @classmethod
    def from_file(cls, path: Path) -> LocalMasterKey:
        try:
            text = path.read_text()
        except OSError as exc:
            raise MasterKeyError(f"cannot read the master key file {path}: {exc}") from exc
        return cls.from_text(text, str(path))

    @property
    def key_id(self) -> str:
        return "local:" + hashlib.sha256(b"memstream/master-key-id/" + self.secret).hexdigest()[:16]

    def wrap(self, data_key: bytes, context: bytes) -> bytes:
        nonce = os.urandom(NONCE_BYTES)  # wrapping, unlike sealing, need not be reproducible
        return nonce + AESGCM(self.secret).encrypt(nonce, data_key, context)

    def unwrap(self, wrapped: bytes, context: bytes) -> bytes:
        try:
            return AESGCM(self.secret).decrypt(
                wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:], context
            )
        except InvalidTag as exc:
            raise MasterKeyError(
                f"a data key does not unwrap with master key {self.key_id}: it was wrapped by "
                f"another (rotate with both keys configured) or the row was altered"
            ) from exc


def _columns(key_ids: Sequence[MemoryKeyId]) -> tuple[list[str], list[str], list[int]]:
    """Memory key ids as the three arrays a statement unnests (users, memories, generations)."""
    return [u for u, _, _ in key_ids], [m for _, m, _ in key_ids], [g for _, _, g in key_ids]


def _wrap_context(user_id: str) -> bytes:
    """A wrapped key opens only as the key of the user it was made for."""
    return b"memstream/data-key/" + user_id.encode("utf-8", "surrogatepass")


class PostgresKeyStore:
    """Users' data keys in ``memstream_data_keys``, unwrapped on demand and cached per process.

    Not thread-safe: one per thread (the worker and the projector each run one loop)."""

    def __init__(
        self,
        conninfo: str,
        master: MasterKey,
        *,
        retired: Iterable[MasterKey] = (),
        cached: int = CACHED_KEYS,
        deferred: bool = False,
    ) -> None:
        """``retired``: master keys data keys may still be wrapped with, until rotation.
        ``deferred``: writes commit without waiting for the WAL flush, and :meth:`flush` makes
        them all durable at once (the worker flushes once per batch, before its records are
        committed to Kafka: a key row's flush, per cycle, was most of what memory keys cost)."""
        self.deferred = deferred
        self._unflushed = False
        self.conninfo = conninfo
        self.master = master
        self.masters: Mapping[str, MasterKey] = {key.key_id: key for key in (*retired, master)}
        self._cache: OrderedDict[str, FieldCipher] = OrderedDict()
        self._cached = cached
        # by memory, then generation: a forget drops a memory's keys without a scan
        self._memory_cache: OrderedDict[MemoryPair, dict[int, MemoryCipher]] = OrderedDict()
        # memory keys made here and not stored yet (:meth:`draft_memory_key`), wrapped
        self._drafts: dict[MemoryKeyId, tuple[bytes, MemoryCipher]] = {}
        self._conn: psycopg.Connection | None = None

    # -- connections ------------------------------------------------------------------------

    def _connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(self.conninfo, autocommit=True)
            for setting in BY_KEY_ONLY:
                self._conn.execute(setting)
            if self.deferred:
                self._conn.execute("SET synchronous_commit = off")
        return self._conn

    def _wrote(self) -> None:
        self._unflushed = self.deferred

    def _written(self, statement: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
        """The rows of one statement that writes, in its own transaction (autocommit): one
        round trip; durable at the next :meth:`flush` when ``deferred``."""
        self._wrote()
        return self._connection().execute(statement, params).fetchall()

    def flush(self) -> None:
        """Make every key written since the last flush durable: one commit that waits for the
        WAL, which holds them all (nothing to do when not ``deferred`` or nothing written).

        One round trip: the transaction is one simple query of four statements. As a
        transaction block (``BEGIN``, the two statements and ``COMMIT`` each sent and waited
        for) it took four, ~390 µs against ~130 µs, paid by each batch of the worker that wrote
        keys."""
        if not self._unflushed:
            return
        conn = self._connection()
        try:
            conn.execute(DURABLE_COMMIT)
        except psycopg.Error:
            # a failure inside the block leaves its transaction open and aborted, which would
            # refuse every later statement: a new connection is opened when next needed
            self.close()
            raise
        self._unflushed = False

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- keys -------------------------------------------------------------------------------

    def cipher(self, user_id: str) -> FieldCipher:
        """The user's cipher, its key made now if the user has none yet."""
        found = self._cached_cipher(user_id)
        if found is not None:
            return found
        [cipher] = self.ciphers([user_id]).values()
        return cipher

    def ciphers(self, user_ids: Iterable[str]) -> dict[str, FieldCipher]:
        """Each user's cipher, keys made for those who have none: one round trip for all the
        users not cached (the worker asks once per input batch)."""
        wanted = list(dict.fromkeys(user_ids))
        found = {u: c for u in wanted if (c := self._cached_cipher(u)) is not None}
        missing = [u for u in wanted if u not in found]
        if missing:
            found.update(self._load(missing, create=True))
        return {u: found[u] for u in wanted}

    def existing(self, user_id: str) -> FieldCipher | None:
        """The user's cipher if the user has a key (None once erased): what readers use, so
        reading an erased user's old records never makes a new key."""
        found = self._cached_cipher(user_id)
        if found is not None:
            return found
        return self._load([user_id], create=False).get(user_id)

    def existing_ciphers(self, user_ids: Iterable[str]) -> dict[str, FieldCipher]:
        """:meth:`existing` for many users in one round trip: the users without a key (never
        made, or erased) are left out."""
        wanted = list(dict.fromkeys(user_ids))
        found = {u: c for u in wanted if (c := self._cached_cipher(u)) is not None}
        missing = [u for u in wanted if u not in found]
        if missing:
            found.update(self._load(missing, create=False))
        return found

    def erase(self, user_id: str) -> bool:
        """Destroy the user's data key and memory keys, and never store the keys drafted for
        them (True if there was a data key). Every record sealed with them is unreadable from
        now on, wherever it is."""
        self.forget_cached(user_id)
        self.drop_drafts(user_id)
        self._wrote()
        with self._connection().transaction():
            gone = self._connection().execute(
                f"DELETE FROM {TABLE} WHERE key_user_id = %s", (user_id,)
            )
            self._connection().execute(
                f"DELETE FROM {MEMORY_TABLE} WHERE key_user_id = %s", (user_id,)
            )
        return bool(gone.rowcount)

    def forget_cached(self, user_id: str) -> None:
        """Drop this process's copy of the user's keys (another process erased them)."""
        self._cache.pop(user_id, None)
        for pair in [p for p in self._memory_cache if p[0] == user_id]:
            del self._memory_cache[pair]

    # -- memory keys ------------------------------------------------------------------------

    def memory_keys(self, pairs: Iterable[MemoryPair]) -> dict[MemoryPair, dict[int, MemoryCipher]]:
        """The live keys of each (user, memory), by generation, in one round trip; a pair
        without any (never made, or erased) maps to an empty dict. A user without a data key
        has none that open: theirs are left out."""
        wanted = list(dict.fromkeys(pairs))
        found: dict[MemoryPair, dict[int, MemoryCipher]] = {p: {} for p in wanted}
        if not wanted:
            return found
        users = self.existing_ciphers(u for u, _ in wanted)
        arrays = (text_array(u for u, _ in wanted), text_array(m for _, m in wanted))
        for position, generation, wrapped in (
            self._connection().execute(LIVE_KEYS_SQL, arrays).fetchall()
        ):
            pair = wanted[position - 1]
            user = users.get(pair[0])
            if user is None:
                continue
            try:
                cipher = self._memory_cipher(user, (*pair, generation), bytes(wrapped))
            except Unreadable:
                continue  # not this user key's: as good as erased
            found[pair][generation] = cipher
        return found

    def ensure_memory_keys(
        self, user_id: str, asks: Sequence[tuple[str, int, bool]]
    ) -> dict[str, dict[int, MemoryCipher]]:
        """Every live key of the memories ``asks`` names, after making, in the same statement,
        the generation each ask (memory, version, forced) needs: ``forced``, its version;
        otherwise its version only when the memory has no key of a generation up to it (as
        :func:`~streams.erasure.memory_keys.generation_for` decides). One round trip; the
        user's data key made if missing; concurrent makers agree on the first stored."""
        if not asks:
            return {}
        [user] = self.ciphers([user_id]).values()
        made = {
            (user_id, m, g): (*self._new_memory_key(user, (user_id, m, g)), forced)
            for m, g, forced in asks
        }
        found, _ = self._store_memory_keys(made)
        return {memory_id: keys for (_, memory_id), keys in found.items()}

    def draft_memory_key(self, user_id: str, memory_id: str, generation: int) -> MemoryCipher:
        """A key for a memory's first generation, made here and stored with the others drafted
        by :meth:`store_drafts`: a batch's new memories cost one round trip together instead
        of one per input (no I/O unless the user has no data key yet)."""
        [user] = self.ciphers([user_id]).values()
        key_id = (user_id, memory_id, generation)
        self._drafts[key_id] = self._new_memory_key(user, key_id)
        return self._drafts[key_id][1]

    def drop_drafts(self, user_id: str) -> None:
        """Never store the user's drafted keys (the user's key is being erased)."""
        for key_id in [k for k in self._drafts if k[0] == user_id]:
            del self._drafts[key_id]

    def store_drafts(
        self,
    ) -> tuple[dict[MemoryPair, dict[int, MemoryCipher]], set[MemoryKeyId]]:
        """Store the drafted keys, each unless its memory already has a key of a generation up
        to the draft's (an earlier run of the same input made it: that one stays, as
        :meth:`ensure_memory_keys` decides), in one round trip. Every live key of the drafted
        memories, and which drafts were stored."""
        drafts, self._drafts = self._drafts, {}
        if not drafts:
            return {}, set()
        return self._store_memory_keys({k: (*made, False) for k, made in drafts.items()})

    def _new_memory_key(self, user: FieldCipher, key_id: MemoryKeyId) -> tuple[bytes, MemoryCipher]:
        """A random memory key: wrapped under the user's data key (the row), and its cipher."""
        user_id, memory_id, generation = key_id
        key = os.urandom(KEY_BYTES)
        wrapped = user.wrap(key, wrap_context(user_id, memory_id, generation))
        return wrapped, MemoryCipher(key, memory_id, generation)

    def _store_memory_keys(
        self, made: Mapping[MemoryKeyId, tuple[bytes, MemoryCipher, bool]]
    ) -> tuple[dict[MemoryPair, dict[int, MemoryCipher]], set[MemoryKeyId]]:
        """Store keys made here (wrapped, cipher, forced), each when ``forced`` or when its
        memory has no key of a generation up to it, in one statement; every live key of their
        memories (the ones stored, and those the store already had), and which were stored."""
        ids = list(made)
        rows = self._written(
            f"WITH w(u, m, g, forced, k) AS (SELECT * FROM unnest(%b::text[], %b::text[], "
            f"%b::bigint[], %b::bool[], %b::bytea[])), "
            f"made AS (INSERT INTO {MEMORY_TABLE} "
            f"(key_user_id, key_memory_id, generation, wrapped_key) "
            f"SELECT w.u, w.m, w.g, w.k FROM w WHERE w.forced OR NOT EXISTS (SELECT 1 "
            f"FROM {MEMORY_TABLE} x WHERE x.key_user_id = w.u AND x.key_memory_id = w.m "
            f"AND x.generation <= w.g) ON CONFLICT DO NOTHING "
            f"RETURNING key_user_id, key_memory_id, generation, wrapped_key) "
            f"SELECT made.*, true FROM made UNION ALL SELECT x.key_user_id, x.key_memory_id, "
            f"x.generation, x.wrapped_key, false FROM {MEMORY_TABLE} x "
            f"JOIN (SELECT DISTINCT u, m FROM w) p ON x.key_user_id = p.u "
            f"AND x.key_memory_id = p.m",
            (*_columns(ids), [made[k][2] for k in ids], [made[k][0] for k in ids]),
        )
        users = self.existing_ciphers({u for u, _, _ in ids})
        found: dict[MemoryPair, dict[int, MemoryCipher]] = {(u, m): {} for u, m, _ in ids}
        stored: set[MemoryKeyId] = set()
        for user_id, memory_id, generation, wrapped, inserted in rows:
            key_id = (user_id, memory_id, generation)
            user = users.get(user_id)
            if inserted:
                stored.add(key_id)
                cipher = made[key_id][1]
                self._cache_memory_cipher(key_id, cipher)
            elif user is None:
                continue
            else:
                try:
                    cipher = self._memory_cipher(user, key_id, bytes(wrapped))
                except Unreadable:
                    continue  # not this user key's: as good as erased
            found[(user_id, memory_id)][generation] = cipher
        return found, stored

    def input_keys(
        self, pairs: Iterable[MemoryPair], now_us: int
    ) -> dict[MemoryPair, MemoryCipher]:
        """The key a publisher seals each (user, memory)'s write with: the memory's newest live
        key, else one made now at a generation below zero (:func:`input_generation`), in one
        round trip (plus one for a user's first data key)."""
        wanted = list(dict.fromkeys(pairs))
        if not wanted:
            return {}
        users = self.ciphers(u for u, _ in wanted)
        generation = INPUT_GENERATIONS + now_us
        wrapped = [
            users[u].wrap(os.urandom(KEY_BYTES), wrap_context(u, m, generation)) for u, m in wanted
        ]
        rows = self._written(
            f"WITH w(u, m, k) AS (SELECT * FROM unnest(%b::text[], %b::text[], %b::bytea[])), "
            f"made AS (INSERT INTO {MEMORY_TABLE} "
            f"(key_user_id, key_memory_id, generation, wrapped_key) "
            f"SELECT w.u, w.m, %s, w.k FROM w WHERE NOT EXISTS (SELECT 1 FROM {MEMORY_TABLE} t "
            f"WHERE t.key_user_id = w.u AND t.key_memory_id = w.m) ON CONFLICT DO NOTHING "
            f"RETURNING key_user_id, key_memory_id, generation, wrapped_key) "
            f"SELECT * FROM made UNION ALL SELECT t.key_user_id, t.key_memory_id, "
            f"t.generation, t.wrapped_key FROM {MEMORY_TABLE} t JOIN w "
            f"ON t.key_user_id = w.u AND t.key_memory_id = w.m",
            ([u for u, _ in wanted], [m for _, m in wanted], wrapped, generation),
        )
        newest: dict[MemoryPair, tuple[int, bytes]] = {}
        for user_id, memory_id, gen, key in rows:
            pair = (user_id, memory_id)
            if pair not in newest or gen > newest[pair][0]:
                newest[pair] = (gen, bytes(key))
        return {
            pair: self._memory_cipher(users[pair[0]], (*pair, gen), key)
            for pair, (gen, key) in newest.items()
        }

    def erase_memory_keys(self, erasures: Iterable[MemoryKeyId]) -> int:
        """Destroy, for each (user, memory, through), the memory's keys of generations up to
        ``through``, in one statement; the number destroyed. What they sealed never opens
        again; a later generation (the memory written anew) is left alone."""
        wanted = list(dict.fromkeys(erasures))
        if not wanted:
            return 0
        for user_id, memory_id, through in wanted:
            cached = self._memory_cache.get((user_id, memory_id), {})
            for generation in [g for g in cached if g <= through]:
                del cached[generation]
            if not cached:
                self._memory_cache.pop((user_id, memory_id), None)
        conn = self._connection()
        self._wrote()
        with conn.transaction():
            gone = conn.execute(
                f"DELETE FROM {MEMORY_TABLE} k USING unnest(%b::text[], %b::text[], "
                f"%b::bigint[]) AS w(u, m, g) WHERE k.key_user_id = w.u "
                f"AND k.key_memory_id = w.m AND k.generation <= w.g",
                _columns(wanted),
            )
        return gone.rowcount

    def rewrap(self, batch: int = 500) -> int:
        """Re-wrap every data key not wrapped by the current master key; the number re-wrapped.
        The data keys themselves, and so every sealed record, stay as they are."""
        done = 0
        conn = self._connection()
        while True:
            with conn.transaction():
                rows = conn.execute(
                    f"SELECT key_user_id, master_key_id, wrapped_key FROM {TABLE} "
                    f"WHERE master_key_id <> %s LIMIT %s FOR UPDATE SKIP LOCKED",
                    (self.master.key_id, batch),
                ).fetchall()
                for user_id, master_id, wrapped in rows:
                    data_key = self._unwrap(user_id, master_id, bytes(wrapped))
                    conn.execute(
                        f"UPDATE {TABLE} SET master_key_id = %s, wrapped_key = %s "
                        f"WHERE key_user_id = %s",
                        (
                            self.master.key_id,
                            self.master.wrap(data_key, _wrap_context(user_id)),
                            user_id,
                        ),
                    )
            done += len(rows)
            if len(rows) < batch:
                return done

    # -- internals --------------------------------------------------------------------------

    def _memory_cipher(
        self, user: FieldCipher, key_id: MemoryKeyId, wrapped: bytes
    ) -> MemoryCipher:
        user_id, memory_id, generation = key_id
        cached = self._memory_cache.get((user_id, memory_id))
        cipher = None if cached is None else cached.get(generation)
        if cipher is None:
            cipher = MemoryCipher(unwrap_memory_key(user, wrapped, key_id), memory_id, generation)
            self._cache_memory_cipher(key_id, cipher)
        return cipher

    def _cache_memory_cipher(self, key_id: MemoryKeyId, cipher: MemoryCipher) -> None:
        user_id, memory_id, generation = key_id
        cached = self._memory_cache.get((user_id, memory_id))
        if cached is None:
            cached = self._memory_cache[(user_id, memory_id)] = {}
            if len(self._memory_cache) > CACHED_MEMORY_KEYS:
                self._memory_cache.popitem(last=False)
        cached[generation] = cipher

    def _cached_cipher(self, user_id: str) -> FieldCipher | None:
        cipher = self._cache.get(user_id)
        if cipher is not None:
            self._cache.move_to_end(user_id)
        return cipher

    def _remember(self, user_id: str, cipher: FieldCipher) -> None:
        self._cache[user_id] = cipher
        if len(self._cache) > self._cached:
            self._cache.popitem(last=False)

    def _load(self, user_ids: list[str], *, create: bool) -> dict[str, FieldCipher]:
        conn = self._connection()
        if create:
            self._wrote()
            made = [
                (u, self.master.key_id, self.master.wrap(os.urandom(KEY_BYTES), _wrap_context(u)))
                for u in user_ids
            ]
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {TABLE} (key_user_id, master_key_id, wrapped_key) "
                    f"VALUES (%s, %s, %s) ON CONFLICT (key_user_id) DO NOTHING",
                    made,
                )
        rows = conn.execute(
            f"SELECT key_user_id, master_key_id, wrapped_key FROM {TABLE} "
            f"WHERE key_user_id = ANY(%s)",
            (user_ids,),
        ).fetchall()
        found = {}
        for user_id, master_id, wrapped in rows:
            cipher = FieldCipher(self._unwrap(user_id, master_id, bytes(wrapped)))
            self._remember(user_id, cipher)
            found[user_id] = cipher
        return found

    def _unwrap(self, user_id: str, master_id: str, wrapped: bytes) -> bytes:
        master = self.masters.get(master_id)
        if master is None:
            raise MasterKeyError(
                f"the data key of a user was wrapped by master key {master_id}, which is not "
                f"configured: list its file in MEMSTREAM_MASTER_KEY_RETIRED_FILES (a retired "
                f"key) until `memstream keys rotate` re-wraps it"
            )
        return master.unwrap(wrapped, _wrap_context(user_id))
