"""The HTTP API's routes: a map from URLs to the publisher (writes) and the readers (reads).

Writes build one input event, check it against the contract
(:func:`streams.engine.validation.validate_event`) and answer ``202`` with its id once Kafka
has acknowledged it; consolidation then happens in the stream, and the read models show
the effect shortly after. Reads run one :class:`projections.reader.MemoryReader` call (or an
:mod:`projections.api_queries` query inside ``reader.as_user``), so row-level security holds
each to the user in the URL. Every route first checks the token's scope and reach
(:func:`memstream.http.auth.authorize`); nothing is published for a refused request.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any, TypeVar

import anyio
import psycopg
from fastapi import Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match

from memstream.http import api_metrics, idempotency
from memstream.http.auth import Principal, TokenVerifier, authorize
from memstream.http.limits import RateLimiter
from memstream.http.middleware import Gate
from memstream.http.models import (
    INVALID_TEXT,
    Accepted,
    ConsolidationRequest,
    EventTimeOnly,
    Health,
    Id,
    Links,
    LinkView,
    MemoryFields,
    MemoryView,
    NewMemory,
    PinRequest,
    ProfileView,
    Recall,
    RecalledMemory,
    RecallRequest,
    Reports,
    ReportView,
    SessionEnd,
    Sessions,
    SessionView,
    Strict,
    Text,
)
from memstream.http.problems import (
    Problem,
    ProblemError,
    not_found,
    problem_response,
    problem_responses,
)
from memstream.http.publishing import AckingPublisher, NotAcknowledged
from memstream.http.readers import ReaderPool
from memstream.publisher import EventTooLarge, now_millis
from projections import api_queries
from projections.reader import MemoryReader
from streams.config.settings import Settings
from streams.embedders.base import Embedder
from streams.embedders.factory import embedder_for
from streams.engine.model import (
    ConsolidationRequested,
    ForgetRequested,
    InputPayload,
    Memory,
    MemoryAccessed,
    MemoryEvent,
    MemoryPinned,
    MemoryUnpinned,
    MemoryWritten,
    SessionEnded,
    UserForgotten,
)
from streams.engine.validation import MAX_ID_CHARS, Limits, validate_event
from streams.kafka import codec

API_VERSION = "1.1.0"
ACK_TIMEOUT_SECONDS = 10.0

T = TypeVar("T")

UserId = Annotated[Id, Path(min_length=1, max_length=MAX_ID_CHARS, description="<tenant>:<id>")]
MemoryId = Annotated[Id, Path(min_length=1, max_length=MAX_ID_CHARS)]
SessionId = Annotated[Id, Path(min_length=1, max_length=MAX_ID_CHARS)]
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        # Checked by idempotency.parse_key (a 400 problem), documented here.
        json_schema_extra={
            "minLength": 1,
            "maxLength": idempotency.MAX_KEY_CHARS,
            "pattern": idempotency.KEY_PATTERN,
        },
        description="Names this request (draft-ietf-httpapi-idempotency-key-header): 1 to "
        f"{idempotency.MAX_KEY_CHARS} visible ASCII characters, a UUID at best. A retry of the "
        "same request with the same key within 24 h is applied once and answered as the "
        "first was; the key sent with another request is a 422 (docs/http-api.md).",
    ),
]

# The scope each route under /v1 needs (requestConsolidation needs admin for overrides).
SCOPES: dict[str, str] = {
    "createMemory": "write",
    "putMemory": "write",
    "accessMemory": "write",
    "forgetMemory": "forget",
    "forgetUser": "forget",
    "pinMemory": "write",
    "unpinMemory": "write",
    "endSession": "write",
    "requestConsolidation": "write",
    "recall": "read",
    "getMemory": "read",
    "listContradictions": "read",
    "listSessions": "read",
    "getProfile": "read",
    "listConsolidationReports": "read",
}
_bearer = HTTPBearer(
    auto_error=False, description="A JWT of your issuer: tenant, scope, aud (docs/http-api.md)"
)


def authorize_route(request: Request) -> Principal:
    """Refuse (403) unless the token may call the matched route for the user in its path. Run
    before the body is validated, so a caller who may not make the request is told so, not
    what was wrong with its body."""
    principal: Principal = request.state.principal
    route = request.scope.get("route")
    scope = SCOPES[getattr(route, "operation_id", "")]
    authorize(principal, scope, str(request.path_params.get("user_id", "")))
    return principal


async def authorized(
    request: Request,
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The dependency of every route under /v1 (the Gate middleware has verified the token;
    ``_bearer`` puts the scheme in the OpenAPI document)."""
    return authorize_route(request)


@dataclass
class Services:
    """What the routes use, opened on first need (building the app connects to nothing)."""

    settings: Settings
    verifier: TokenVerifier
    _publisher: AckingPublisher | None = field(default=None, init=False)
    key_store: idempotency.IdempotencyStore = field(
        default_factory=idempotency.IdempotencyStore, init=False
    )

    @property
    def publisher(self) -> AckingPublisher:
        if self._publisher is None:
            self._publisher = AckingPublisher(self.settings, source="http-api")
        return self._publisher

    @cached_property
    def readers(self) -> ReaderPool:
        return ReaderPool(self.settings, self.settings.http_readers)

    @cached_property
    def embedder(self) -> Embedder:
        return embedder_for(self.settings.embedder.lower(), self.settings.embedding_dim)

    @cached_property
    def limits(self) -> Limits:
        return Limits(self.settings.embedding_dim, self.settings.max_content_bytes)

    def close(self) -> None:
        if self._publisher is not None:
            self._publisher.close()
        if "readers" in self.__dict__:
            self.readers.close()


def create_app(settings: Settings, verifier: TokenVerifier | None = None) -> FastAPI:
    """The API for ``settings``; ``verifier`` defaults to the configured key or JWKS URL."""
    services = Services(settings, verifier or TokenVerifier.from_settings(settings))
    app = FastAPI(
        title="memstream",
        version=API_VERSION,
        summary="Write and recall AI-agent memory: events to Kafka, reads from PostgreSQL.",
        description=(
            "Writes are answered 202 once Kafka has acknowledged the event; consolidation "
            "happens in the stream and the read models show it shortly after. Errors are "
            "RFC 9457 problem details. User ids are `<tenant>:<id>`; see docs/http-api.md."
        ),
        openapi_url="/openapi.json",
        # No browsable views: Swagger UI and ReDoc load their code from a CDN, which a
        # deployment without Internet access (or a strict CSP) cannot reach. The document at
        # /openapi.json is the reference; any OpenAPI viewer reads it.
        docs_url=None,
        redoc_url=None,
    )
    app.state.services = services
    app.add_middleware(
        Gate,
        routes=app.router.routes,
        verifier=services.verifier,
        limiter=RateLimiter(settings.http_requests_per_second, settings.http_bytes_per_minute),
        max_body_bytes=settings.http_max_body_bytes,
        max_query_bytes=settings.http_max_query_bytes,
    )
    _add_error_handlers(app)
    _add_probes(app, services)
    _add_writes(app, services)
    _add_reads(app, services)
    _document_the_deployment(app, settings)
    unscoped = {
        route.operation_id
        for route in app.routes
        if isinstance(route, APIRoute) and route.path.startswith("/v1/")
    } - set(SCOPES)
    assert not unscoped, f"routes without a scope in SCOPES: {unscoped}"
    app.router.add_event_handler("shutdown", services.close)
    return app


def _document_the_deployment(app: FastAPI, settings: Settings) -> None:
    """The document says what this deployment takes: an embedding of its dimension."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = generate()
            for model in ("MemoryFields", "NewMemory"):
                embedding = document["components"]["schemas"][model]["properties"]["embedding"]
                for variant in embedding.get("anyOf", [embedding]):
                    if variant.get("type") == "array":
                        variant["minItems"] = variant["maxItems"] = settings.embedding_dim
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


# ---- errors ---------------------------------------------------------------------------------


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ProblemError)
    async def problem(request: Request, exc: ProblemError) -> JSONResponse:
        return exc.response(request.url.path)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        if getattr(request.scope.get("route"), "operation_id", None) in SCOPES:
            try:  # JSON that does not parse is found before the route's dependencies run
                authorize_route(request)
            except ProblemError as refused:
                api_metrics.refused.labels(refused.kind).inc()
                return refused.response(request.url.path)
        errors = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
            for e in exc.errors()
        ]
        if any(e["type"] == "json_invalid" for e in errors):
            error = ProblemError(
                400,
                "malformed-json",
                "Malformed JSON",
                "the body is not valid JSON: send one JSON object with "
                "'Content-Type: application/json'",
            )
        elif all(e["type"] in (INVALID_TEXT, "string_unicode") for e in errors):
            error = ProblemError(
                422,
                "invalid-text",
                "Text that cannot be stored",
                "some text holds a NUL or a lone surrogate (see errors), which the contract "
                "refuses: send valid UTF-8 without NUL",
                errors=errors,
            )
        else:
            error = ProblemError(
                422,
                "invalid-request",
                "Invalid request",
                "some fields break the contract (see errors): fix them and send the request "
                "again; the OpenAPI document at /openapi.json lists every field",
                errors=errors,
            )
        api_metrics.refused.labels(error.kind).inc()
        return error.response(request.url.path)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        kinds = {404: "not-found", 405: "method-not-allowed", 413: "body-too-large"}
        kind = kinds.get(exc.status_code, "http-error")
        detail = str(exc.detail)
        headers = dict(exc.headers or {})
        if exc.status_code == 404:
            detail = "no such route: the OpenAPI document at /openapi.json lists the API's paths"
        if exc.status_code == 405:
            allowed = _allowed_methods(app.router.routes, request)
            headers["Allow"] = ", ".join(allowed)
            detail = (
                f"{request.method} is not a method of this path: use one of "
                f"{', '.join(allowed)} (the OpenAPI document at /openapi.json lists them)"
            )
        return problem_response(
            Problem(
                type=f"urn:memstream:problem:{kind}",
                title=kind.replace("-", " ").capitalize(),
                status=exc.status_code,
                detail=detail,
                instance=request.url.path,
            ),
            headers,
        )

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> JSONResponse:
        # The last resort: a bug. Answer as a problem (the traceback goes to the log, by
        # Starlette, never to the client).
        return ProblemError(
            500,
            "internal-error",
            "Internal error",
            "the API failed on this request (a bug, logged on the server): retry later, and "
            "report it if it persists",
        ).response(request.url.path)

    @app.exception_handler(psycopg.OperationalError)
    async def database_down(request: Request, exc: psycopg.OperationalError) -> JSONResponse:
        return _unavailable("PostgreSQL").response(request.url.path)

    @app.exception_handler(TimeoutError)
    async def busy(request: Request, exc: TimeoutError) -> JSONResponse:
        return _unavailable("a database reader").response(request.url.path)


def _allowed_methods(routes: list[BaseRoute], request: Request) -> list[str]:
    """Every method some route of the request's path answers (Starlette names only the
    first matching route's)."""
    methods: set[str] = set()
    for route in routes:
        match, _ = route.matches(request.scope)
        if match is not Match.NONE:
            methods |= getattr(route, "methods", None) or set()
    return sorted(methods)


def _unavailable(what: str) -> ProblemError:
    return ProblemError(
        503,
        "unavailable",
        "Service unavailable",
        f"{what} is unavailable or busy: retry in a few seconds (writes with the same "
        "Idempotency-Key are applied once)",
        headers={"Retry-After": "5"},
    )


# ---- probes ---------------------------------------------------------------------------------


def _add_probes(app: FastAPI, services: Services) -> None:
    @app.get(
        "/healthz",
        response_model=Health,
        tags=["probes"],
        operation_id="liveness",
        responses=problem_responses(405, 414),
    )
    async def healthz() -> Health:
        """Liveness: the process answers."""
        return Health(status="ok")

    @app.get(
        "/readyz",
        response_model=Health,
        tags=["probes"],
        operation_id="readiness",
        responses={
            **problem_responses(405, 414),
            503: {"model": Health, "description": "Kafka or PostgreSQL unreachable"},
        },
    )
    def readyz() -> Any:
        """Readiness: the broker and the database answer."""
        checks = {
            "kafka": "ok" if services.publisher.reachable() else "unreachable",
            "postgresql": "ok" if _database_answers(services) else "unreachable",
        }
        ready = all(v == "ok" for v in checks.values())
        health = Health(status="ok" if ready else "unavailable", checks=checks)
        return JSONResponse(health.model_dump(), status_code=200 if ready else 503)


def _database_answers(services: Services) -> bool:
    try:
        with services.readers.reader(timeout=2) as reader:
            reader.conn.execute("SELECT 1")
        return True
    except (psycopg.Error, TimeoutError):
        return False


# ---- writes ---------------------------------------------------------------------------------


def _principal(request: Request) -> Principal:
    principal: Principal = request.state.principal
    return principal


@dataclass(frozen=True)
class Write:
    """One write request, once its body is valid: what it names, and how to make its payload
    from the event id (a new memory without an id takes the event's)."""

    operation: str
    user_id: str
    target: dict[str, Any]
    body: Strict | None
    occurred_at: int | None
    make: Callable[[str], tuple[InputPayload, str | None]]
    must_exist: str | None = None  # a memory the read models must hold (else 404)


async def _write(services: Services, request: Request, write: Write, raw_key: str | None) -> Any:
    """Check ``write``, publish its event, answer 202; with an Idempotency-Key, claim the key
    first (a retry gets the first answer) and store the answer."""
    principal = _principal(request)
    key = idempotency.parse_key(raw_key)
    if write.must_exist is not None:
        await _ensure_memory(services, write.user_id, write.must_exist)
    keyed = None
    if key is not None:
        body = write.body.model_dump(mode="json") if write.body is not None else None
        keyed = idempotency.KeyedRequest.of(
            principal.tenant, write.user_id, write.operation, key, write.target, body
        )
    event_id = keyed.event_id if keyed is not None else str(uuid.uuid4())
    payload, memory_id = write.make(event_id)
    event = _checked_event(services, write.user_id, payload, event_id, write.occurred_at, principal)
    if keyed is not None:
        outcome = await _in_store(services, keyed, services.key_store.claim)
        if isinstance(outcome, idempotency.Replay):
            return JSONResponse(
                outcome.body, status_code=outcome.status, headers={"Idempotent-Replayed": "true"}
            )
    try:
        await _publish(services, event)
    except BaseException:
        if keyed is not None:
            with anyio.CancelScope(shield=True):
                await _in_store(services, keyed, services.key_store.release)
        raise
    accepted = Accepted(event_id=event_id, memory_id=memory_id)
    if keyed is not None:
        answer = accepted.model_dump(mode="json")
        await _in_store(
            services, keyed, lambda c, k: services.key_store.complete(c, k, 202, answer)
        )
    return accepted


async def _in_store(
    services: Services,
    keyed: idempotency.KeyedRequest,
    work: Callable[[psycopg.Connection[Any], idempotency.KeyedRequest], T],
) -> T:
    """``work`` on the key store, in a transaction scoped to the request's user; then, once a
    minute, the expired keys purged. A store that fails is a 503 (nothing published)."""

    def run() -> T:
        with services.readers.reader() as reader:
            with reader.as_user(keyed.user_id) as conn:
                result = work(conn, keyed)
            if services.key_store.purge_due():
                services.key_store.purge(reader.conn)
            return result

    try:
        return await anyio.to_thread.run_sync(run)
    except psycopg.Error as exc:
        raise ProblemError(
            503,
            "unavailable",
            "Idempotency-Key store unavailable",
            f"the Idempotency-Key store could not be used ({type(exc).__name__}): retry in a "
            "few seconds with the same key",
            headers={"Retry-After": "5"},
        ) from None


def _checked_event(
    services: Services,
    user_id: str,
    payload: InputPayload,
    event_id: str,
    occurred_at: int | None,
    principal: Principal,
) -> MemoryEvent:
    """The event, if it keeps the contract; else the 4xx the worker's dead letter would be."""
    event = MemoryEvent(
        event_id=event_id,
        user_id=user_id,
        occurred_at=now_millis() if occurred_at is None else occurred_at,
        payload=payload,
        source=f"http:{principal.tenant}",
    )
    rejection = validate_event(event, services.limits, key=user_id)
    if rejection is not None:
        raise ProblemError(
            413 if rejection.reason == "content_too_large" else 422,
            rejection.reason.replace("_", "-"),
            "Breaks the contract",
            f"{rejection.detail}: fix it and send the request again (nothing was published)",
        )
    return event


async def _publish(services: Services, event: MemoryEvent) -> None:
    started = time.perf_counter()
    try:
        await services.publisher.publish_acked(event, ACK_TIMEOUT_SECONDS)
    except EventTooLarge as exc:
        raise ProblemError(413, "event-too-large", "Event too large", str(exc)) from None
    except NotAcknowledged as exc:
        raise ProblemError(
            503,
            "not-acknowledged",
            "Kafka did not acknowledge the event",
            f"{exc}: send the request again with the same Idempotency-Key; it is applied once",
            headers={"Retry-After": "5"},
        ) from None
    api_metrics.publish_seconds.observe(time.perf_counter() - started)
    api_metrics.events_published.labels(event.event_type).inc()


def _memory(user_id: str, memory_id: str, body: MemoryFields) -> Memory:
    fields = body.memory_fields()
    for name in ("tags", "trigger_conditions"):
        if name in fields:
            fields[name] = tuple(fields[name])
    if "embedding" in fields:
        fields["embedding"] = codec.pack_embedding(fields["embedding"])
    return Memory(
        memory_id=memory_id, user_id=user_id, content=body.content, speaker=body.speaker, **fields
    )


async def _ensure_memory(services: Services, user_id: str, memory_id: str) -> None:
    """404 unless the read models hold the memory: the worker would dead-letter the event."""

    def exists() -> bool:
        with services.readers.reader() as reader, reader.as_user(user_id) as conn:
            return api_queries.memory(conn, user_id, memory_id) is not None

    if not await anyio.to_thread.run_sync(exists):
        raise not_found(
            f"memory {memory_id!r} of user {user_id!r}",
            "check the ids; a memory written a moment ago reaches the read models within a "
            "second or so, so retry shortly",
        )


# What every route under /v1 may answer besides its own success; writes may also be told
# that a request with their Idempotency-Key is still in flight (409).
_ERRORS = problem_responses(400, 401, 403, 404, 405, 413, 414, 422, 429, 503)
_WRITE_ERRORS = problem_responses(400, 401, 403, 404, 405, 409, 413, 414, 422, 429, 503)
_WRITE: dict[str, Any] = {
    "status_code": 202,
    "response_model": Accepted,
    "responses": _WRITE_ERRORS,
    "tags": ["writes"],
}


def _add_writes(app: FastAPI, services: Services) -> None:
    @app.post(
        "/v1/users/{user_id}/memories",
        operation_id="createMemory",
        dependencies=[Depends(authorized)],
        **_WRITE,
    )
    async def create_memory(
        request: Request, user_id: UserId, body: NewMemory, idempotency_key: IdempotencyKey = None
    ) -> Any:
        """Write a new memory (with an existing ``memory_id``: update it). Without an id the
        memory's id is the event's id, so a retried request writes the same memory."""

        def make(event_id: str) -> tuple[InputPayload, str]:
            memory_id = body.memory_id or event_id
            return MemoryWritten(_memory(user_id, memory_id, body)), memory_id

        write = Write("createMemory", user_id, {}, body, body.occurred_at, make)
        return await _write(services, request, write, idempotency_key)

    @app.put(
        "/v1/users/{user_id}/memories/{memory_id}",
        operation_id="putMemory",
        dependencies=[Depends(authorized)],
        **_WRITE,
    )
    async def put_memory(
        request: Request,
        user_id: UserId,
        memory_id: MemoryId,
        body: MemoryFields,
        idempotency_key: IdempotencyKey = None,
    ) -> Any:
        """Write the memory ``memory_id``: create it, or update it (a new version)."""

        def make(event_id: str) -> tuple[InputPayload, str]:
            return MemoryWritten(_memory(user_id, memory_id, body)), memory_id

        target = {"memory_id": memory_id}
        write = Write("putMemory", user_id, target, body, body.occurred_at, make)
        return await _write(services, request, write, idempotency_key)

    def targeted(
        operation: str,
        user_id: str,
        memory_id: str,
        payload: InputPayload,
        body: Strict | None = None,
        occurred_at: int | None = None,
        query: dict[str, Any] | None = None,
    ) -> Write:
        """A write about an existing memory (404 if the read models do not hold it)."""
        return Write(
            operation,
            user_id,
            {"memory_id": memory_id, **(query or {})},
            body,
            occurred_at,
            lambda _event_id: (payload, memory_id),
            must_exist=memory_id,
        )

    @app.post(
        "/v1/users/{user_id}/memories/{memory_id}/access",
        operation_id="accessMemory",
        dependencies=[Depends(authorized)],
        **_WRITE,
    )
    async def access_memory(
        request: Request,
        user_id: UserId,
        memory_id: MemoryId,
        body: EventTimeOnly | None = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Any:
        """Record that the memory was used (it reinforces its salience)."""
        at = body.occurred_at if body else None
        payload = MemoryAccessed(memory_id, at)
        write = targeted("accessMemory", user_id, memory_id, payload, body, at)
        return await _write(services, request, write, idempotency_key)

    @app.delete(
        "/v1/users/{user_id}/memories/{memory_id}",
        operation_id="forgetMemory",
        dependencies=[Depends(authorized)],
        **_WRITE,
    )
    async def forget_memory(
        request: Request,
        user_id: UserId,
        memory_id: MemoryId,
        reason: Annotated[Text, Query(max_length=MAX_ID_CHARS)] = "user_request",
        idempotency_key: IdempotencyKey = None,
    ) -> Any:
        """Forget the memory: honoured in the worker's state, the ledger and the read models
        (needs the ``forget`` scope)."""
        payload = ForgetRequested(memory_id, reason)
        write = targeted("forgetMemory", user_id, memory_id, payload, query={"reason": reason})
        return await _write(services, request, write, idempotency_key)

    @app.delete(
        "/v1/users/{user_id}",
        operation_id="forgetUser",
        dependencies=[Depends(authorized)],
        **_WRITE,
    )
    async def forget_user(
        request: Request,
        user_id: UserId,
        reason: Annotated[Text, Query(max_length=MAX_ID_CHARS)] = "user_request",
        idempotency_key: IdempotencyKey = None,
    ) -> Any:
        """Forget the user: with sealing on, the user's data key is destroyed before this
        answers (no copy of the user's records, on any topic or backup, opens again); then
        the worker drops the user's state and the projector every row (needs the ``forget``
        scope)."""
        sealing = services.publisher.sealing
        if sealing is not None:
            await anyio.to_thread.run_sync(sealing.erase, user_id)
        write = Write(
            "forgetUser",
            user_id,
            {"reason": reason},
            None,
            None,
            lambda _event_id: (UserForgotten(reason), None),
        )
        return await _write(services, request, write, idempotency_key)

    @app.post(
        "/v1/users/{user_id}/memories/{memory_id}/pin",
        operation_id="pinMemory",
        dependencies=[Depends(authorized)],
        **_WRITE,
    )
    async def pin_memory(
        request: Request,
        user_id: UserId,
        memory_id: MemoryId,
        body: PinRequest | None = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Any:
        """Pin the memory: never pruned, decayed or archived."""
        payload = MemoryPinned(memory_id, body.reason if body else "permanent")
        write = targeted("pinMemory", user_id, memory_id, payload, body or PinRequest())
        return await _write(services, request, write, idempotency_key)

    @app.delete(
        "/v1/users/{user_id}/memories/{memory_id}/pin",
        operation_id="unpinMemory",
        dependencies=[Depends(authorized)],
        **_WRITE,
    )
    async def unpin_memory(
        request: Request,
        user_id: UserId,
        memory_id: MemoryId,
        idempotency_key: IdempotencyKey = None,
    ) -> Any:
        """Unpin the memory: consolidation may decay and archive it again."""
        payload = MemoryUnpinned(memory_id)
        write = targeted("unpinMemory", user_id, memory_id, payload)
        return await _write(services, request, write, idempotency_key)

    @app.post(
        "/v1/users/{user_id}/sessions/{session_id}/end",
        operation_id="endSession",
        dependencies=[Depends(authorized)],
        **_WRITE,
    )
    async def end_session(
        request: Request,
        user_id: UserId,
        session_id: SessionId,
        body: SessionEnd | None = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Any:
        """End a session: its turns are consolidated (observations, a narrative)."""
        body = body or SessionEnd()
        payload = SessionEnded(session_id, body.conversation_id)
        target = {"session_id": session_id}
        write = Write(
            "endSession", user_id, target, body, body.occurred_at, lambda _: (payload, None)
        )
        return await _write(services, request, write, idempotency_key)

    @app.post(
        "/v1/users/{user_id}/consolidations",
        operation_id="requestConsolidation",
        dependencies=[Depends(authorized)],
        **_WRITE,
    )
    async def request_consolidation(
        request: Request,
        user_id: UserId,
        body: ConsolidationRequest | None = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Any:
        """Request a consolidation cycle, a procedural-profile synthesis or (admin) an
        identity-origin reset. Its report appears under consolidation-reports."""
        body = body or ConsolidationRequest()
        if body.force or body.profile is not None or body.operation == "identity_reset":
            authorize(_principal(request), "admin", user_id)
        payload: InputPayload
        if body.operation == "cycle":
            payload = ConsolidationRequested(body.conversation_id, body.force, body.profile)
        else:
            payload = ConsolidationRequested(trigger=body.operation)
        write = Write(
            "requestConsolidation",
            user_id,
            {},
            body,
            body.occurred_at,
            lambda _: (payload, None),
        )
        return await _write(services, request, write, idempotency_key)


# ---- reads ----------------------------------------------------------------------------------


def _read_as(services: Services, user_id: str, read: Callable[[MemoryReader], T]) -> T:
    """``read`` with a pooled reader, after checking the user is known (404 otherwise)."""
    with services.readers.reader() as reader:
        with reader.as_user(user_id) as conn:
            known = api_queries.user_exists(conn, user_id)
        if not known:
            raise not_found(
                f"user {user_id!r}",
                "no memory of this user has reached the read models; check the id, or write "
                "one first",
            )
        return read(reader)


def _query_as(services: Services, user_id: str, query: Callable[[psycopg.Connection[Any]], T]) -> T:
    """``query`` on a connection bound to the user (row-level security), after the check of
    :func:`_read_as`: the shape of every read that is one SQL query."""

    def read(reader: MemoryReader) -> T:
        with reader.as_user(user_id) as conn:
            return query(conn)

    return _read_as(services, user_id, read)


def _add_reads(app: FastAPI, services: Services) -> None:
    @app.post(
        "/v1/users/{user_id}/recall",
        response_model=Recall,
        responses=_ERRORS,
        tags=["reads"],
        dependencies=[Depends(authorized)],
        operation_id="recall",
    )
    def recall(request: Request, user_id: UserId, body: RecallRequest) -> Recall:
        """The user's memories for a text, by meaning and words (``hybrid``) or by meaning
        alone (``vector``), weighted by current salience, current memories first, chosen so
        that they do not repeat each other (``diversity``). The text
        travels in the body: it may be longer than a query string should be."""
        found = _read_as(
            services,
            user_id,
            lambda reader: reader.recall(
                user_id,
                body.text,
                services.embedder,
                k=body.k,
                include_archived=body.include_archived,
                ranking=body.ranking,
                diversity=body.diversity,
            ),
        )
        return Recall(memories=[RecalledMemory(**vars(r)) for r in found])

    @app.get(
        "/v1/users/{user_id}/memories/{memory_id}",
        response_model=MemoryView,
        responses=_ERRORS,
        tags=["reads"],
        dependencies=[Depends(authorized)],
        operation_id="getMemory",
    )
    def get_memory(request: Request, user_id: UserId, memory_id: MemoryId) -> MemoryView:
        """One memory as the read models hold it now, with its lineage: every link into or
        out of it (supersedes, contradicts, derived_from, promoted_to, summarized_into)."""

        def read(reader: MemoryReader) -> MemoryView:
            with reader.as_user(user_id) as conn:
                stored = api_queries.memory(conn, user_id, memory_id)
            if stored is None:
                raise not_found(
                    f"memory {memory_id!r} of user {user_id!r}",
                    "check the id; a memory written a moment ago reaches the read models "
                    "within a second or so, and a forgotten one is gone",
                )
            links = reader.lineage(user_id, memory_id)
            return MemoryView(
                layer=stored.layer,
                **stored.fields,
                lineage=[LinkView(**vars(link)) for link in links],
            )

        return _read_as(services, user_id, read)

    @app.get(
        "/v1/users/{user_id}/contradictions",
        response_model=Links,
        responses=_ERRORS,
        tags=["reads"],
        dependencies=[Depends(authorized)],
        operation_id="listContradictions",
    )
    def contradictions(request: Request, user_id: UserId) -> Links:
        """The contradictions consolidation found between the user's memories."""
        links = _read_as(services, user_id, lambda reader: reader.contradictions(user_id))
        return Links(links=[LinkView(**vars(link)) for link in links])

    @app.get(
        "/v1/users/{user_id}/sessions",
        response_model=Sessions,
        responses=_ERRORS,
        tags=["reads"],
        dependencies=[Depends(authorized)],
        operation_id="listSessions",
    )
    def sessions(
        request: Request, user_id: UserId, limit: Annotated[int, Query(ge=1, le=1000)] = 100
    ) -> Sessions:
        """The user's sessions, the most recently active first, each with its narrative."""
        found = _query_as(services, user_id, lambda c: api_queries.sessions(c, user_id, limit))
        return Sessions(sessions=[SessionView(**vars(s)) for s in found])

    @app.get(
        "/v1/users/{user_id}/profile",
        response_model=ProfileView,
        responses=_ERRORS,
        tags=["reads"],
        dependencies=[Depends(authorized)],
        operation_id="getProfile",
    )
    def profile(request: Request, user_id: UserId) -> ProfileView:
        """The user's procedural profile and identity drift (nulls until measured)."""
        found = _query_as(services, user_id, lambda c: api_queries.profile(c, user_id))
        if found is None:
            return ProfileView(
                profile_memory_id=None,
                profile_version=None,
                profile_content=None,
                drift=None,
                drift_level=None,
                drift_measured_at=None,
                updated_at=None,
            )
        return ProfileView(**vars(found))

    @app.get(
        "/v1/users/{user_id}/consolidation-reports",
        response_model=Reports,
        responses=_ERRORS,
        tags=["reads"],
        dependencies=[Depends(authorized)],
        operation_id="listConsolidationReports",
    )
    def reports(
        request: Request, user_id: UserId, limit: Annotated[int, Query(ge=1, le=1000)] = 50
    ) -> Reports:
        """The user's consolidation reports, the newest first."""
        found = _query_as(services, user_id, lambda c: api_queries.reports(c, user_id, limit))
        return Reports(reports=[ReportView(**vars(r)) for r in found])
