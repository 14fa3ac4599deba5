"""Per-token rate limits (memstream/http/limits.py), on a clock the test moves."""

from __future__ import annotations

from memstream.http.limits import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_of_one_seconds_requests_passes_and_the_next_waits() -> None:
    clock = Clock()
    limiter = RateLimiter(requests_per_second=5, bytes_per_minute=10_000, clock=clock)
    assert [limiter.admit("t", 0) for _ in range(5)] == [0] * 5
    assert limiter.admit("t", 0) == 1  # one request refills in 0.2 s: retry after 1 s
    clock.now += 0.2
    assert limiter.admit("t", 0) == 0


def test_tokens_are_limited_apart() -> None:
    limiter = RateLimiter(requests_per_second=1, bytes_per_minute=10_000, clock=Clock())
    assert limiter.admit("a", 0) == 0
    assert limiter.admit("a", 0) > 0
    assert limiter.admit("b", 0) == 0


def test_bytes_per_minute_refuse_a_body_until_the_bucket_holds_it() -> None:
    clock = Clock()
    limiter = RateLimiter(requests_per_second=100, bytes_per_minute=6_000, clock=clock)
    assert limiter.admit("t", 5_000) == 0
    wait = limiter.admit("t", 5_000)  # 1,000 left; 4,000 more at 100/s
    assert wait == 40
    clock.now += 40
    assert limiter.admit("t", 5_000) == 0


def test_bytes_that_arrive_undeclared_are_charged_after_the_fact() -> None:
    clock = Clock()
    limiter = RateLimiter(requests_per_second=100, bytes_per_minute=6_000, clock=clock)
    assert limiter.admit("t", 0) == 0
    limiter.charge("t", 6_000)  # a chunked body without Content-Length
    assert limiter.admit("t", 1) > 0


def test_a_refused_request_is_not_charged() -> None:
    clock = Clock()
    limiter = RateLimiter(requests_per_second=1, bytes_per_minute=60_000, clock=clock)
    assert limiter.admit("t", 0) == 0
    for _ in range(10):
        assert limiter.admit("t", 0) == 1
    clock.now += 1.0
    assert limiter.admit("t", 0) == 0
