"""memstream over HTTP only: a plain HTTP client (and one curl) against a real `memstream
serve` on a free port, in front of the real worker, projector, Kafka and PostgreSQL.

The API is deployed as recommended (k8s/api.yaml, docs/http-api.md, docs/security.md): it
reads as a login of its own in ``memstream_reader`` (``MEMSTREAM_HTTP_DATABASE_URL``), not as
the table owner, and signs each read's grant with the database's reader key
(``MEMSTREAM_READER_GRANT_KEY_FILE``); that login without the key reads nothing.

What the HTTP writes produce in the read models is compared with what the batch oracle
makes of the same events; refused requests are shown to publish nothing and change nothing.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jwt
import numpy as np
import psycopg
import pytest
from confluent_kafka import Consumer, TopicPartition
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from memstream.processes import ManagedProcess
from memstream.stack.ports import free_port
from memstream.waiting import wait_until
from projections import grants
from projections.reader import MemoryReader
from projections.rows import LINK_COLUMNS
from projections.schema import LAYER_TABLES
from streams.config.kafka_security import confluent_config
from streams.embedders.factory import embedder_for
from streams.engine.model import (
    ConsolidationRequested,
    ForgetRequested,
    Memory,
    MemoryEvent,
    MemoryWritten,
    SessionEnded,
)
from streams.engine.oracle import OracleRun, replay
from streams.engine.policy import builtin_profile
from streams.engine.step import EngineConfig
from streams.kafka import codec
from tests.support import Pipeline, scrape
from tests.workloads import expected_links, expected_rows

pytestmark = pytest.mark.integration

SECRET = "test-secret-" + "s" * 40
AUDIENCE = "memstream"
USER = "acme:ana"
PROBLEM = "application/problem+json"
START = int(time.time() * 1000) - 3_600_000  # an hour ago: event times the test chooses


def token(
    tenant: str = "acme",
    scope: str = "read write forget",
    *,
    secret: str = SECRET,
    audience: str = AUDIENCE,
    expires_in: int = 600,
    user_id: str | None = None,
    subject: str = "tests",
) -> str:
    claims: dict[str, Any] = {
        "tenant": tenant,
        "scope": scope,
        "aud": audience,
        "sub": subject,
        "exp": int(time.time()) + expires_in,
    }
    if user_id is not None:
        claims["user_id"] = user_id
    return jwt.encode(claims, secret, algorithm="HS256")


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


@dataclass
class ReaderLogin:
    """The API's database credential as deployed: a login role of its own in
    memstream_reader, and the database's reader key exported to a 0600 file."""

    role: str
    url: str
    key_file: Path

    def settings(self, *, with_key: bool = True) -> dict[str, Any]:
        """The API's settings for this login (``with_key=False``: the login alone)."""
        return {
            "http_database_url": self.url,
            "reader_grant_key_file": str(self.key_file) if with_key else "",
        }


@contextmanager
def reader_login(server_url: str, database_url: str, workdir: Path) -> Iterator[ReaderLogin]:
    """A new LOGIN role in memstream_reader, with a password (so it connects whether the
    stack trusts local logins or asks for one), created by the cluster's superuser and
    dropped after; and ``database_url``'s reader key, exported by its owner."""
    role = f"svc_api_reader_{uuid.uuid4().hex[:8]}"
    password = secrets.token_hex(16)
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE memstream_reader").format(
                sql.Identifier(role), sql.Literal(password)
            )
        )
    try:
        with psycopg.connect(database_url) as conn:
            key = grants.current_key(conn)
        key_file = workdir / "secrets" / "reader.key"
        grants.write_key_file(key_file, key)
        url = make_conninfo(database_url, user=role, password=password)
        yield ReaderLogin(role, url, key_file)
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                (role,),
            )
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


@dataclass
class Api:
    pipeline: Pipeline
    url: str
    process: ManagedProcess
    metrics_port: int
    reader: ReaderLogin

    def client(self, value: str | None = None) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers=bearer(value or token()), timeout=30, trust_env=False
        )

    def events_on_the_topic(self) -> int:
        """Every record ever published to memory.events (its partitions' end offsets)."""
        settings = self.pipeline.settings
        consumer = Consumer(
            {**confluent_config(settings), "group.id": f"count-{uuid.uuid4().hex[:8]}"}
        )
        try:
            topic = settings.events_topic
            partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
            return sum(
                consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                for p in partitions
            )
        finally:
            consumer.close()


def start_api(
    pipeline: Pipeline,
    workdir: Path,
    name: str,
    reader: ReaderLogin,
    *,
    with_key: bool = True,
    **overrides: Any,
) -> Api:
    """``memstream serve`` reading as ``reader`` (with the reader key unless ``with_key`` is
    false), never as the table owner."""
    secret_file = workdir / "jwt-secret"
    secret_file.write_text(SECRET)
    port = free_port()
    metrics_port = free_port([port])
    process = pipeline.start(
        name,
        ["serve"],
        http_port=port,
        http_metrics_port=metrics_port,
        http_jwt_key_file=str(secret_file),
        **reader.settings(with_key=with_key),
        **overrides,
    )
    api = Api(pipeline, f"http://127.0.0.1:{port}", process, metrics_port, reader)

    def ready() -> bool:
        try:
            return httpx.get(f"{api.url}/readyz", timeout=5, trust_env=False).status_code == 200
        except httpx.TransportError:
            return False

    wait_until(ready, timeout=120, what="the API ready", describe=pipeline.logs)
    return api


@pytest.fixture(scope="module")
def api(stack: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    workdir = tmp_path_factory.mktemp("http-api")
    pipeline = Pipeline.create(stack, workdir)
    pipeline.settings = pipeline.settings.with_overrides(embedder="MINILM")
    with reader_login(stack.database_url, pipeline.settings.database_url, workdir) as reader:
        try:
            pipeline.start_all()
            yield start_api(pipeline, workdir, "api", reader)
        finally:
            pipeline.close()


def reader_sessions(api: Api) -> int:
    """Open connections of the API's reader login to the pipeline's database."""
    database = conninfo_to_dict(api.pipeline.settings.database_url)["dbname"]
    return int(
        api.pipeline.scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = %s AND datname = %s",
            (api.reader.role, database),
        )
    )


# ---- end to end -----------------------------------------------------------------------------


@dataclass
class Written:
    """What the test sent, as the events the oracle replays."""

    events: list[MemoryEvent]

    def add(self, event_id: str, at: int, payload: Any) -> None:
        self.events.append(MemoryEvent(event_id, USER, at, payload, source="http:acme"))


def oracle_of(events: list[MemoryEvent]) -> OracleRun:
    """The oracle's run of ``events``, embedding what was written without a vector with the
    worker's embedder (MiniLM), as the worker does."""
    embedder = embedder_for("minilm")
    embedded = []
    for event in events:
        payload = event.payload
        if isinstance(payload, MemoryWritten) and payload.memory.embedding is None:
            [vector] = embedder.embed([payload.memory.content])
            event = event.with_written(payload.memory.evolve(embedding=vector))
        embedded.append(event)
    config = EngineConfig(policy=builtin_profile("default"), embed=embedder.embed)
    return replay(embedded, config)


def link_rows(api: Api) -> list[tuple[Any, ...]]:
    columns = ", ".join(LINK_COLUMNS)
    rows = api.pipeline.query(f"SELECT {columns} FROM memory_links WHERE user_id = %s", (USER,))
    return sorted(rows, key=repr)


def assert_read_models_match(api: Api, oracle: OracleRun) -> None:
    api.pipeline.wait_for_log_count(len(oracle.decisions))
    rows = {k: v for k, v in api.pipeline.memory_rows().items() if k[1] == USER}
    assert rows == expected_rows(oracle)
    assert link_rows(api) == expected_links(oracle)
    ledger = {r[0] for r in api.pipeline.query("SELECT event_id FROM consolidation_log")}
    assert ledger == {d.event_id for d in oracle.decisions}


def test_written_closed_consolidated_recalled_and_forgotten_over_http_as_the_oracle_says(
    api: Api,
) -> None:
    """Given memories written over HTTP (two of them a session's turns, with a speaker),
    when the session is closed and a consolidation requested, then the read models equal
    the oracle's for the same events; a paraphrase recalls its memory first, over httpx and
    over curl; a turn's lineage names the observation made of it; and a memory forgotten
    over HTTP is gone from the read models as the oracle says, its URL a 404."""
    written = Written([])
    with api.client() as http:
        facts = {
            "notes": "She keeps her notes in Obsidian.",
            "release": "The team ships a release every Friday.",
            "food": "Her favourite food is ramen.",
        }
        ids = {}
        for n, (name, content) in enumerate(facts.items()):
            key = str(uuid.uuid4())
            at = START + n
            response = http.post(
                f"/v1/users/{USER}/memories",
                json={"content": content, "layer": "semantic", "occurred_at": at},
                headers={"Idempotency-Key": key},
            )
            assert response.status_code == 202, response.text
            accepted = response.json()
            event_id = accepted["event_id"]
            assert accepted == {"event_id": event_id, "memory_id": event_id}
            assert uuid.UUID(event_id) and event_id != key  # scoped: derived, not the key
            ids[name] = event_id
            written.add(
                event_id, at, MemoryWritten(Memory(event_id, USER, content, layer="semantic"))
            )
        turns = ["Hi there!", "My flight to Lisbon leaves at 9:30 tomorrow."]
        for n, text in enumerate(turns):
            at, memory_id = START + 10_000 + n * 60_000, f"turn-{n}"
            fields = {
                "layer": "working",
                "session_id": "s1",
                "conversation_id": "chat",
                "speaker": "Ana",
                "created_by": "user",
            }
            response = http.put(
                f"/v1/users/{USER}/memories/{memory_id}",
                json={"content": text, "occurred_at": at, **fields},
            )
            assert response.status_code == 202, response.text
            memory = Memory(memory_id, USER, text, **fields)  # type: ignore[arg-type]
            written.add(response.json()["event_id"], at, MemoryWritten(memory))
        at = START + 200_000
        response = http.post(
            f"/v1/users/{USER}/sessions/s1/end",
            json={"conversation_id": "chat", "occurred_at": at},
        )
        assert response.status_code == 202, response.text
        written.add(response.json()["event_id"], at, SessionEnded("s1", "chat"))
        at = START + 300_000
        response = http.post(f"/v1/users/{USER}/consolidations", json={"occurred_at": at})
        assert response.status_code == 202, response.text
        written.add(response.json()["event_id"], at, ConsolidationRequested())

        oracle = oracle_of(written.events)
        assert_read_models_match(api, oracle)

        question = {"text": "Which app does she use for note-taking?", "k": 3}
        recalled = http.post(f"/v1/users/{USER}/recall", json=question)
        assert recalled.status_code == 200, recalled.text
        assert recalled.json()["memories"][0]["memory_id"] == ids["notes"]
        assert reader_sessions(api) > 0, "the API should read as its reader login"

        lineage = http.get(f"/v1/users/{USER}/memories/turn-1")
        assert lineage.status_code == 200, lineage.text
        body = lineage.json()
        assert (body["speaker"], body["content"]) == ("Ana", turns[1])
        got = {
            (link["source_id"], link["target_id"], link["link_type"]) for link in body["lineage"]
        }
        assert got == {
            (source, target, link_type)
            for _, source, target, link_type, *_ in expected_links(oracle)
            if "turn-1" in (source, target)
        }
        assert got, "the turn's observation should be linked to it"

        sessions = http.get(f"/v1/users/{USER}/sessions").json()["sessions"]
        windows = oracle.users[USER].facets.sessions.values()
        assert {(s["session_id"], s["status"], s["narrative_id"]) for s in sessions} == {
            (w.session_id, w.status, w.narrative_id) for w in windows
        }
        reports = http.get(f"/v1/users/{USER}/consolidation-reports").json()["reports"]
        assert len(reports) == api.pipeline.scalar(
            "SELECT count(*) FROM consolidation_reports WHERE user_id = %s", (USER,)
        )
        assert http.get(f"/v1/users/{USER}/profile").status_code == 200
        assert http.get(f"/v1/users/{USER}/contradictions").json() == {"links": []}

        forget = http.delete(f"/v1/users/{USER}/memories/{ids['food']}")
        assert forget.status_code == 202, forget.text
        written.add(
            forget.json()["event_id"],
            START + 400_000,
            ForgetRequested(ids["food"], "user_request"),
        )
        oracle = oracle_of(written.events)
        assert_read_models_match(api, oracle)
        assert http.get(f"/v1/users/{USER}/memories/{ids['food']}").status_code == 404

    curl = shutil.which("curl")
    assert curl, "curl is part of the machine image: install it (apt-get install curl)"
    result = subprocess.run(
        [
            curl,
            "--silent",
            "--show-error",
            "--fail-with-body",
            "-X",
            "POST",
            "-H",
            f"Authorization: Bearer {token()}",
            "-H",
            "Content-Type: application/json",
            "--data",
            json.dumps(question),
            f"{api.url}/v1/users/{USER}/recall",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert json.loads(result.stdout)["memories"][0]["memory_id"] == ids["notes"]


def test_the_apis_reader_login_without_the_key_reads_nothing(api: Api, tmp_path: Path) -> None:
    """Given the API's reader login and a user whose memory is in the read models (read over
    the API, with the key), when that login reads without the reader key, directly or as a
    second API, then it sees no row of anyone: recall finds nothing, the user is unknown."""
    kim, memory_id, content = "acme:kim", "kim-1", "Kim grows tomatoes on her balcony."
    with api.client() as http:
        written = http.put(f"/v1/users/{kim}/memories/{memory_id}", json={"content": content})
        assert written.status_code == 202, written.text
        wait_until(
            lambda: http.get(f"/v1/users/{kim}/memories/{memory_id}").status_code == 200,
            timeout=60,
            what="Kim's memory in the read models, read with the key",
            describe=api.pipeline.logs,
        )
    assert any(user == kim for _, user, _ in api.pipeline.memory_rows())

    with psycopg.connect(api.reader.url, autocommit=True) as conn:
        assert conn.execute("SELECT current_user").fetchone() == (api.reader.role,)
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT c.relname FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "AND n.nspname = current_schema() "
                "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'user_id' "
                "AND NOT a.attisdropped WHERE c.relkind IN ('r', 'p') ORDER BY c.relname"
            ).fetchall()
        ]
        assert set(LAYER_TABLES.values()) <= set(tables)
        seen = {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone() for t in tables}
        assert seen == dict.fromkeys(tables, (0,))
    with MemoryReader.connect(api.reader.url) as reader:
        assert reader.recall(kim, content, embedder_for("minilm")) == []
        assert reader.lineage(kim, memory_id) == []

    keyless = start_api(api.pipeline, tmp_path, "api-keyless", api.reader, with_key=False)
    try:
        with keyless.client() as http:
            response = http.get(f"/v1/users/{kim}/memories/{memory_id}")
            assert response.status_code == 404, response.text
            assert response.json()["type"] == "urn:memstream:problem:not-found"
            recalled = http.post(f"/v1/users/{kim}/recall", json={"text": content})
            assert recalled.status_code == 404, recalled.text
    finally:
        keyless.process.stop()


# ---- refusals -------------------------------------------------------------------------------

BOB = "acme:bob"
WRITE = f"/v1/users/{BOB}/memories"


def refusals() -> list[tuple[str, dict[str, Any], int, str]]:
    """(name, request, status, problem type suffix) of requests that must change nothing."""
    good = {"content": "Bob likes tea."}
    return [
        (
            "malformed JSON",
            {"method": "POST", "url": WRITE, "content": b'{"content": "Bob', "json_type": True},
            400,
            "malformed-json",
        ),
        (
            "a string where a number goes",
            {"method": "POST", "url": WRITE, "json": {**good, "importance": "high"}},
            422,
            "invalid-request",
        ),
        (
            "an unknown field",
            {"method": "POST", "url": WRITE, "json": {**good, "contnet": "typo"}},
            422,
            "invalid-request",
        ),
        (
            "oversized content",
            {"method": "POST", "url": WRITE, "json": {"content": "x" * 70_000}},
            413,
            "content-too-large",
        ),
        (
            "an oversized body",
            {"method": "POST", "url": WRITE, "json": {"content": "y" * 2_000_000}},
            413,
            "body-too-large",
        ),
        (
            "an embedding of the wrong dimension",
            {"method": "POST", "url": WRITE, "json": {**good, "embedding": [0.5] * 3}},
            422,
            "embedding-dimension",
        ),
        (
            "a recall diversity outside 0 to 1",
            {
                "method": "POST",
                "url": f"/v1/users/{BOB}/recall",
                "json": {"text": "tea", "diversity": 2},
            },
            422,
            "invalid-request",
        ),
        (
            "an oversized query string",
            {"method": "GET", "url": f"/v1/users/{BOB}/sessions?pad={'q' * 8000}"},
            414,
            "query-too-long",
        ),
        (
            "an unknown user",
            {"method": "GET", "url": "/v1/users/acme:nobody/sessions"},
            404,
            "not-found",
        ),
        (
            "forgetting an unknown memory",
            {"method": "DELETE", "url": f"/v1/users/{BOB}/memories/no-such-memory"},
            404,
            "not-found",
        ),
        (
            "an expired token",
            {"method": "POST", "url": WRITE, "json": good, "token": token(expires_in=-60)},
            401,
            "invalid-token",
        ),
        (
            "a forged token",
            {"method": "POST", "url": WRITE, "json": good, "token": token(secret="f" * 48)},
            401,
            "invalid-token",
        ),
        (
            "a token for another audience",
            {"method": "POST", "url": WRITE, "json": good, "token": token(audience="billing")},
            401,
            "invalid-token",
        ),
        (
            "no token",
            {"method": "POST", "url": WRITE, "json": good, "token": ""},
            401,
            "invalid-token",
        ),
        (
            "a read-only token writing",
            {"method": "POST", "url": WRITE, "json": good, "token": token(scope="read")},
            403,
            "insufficient-scope",
        ),
        (
            "a write token forgetting",
            {
                "method": "DELETE",
                "url": f"/v1/users/{BOB}/memories/bob-1",
                "token": token(scope="read write"),
            },
            403,
            "insufficient-scope",
        ),
        (
            "another tenant's service token",
            {"method": "POST", "url": WRITE, "json": good, "token": token(tenant="globex")},
            403,
            "other-tenant",
        ),
        (
            "another tenant's token reading",
            {
                "method": "POST",
                "url": f"/v1/users/{BOB}/recall",
                "json": {"text": "tea"},
                "token": token(tenant="globex"),
            },
            403,
            "other-tenant",
        ),
        (
            "another user's end-user token",
            {"method": "POST", "url": WRITE, "json": good, "token": token(user_id=USER)},
            403,
            "other-user",
        ),
        (
            "a write token forcing a cycle",
            {"method": "POST", "url": f"/v1/users/{BOB}/consolidations", "json": {"force": True}},
            403,
            "insufficient-scope",
        ),
    ]


def test_bad_requests_get_the_right_problem_and_publish_nothing(api: Api) -> None:
    """Given the running API, when each kind of bad request is sent, then each gets its 4xx
    as a problem document that says what to do next, and memory.events and the read
    models are exactly as they were."""
    with api.client() as http:  # Bob and one memory of his exist
        written = http.put(f"/v1/users/{BOB}/memories/bob-1", json={"content": "Bob hikes."})
        assert written.status_code == 202, written.text
        wait_until(
            lambda: http.get(f"/v1/users/{BOB}/memories/bob-1").status_code == 200,
            timeout=60,
            what="Bob's memory in the read models",
            describe=api.pipeline.logs,
        )
    published = api.events_on_the_topic()
    tables = api.pipeline.dump_tables()
    for name, request, status, kind in refusals():
        request = dict(request)
        value = request.pop("token", None)
        headers = {} if value == "" else bearer(value or token())
        if request.pop("json_type", False):
            headers["Content-Type"] = "application/json"
        with httpx.Client(base_url=api.url, timeout=30, trust_env=False) as http:
            response = http.request(headers=headers, **request)
        assert response.status_code == status, (name, response.text)
        assert response.headers["content-type"] == PROBLEM, name
        problem = response.json()
        assert problem["type"] == f"urn:memstream:problem:{kind}", (name, problem)
        assert problem["status"] == status and problem["detail"], name
    assert api.events_on_the_topic() == published
    assert api.pipeline.dump_tables() == tables


def test_a_token_over_its_rate_is_told_when_to_retry(api: Api, tmp_path: Path) -> None:
    """Given an API instance that allows one request per 100 s per token, when a token
    makes a second request, then it gets 429 with Retry-After, and another token is still
    served."""
    limited = start_api(
        api.pipeline, tmp_path, "api-limited", api.reader, http_requests_per_second=0.01
    )
    try:
        path = f"/v1/users/{BOB}/contradictions"
        with limited.client(token(subject="first")) as http:
            assert http.get(path).status_code != 429
            response = http.get(path)
        assert response.status_code == 429
        assert response.headers["content-type"] == PROBLEM
        assert int(response.headers["Retry-After"]) >= 1
        with limited.client(token(subject="second")) as http:
            assert http.get(path).status_code != 429
    finally:
        limited.process.stop()


def test_metrics_count_requests_by_route_template_and_never_name_a_user(api: Api) -> None:
    """Given requests for a user, the API's /metrics (its own port) counts them under the
    route template, and no label value holds the user id."""
    with api.client() as http:
        http.get(f"/v1/users/{USER}/contradictions")
    samples = scrape(api.metrics_port)
    ours = {key: value for key, value in samples.items() if key[0].startswith("memstream_http_")}
    route = ("route", "/v1/users/{user_id}/contradictions")
    counted = [
        value
        for (name, labels), value in ours.items()
        if name == "memstream_http_requests_total" and route in labels
    ]
    assert counted and sum(counted) >= 1
    assert all(USER not in value for _, labels in ours for _, value in labels)


# ---- Idempotency-Key: one store for every replica (issue 37) ---------------------------------

KEYED = "acme:kei"


def keyed_write(http: httpx.Client, key: str, content: str, user: str = KEYED) -> httpx.Response:
    return http.post(
        f"/v1/users/{user}/memories", json={"content": content}, headers={"Idempotency-Key": key}
    )


def test_a_key_replays_its_first_answer_on_every_replica_and_refuses_another_request(
    api: Api, tmp_path: Path
) -> None:
    """Given two API processes on one database, when a write is sent with a key to one and
    retried on the other, then both answer the same and one event is published; the key with
    another body, or on another operation, is a 422 on either replica and publishes nothing;
    the same key for another user is that user's own; an empty key is a 400."""
    second = start_api(api.pipeline, tmp_path, "api-second", api.reader)
    try:
        key = f"order-{uuid.uuid4()}"
        before = api.events_on_the_topic()
        with api.client() as first_http, second.client() as second_http:
            first = keyed_write(first_http, key, "Kei collects stamps.")
            retried = keyed_write(second_http, key, "Kei collects stamps.")
            other_body = keyed_write(second_http, key, "Kei collects coins.")
            other_operation = first_http.put(
                f"/v1/users/{KEYED}/memories/kei-1",
                json={"content": "Kei collects stamps."},
                headers={"Idempotency-Key": key},
            )
            other_user = keyed_write(first_http, key, "Kei collects stamps.", user="acme:kai")
            empty = keyed_write(second_http, "", "Kei collects shells.")

        assert first.status_code == 202, first.text
        assert (retried.status_code, retried.json()) == (202, first.json())
        assert retried.headers["Idempotent-Replayed"] == "true"
        for refused in (other_body, other_operation):
            assert refused.status_code == 422, refused.text
            assert refused.headers["content-type"] == PROBLEM
            assert refused.json()["type"] == "urn:memstream:problem:idempotency-key-reused"
        assert other_user.status_code == 202, other_user.text
        assert other_user.json()["event_id"] != first.json()["event_id"]
        assert empty.status_code == 400 and empty.json()["type"].endswith("bad-idempotency-key")
        assert api.events_on_the_topic() == before + 2
    finally:
        second.process.stop()


def test_a_key_expires_and_expired_keys_are_purged(api: Api) -> None:
    """Given a key whose record has passed its 24 h, the key may name a new request; the
    purge (which the API's reader login may run) deletes expired records of every user and
    keeps the others."""
    key = f"expiring-{uuid.uuid4()}"
    with api.client() as http:
        first = keyed_write(http, key, "Kei paints on Sundays.")
        kept = keyed_write(http, key, "Kei paints on Sundays.", user="acme:kai")
        assert (first.status_code, kept.status_code) == (202, 202)
        expired = api.pipeline.query(
            "UPDATE http_idempotency_keys SET expires_at = now() - interval '1 second' "
            "WHERE idempotency_key = %s AND scoped_user_id = %s RETURNING 1",
            (key, KEYED),
        )
        assert expired == [(1,)]
        again = keyed_write(http, key, "Kei paints on Saturdays.")
    assert again.status_code == 202, again.text
    assert again.json()["event_id"] != first.json()["event_id"]

    api.pipeline.query(
        "UPDATE http_idempotency_keys SET expires_at = now() - interval '1 second' "
        "WHERE idempotency_key = %s AND scoped_user_id = %s RETURNING 1",
        (key, KEYED),
    )
    with psycopg.connect(api.reader.url, autocommit=True) as reader:
        purged = reader.execute("SELECT memstream_purge_idempotency_keys()").fetchone()
    left = api.pipeline.query(
        "SELECT scoped_user_id FROM http_idempotency_keys WHERE idempotency_key = %s", (key,)
    )
    assert purged is not None and purged[0] >= 1
    assert left == [("acme:kai",)]


def test_the_key_store_is_held_to_the_granted_user(api: Api) -> None:
    """The API's reader login sees and writes key records only of the user its grant names:
    without a grant none, with one that user's; it cannot write a record for another."""
    key = f"isolated-{uuid.uuid4()}"
    with api.client() as http:
        for user in (KEYED, "acme:kai"):
            assert keyed_write(http, key, "Kei swims.", user=user).status_code == 202
    with MemoryReader.connect(api.reader.url, grant_key_file=api.reader.key_file) as reader:
        without_grant = reader.conn.execute(
            "SELECT count(*) FROM http_idempotency_keys WHERE idempotency_key = %s", (key,)
        ).fetchone()
        with reader.as_user(KEYED) as conn:
            seen = conn.execute(
                "SELECT scoped_user_id FROM http_idempotency_keys WHERE idempotency_key = %s",
                (key,),
            ).fetchall()
        with (
            pytest.raises(psycopg.errors.InsufficientPrivilege),
            reader.as_user(KEYED) as conn,
        ):
            conn.execute(
                "INSERT INTO http_idempotency_keys (tenant, scoped_user_id, idempotency_key, "
                "operation, fingerprint, event_id, expires_at) "
                "VALUES ('acme', 'acme:kai', 'forged', 'x', 'x', 'x', now())"
            )
    assert without_grant == (0,)
    assert seen == [(KEYED,)]


# ---- what used to be a plain-text 500 (issue 37) ---------------------------------------------


def test_a_memory_id_in_the_body_names_the_memory(api: Api) -> None:
    """POST with a memory_id used to be a 500 (Memory() got memory_id twice)."""
    with api.client() as http:
        response = http.post(
            f"/v1/users/{KEYED}/memories", json={"content": "Kei reads poems.", "memory_id": "p-1"}
        )
        assert response.status_code == 202, response.text
        assert response.json()["memory_id"] == "p-1"
        wait_until(
            lambda: http.get(f"/v1/users/{KEYED}/memories/p-1").status_code == 200,
            timeout=60,
            what="the memory p-1 in the read models",
            describe=api.pipeline.logs,
        )


@pytest.mark.parametrize("occurred_at", [0, 978_307_200_000])  # 1970 and 2001
def test_recall_ranks_a_memory_with_an_old_event_time(api: Api, occurred_at: int) -> None:
    """A memory last touched decades ago used to make every recall of its user fail
    (memstream_salience: power() underflow); its salience is 0 and it is still recalled."""
    user = f"acme:old-{occurred_at}"
    content = "Olga learned to sail on the lake."
    with api.client() as http:
        written = http.put(
            f"/v1/users/{user}/memories/sail",
            json={"content": content, "occurred_at": occurred_at, "created_at": occurred_at},
        )
        assert written.status_code == 202, written.text
        wait_until(
            lambda: http.get(f"/v1/users/{user}/memories/sail").status_code == 200,
            timeout=60,
            what="the old memory in the read models",
            describe=api.pipeline.logs,
        )
        for ranking in ("hybrid", "vector"):
            recalled = http.post(
                f"/v1/users/{user}/recall",
                json={"text": "Where did Olga learn sailing?", "ranking": ranking},
            )
            assert recalled.status_code == 200, (ranking, recalled.text)
            [memory] = recalled.json()["memories"]
            assert (memory["memory_id"], memory["salience"]) == ("sail", 0.0)


def test_nul_and_lone_surrogates_are_refused_not_failed(api: Api) -> None:
    """Against the real database: a NUL in a path id or the recall text, a lone surrogate in
    tags, are 4xx problems (they used to be 500s) and publish nothing."""
    published = api.events_on_the_topic()
    with api.client() as http:
        answers = [
            http.get(f"/v1/users/{KEYED}/memories/p%001"),
            http.post(f"/v1/users/{KEYED}/recall", json={"text": "poems\u0000"}),
            http.post(
                f"/v1/users/{KEYED}/memories",
                content=b'{"content": "x", "tags": ["\\ud800"]}',
                headers={"Content-Type": "application/json"},
            ),
        ]
    assert [(a.status_code, a.headers["content-type"]) for a in answers] == [(422, PROBLEM)] * 3
    assert api.events_on_the_topic() == published


# ---- one client cannot stop the worker for everyone (issue 37) ------------------------------


def test_the_poison_pair_stops_no_one_and_other_tenants_are_read_within_seconds(
    api: Api,
) -> None:
    """Given the pair that once stopped every worker for good, a memory written without an
    embedding and a consolidation request sharing one event id, sent both as the API once let
    a client send it (one Idempotency-Key on two operations) and as a producer that reuses an
    id publishes it,
    when three users of another tenant then write over HTTP,
    then the API refuses the key's second operation, the worker processes the published pair
    (the write stored with its own text's embedding), and the other tenant's memories are
    readable over HTTP within seconds."""
    victim = "acme:pat"
    key = f"poison-{uuid.uuid4()}"
    with api.client() as http:
        write = http.post(
            f"/v1/users/{victim}/memories",
            json={"content": "Pat grows tomatoes on the balcony."},
            headers={"Idempotency-Key": key},
        )
        consolidate = http.post(
            f"/v1/users/{victim}/consolidations", json={}, headers={"Idempotency-Key": key}
        )
    assert write.status_code == 202, write.text
    assert consolidate.status_code == 422, consolidate.text
    assert consolidate.json()["type"] == "urn:memstream:problem:idempotency-key-reused"

    shared = str(uuid.uuid4())
    content = "Pat repairs old bicycles in the garage."
    at = int(time.time() * 1000)
    publisher = api.pipeline.publisher
    publisher.publish(
        MemoryEvent(shared, victim, at, MemoryWritten(Memory("pat-bikes", victim, content)))
    )
    publisher.publish(MemoryEvent(shared, victim, at + 1, ConsolidationRequested()))
    publisher.flush()

    others = {f"globex:user-{n}": f"User {n} of Globex prefers tea number {n}." for n in range(3)}
    globex = token(tenant="globex")
    with api.client(globex) as http:
        written = {}
        for user, text in others.items():
            response = http.post(f"/v1/users/{user}/memories", json={"content": text})
            assert response.status_code == 202, response.text
            written[user] = response.json()["memory_id"]

        def all_readable() -> bool:
            return all(
                http.get(f"/v1/users/{user}/memories/{memory_id}").status_code == 200
                for user, memory_id in written.items()
            )

        wait_until(all_readable, timeout=30, what="the other tenant's memories readable")
        for user, memory_id in written.items():
            assert (
                http.get(f"/v1/users/{user}/memories/{memory_id}").json()["content"]
                == (others[user])
            )

    def stored_vector() -> list[float] | None:
        for table in LAYER_TABLES.values():
            rows = api.pipeline.query(
                f"SELECT embedding::text FROM {table} WHERE user_id = %s AND memory_id = %s",
                (victim, "pat-bikes"),
            )
            if rows:
                return [float(x) for x in json.loads(rows[0][0])]
        return None

    wait_until(lambda: stored_vector() is not None, timeout=30, what="the shared-id write")
    [expected] = embedder_for("minilm").embed([content])
    vector = stored_vector()
    assert vector is not None
    assert len(vector) == 384
    # its own text's embedding (a batch's int8 activations may shift it a little)
    cosine = float(np.dot(vector, codec.unpack_embedding(expected)))
    assert cosine > 0.99, cosine
    # the worker and the projector kept running (other tests stop API replicas of their own)
    assert api.process.alive()
    assert all(api.pipeline.processes[name].alive() for name in ("worker", "projector"))
