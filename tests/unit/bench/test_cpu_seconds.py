"""The sealing bench's CPU per event: read from the processes' own metrics endpoints, and
reported only where every mode has it."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator

import pytest
from prometheus_client import CollectorRegistry, Counter, start_http_server

from bench import sealing_cost
from bench.measure import cpu_seconds


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


Serve = Callable[[int, float | None], None]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Metrics endpoints as the processes serve them (prometheus_client's own server): one on
    ``port`` saying ``cpu`` seconds as process_cpu_seconds_total (None: not saying it)."""
    servers = []

    def start(port: int, cpu: float | None) -> None:
        registry = CollectorRegistry()
        Counter("other", "a metric that is not CPU", registry=registry).inc()
        if cpu is not None:
            Counter("process_cpu_seconds", "CPU", registry=registry).inc(cpu)
        servers.append(start_http_server(port, addr="127.0.0.1", registry=registry)[0])

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def side_by_side() -> int:
    """A port whose next one is free too (process k serves port + k)."""
    while True:
        port = free_port()
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port


def test_cpu_seconds_is_the_sum_over_the_processes(serve: Serve) -> None:
    port = side_by_side()
    serve(port, 1.5)
    serve(port + 1, 2.25)
    assert cpu_seconds(port, 2) == pytest.approx(3.75)
    assert cpu_seconds(port, 1) == pytest.approx(1.5)


def test_a_process_that_does_not_say_its_cpu_gives_none(serve: Serve) -> None:
    port = side_by_side()
    serve(port, 1.0)
    serve(port + 1, None)
    assert cpu_seconds(port, 2) is None
    assert cpu_seconds(free_port(), 1) is None  # nothing listening


def test_cpu_is_reported_for_the_roles_every_mode_measured() -> None:
    medians = {
        "plain": {"worker": 1.0, "worker_cpu_us": 500.0, "projector_cpu_us": 40.0},
        "user": {"worker": 1.0, "worker_cpu_us": 550.0, "projector_cpu_us": 45.0},
        "memory": {"worker": 1.0, "worker_cpu_us": 625.0},
    }
    [blank, line] = sealing_cost.cpu_lines(medians)
    assert blank == ""
    assert "worker 500 / 550 / 625 µs (plain / memory keys 0.80)" in line
    assert "projector" not in line
    del medians["plain"]["worker_cpu_us"]
    assert sealing_cost.cpu_lines(medians) == []
