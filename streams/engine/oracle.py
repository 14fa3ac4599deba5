"""The batch oracle: the pure engine driven over a list of events in a plain loop.

The streaming run (Kafka → Faust → ledger → projector) must reach the same decisions and the
same read models as this loop; tests compare the two. Events are applied in list order per
user, which is the order Kafka keeps for one key.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from streams.engine.ingest import Accepted, Duplicate
from streams.engine.ledger import ConsolidationEvent
from streams.engine.model import MemoryEvent
from streams.engine.step import EngineConfig, step
from streams.engine.user_state import InMemoryUserState
from streams.engine.validation import Limits, Rejection


@dataclass
class OracleRun:
    users: dict[str, InMemoryUserState] = field(default_factory=dict)
    decisions: list[ConsolidationEvent] = field(default_factory=list)
    rejections: list[tuple[MemoryEvent, Rejection]] = field(default_factory=list)
    duplicates: int = 0
    accepted: int = 0

    def state(self, user_id: str) -> InMemoryUserState:
        if user_id not in self.users:
            self.users[user_id] = InMemoryUserState(user_id)
        return self.users[user_id]

    def feed(self, event: MemoryEvent, config: EngineConfig) -> None:
        outcome = step(self.state(event.user_id), event, config, key=event.user_id)
        if isinstance(outcome, Rejection):
            self.rejections.append((event, outcome))
        elif isinstance(outcome, Duplicate):
            self.duplicates += 1
        else:
            assert isinstance(outcome, Accepted)
            self.decisions.extend(outcome.decisions)
            self.accepted += 1

    def decisions_for(self, user_id: str) -> list[ConsolidationEvent]:
        return [d for d in self.decisions if d.user_id == user_id]


def replay(events: Iterable[MemoryEvent], config: EngineConfig | Limits) -> OracleRun:
    """Run the engine over ``events`` in order. A bare :class:`Limits` means the default
    policy with those limits."""
    if isinstance(config, Limits):
        config = EngineConfig(limits=config)
    run = OracleRun()
    for event in events:
        run.feed(event, config)
    return run
