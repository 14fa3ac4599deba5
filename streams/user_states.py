"""The worker's per-user state for the partitions it owns.

State is restored on assignment (``streams.state_restore``: local checkpoint + the state
changelog's tail, or the ledger's fold as the disaster-recovery path) and kept current by
the same fold the engine and the oracle use. :meth:`UserStates.rebuild_partition` is that
fold over a ledger partition: it applies only complete emissions, so an input whose output
was committed in part is processed again.
"""

from __future__ import annotations

from collections.abc import Iterable

from streams.engine.emissions import EmissionAssembler, complete_emissions
from streams.engine.ledger import ConsolidationEvent
from streams.engine.state import InMemoryUserState


class UserStates:
    """User states grouped by the input partition that owns them."""

    def __init__(self) -> None:
        self._users: dict[str, InMemoryUserState] = {}
        self._partition_users: dict[int, set[str]] = {}
        self.folded = 0  # ledger events folded by rebuilds
        self.partial_events = 0  # ledger events of incomplete emissions that rebuilds skipped

    def user(self, user_id: str, partition: int) -> InMemoryUserState:
        state = self._users.get(user_id)
        if state is None:
            state = self._users[user_id] = InMemoryUserState(user_id)
            self._partition_users.setdefault(partition, set()).add(user_id)
        return state

    def drop_partition(self, partition: int) -> None:
        """Forget a revoked partition's users: their next owner rebuilds them."""
        for user_id in self._partition_users.pop(partition, set()):
            self._users.pop(user_id, None)

    def rebuild_partition(self, partition: int, ledger: Iterable[ConsolidationEvent]) -> int:
        """Replace the partition's state with the fold of its ledger's *complete* emissions.
        Returns events folded.

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
        """Replace this partition's users with ``other`` 's (a rebuild done elsewhere).
        Returns how many ledger events built them."""
        self.drop_partition(partition)
        for user_id in other.users_in(partition):
            self._users[user_id] = other._users[user_id]
        self._partition_users[partition] = other.users_in(partition)
        self.partial_events += other.partial_events
        return other.folded

    def users_in(self, partition: int) -> set[str]:
        return set(self._partition_users.get(partition, ()))

    def __len__(self) -> int:
        return len(self._users)
