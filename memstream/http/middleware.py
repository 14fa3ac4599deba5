"""What every request passes before a route: size limits, the bearer token, the rate limit,
and the metrics of what it got.

A pure ASGI middleware, so it runs before the body is read: an unauthenticated or
rate-limited request costs no body read, and the body limit is enforced while the body
streams in (a 10 GB upload is cut at the limit, not buffered and then measured).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import anyio
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memstream.http import api_metrics
from memstream.http.auth import TokenVerifier
from memstream.http.limits import RateLimiter
from memstream.http.problems import ProblemError

# Paths anyone may read: probes and the API's description.
PUBLIC_PATHS = frozenset({"/healthz", "/readyz", "/openapi.json"})


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` when the body passes the limit; FastAPI lets an
    HTTPException through its body parsing, and the app answers it as a problem."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            413,
            f"the request body is larger than {limit:,} bytes, the most this API takes: "
            "send less (a memory's content is at most 64 KiB)",
        )


class Gate:
    def __init__(
        self,
        app: ASGIApp,
        *,
        routes: Sequence[BaseRoute] = (),
        verifier: TokenVerifier,
        limiter: RateLimiter,
        max_body_bytes: int,
        max_query_bytes: int,
    ) -> None:
        self.app = app
        self.routes = routes  # to name the route of a request refused before routing
        self.verifier = verifier
        self.limiter = limiter
        self.max_body_bytes = max_body_bytes
        self.max_query_bytes = max_query_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = {"code": 500}

        async def send_counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            receive = await self._admit(scope, receive)
            await self.app(scope, receive, send_counted)
        except ProblemError as problem:
            api_metrics.refused.labels(problem.kind).inc()
            await problem.response(scope.get("path"))(scope, receive, send_counted)
        finally:
            template = self._template(scope)
            method = scope.get("method", "")
            api_metrics.requests.labels(template, method, str(status["code"])).inc()
            api_metrics.request_seconds.labels(template, method).observe(
                time.perf_counter() - started
            )

    def _template(self, scope: Scope) -> str:
        """The path template of the request's route (a metric label: never a user id), also
        for a request refused here, before routing; "unmatched" when no route has the path."""
        route = scope.get("route")
        if route is None:
            for candidate in self.routes:
                if candidate.matches(scope)[0] is not Match.NONE:
                    route = candidate
                    break
        return getattr(route, "path", None) or "unmatched"

    async def _admit(self, scope: Scope, receive: Receive) -> Receive:
        """Check what can be checked before the body; the ``receive`` that counts it."""
        if len(scope.get("query_string", b"")) > self.max_query_bytes:
            raise ProblemError(
                414,
                "query-too-long",
                "Query string too long",
                f"the query string is longer than {self.max_query_bytes:,} bytes: send "
                "large inputs (such as recall's text) in the JSON body",
            )
        if scope["path"] in PUBLIC_PATHS:
            return receive
        declared = self._declared_length(scope)
        authorization = _header(scope, b"authorization")
        if self.verifier.uses_jwks:  # a cache miss fetches keys: off the event loop
            principal = await anyio.to_thread.run_sync(self.verifier.verify, authorization)
        else:
            principal = self.verifier.verify(authorization)
        wait = self.limiter.admit(principal.key, declared or 0)
        if wait:
            raise ProblemError(
                429,
                "rate-limited",
                "Too many requests",
                f"this token is over its limit of {self.limiter.requests_per_second:g} "
                f"requests/s or {self.limiter.bytes_per_minute:,} bytes/min: retry after "
                f"{wait} s",
                headers={"Retry-After": str(wait)},
            )
        scope.setdefault("state", {})["principal"] = principal
        return self._counting(receive, principal.key, declared or 0)

    def _declared_length(self, scope: Scope) -> int | None:
        raw = _header(scope, b"content-length")
        if raw is None:
            return None
        if not raw.isdigit():
            raise ProblemError(
                400, "bad-header", "Bad Content-Length", "Content-Length must be a byte count"
            )
        declared = int(raw)
        if declared > self.max_body_bytes:
            raise ProblemError(
                413, "body-too-large", "Body too large", BodyTooLarge(self.max_body_bytes).detail
            )
        return declared

    def _counting(self, receive: Receive, subject: str, declared: int) -> Receive:
        seen = {"bytes": 0}
        limit = self.max_body_bytes
        limiter = self.limiter

        async def counted() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                seen["bytes"] += len(message.get("body", b""))
                if seen["bytes"] > limit:
                    raise BodyTooLarge(limit)
                if not message.get("more_body", False):
                    limiter.charge(subject, seen["bytes"] - declared)
            return message

        return counted


def _header(scope: Scope, name: bytes) -> str | None:
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return None
