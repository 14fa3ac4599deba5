"""Errors as RFC 9457 problem details (``application/problem+json``).

Every refusal the API makes is one :class:`Problem`: a stable ``type`` a client can switch
on, a ``title``, the HTTP ``status`` and a ``detail`` that says what happened and what to do
next. Nothing here may echo a token or a memory's content back.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from starlette.responses import JSONResponse

PROBLEM_MEDIA_TYPE = "application/problem+json"
TYPE_PREFIX = "urn:memstream:problem:"


class Problem(BaseModel):
    """RFC 9457 problem details, with the contract fields that failed, if any."""

    type: str = Field(description="A URN naming the kind of problem; stable across releases.")
    title: str = Field(description="A short summary of the kind of problem.")
    status: int = Field(description="The HTTP status code.")
    detail: str = Field(description="What happened in this request, and what to do next.")
    instance: str | None = Field(default=None, description="The request path.")
    errors: list[dict[str, Any]] | None = Field(
        default=None, description="Each invalid field: where it is and what is wrong."
    )


class ProblemError(Exception):
    """Raised anywhere in a request to answer with a problem."""

    def __init__(
        self,
        status: int,
        kind: str,
        title: str,
        detail: str,
        *,
        headers: dict[str, str] | None = None,
        errors: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.kind = kind
        self.title = title
        self.detail = detail
        self.headers = headers or {}
        self.errors = errors

    def problem(self, instance: str | None = None) -> Problem:
        return Problem(
            type=TYPE_PREFIX + self.kind,
            title=self.title,
            status=self.status,
            detail=self.detail,
            instance=instance,
            errors=self.errors,
        )

    def response(self, instance: str | None = None) -> JSONResponse:
        return problem_response(self.problem(instance), self.headers)


def problem_response(problem: Problem, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        problem.model_dump(exclude_none=True),
        status_code=problem.status,
        headers=headers,
        media_type=PROBLEM_MEDIA_TYPE,
    )


def not_found(what: str, next_step: str) -> ProblemError:
    return ProblemError(404, "not-found", "Not found", f"{what} not found: {next_step}")


# The problem responses each route may give, for the OpenAPI document.
def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    descriptions = {
        400: "Malformed request (JSON that does not parse, a bad header or Idempotency-Key)",
        401: "Missing, expired, forged or wrong-audience bearer token",
        403: "The token lacks the scope, or may not act for this user",
        404: "Unknown user, memory or path",
        405: "The path does not take this method (Allow lists those it takes)",
        409: "A request with this Idempotency-Key is still in flight: retry after Retry-After",
        413: "Body larger than the API takes",
        414: "Query string larger than the API takes",
        422: "A field breaks the contract (type, range, size, id), or the Idempotency-Key was "
        "sent with another request",
        429: "Over this token's rate limit: retry after Retry-After seconds",
        503: "Kafka or PostgreSQL is unavailable: retry later",
    }
    return {
        status: {
            "model": Problem,
            "description": descriptions[status],
            "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
        for status in statuses
    }
