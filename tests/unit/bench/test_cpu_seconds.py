"""The sealing bench's CPU per event: read from the processes' own metrics endpoints, and
reported only where every mode has it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench import sealing_cost
from bench.measure import cpu_seconds


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def endpoints() -> Iterator[tuple[int, dict[int, str]]]:
    """Two consecutive ports serving /metrics bodies the test sets (process k at port + k)."""
    bodies: dict[int, str] = {}

    class Metrics(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            body = bodies[self.server.server_address[1]].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    while True:  # two free ports side by side
        port = free_port()
        try:
            servers = [ThreadingHTTPServer(("127.0.0.1", port + k), Metrics) for k in range(2)]
            break
        except OSError:
            continue
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield port, bodies
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


CPU = "# TYPE process_cpu_seconds counter\nprocess_cpu_seconds_total {}\n"


def test_cpu_seconds_is_the_sum_over_the_processes(endpoints: tuple[int, dict[int, str]]) -> None:
    port, bodies = endpoints
    bodies[port], bodies[port + 1] = CPU.format(1.5), CPU.format(2.25)
    assert cpu_seconds(port, 2) == pytest.approx(3.75)
    assert cpu_seconds(port, 1) == pytest.approx(1.5)


def test_a_process_that_does_not_say_its_cpu_gives_none(
    endpoints: tuple[int, dict[int, str]],
) -> None:
    port, bodies = endpoints
    bodies[port], bodies[port + 1] = CPU.format(1.0), "# TYPE other gauge\nother 1\n"
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
