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
from fastapi.security import HTTPBearer
from starlette.exceptions import HTTPException

from memstream.http import api_metrics
from memstream.http.auth import Principal, TokenVerifier, authorize
from memstream.http.limits import RateLimiter
from memstream.http.middleware import Gate
from memstream.http.models import (
    Accepted,
    ConsolidationRequest,
    EventTimeOnly,
    Health,
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
)
from streams.engine.validation import MAX_ID_CHARS, Limits, validate_event
from streams.kafka import codec

API_VERSION = "1.0.0"
# Idempotency keys that are not UUIDs become uuid5(IDEMPOTENCY_NAMESPACE, key): the same
# key always names the same event, so a retried request is deduplicated by the worker.
IDEMPOTENCY_NAMESPACE = uuid.UUID("6f1c4d2e-8a43-5b7e-9c1d-3e2f4a5b6c7d")
ACK_TIMEOUT_SECONDS = 10.0

T = TypeVar("T")

UserId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS, description="<tenant>:<id>")]
MemoryId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)]
SessionId = Annotated[str, Path(min_length=1, max_length=MAX_ID_CHARS)]
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        max_length=MAX_ID_CHARS,
        description="The event's id if a UUID, else mapped to one with uuid5 (docs/http-api.md)."
        " A retry with the same key is applied once.",
    ),
]


@dataclass
class Services:
    """What the routes use, opened on first need (building the app connects to nothing)."""

    settings: Settings
    verifier: TokenVerifier
    _publisher: AckingPublisher | None = field(default=None, init=False)

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
        docs_url="/docs",
        redoc_url=None,
        dependencies=[Depends(HTTPBearer(auto_error=False))],  # documents the bearer scheme
    )
    app.state.services = services
    app.add_middleware(
        Gate,
        verifier=services.verifier,
        limiter=RateLimiter(settings.http_requests_per_second, settings.http_bytes_per_minute),
        max_body_bytes=settings.http_max_body_bytes,
        max_query_bytes=settings.http_max_query_bytes,
    )
    _add_error_handlers(app)
    _add_probes(app, services)
    _add_writes(app, services)
    _add_reads(app, services)
    app.router.add_event_handler("shutdown", services.close)
    return app


# ---- errors ---------------------------------------------------------------------------------


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ProblemError)
    async def problem(request: Request, exc: ProblemError) -> JSONResponse:
        return exc.response(request.url.path)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
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
        if exc.status_code == 404:
            detail = "no such route: the OpenAPI document at /openapi.json lists the API's paths"
        return problem_response(
            Problem(
                type=f"urn:memstream:problem:{kind}",
                title=kind.replace("-", " ").capitalize(),
                status=exc.status_code,
                detail=detail,
                instance=request.url.path,
            ),
            dict(exc.headers or {}),
        )

    @app.exception_handler(psycopg.OperationalError)
    async def database_down(request: Request, exc: psycopg.OperationalError) -> JSONResponse:
        return _unavailable("PostgreSQL").response(request.url.path)

    @app.exception_handler(TimeoutError)
    async def busy(request: Request, exc: TimeoutError) -> JSONResponse:
        return _unavailable("a database reader").response(request.url.path)


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
    @app.get("/healthz", response_model=Health, tags=["probes"], operation_id="liveness")
    async def healthz() -> Health:
        """Liveness: the process answers."""
        return Health(status="ok")

    @app.get(
        "/readyz",
        response_model=Health,
        tags=["probes"],
        operation_id="readiness",
        responses={503: {"model": Health, "description": "Kafka or PostgreSQL unreachable"}},
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


def _event_id(key: str | None) -> str:
    if key is None:
        return str(uuid.uuid4())
    try:
        return str(uuid.UUID(key))
    except ValueError:
        return str(uuid.uuid5(IDEMPOTENCY_NAMESPACE, key))


async def _publish(
    services: Services,
    user_id: str,
    payload: InputPayload,
    event_id: str,
    occurred_at: int | None,
    principal: Principal,
) -> None:
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


_WRITE_ERRORS = problem_responses(400, 401, 403, 413, 422, 429, 503)
_TARGET_ERRORS = problem_responses(400, 401, 403, 404, 413, 422, 429, 503)


def _add_writes(app: FastAPI, services: Services) -> None:
    @app.post(
        "/v1/users/{user_id}/memories",
        status_code=202,
        response_model=Accepted,
        responses=_WRITE_ERRORS,
        tags=["writes"],
        operation_id="createMemory",
    )
    async def create_memory(
        request: Request, user_id: UserId, body: NewMemory, idempotency_key: IdempotencyKey = None
    ) -> Accepted:
        """Write a new memory (with an existing ``memory_id``: update it). Without an id the
        memory's id is the event's id, so a retried request writes the same memory."""
        authorize(_principal(request), "write", user_id)
        event_id = _event_id(idempotency_key)
        memory_id = body.memory_id or event_id
        memory = _memory(user_id, memory_id, body)
        await _publish(
            services,
            user_id,
            MemoryWritten(memory),
            event_id,
            body.occurred_at,
            _principal(request),
        )
        return Accepted(event_id=event_id, memory_id=memory_id)

    @app.put(
        "/v1/users/{user_id}/memories/{memory_id}",
        status_code=202,
        response_model=Accepted,
        responses=_WRITE_ERRORS,
        tags=["writes"],
        operation_id="putMemory",
    )
    async def put_memory(
        request: Request,
        user_id: UserId,
        memory_id: MemoryId,
        body: MemoryFields,
        idempotency_key: IdempotencyKey = None,
    ) -> Accepted:
        """Write the memory ``memory_id``: create it, or update it (a new version)."""
        authorize(_principal(request), "write", user_id)
        event_id = _event_id(idempotency_key)
        memory = _memory(user_id, memory_id, body)
        await _publish(
            services,
            user_id,
            MemoryWritten(memory),
            event_id,
            body.occurred_at,
            _principal(request),
        )
        return Accepted(event_id=event_id, memory_id=memory_id)

    async def targeted(
        request: Request,
        scope: str,
        user_id: str,
        memory_id: str,
        payload: InputPayload,
        occurred_at: int | None,
        key: str | None,
    ) -> Accepted:
        authorize(_principal(request), scope, user_id)
        await _ensure_memory(services, user_id, memory_id)
        event_id = _event_id(key)
        await _publish(services, user_id, payload, event_id, occurred_at, _principal(request))
        return Accepted(event_id=event_id, memory_id=memory_id)

    @app.post(
        "/v1/users/{user_id}/memories/{memory_id}/access",
        status_code=202,
        response_model=Accepted,
        responses=_TARGET_ERRORS,
        tags=["writes"],
        operation_id="accessMemory",
    )
    async def access_memory(
        request: Request,
        user_id: UserId,
        memory_id: MemoryId,
        body: EventTimeOnly | None = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Accepted:
        """Record that the memory was used (it reinforces its salience)."""
        at = body.occurred_at if body else None
        payload = MemoryAccessed(memory_id, at)
        return await targeted(request, "write", user_id, memory_id, payload, at, idempotency_key)

    @app.delete(
        "/v1/users/{user_id}/memories/{memory_id}",
        status_code=202,
        response_model=Accepted,
        responses=_TARGET_ERRORS,
        tags=["writes"],
        operation_id="forgetMemory",
    )
    async def forget_memory(
        request: Request,
        user_id: UserId,
        memory_id: MemoryId,
        reason: Annotated[str, Query(max_length=MAX_ID_CHARS)] = "user_request",
        idempotency_key: IdempotencyKey = None,
    ) -> Accepted:
        """Forget the memory: honoured in the worker's state, the ledger and the read models
        (needs the ``forget`` scope)."""
        payload = ForgetRequested(memory_id, reason)
        return await targeted(request, "forget", user_id, memory_id, payload, None, idempotency_key)

    @app.post(
        "/v1/users/{user_id}/memories/{memory_id}/pin",
        status_code=202,
        response_model=Accepted,
        responses=_TARGET_ERRORS,
        tags=["writes"],
        operation_id="pinMemory",
    )
    async def pin_memory(
        request: Request,
        user_id: UserId,
        memory_id: MemoryId,
        body: PinRequest | None = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Accepted:
        """Pin the memory: never pruned, decayed or archived."""
        payload = MemoryPinned(memory_id, body.reason if body else "permanent")
        return await targeted(request, "write", user_id, memory_id, payload, None, idempotency_key)

    @app.delete(
        "/v1/users/{user_id}/memories/{memory_id}/pin",
        status_code=202,
        response_model=Accepted,
        responses=_TARGET_ERRORS,
        tags=["writes"],
        operation_id="unpinMemory",
    )
    async def unpin_memory(
        request: Request,
        user_id: UserId,
        memory_id: MemoryId,
        idempotency_key: IdempotencyKey = None,
    ) -> Accepted:
        """Unpin the memory: consolidation may decay and archive it again."""
        payload = MemoryUnpinned(memory_id)
        return await targeted(request, "write", user_id, memory_id, payload, None, idempotency_key)

    @app.post(
        "/v1/users/{user_id}/sessions/{session_id}/end",
        status_code=202,
        response_model=Accepted,
        responses=_WRITE_ERRORS,
        tags=["writes"],
        operation_id="endSession",
    )
    async def end_session(
        request: Request,
        user_id: UserId,
        session_id: SessionId,
        body: SessionEnd | None = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Accepted:
        """End a session: its turns are consolidated (observations, a narrative)."""
        authorize(_principal(request), "write", user_id)
        body = body or SessionEnd()
        event_id = _event_id(idempotency_key)
        payload = SessionEnded(session_id, body.conversation_id)
        await _publish(services, user_id, payload, event_id, body.occurred_at, _principal(request))
        return Accepted(event_id=event_id)

    @app.post(
        "/v1/users/{user_id}/consolidations",
        status_code=202,
        response_model=Accepted,
        responses=_WRITE_ERRORS,
        tags=["writes"],
        operation_id="requestConsolidation",
    )
    async def request_consolidation(
        request: Request,
        user_id: UserId,
        body: ConsolidationRequest | None = None,
        idempotency_key: IdempotencyKey = None,
    ) -> Accepted:
        """Request a consolidation cycle, a procedural-profile synthesis or (admin) an
        identity-origin reset. Its report appears under consolidation-reports."""
        body = body or ConsolidationRequest()
        principal = _principal(request)
        overrides = body.force or body.profile is not None or body.operation == "identity_reset"
        authorize(principal, "admin" if overrides else "write", user_id)
        if body.operation == "cycle":
            payload = ConsolidationRequested(body.conversation_id, body.force, body.profile)
        else:
            payload = ConsolidationRequested(trigger=body.operation)
        event_id = _event_id(idempotency_key)
        await _publish(services, user_id, payload, event_id, body.occurred_at, principal)
        return Accepted(event_id=event_id)


# ---- reads ----------------------------------------------------------------------------------

_READ_ERRORS = problem_responses(401, 403, 404, 422, 429, 503)


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
        responses=_READ_ERRORS,
        tags=["reads"],
        operation_id="recall",
    )
    def recall(request: Request, user_id: UserId, body: RecallRequest) -> Recall:
        """The user's memories for a text, by meaning and words (``hybrid``) or by meaning
        alone (``vector``), weighted by current salience, current memories first, chosen so
        that they do not repeat each other (``diversity``). The text
        travels in the body: it may be longer than a query string should be."""
        authorize(_principal(request), "read", user_id)
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
        responses=_READ_ERRORS,
        tags=["reads"],
        operation_id="getMemory",
    )
    def get_memory(request: Request, user_id: UserId, memory_id: MemoryId) -> MemoryView:
        """One memory as the read models hold it now, with its lineage: every link into or
        out of it (supersedes, contradicts, derived_from, promoted_to, summarized_into)."""
        authorize(_principal(request), "read", user_id)

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
        responses=_READ_ERRORS,
        tags=["reads"],
        operation_id="listContradictions",
    )
    def contradictions(request: Request, user_id: UserId) -> Links:
        """The contradictions consolidation found between the user's memories."""
        authorize(_principal(request), "read", user_id)
        links = _read_as(services, user_id, lambda reader: reader.contradictions(user_id))
        return Links(links=[LinkView(**vars(link)) for link in links])

    @app.get(
        "/v1/users/{user_id}/sessions",
        response_model=Sessions,
        responses=_READ_ERRORS,
        tags=["reads"],
        operation_id="listSessions",
    )
    def sessions(
        request: Request, user_id: UserId, limit: Annotated[int, Query(ge=1, le=1000)] = 100
    ) -> Sessions:
        """The user's sessions, the most recently active first, each with its narrative."""
        authorize(_principal(request), "read", user_id)
        found = _query_as(services, user_id, lambda c: api_queries.sessions(c, user_id, limit))
        return Sessions(sessions=[SessionView(**vars(s)) for s in found])

    @app.get(
        "/v1/users/{user_id}/profile",
        response_model=ProfileView,
        responses=_READ_ERRORS,
        tags=["reads"],
        operation_id="getProfile",
    )
    def profile(request: Request, user_id: UserId) -> ProfileView:
        """The user's procedural profile and identity drift (nulls until measured)."""
        authorize(_principal(request), "read", user_id)
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
        responses=_READ_ERRORS,
        tags=["reads"],
        operation_id="listConsolidationReports",
    )
    def reports(
        request: Request, user_id: UserId, limit: Annotated[int, Query(ge=1, le=1000)] = 50
    ) -> Reports:
        """The user's consolidation reports, the newest first."""
        authorize(_principal(request), "read", user_id)
        found = _query_as(services, user_id, lambda c: api_queries.reports(c, user_id, limit))
        return Reports(reports=[ReportView(**vars(r)) for r in found])
