"""Issue 37's refusals, run in process against a broker and a database that do not exist:
each request below is answered with a problem document before either would be needed
(a request that gets past the checks meets the missing database and is a 503, not a 500)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from fastapi import FastAPI

from memstream.http import api_metrics
from memstream.http.routes import create_app
from streams.config.settings import Settings
from streams.engine.policy import profile_names

SECRET = "k" * 40
PROBLEM = "application/problem+json"
ANA = "/v1/users/acme:ana"


@pytest.fixture
def app(tmp_path: Path) -> FastAPI:
    key = tmp_path / "secret"
    key.write_text(SECRET)
    settings = Settings.from_env({"MEMSTREAM_STATE_DIR": str(tmp_path)}).with_overrides(
        kafka_bootstrap="127.0.0.1:9",
        database_url="postgresql://nobody@127.0.0.1:9/none",
        http_jwt_key_file=str(key),
    )
    return create_app(settings)


def token(**overrides: Any) -> str:
    claims = {"tenant": "acme", "scope": "read write", "aud": "memstream", "sub": "t"}
    return jwt.encode({**claims, "exp": int(time.time()) + 60, **overrides}, SECRET)


def call(
    app: FastAPI, method: str, url: str, *, bearer: str | None = "", **kwargs: Any
) -> httpx.Response:
    async def run() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
            headers = dict(kwargs.pop("headers", {}))
            if bearer is not None:
                headers["Authorization"] = f"Bearer {bearer or token()}"
            return await client.request(method, url, headers=headers, **kwargs)

    return asyncio.run(run())


def problem_of(response: httpx.Response, status: int, kind: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    problem: dict[str, Any] = response.json()
    assert problem["type"] == f"urn:memstream:problem:{kind}", problem
    return problem


@pytest.mark.parametrize(
    "field",
    [
        {"tags": ["\ud800"]},
        {"trigger_conditions": ["ok", "\udfff"]},
        {"kind": "\ud800"},
        {"subtype": "\ud800"},
        {"metadata": {"\ud800": "v"}},
        {"metadata": {"k": "\ud800"}},
        {"content": "\ud800"},
    ],
)
def test_a_lone_surrogate_in_any_text_is_a_422(app: FastAPI, field: dict[str, Any]) -> None:
    """Given a body whose text cannot be encoded as UTF-8 (it used to be a 500 when Avro
    encoded it), the write is refused as invalid text, naming the field."""
    body = {"content": "Ana likes tea.", **field}
    content = httpx_json(body)

    response = call(
        app,
        "POST",
        f"{ANA}/memories",
        content=content,
        headers={"Content-Type": "application/json"},
    )

    problem = problem_of(response, 422, "invalid-text")
    assert problem["errors"][0]["loc"][:2] == ["body", next(iter(field))]


def httpx_json(body: dict[str, Any]) -> bytes:
    """``body`` as JSON with lone surrogates escaped (``\\ud800``), as a client may send."""
    import json

    return json.dumps(body, ensure_ascii=True).encode()


@pytest.mark.parametrize(
    ("method", "url", "body"),
    [
        ("GET", f"{ANA}%00x/sessions", None),
        ("GET", f"{ANA}/memories/m%001", None),
        ("POST", f"{ANA}/memories/m%001/pin", None),
        ("POST", f"{ANA}/sessions/s%001/end", None),
        ("POST", f"{ANA}/recall", {"text": "tea\u0000"}),
    ],
)
def test_a_nul_in_a_path_id_or_the_recall_text_is_a_422(
    app: FastAPI, method: str, url: str, body: dict[str, Any] | None
) -> None:
    """PostgreSQL text cannot hold NUL: it used to reach the query and fail with a 500."""
    response = call(app, method, url, json=body)

    problem_of(response, 422, "invalid-text")


def test_an_unknown_profile_is_a_422_naming_the_built_in_ones(app: FastAPI) -> None:
    response = call(
        app, "POST", f"{ANA}/consolidations", json={"profile": "nope"}, bearer=token(scope="admin")
    )

    problem = problem_of(response, 422, "invalid-request")
    message = problem["errors"][0]["msg"]
    assert all(name in message for name in profile_names())


@pytest.mark.parametrize(
    ("request_kwargs"),
    [
        {"json": {"content": "x", "importance": "high"}},
        {"content": b'{"content": ', "headers": {"Content-Type": "application/json"}},
    ],
)
def test_a_token_of_another_tenant_is_a_403_whatever_the_body(
    app: FastAPI, request_kwargs: dict[str, Any]
) -> None:
    """Scope and tenant come before the body: a caller who may not make the request learns
    that, not what is wrong with its body."""
    response = call(app, "POST", f"{ANA}/memories", bearer=token(tenant="globex"), **request_kwargs)

    problem_of(response, 403, "other-tenant")


def test_a_read_only_token_with_a_bad_body_is_a_403(app: FastAPI) -> None:
    response = call(
        app, "POST", f"{ANA}/memories", json={"contnet": "typo"}, bearer=token(scope="read")
    )

    problem_of(response, 403, "insufficient-scope")


@pytest.mark.parametrize("header", ["", "caf\u00e9".encode().decode("latin-1")])
def test_an_empty_or_non_ascii_idempotency_key_is_a_400(app: FastAPI, header: str) -> None:
    response = call(
        app,
        "POST",
        f"{ANA}/memories",
        json={"content": "Ana likes tea."},
        headers={"Idempotency-Key": header.encode("latin-1")},
    )

    problem_of(response, 400, "bad-idempotency-key")


def test_an_integral_float_is_an_integer(app: FastAPI) -> None:
    """JSON Schema's integer takes 5.0: the recall gets past validation (to the database,
    which does not exist here: 503), where 5.5 is a 422."""
    whole = call(app, "POST", f"{ANA}/recall", json={"text": "tea", "k": 5.0})
    fraction = call(app, "POST", f"{ANA}/recall", json={"text": "tea", "k": 5.5})

    problem_of(whole, 503, "unavailable")
    problem_of(fraction, 422, "invalid-request")


def test_a_405_allows_every_method_of_the_path(app: FastAPI) -> None:
    response = call(app, "PATCH", f"{ANA}/memories/m1")

    problem_of(response, 405, "method-not-allowed")
    assert response.headers["Allow"] == "DELETE, GET, PUT"


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_no_browsable_view_is_served(app: FastAPI, path: str) -> None:
    """Swagger UI and ReDoc would load their code from a CDN: neither is served, alike."""
    problem_of(call(app, "GET", path, bearer=None), 401, "invalid-token")
    problem_of(call(app, "GET", path), 404, "not-found")


def test_refusals_before_routing_are_counted_under_the_route(app: FastAPI) -> None:
    def count(status: str) -> float:
        labels = ("/v1/users/{user_id}/contradictions", "GET", status)
        return api_metrics.requests.labels(*labels)._value.get()

    before = count("401")
    call(app, "GET", f"{ANA}/contradictions", bearer="not-a-jwt")

    assert count("401") == before + 1
