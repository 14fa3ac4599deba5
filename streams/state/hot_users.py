"""The worker's per-user state for the partitions it owns, with a bounded set of hot users.

State is restored on assignment (``streams.state.restore``: local checkpoint + the state
changelog's tail, or the ledger's fold as the disaster-recovery path) and kept current by
the same fold the engine and the oracle use. :meth:`UserStates.rebuild_partition` is that
fold over a ledger partition: it applies only complete emissions, so an input whose output
was committed in part is processed again.

Only ``capacity`` users are held as Python objects (least recently used evicted first); the
others are *cold*: their state is in the local store (``streams.state.store``) and is loaded
again when an input of theirs comes. A user is evicted only when clean, that is when every
state entry it sent is in the local store's checkpoint, so loading it back gives exactly the
state it had. Between checkpoints (every few seconds) the hot set may exceed the capacity
by the users touched meanwhile. For each cold user the time its time-driven work is due
(``due_of``) is kept, so periodic ticks never load a user that has nothing due.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable

from streams.engine.emissions import EmissionAssembler, complete_emissions
from streams.engine.ledger import ConsolidationEvent
from streams.engine.user_state import InMemoryUserState

Loader = Callable[[int, str], InMemoryUserState]
"""(partition, user id) → the user's state, read back from the local store."""
DueOf = Callable[[InMemoryUserState], int | None]
"""When a user's time-driven work is next due (event time, ms), or None."""


class UserStates:
    """User states grouped by the input partition that owns them."""

    def __init__(
        self,
        capacity: int | None = None,
        loader: Loader | None = None,
        due_of: DueOf | None = None,
    ) -> None:
        """Without ``capacity`` (or without a ``loader`` to bring users back) every user
        stays hot. ``due_of`` is needed to evict: a cold user's due time is kept."""
        self.capacity = capacity if loader is not None and due_of is not None else None
        self.loader = loader
        self.due_of = due_of
        self._hot: OrderedDict[str, InMemoryUserState] = OrderedDict()  # least recent first
        self._cold_due: dict[str, int | None] = {}
        # hot users' due times, valid until the user is handed out again (:meth:`user`):
        # a due time depends on the state alone, and a tick must not walk every hot user's
        # memories when only a few of them had input since the last tick
        self._hot_due: dict[str, int | None] = {}
        self._partition_of: dict[str, int] = {}
        self._partition_users: dict[int, set[str]] = {}
        self.folded = 0  # ledger events folded by rebuilds
        self.partial_events = 0  # ledger events of incomplete emissions that rebuilds skipped
        self.loads = 0  # cold users loaded back from the store
        self.evictions = 0

    def user(self, user_id: str, partition: int) -> InMemoryUserState:
        """The user's state, to read or change: its cached due time is dropped."""
        self._hot_due.pop(user_id, None)
        state = self._hot.get(user_id)
        if state is not None:
            self._hot.move_to_end(user_id)
            return state
        if user_id in self._cold_due:
            assert self.loader is not None  # only a UserStates with a loader has cold users
            state = self.loader(self._partition_of[user_id], user_id)
            del self._cold_due[user_id]
            self.loads += 1
        else:
            state = InMemoryUserState(user_id)
            self._partition_of[user_id] = partition
            self._partition_users.setdefault(partition, set()).add(user_id)
        self._hot[user_id] = state
        return state

    def replace(self, user_id: str, state: InMemoryUserState) -> None:
        """Put ``state`` in place of a hot user's (an input that failed midway is undone by
        rebuilding the state from its entries). Nothing is evicted: this happens mid-batch,
        while users' changes are not yet sent."""
        if user_id not in self._partition_of:
            raise KeyError(f"user {user_id!r} is not held here")
        self._cold_due.pop(user_id, None)
        self._hot_due.pop(user_id, None)
        self._hot[user_id] = state
        self._hot.move_to_end(user_id)

    def install(self, partition: int, state: InMemoryUserState) -> None:
        """Add a user read from the local store (a restore), evicting beyond the capacity:
        everything read from the store is clean."""
        user_id = state.user_id
        self._partition_of[user_id] = partition
        self._partition_users.setdefault(partition, set()).add(user_id)
        self._cold_due.pop(user_id, None)
        self._hot_due.pop(user_id, None)
        self._hot[user_id] = state
        self.evict(lambda _partition, _user: False)

    def evict(self, dirty: Callable[[int, str], bool]) -> int:
        """Make users cold, least recently used first, until at most ``capacity`` are hot;
        ``dirty(partition, user)`` ones (state not yet all in the local store) are kept."""
        if self.capacity is None or len(self._hot) <= self.capacity:
            return 0
        assert self.due_of is not None
        evicted = 0
        for user_id in list(self._hot):
            if len(self._hot) <= self.capacity:
                break
            if dirty(self._partition_of[user_id], user_id):
                continue
            self._cold_due[user_id] = self._due(user_id, self._hot.pop(user_id), self.due_of)
            self._hot_due.pop(user_id, None)
            evicted += 1
        self.evictions += evicted
        return evicted

    def due_users(self, partition: int, now_ms: int, due_of: DueOf) -> set[str]:
        """The partition's users whose time-driven work is due at ``now_ms``, hot or cold,
        without loading a cold one."""
        due = set()
        for user_id in self._partition_users.get(partition, ()):
            state = self._hot.get(user_id)
            at = (
                self._due(user_id, state, due_of)
                if state is not None
                else self._cold_due.get(user_id)
            )
            if at is not None and at <= now_ms:
                due.add(user_id)
        return due

    def _due(self, user_id: str, state: InMemoryUserState, due_of: DueOf) -> int | None:
        """A hot user's due time, computed once per change of its state."""
        if user_id not in self._hot_due:
            self._hot_due[user_id] = due_of(state)
        return self._hot_due[user_id]

    def drop_partition(self, partition: int) -> None:
        """Forget a revoked partition's users: their next owner rebuilds them."""
        for user_id in self._partition_users.pop(partition, set()):
            self._hot.pop(user_id, None)
            self._hot_due.pop(user_id, None)
            self._cold_due.pop(user_id, None)
            self._partition_of.pop(user_id, None)

    def rebuild_partition(self, partition: int, ledger: Iterable[ConsolidationEvent]) -> int:
        """Replace the partition's state with the fold of its ledger's *complete* emissions.
        Returns events folded. Every user stays hot (the disaster-recovery path: the store
        has none of them until their entries are sent and checkpointed).

        An input whose emission is only partly in the ledger is not folded at all, so it
        stays unseen and the worker processes it again, re-emitting the same events (their
        ids are deterministic) and then the rest."""
        self.drop_partition(partition)
        folded = 0
        assembler = EmissionAssembler()
        for emission in complete_emissions(ledger, assembler):
            state = self.user(emission[0].user_id, partition)
            for event in emission:
                state.fold(event)
            folded += len(emission)
        self.folded += folded
        self.partial_events += assembler.abandoned + assembler.open_events()
        return folded

    def adopt_partition(self, partition: int, other: UserStates) -> int:
        """Replace this partition's users with ``other`` 's (a restore done elsewhere).
        Returns how many ledger events built them."""
        self.drop_partition(partition)
        for user_id in other.users_in(partition):
            self._partition_of[user_id] = partition
            if user_id in other._hot:
                self._hot[user_id] = other._hot[user_id]
                self._hot_due.pop(user_id, None)
            else:
                self._cold_due[user_id] = other._cold_due[user_id]
        self._partition_users[partition] = other.users_in(partition)
        self.partial_events += other.partial_events
        return other.folded

    def users_in(self, partition: int) -> set[str]:
        return set(self._partition_users.get(partition, ()))

    def hot_users(self) -> int:
        return len(self._hot)

    def __len__(self) -> int:
        return len(self._partition_of)
