"""The pure consolidation engine.

``(user state, input event or tick, policy, time) -> (state changes, decisions)``. Nothing in
this package imports Kafka, Faust, Postgres, the clock, randomness or logging: Faust agents,
timers and the batch oracle are drivers around it, so the same inputs always give the same
decisions.
"""
