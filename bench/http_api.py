"""What the HTTP API costs: write acknowledgements and recall through `memstream serve`,
against the same calls made in process, at offered rates of 200 and 1,000 requests/s and for
users of 1k and 10k memories (issue 32).

- write: ``POST /v1/users/{u}/memories`` answered once Kafka acknowledged the event, against
  :class:`memstream.http.publishing.AckingPublisher` in process (the same publish and wait);
- recall: ``POST /v1/users/{u}/recall`` (hybrid, k=5, the server embeds the question with the
  configured embedder), against ``MemoryReader.recall`` with the same embedder, on as many
  threads as the API has readers.

Load is open-loop: request *i* is sent at ``start + i / rate`` whether or not earlier ones
have been answered, and its latency runs from that moment, so a saturated side shows its
queue instead of hiding it (coordinated omission). Each phase is bounded in requests, so the
whole run takes a few minutes. The users' memories are COPYed into a database of the bench's
own (as ``bench.recall_latency`` does); writes go to topics of its own. Needs a running local
stack (``memstream up``); nothing else runs: the worker is not needed for acknowledgements.

``python -m bench.http_api [--sizes 1000 10000] [--rates 200 1000]`` prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import jwt
import numpy as np
import psycopg

from bench import progress
from bench.baselines import column_types
from bench.measure import percentiles
from bench.recall_latency import _copy, _rows, _words
from memstream.http.publishing import AckingPublisher
from memstream.processes import ManagedProcess, start_command
from memstream.stack import LocalStack
from memstream.stack.ports import free_port
from memstream.waiting import wait_until
from projections.copy_dumpers import register_copy_dumpers
from projections.reader import MemoryReader
from projections.rows import MEMORY_COLUMNS
from projections.schema import ensure_database, migrate
from streams.config.settings import Settings
from streams.embedders.factory import embedder_for
from streams.engine.model import Memory, MemoryEvent, MemoryWritten

SIZES = (1_000, 10_000)
RATES = (200, 1_000)
WRITES_PER_PHASE = 1_000  # at most; at 200/s, 5 s of load
RECALLS_PER_PHASE = 200  # at most: a 10k-memory hybrid recall takes ~0.2 s of a core
READERS = 4
CONNECTIONS = 32  # keep-alive connections the load generator spreads requests over
SECRET = "bench-" + "b" * 40
TENANT = "bench"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.http_api", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--rates", type=int, nargs="+", default=list(RATES))
    args = parser.parse_args(argv)
    base = Settings.from_env()
    run = uuid.uuid4().hex[:8]
    workdir = Path(tempfile.mkdtemp(prefix="http-bench-"))
    settings = _bench_settings(base, run, workdir)
    users = _fill_users(settings, run, args.sizes)
    api = _start_api(settings, workdir)
    try:
        rows = []
        for size, user in users.items():
            for rate in args.rates:
                rows.extend(asyncio.run(_phase(settings, user, size, rate)))
        print(_table(rows))
    finally:
        api.stop()
    return 0


def _bench_settings(base: Settings, run: str, workdir: Path) -> Settings:
    secret = workdir / "jwt-secret"
    secret.write_text(SECRET)
    port = free_port()
    settings = base.with_overrides(
        topic_prefix=f"httpbench{run}.",
        database_url=ensure_database(base.database_url, f"http_bench_{run}"),
        http_port=port,
        http_metrics_port=free_port([port]),
        http_jwt_key_file=str(secret),
        http_requests_per_second=1_000_000.0,
        http_bytes_per_minute=1 << 40,
        http_readers=READERS,
    )
    migrate(settings.database_url, settings.embedding_dim, settings.vector_index)
    LocalStack(settings).create_topics(settings.topic_prefix, settings.partitions)
    return settings


def _fill_users(settings: Settings, run: str, sizes: Sequence[int]) -> dict[int, str]:
    rng = np.random.default_rng(7)
    users = {}
    with psycopg.connect(settings.database_url, autocommit=True) as conn:
        register_copy_dumpers(conn)
        types = column_types(conn, "semantic_facts", MEMORY_COLUMNS)
        for size in sizes:
            user = f"{TENANT}:{run}-{size}"
            progress.note(f"{size:,} memories for {user}: copying")
            _copy(conn, _rows(user, size, settings.embedding_dim, rng), types)
            users[size] = user
        conn.execute("ANALYZE semantic_facts")
    return users


def _start_api(settings: Settings, workdir: Path) -> ManagedProcess:
    api = start_command("api", ["serve"], settings, workdir / "logs")
    url = f"http://127.0.0.1:{settings.http_port}/readyz"

    def ready() -> bool:
        try:
            return httpx.get(url, timeout=5, trust_env=False).status_code == 200
        except httpx.TransportError:
            return False

    wait_until(ready, timeout=120, what="the API ready", describe=lambda: api.log_tail(20))
    return api


def _token() -> str:
    claims = {"tenant": TENANT, "scope": "read write", "aud": "memstream", "sub": "bench"}
    return jwt.encode({**claims, "exp": int(time.time()) + 3600}, SECRET, "HS256")


async def _open_loop(
    count: int, rate: float, call: Callable[[int], Awaitable[bool]]
) -> tuple[list[float], float, int]:
    """Latencies (ms, from each request's scheduled time) of the answered requests, the
    achieved rate, and how many were refused (a 503 when a side sheds load)."""
    latencies: list[float] = []
    refused = 0
    start = time.perf_counter() + 0.05

    async def one(i: int) -> None:
        nonlocal refused
        scheduled = start + i / rate
        await asyncio.sleep(max(0.0, scheduled - time.perf_counter()))
        if await call(i):
            latencies.append((time.perf_counter() - scheduled) * 1000)
        else:
            refused += 1

    await asyncio.gather(*(one(i) for i in range(count)))
    return latencies, count / (time.perf_counter() - start), refused


class KeepAliveClient:
    """A minimal HTTP/1.1 client over a pool of keep-alive connections.

    The load generator must not be the bottleneck: httpx's AsyncClient spends more CPU per
    request than the API does (measured here: 40-110 writes/s through httpx with 8-256
    connections against 1,000-1,350/s through raw sockets), so this sends requests as bytes
    and reads back the status line and the body its Content-Length announces."""

    def __init__(self, port: int, token: str, connections: int = CONNECTIONS) -> None:
        self.port = port
        self.token = token
        self.connections = connections
        self._free: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]]
        self._free = asyncio.Queue()

    async def open(self) -> None:
        for _ in range(self.connections):
            self._free.put_nowait(await asyncio.open_connection("127.0.0.1", self.port))

    async def post(self, path: str, body: dict[str, Any]) -> int:
        data = json.dumps(body).encode()
        request = (
            f"POST {path} HTTP/1.1\r\nHost: api\r\nAuthorization: Bearer {self.token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
        ).encode() + data
        reader, writer = await self._free.get()
        try:
            try:
                return await self._exchange(reader, writer, request)
            except (asyncio.IncompleteReadError, ConnectionError):
                # the server closed an idle keep-alive connection (its timeout is 5 s):
                # the request never reached it, so it is sent again on a new one
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
                return await self._exchange(reader, writer, request)
        finally:
            self._free.put_nowait((reader, writer))

    @staticmethod
    async def _exchange(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
    ) -> int:
        writer.write(request)
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in lines
            if line.lower().startswith(b"content-length:")
        )
        await reader.readexactly(length)
        return int(lines[0].split()[1])

    async def close(self) -> None:
        while not self._free.empty():
            _, writer = self._free.get_nowait()
            writer.close()


async def _phase(settings: Settings, user: str, size: int, rate: int) -> list[dict[str, Any]]:
    rows = []
    rng = np.random.default_rng(size + rate)
    questions = ["what about " + " ".join(_words(rng, 6)) + "?" for _ in range(RECALLS_PER_PHASE)]
    writes = min(WRITES_PER_PHASE, rate * 5)
    recalls = min(RECALLS_PER_PHASE, max(rate, 30))  # at a low rate, 30 calls
    http = KeepAliveClient(settings.http_port, _token())
    await http.open()
    try:

        async def write_http(i: int) -> bool:
            status = await http.post(
                f"/v1/users/{user}/memories", {"content": f"bench note {i} of {user}"}
            )
            assert status in (202, 503), status
            return status == 202

        async def recall_http(i: int) -> bool:
            body = {"text": questions[i % len(questions)], "k": 5}
            status = await http.post(f"/v1/users/{user}/recall", body)
            assert status in (200, 503), status
            return status == 200

        progress.note(f"{size:,} memories, {rate}/s: writes over HTTP")
        rows.append(_row("write", "http", size, rate, *await _open_loop(writes, rate, write_http)))
        progress.note(f"{size:,} memories, {rate}/s: recalls over HTTP")
        rows.append(
            _row("recall", "http", size, rate, *await _open_loop(recalls, rate, recall_http))
        )
    finally:
        await http.close()

    publisher = AckingPublisher(settings, source="bench")
    try:

        async def write_direct(i: int) -> bool:
            memory = Memory(str(uuid.uuid4()), user, f"bench note {i} of {user}")
            event = MemoryEvent(
                str(uuid.uuid4()), user, int(time.time() * 1000), MemoryWritten(memory), "bench"
            )
            await publisher.publish_acked(event)
            return True

        progress.note(f"{size:,} memories, {rate}/s: writes in process")
        rows.append(
            _row("write", "in process", size, rate, *await _open_loop(writes, rate, write_direct))
        )
    finally:
        publisher.close()

    embedder = embedder_for(settings.embedder.lower(), settings.embedding_dim)
    readers: list[MemoryReader] = []
    free: asyncio.Queue[MemoryReader] = asyncio.Queue()
    for _ in range(READERS):
        reader = MemoryReader.connect(settings.database_url)
        readers.append(reader)
        free.put_nowait(reader)
    pool = concurrent.futures.ThreadPoolExecutor(READERS)
    loop = asyncio.get_running_loop()
    try:

        async def recall_direct(i: int) -> bool:
            reader = await free.get()
            try:
                found = await loop.run_in_executor(
                    pool, lambda: reader.recall(user, questions[i % len(questions)], embedder, k=5)
                )
                return bool(found)
            finally:
                free.put_nowait(reader)

        progress.note(f"{size:,} memories, {rate}/s: recalls in process")
        rows.append(
            _row(
                "recall", "in process", size, rate, *await _open_loop(recalls, rate, recall_direct)
            )
        )
    finally:
        pool.shutdown()
        for reader in readers:
            reader.close()
    return rows


def _row(
    call: str,
    side: str,
    size: int,
    rate: int,
    latencies: list[float],
    achieved: float,
    refused: int,
) -> dict[str, Any]:
    stats = percentiles(latencies) if latencies else {"p50": float("nan"), "p99": float("nan")}
    progress.note(
        f"  {call} {side}: p50 {stats['p50']:.1f} ms, p99 {stats['p99']:.1f} ms, "
        f"{achieved:.0f}/s offered and answered, {refused} refused"
    )
    return {
        "call": call,
        "side": side,
        "size": size,
        "rate": rate,
        "requests": len(latencies) + refused,
        "refused": refused,
        "p50": stats["p50"],
        "p99": stats["p99"],
        "achieved": achieved,
    }


def _table(rows: list[dict[str, Any]]) -> str:
    """One line per (call, size, rate): HTTP and in-process p50/p99 and their ratios."""
    lines = [
        "| call | memories/user | offered /s | requests | HTTP p50 / p99 ms | in-process p50 / "
        "p99 ms | ratio p50 / p99 | achieved /s HTTP / in process | refused (503) HTTP / in "
        "process |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    keyed = {(r["call"], r["size"], r["rate"], r["side"]): r for r in rows}
    for call in ("write", "recall"):
        for size, rate in sorted({(r["size"], r["rate"]) for r in rows}):
            http, direct = (
                keyed[(call, size, rate, "http")],
                keyed[(call, size, rate, "in process")],
            )
            lines.append(
                f"| {call} | {size:,} | {rate:,} | {http['requests']} | "
                f"{http['p50']:.1f} / {http['p99']:.1f} | {direct['p50']:.1f} / "
                f"{direct['p99']:.1f} | {http['p50'] / direct['p50']:.2f}x / "
                f"{http['p99'] / direct['p99']:.2f}x | {http['achieved']:.0f} / "
                f"{direct['achieved']:.0f} | {http['refused']} / {direct['refused']} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    raise SystemExit(main())
