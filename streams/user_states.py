"""The worker's per-user state for the partitions it owns, rebuilt from the ledger.

The ledger (``memory.consolidation``) is the worker's changelog. Each ledger event goes to
the same partition number as the input event that caused it, so one partition of the
ledger holds everything about the users of one input partition. On assignment the worker
folds that ledger partition (read_committed) into :class:`InMemoryUserState` s, and only then
processes the partition's input. Because input offsets and ledger events commit in one Kafka
transaction, the rebuilt state is exactly the state that produced the committed offsets.

Faust tables are not used for this: their changelog writes are buffered outside the
exactly-once transaction (faust-streaming, see robinhood/faust#599), so after a SIGKILL a
restored table can lag the ledger and the worker would decide on stale state.
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
