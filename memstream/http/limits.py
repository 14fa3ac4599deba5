"""Per-token rate limits: requests per second and request bytes per minute.

Token buckets held in this process's memory, one pair per token subject (tenant, sub, user):
stateless replicas share nothing, so N replicas admit up to N times the configured rates
(put a shared limiter in front of the API if that matters). A refused request is told how
long to wait (``Retry-After``). The clock is injected, so the arithmetic is testable.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

MAX_TRACKED = 100_000  # subjects whose buckets are kept; the least recently seen go first


@dataclass
class TokenBucket:
    """Holds up to ``capacity`` tokens, refilled at ``rate`` per second. A take may leave the
    bucket in debt (bytes counted after a body streamed in): the debt is waited out."""

    rate: float
    capacity: float
    tokens: float
    updated: float

    def refill(self, now: float) -> None:
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    def wait_for(self, amount: float, now: float) -> float:
        """Seconds until ``amount`` tokens are there (0: now)."""
        self.refill(now)
        missing = min(amount, self.capacity) - self.tokens
        return 0.0 if missing <= 0 else missing / self.rate

    def take(self, amount: float, now: float) -> None:
        self.refill(now)
        self.tokens -= amount


class RateLimiter:
    """Admits a subject's request if both of its buckets allow it."""

    def __init__(
        self,
        requests_per_second: float,
        bytes_per_minute: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.requests_per_second = requests_per_second
        self.bytes_per_second = bytes_per_minute / 60.0
        self.bytes_per_minute = bytes_per_minute
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: OrderedDict[str, tuple[TokenBucket, TokenBucket]] = OrderedDict()

    def _buckets_of(self, subject: str, now: float) -> tuple[TokenBucket, TokenBucket]:
        buckets = self._buckets.get(subject)
        if buckets is None:
            burst = max(1.0, self.requests_per_second)
            buckets = (
                TokenBucket(self.requests_per_second, burst, burst, now),
                TokenBucket(
                    self.bytes_per_second, self.bytes_per_minute, self.bytes_per_minute, now
                ),
            )
            self._buckets[subject] = buckets
            while len(self._buckets) > MAX_TRACKED:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(subject)
        return buckets

    def admit(self, subject: str, declared_bytes: int) -> int:
        """0 if ``subject`` may make a request of ``declared_bytes`` now (and charge it);
        else the whole seconds to wait before retrying (nothing charged)."""
        with self._lock:
            now = self._clock()
            requests, volume = self._buckets_of(subject, now)
            wait = max(requests.wait_for(1, now), volume.wait_for(declared_bytes, now))
            if wait > 0:
                return max(1, math.ceil(wait))
            requests.take(1, now)
            volume.take(declared_bytes, now)
            return 0

    def charge(self, subject: str, extra_bytes: int) -> None:
        """Charge bytes that arrived beyond what the request declared (a chunked body)."""
        if extra_bytes <= 0:
            return
        with self._lock:
            now = self._clock()
            self._buckets_of(subject, now)[1].take(extra_bytes, now)
