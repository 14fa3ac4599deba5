"""The worker's state as table entries for a compacted changelog topic (``memory.state``).

A user's state is split into small entries, one Kafka record each, keyed
``user \\x1f table \\x1f id``:

====== ======================== =================================================
table  id                       value
====== ======================== =================================================
``m``  memory id                the memory record (memory, version, forgotten, changed)
``s``  session id               the session window, without its members
``n``  session id, memory id    a session's member: its position and event time
``e``  input event id           its event time: seen (deduplication of inputs)
``p``  memory id pair           a contradiction pair already reported
``c``  conversation id          its messages since the user's last cycle (seed 000's
                                on-write trigger)
``u``  (empty)                  the rest: identity anchor, procedural profile, last
                                maintenance, change epoch
====== ======================== =================================================

After each input the worker sends the entries that input touched (:func:`changed_entries`),
in the same Kafka transaction as the input's ledger records and offset
(``streams.kafka.transactional_output``). So the changelog's cost per input grows with the work of
the input, and a restore reads each live entry once (compaction keeps the last value per
key) instead of folding the user's whole history from the ledger. A session's members are
entries of their own for the same reason: a memory written into a months-long session adds
one small entry rather than rewriting the session's whole member list. So are the conversation
counters: they were in the meta entry, which every input re-sends, and a user who opened a
conversation per request (1,500 in 25 minutes, before a session end ran a cycle) made each
input send 21 KB of counters.

The memories changed since the user's last cycle (what the next one compares) are not
listed anywhere: that list grew with every write between two cycles, and every input
re-sent it. A memory's entry, written anyway when it changes, carries the user's change
epoch at that time (``_changed``: the number of cycles that took the changed memories so
far; null once the memory is no longer changed); a cycle moves the epoch on in the ``u``
entry, so the memories it took drop out without an entry each.

A user's entries may come in any order (key order from the local store, changelog order from
Kafka), so a restore collects them in a :class:`UserStateBuilder` and builds the state once
all are in.

Values are JSON (UTF-8): readable with any consumer, versioned by the field names, and never
executable (unlike pickle). Embeddings and anchors are base64 of the packed float32 bytes.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

import orjson

from streams.engine import ledger
from streams.engine.dataclass_speedups import field_reader
from streams.engine.model import Memory
from streams.engine.user_state import (
    IdentityAnchor,
    InMemoryUserState,
    Members,
    MemoryRecord,
    SessionWindow,
    pair_key,
)
from streams.engine.validation import KEY_SEPARATOR

SEPARATOR = KEY_SEPARATOR  # ids holding it are refused at validation
MEMORY, SESSION, MEMBER, SEEN, PAIR, CONVERSATION, META = "m", "s", "n", "e", "p", "c", "u"
_TUPLE_FIELDS = {f.name for f in dataclasses.fields(Memory) if "tuple" in str(f.type)}
_memory_fields = field_reader(Memory)
_SESSION_FIELDS = tuple(f.name for f in dataclasses.fields(SessionWindow) if f.name != "member_ids")


EntryOpener = Callable[[str, str, bytes, str], "bytes | None"]
"""(user id, table, stored value, entry id) → the value to apply; None: it was sealed with an
erased key, so the entry counts as gone (``streams.erasure.sealing.Sealing.open_entry``; a
memory's entry may be sealed with the key of that memory, which the entry id names)."""


@runtime_checkable
class PrefetchingOpener(Protocol):
    """An :data:`EntryOpener` that reads the keys of a user's memories in one round trip
    before their entries are opened (``streams.erasure.sealing.EntryOpening``): a cold
    user's load costs one query, not one per memory."""

    def __call__(self, user_id: str, table: str, value: bytes, entry_id: str) -> bytes | None: ...

    def prefetch_entries(self, user_id: str, memory_ids: list[str]) -> None: ...


@dataclass(frozen=True, slots=True)
class Entry:
    key: bytes
    value: bytes | None  # None: a tombstone (the entry is gone; compaction removes it)


def entry_key(user_id: str, table: str, entry_id: str = "") -> bytes:
    return SEPARATOR.join((user_id, table, entry_id)).encode()


def split_key(key: bytes) -> tuple[str, str, str]:
    user_id, table, entry_id = key.decode().split(SEPARATOR, 2)
    return user_id, table, entry_id


# --- what one input changed -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BeforeInput:
    """What :func:`changed_entries` needs of a user's state as it was before an input, so
    that what the input drops leaves no entries behind: the members of the active sessions
    (a narrative drops its session's). Taken by :func:`before_input` at the cost of the
    active sessions."""

    members: Mapping[str, Sequence[str]]
    conversations: Mapping[str, int]
    """The user's conversation counters: the dict itself, which a cycle replaces rather
    than clears (``InMemoryUserState.fold``), so taking it costs nothing. Not a snapshot:
    the input's own counts land in it until a cycle replaces it; only which dict it is,
    and its keys, are read (the counters a cycle dropped)."""


def before_input(state: InMemoryUserState) -> BeforeInput:
    sessions = state.facets.active_sessions()
    return BeforeInput(
        {w.session_id: w.member_ids for w in sessions if w.member_ids},
        state.conversation_messages,
    )


def changed_entries(
    state: InMemoryUserState,
    input_event_id: str,
    decisions: Iterable[ledger.ConsolidationEvent],
    before: BeforeInput | None = None,
) -> list[Entry]:
    """The entries an input changed, read from ``state`` after its decisions were folded.
    Without ``before`` (:func:`before_input`), what the input dropped keeps its entries: a
    restore ignores them, but the changelog keeps them until the key is written again."""
    user = state.user_id
    memories: dict[str, None] = {}
    sessions: dict[str, None] = {}
    members: dict[tuple[str, str], tuple[int, int]] = {}
    consolidated: dict[str, None] = {}
    pairs: dict[tuple[str, str], None] = {}
    counted: dict[str, None] = {}
    seen: dict[str, None] = {input_event_id: None}
    for decision in decisions:
        seen[decision.causation_id] = None
        payload = decision.payload
        memories.update(dict.fromkeys(touched_memory_ids(payload)))
        if isinstance(payload, ledger.MemoryStored):
            _store_member(state, decision, payload, sessions, members)
            conversation = payload.memory.conversation_id
            if payload.version == 1 and conversation is not None and decision.trigger == "ingest":
                counted[conversation] = None  # as the fold counts it
        elif isinstance(payload, ledger.SessionClosed):
            sessions[payload.session_id] = None
        elif isinstance(payload, ledger.SessionConsolidated):
            sessions[payload.session_id] = None
            consolidated[payload.session_id] = None
        elif isinstance(payload, ledger.ContradictionDetected):
            pairs[pair_key(payload.memory_id, payload.other_memory_id)] = None
    entries = [
        Entry(entry_key(user, MEMORY, i), encode_memory_record(state.memories[i], _epoch(state, i)))
        for i in memories
        if i in state.memories
    ]
    entries += [
        Entry(entry_key(user, SESSION, s), encode_session(state.facets.sessions[s]))
        for s in sessions
        if s in state.facets.sessions
    ]
    # (a member written and consolidated within the input has no entry: see _store_member)
    entries += [
        Entry(member_key(user, s, m), encode_member(s, m, *value))
        for (s, m), value in members.items()
    ]
    for session_id in consolidated:  # its members are dropped: so are their entries
        gone = before.members.get(session_id, ()) if before is not None else ()
        entries += [Entry(member_key(user, session_id, m), None) for m in sorted(gone)]
    entries += [
        Entry(entry_key(user, SEEN, e), str(state.seen_event_ids[e]).encode())
        for e in seen
        if state.has_seen(e)
    ]
    entries += [Entry(entry_key(user, PAIR, SEPARATOR.join(p)), b"1") for p in pairs]
    entries += _conversation_entries(state, counted, before)
    entries.append(Entry(entry_key(user, META), encode_meta(state)))
    return entries


def _conversation_entries(
    state: InMemoryUserState, counted: Iterable[str], before: BeforeInput | None
) -> list[Entry]:
    """The counters the input moved on; after a cycle (which starts the counts afresh),
    tombstones for those it dropped."""
    user, counts = state.user_id, state.conversation_messages
    entries = [
        Entry(entry_key(user, CONVERSATION, c), str(counts[c]).encode())
        for c in counted
        if c in counts
    ]
    if before is not None and before.conversations is not counts:
        entries += [
            Entry(entry_key(user, CONVERSATION, c), None)
            for c in before.conversations
            if c not in counts
        ]
    return entries


def _store_member(
    state: InMemoryUserState,
    decision: ledger.ConsolidationEvent,
    stored: ledger.MemoryStored,
    sessions: dict[str, None],
    members: dict[tuple[str, str], tuple[int, int]],
) -> None:
    """A written memory the fold made a session's newest member: its member entry, and the
    session's own entry when the memory opened the session. Mirrors ``UserFacets.apply``."""
    memory = stored.memory
    session_id = memory.session_id
    if not session_id:
        return
    window = state.facets.sessions.get(session_id)
    if window is None or not window.member_ids or window.member_ids[-1] != memory.memory_id:
        return  # not a member (the session had ended), or consolidated within this input
    at = memory.created_at if memory.created_at is not None else decision.occurred_at
    members[(session_id, memory.memory_id)] = (len(window.member_ids) - 1, at)
    if len(window.member_ids) == 1:
        sessions[session_id] = None  # a new session: its header


def expired_entries(user_id: str, event_ids: Iterable[str]) -> list[Entry]:
    """Tombstones for input ids that left the deduplication window."""
    return [Entry(entry_key(user_id, SEEN, e), None) for e in event_ids]


def all_entries(state: InMemoryUserState) -> list[Entry]:
    """Every entry of a user's state: a full snapshot (after a rebuild from the ledger)."""
    user = state.user_id
    entries = [
        Entry(entry_key(user, MEMORY, i), encode_memory_record(r, _epoch(state, i)))
        for i, r in state.memories.items()
    ]
    entries += [
        Entry(entry_key(user, SESSION, s), encode_session(w))
        for s, w in state.facets.sessions.items()
    ]
    entries += [  # the session's entry has its current times: any within them will do
        Entry(member_key(user, s, m), encode_member(s, m, position, w.last_event_at))
        for s, w in state.facets.sessions.items()
        for position, m in enumerate(w.member_ids)
    ]
    entries += [
        Entry(entry_key(user, SEEN, e), str(at).encode()) for e, at in state.seen_event_ids.items()
    ]
    entries += [
        Entry(entry_key(user, PAIR, SEPARATOR.join(p)), b"1") for p in sorted(state.flagged_pairs)
    ]
    entries += [
        Entry(entry_key(user, CONVERSATION, c), str(n).encode())
        for c, n in state.conversation_messages.items()
    ]
    entries.append(Entry(entry_key(user, META), encode_meta(state)))
    return entries


def touched_memory_ids(payload: ledger.LedgerPayload) -> tuple[str, ...]:
    """The memories whose records a ledger decision changes (``records_after`` 's subjects)."""
    if isinstance(payload, ledger.MemoryStored):
        return (payload.memory.memory_id,)
    if isinstance(payload, ledger.MemoryPromoted):
        return (payload.promoted.memory_id, payload.source_memory_id)
    if isinstance(payload, ledger.PatternDetected):
        return (payload.pattern.memory_id,)
    if isinstance(payload, ledger.MemoryMerged):
        return (payload.survivor.memory_id, payload.merged_memory_id)
    if isinstance(payload, ledger.ContradictionDetected):
        return () if payload.invalidated_memory_id is None else (payload.invalidated_memory_id,)
    if isinstance(payload, ledger.SessionConsolidated):
        return (payload.narrative.memory_id,)
    if isinstance(payload, ledger.EpisodesSummarized):
        return (payload.summary.memory_id,)
    if isinstance(payload, ledger.ProceduralSynthesized):
        return (payload.profile.memory_id,)
    if isinstance(payload, ledger.ScopePromoted):
        return (payload.copy.memory_id,)
    memory_id = getattr(payload, "memory_id", None)
    return () if memory_id is None else (memory_id,)


# --- applying entries (restore) ---------------------------------------------------------------


class UserStateBuilder:
    """One user's state from its entries, which may come in any order and include
    tombstones: :meth:`apply` each (later values of a key replace earlier ones), then
    :meth:`build` once. Members are kept aside until then, as their session's own entry may
    come after them."""

    def __init__(self, user_id: str, open_value: EntryOpener | None = None) -> None:
        """``open_value``: opens sealed values (sealing on); None: values are plain JSON."""
        self.state = InMemoryUserState(user_id)
        self._open_value = open_value
        self._members: dict[str, tuple[str, str, int, int]] = {}  # entry id → decoded value
        self._epochs: dict[str, int] = {}  # memory id → the change epoch its entry carries
        self._changed_in_meta: tuple[str, ...] = ()  # as older workers wrote them
        self._counted_in_meta: dict[str, int] | None = None  # as older workers wrote them
        self._counts: dict[str, int] = {}
        self._owed_members: list[Entry] = []

    def apply(self, table: str, entry_id: str, value: bytes | None) -> None:
        """Put one entry in; ``value`` None is a tombstone (the entry is gone)."""
        state = self.state
        if value is not None and self._open_value is not None:
            value = self._open_value(state.user_id, table, value, entry_id)
        if table == MEMORY:
            state.forget_derived()
            self._epochs.pop(entry_id, None)
            if value is None:
                state.memories.pop(entry_id, None)
            else:
                record, epoch = decode_memory_record(value)
                state.memories[entry_id] = record
                if epoch is not None:
                    self._epochs[entry_id] = epoch
        elif table == SESSION:
            if value is None:
                state.facets.drop_session(entry_id)
            else:
                state.facets.put_session(decode_session(value))
        elif table == MEMBER:
            if value is None:
                self._members.pop(entry_id, None)
            else:
                self._members[entry_id] = decode_member(value)
        elif table == SEEN:
            if value is None:
                state.seen_event_ids.pop(entry_id, None)
            else:
                state.seen_event_ids[entry_id] = int(value)
        elif table == PAIR:
            a, b = entry_id.split(SEPARATOR, 1)
            if value is None:
                state.flagged_pairs.discard((a, b))
            else:
                state.flagged_pairs.add((a, b))
        elif table == CONVERSATION:
            if value is None:
                self._counts.pop(entry_id, None)
            else:
                self._counts[entry_id] = int(value)
        elif table == META and value is not None:
            self._changed_in_meta, self._counted_in_meta = decode_meta_into(state, value)
        elif table != META:
            raise ValueError(
                f"unknown state table {table!r}: this worker is older than the changelog; "
                "run the newest memstream"
            )

    def build(self) -> InMemoryUserState:
        """The state: members joined to their sessions in arrival order, seen input ids
        oldest first (entries come in key order, not time order)."""
        state = self.state
        by_session: dict[str, list[tuple[int, str, int]]] = {}
        for session_id, memory_id, position, at in self._members.values():
            by_session.setdefault(session_id, []).append((position, memory_id, at))
        for window in list(state.facets.sessions.values()):
            if window.status == "consolidated":
                continue  # a consolidated session has dropped its members
            members = sorted(by_session.get(window.session_id, ()))
            listed = set(window.member_ids)  # by a session entry an older worker wrote
            self._owe_members(window, {m for _, m, _ in members})
            if not members:
                continue
            times = [at for _, _, at in members]
            state.facets.put_session(
                replace(
                    window,
                    member_ids=Members(
                        (*window.member_ids, *(m for _, m, _ in members if m not in listed))
                    ),
                    started_at=min(window.started_at, *times),
                    last_event_at=max(window.last_event_at, *times),
                )
            )
        self._members.clear()
        epoch = state.facets.change_epoch
        changed = {memory_id for memory_id, at in self._epochs.items() if at == epoch}
        state.facets.changed_ids = changed | set(self._changed_in_meta)
        # a meta entry an older worker wrote holds the counters (and no counter entries
        # exist: a newer worker writes its own meta entry with every counter it sends)
        counts = self._counted_in_meta if self._counted_in_meta is not None else self._counts
        state.conversation_messages = dict(counts)
        state.seen_event_ids = dict(sorted(state.seen_event_ids.items(), key=lambda kv: kv[1]))
        return state

    def finish(self) -> tuple[InMemoryUserState, list[Entry]]:
        """The state built and what the changelog still owes it (:meth:`build`, :meth:`owed`)."""
        state = self.build()
        return state, self.owed()

    def owed(self) -> list[Entry]:
        """Entries the changelog lacks for the state built (call after :meth:`build`), as
        entries an older worker wrote hold what newer ones keep elsewhere, and the next
        newer entry of the same key would drop it: the members a session entry listed (the
        session's next entry lists none), the memories the meta entry listed as changed
        (the next meta entry lists none), whose own entries must carry the change epoch, and
        the conversation counters it held (the next one holds none)."""
        state = self.state
        epoch = state.facets.change_epoch
        marked = [
            Entry(
                entry_key(state.user_id, MEMORY, i),
                encode_memory_record(state.memories[i], _epoch(state, i)),
            )
            for i in sorted(self._changed_in_meta)
            if i in state.memories and self._epochs.get(i) != epoch
        ]
        counters = [
            Entry(entry_key(state.user_id, CONVERSATION, c), str(n).encode())
            for c, n in sorted((self._counted_in_meta or {}).items())
        ]
        return self._owed_members + marked + counters

    def _owe_members(self, window: SessionWindow, with_entries: set[str]) -> None:
        """Member entries for the members an older worker's session entry listed."""
        for position, memory_id in enumerate(window.member_ids):
            if memory_id in with_entries:
                continue
            session_id = window.session_id
            value = encode_member(session_id, memory_id, position, window.last_event_at)
            self._owed_members.append(
                Entry(member_key(self.state.user_id, session_id, memory_id), value)
            )


def restored_user(
    user_id: str,
    entries: Iterable[tuple[bytes, bytes | None]],
    open_value: EntryOpener | None = None,
) -> tuple[InMemoryUserState, list[Entry]]:
    """One user's state from its ``(key, value)`` entries, and the entries the changelog
    still owes it (see :class:`UserStateBuilder`)."""
    builder = UserStateBuilder(user_id, open_value)
    split = [(split_key(key), value) for key, value in entries]
    if isinstance(open_value, PrefetchingOpener):
        memories = [i for (_, table, i), value in split if table == MEMORY and value is not None]
        open_value.prefetch_entries(user_id, memories)
    for (_, table, entry_id), value in split:
        builder.apply(table, entry_id, value)
    return builder.finish()


# --- codecs -----------------------------------------------------------------------------------


def encode_memory_record(record: MemoryRecord, change_epoch: int | None = None) -> bytes:
    """``change_epoch``: the user's change epoch while the memory is among those changed
    since the last cycle (see the module doc), else None."""
    data = _memory_to_json(record.memory)
    data["_version"] = record.version
    data["_forgotten"] = record.forgotten
    data["_changed"] = change_epoch
    return _dump(data)


def decode_memory_record(value: bytes) -> tuple[MemoryRecord, int | None]:
    """The record and the change epoch its entry carries (None: not changed, or an entry
    written before epochs)."""
    data = orjson.loads(value)
    version, forgotten = data.pop("_version"), data.pop("_forgotten")
    epoch = data.pop("_changed", None)
    return MemoryRecord(_memory_from_json(data), version, forgotten), epoch


def _epoch(state: InMemoryUserState, memory_id: str) -> int | None:
    facets = state.facets
    return facets.change_epoch if memory_id in facets.changed_ids else None


def encode_session(window: SessionWindow) -> bytes:
    """The session without its members, which are entries of their own (:func:`member_key`)."""
    return _dump({name: getattr(window, name) for name in _SESSION_FIELDS})


def decode_session(value: bytes) -> SessionWindow:
    data = orjson.loads(value)
    # workers before the member entries wrote the members in the session's own entry
    data["member_ids"] = Members(data.get("member_ids", ()))
    return SessionWindow(**data)


def member_key(user_id: str, session_id: str, memory_id: str) -> bytes:
    return entry_key(user_id, MEMBER, f"{session_id}{SEPARATOR}{memory_id}")


def encode_member(session_id: str, memory_id: str, position: int, at: int) -> bytes:
    """The ids travel in the value too: an id may itself contain the key's separator."""
    return _dump({"session_id": session_id, "memory_id": memory_id, "position": position, "at": at})


def decode_member(value: bytes) -> tuple[str, str, int, int]:
    data = orjson.loads(value)
    return data["session_id"], data["memory_id"], data["position"], data["at"]


def encode_meta(state: InMemoryUserState) -> bytes:
    facets = state.facets
    identity = facets.identity
    return _dump(
        {
            "identity": None
            if identity is None
            else {"origin": _b64(identity.origin), "live": _b64(identity.live)},
            "profile_memory_id": facets.profile_memory_id,
            "last_maintenance_at": facets.last_maintenance_at,
            "change_epoch": facets.change_epoch,
        }
    )


def decode_meta_into(
    state: InMemoryUserState, value: bytes
) -> tuple[tuple[str, ...], dict[str, int] | None]:
    """Returns what older workers wrote here and newer ones keep elsewhere: the changed ids
    (before change epochs) and the conversation counters (before counter entries; None when
    the entry holds none)."""
    data = orjson.loads(value)
    counters = data.get("conversation_messages")
    identity = data["identity"]
    state.facets.identity = (
        None
        if identity is None
        else IdentityAnchor(_unb64(identity["origin"]), _unb64(identity["live"]))
    )
    state.facets.profile_memory_id = data["profile_memory_id"]
    state.facets.last_maintenance_at = data["last_maintenance_at"]
    state.facets.change_epoch = data.get("change_epoch", 0)
    return tuple(data.get("changed_ids", ())), None if counters is None else dict(counters)


def _memory_to_json(memory: Memory) -> dict[str, Any]:
    # A shallow read of the fields, not ``dataclasses.asdict``: its deep copy was the
    # changelog's main cost, and every field is a scalar, a tuple of str (orjson writes a
    # tuple as the array a list makes) or a str→str map.
    data = _memory_fields(memory)
    if memory.embedding is not None:
        data["embedding"] = _b64(memory.embedding)
    return data


def _memory_from_json(data: dict[str, Any]) -> Memory:
    for name in _TUPLE_FIELDS:
        data[name] = tuple(data[name])
    if data.get("embedding") is not None:
        data["embedding"] = _unb64(data["embedding"])
    return Memory(**data)


def _dump(data: dict[str, Any]) -> bytes:
    """Compact JSON with sorted keys (``orjson``: the same bytes as ``json.dumps(data,
    separators=(",", ":"), sort_keys=True)``, about ten times faster; every input encodes
    its changed entries, so this is on the worker's hot path)."""
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text)
