"""The batch oracle: the pure engine driven over a list of events in a plain loop.

The streaming run (Kafka → Faust → ledger → projector) must reach the same decisions and the
same read models as this loop; tests compare the two. Events are applied in list order per
user, which is the order Kafka keeps for one key.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from streams.engine.ingest import Accepted, Duplicate, ingest
from streams.engine.ledger import ConsolidationEvent
from streams.engine.model import MemoryEvent
from streams.engine.state import InMemoryUserState, apply_outcome
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

    def feed(self, event: MemoryEvent, limits: Limits) -> None:
        state = self.state(event.user_id)
        outcome = ingest(state, event, limits, key=event.user_id)
        if isinstance(outcome, Rejection):
            self.rejections.append((event, outcome))
        elif isinstance(outcome, Duplicate):
            self.duplicates += 1
        else:
            assert isinstance(outcome, Accepted)
            apply_outcome(state, event.event_id, outcome.decisions)
            self.decisions.extend(outcome.decisions)
            self.accepted += 1

    def decisions_for(self, user_id: str) -> list[ConsolidationEvent]:
        return [d for d in self.decisions if d.user_id == user_id]


def replay(events: Iterable[MemoryEvent], limits: Limits) -> OracleRun:
    run = OracleRun()
    for event in events:
        run.feed(event, limits)
    return run
