"""Choosing TCP ports for the local Kafka broker.

Several local stacks may run on one machine at once (each test session starts its own), so ports
are chosen free at start, and a port recorded by an earlier ``up`` is reused only while it is still
free. This module only probes ports on 127.0.0.1; it must never start or stop a process.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable

LOCALHOST = "127.0.0.1"


def free_port(avoid: Iterable[int] = ()) -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the kernel picks it)."""
    avoided = set(avoid)
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((LOCALHOST, 0))
            port = int(sock.getsockname()[1])
        if port not in avoided:
            return port
    raise OSError("could not find a free TCP port on 127.0.0.1")


def free_port_range(count: int, avoid: Iterable[int] = ()) -> int:
    """The first of ``count`` consecutive free TCP ports on 127.0.0.1, none in ``avoid``: the
    metrics ports of a role's processes (process k serves the first + k)."""
    avoided = set(avoid)
    for _ in range(50):
        first = free_port(avoided)
        ports = range(first, first + count)
        if ports[-1] <= 65_535 and avoided.isdisjoint(ports) and all(map(port_is_free, ports)):
            return first
    raise OSError(f"could not find {count} consecutive free TCP ports on 127.0.0.1")


def free_port_ranges(count: int, ranges: int) -> list[int]:
    """The first ports of ``ranges`` disjoint runs of ``count`` free ports: one run per role
    (worker, projector) whose processes serve consecutive metrics ports."""
    firsts: list[int] = []
    for _ in range(ranges):
        taken = [port for first in firsts for port in range(first, first + count)]
        firsts.append(free_port_range(count, avoid=taken))
    return firsts


def port_is_free(port: int) -> bool:
    """True when a server could bind 127.0.0.1:``port`` now.

    SO_REUSEADDR is set as the JVM sets it for server sockets, so connections of an earlier broker
    lingering in TIME_WAIT do not count as taken.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOCALHOST, port))
        except OSError:
            return False
    return True


def port_accepts(port: int, timeout: float = 0.5) -> bool:
    """True when something accepts TCP connections on 127.0.0.1:``port``."""
    try:
        with socket.create_connection((LOCALHOST, port), timeout=timeout):
            return True
    except OSError:
        return False


def pick_port(preferred: int | None, avoid: Iterable[int] = ()) -> tuple[int, bool]:
    """Return ``(port, reused)``: ``preferred`` when it is free, else a new free port."""
    avoided = set(avoid)
    if preferred is not None and preferred not in avoided and port_is_free(preferred):
        return preferred, True
    return free_port(avoided), False
