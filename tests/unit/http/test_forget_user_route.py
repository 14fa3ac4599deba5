"""`DELETE /v1/users/{user}` (issue 43): forgetting a user needs the `forget` scope and the
user's tenant, checked before any key is erased or anything published, and it is in the
OpenAPI document."""

from __future__ import annotations

from fastapi import FastAPI

from tests.unit.http.test_refused_requests import app, assert_problem, call, token  # noqa: F401


def test_forgetting_a_user_without_the_forget_scope_is_refused(app: FastAPI) -> None:  # noqa: F811
    refused = call(app, "DELETE", "/v1/users/acme:ana")
    assert_problem(refused, 403, "insufficient-scope")


def test_forgetting_another_tenants_user_is_refused(app: FastAPI) -> None:  # noqa: F811
    forgetter = {"Authorization": f"Bearer {token(scope='forget')}"}
    refused = call(app, "DELETE", "/v1/users/globex:ana", headers=forgetter)
    assert_problem(refused, 403, "other-tenant")


def test_the_route_is_in_the_openapi_document_under_the_forget_scope(app: FastAPI) -> None:  # noqa: F811
    document = app.openapi()
    operation = document["paths"]["/v1/users/{user_id}"]["delete"]
    assert operation["operationId"] == "forgetUser"
