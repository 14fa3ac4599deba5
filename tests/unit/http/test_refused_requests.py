"""What the HTTP API refuses before anything is published (memstream/http/middleware.py and
the routes' checks), run in process: no broker or database is reached by a refused request,
and the app is built against ones that do not exist to show it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from fastapi import FastAPI

from memstream.http.routes import create_app
from streams.config.settings import Settings

SECRET = "k" * 40
PROBLEM = "application/problem+json"
WRITE = "/v1/users/acme:ana/memories"


@pytest.fixture
def app(tmp_path: Path) -> FastAPI:
    key = tmp_path / "secret"
    key.write_text(SECRET)
    settings = Settings.from_env({"MEMSTREAM_STATE_DIR": str(tmp_path)}).with_overrides(
        kafka_bootstrap="127.0.0.1:9",  # nothing listens: a refusal must not need it
        database_url="postgresql://nobody@127.0.0.1:9/none",
        http_jwt_key_file=str(key),
        http_max_body_bytes=4096,
        max_content_bytes=1000,
        http_max_query_bytes=128,
    )
    return create_app(settings)


def token(**overrides: Any) -> str:
    claims = {"tenant": "acme", "scope": "read write", "aud": "memstream", "sub": "t"}
    return jwt.encode({**claims, "exp": int(time.time()) + 60, **overrides}, SECRET)


def call(app: FastAPI, method: str, url: str, **kwargs: Any) -> httpx.Response:
    async def run() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            headers = {"Authorization": f"Bearer {token()}", **kwargs.pop("headers", {})}
            return await client.request(method, url, headers=headers, **kwargs)

    return asyncio.run(run())


def assert_problem(response: httpx.Response, status: int, kind: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    problem: dict[str, Any] = response.json()
    assert problem["type"] == f"urn:memstream:problem:{kind}"
    assert problem["status"] == status and problem["detail"]
    return problem


def test_malformed_json_is_a_400_that_says_how_to_send_it(app: FastAPI) -> None:
    response = call(
        app, "POST", WRITE, content=b'{"content": ', headers={"Content-Type": "application/json"}
    )
    assert "JSON" in assert_problem(response, 400, "malformed-json")["detail"]


def test_wrong_types_and_unknown_fields_are_422_naming_the_field(app: FastAPI) -> None:
    response = call(app, "POST", WRITE, json={"content": "x", "importance": "0.5"})
    problem = assert_problem(response, 422, "invalid-request")
    assert ["body", "importance"] in [e["loc"] for e in problem["errors"]]
    response = call(app, "POST", WRITE, json={"content": "x", "colour": "blue"})
    assert_problem(response, 422, "invalid-request")


def test_the_contract_is_checked_before_publishing(app: FastAPI) -> None:
    """Given a broker that does not exist, contract breaches are refused at once (a
    publish would have waited for the broker and failed with 503)."""
    large = call(app, "POST", WRITE, json={"content": "x" * 2000})
    assert_problem(large, 413, "content-too-large")
    blank = call(app, "POST", WRITE, json={"content": "x", "speaker": "  "})
    assert_problem(blank, 422, "invalid-text")
    nul = call(app, "POST", WRITE, json={"content": "x", "session_id": "a\u0000b"})
    assert_problem(nul, 422, "invalid-text")
    vector = call(app, "POST", WRITE, json={"content": "x", "embedding": [0.1] * 5})
    assert_problem(vector, 422, "embedding-dimension")


def test_a_body_without_length_is_cut_at_the_limit_while_it_streams(app: FastAPI) -> None:
    """Given a chunked body with no Content-Length, the API stops reading at the limit:
    the chunks after it are never pulled."""
    pulled = []

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"content": "'
        for n in range(1000):
            pulled.append(n)
            yield b"x" * 1024
        yield b'"}'

    response = call(
        app, "POST", WRITE, content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert_problem(response, 413, "body-too-large")
    assert len(pulled) < 10


def test_a_declared_length_over_the_limit_is_refused_before_reading(app: FastAPI) -> None:
    response = call(
        app,
        "POST",
        WRITE,
        content=b"{" + b" " * 5000 + b"}",
        headers={"Content-Type": "application/json"},
    )
    assert_problem(response, 413, "body-too-large")


def test_a_long_query_string_is_a_414(app: FastAPI) -> None:
    response = call(app, "GET", f"/v1/users/acme:ana/sessions?limit=5&pad={'p' * 200}")
    assert_problem(response, 414, "query-too-long")


def test_auth_comes_before_the_body(app: FastAPI) -> None:
    """A request without a valid token is a 401 whatever its body holds."""
    response = call(
        app,
        "POST",
        WRITE,
        content=b"{not json",
        headers={"Authorization": "Bearer nope", "Content-Type": "application/json"},
    )
    assert_problem(response, 401, "invalid-token")


def test_scope_and_tenant_are_checked_before_anything_is_published(app: FastAPI) -> None:
    forget = call(app, "DELETE", "/v1/users/acme:ana/memories/m1")
    assert_problem(forget, 403, "insufficient-scope")
    other = call(app, "POST", "/v1/users/globex:ana/memories", json={"content": "x"})
    assert_problem(other, 403, "other-tenant")
    force = call(app, "POST", "/v1/users/acme:ana/consolidations", json={"force": True})
    assert_problem(force, 403, "insufficient-scope")


def test_probes_and_the_openapi_document_need_no_token(app: FastAPI) -> None:
    async def run() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            return [await client.get("/healthz"), await client.get("/openapi.json")]

    health, document = asyncio.run(run())
    assert health.json() == {"status": "ok", "checks": {}}
    assert document.json()["info"]["title"] == "memstream"
