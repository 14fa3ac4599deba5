"""`DELETE /v1/users/{user}` on a sealed pipeline (issue 43), through the real `memstream
serve`: the user's data key is gone when the API answers, then the worker and the projector
drop every row of the user; another user of the tenant is untouched."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from typing import Any

import pytest

from memstream.waiting import wait_until
from projections.writer import USER_TABLES
from tests.integration.test_http_api import Api, reader_login, start_api, token
from tests.support import Pipeline

pytestmark = pytest.mark.integration

ZOE, MAX = "acme:zoe", "acme:max"


@pytest.fixture
def sealed_api(stack: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    workdir = tmp_path_factory.mktemp("http-forget")
    pipeline = Pipeline.create(stack, workdir)
    pipeline.settings = pipeline.settings.with_overrides(
        master_key=base64.b64encode(os.urandom(32)).decode("ascii")
    )
    with reader_login(stack.database_url, pipeline.settings.database_url, workdir) as reader:
        try:
            pipeline.start_all()
            yield start_api(pipeline, workdir, "api", reader)
        finally:
            pipeline.close()


def rows_of(api: Api, user: str) -> int:
    return sum(
        api.pipeline.scalar(
            f"SELECT count(*) FROM {table} WHERE user_id = %s "  # noqa: S608 - our tables
            + ("AND action <> 'UserErased'" if table == "consolidation_log" else ""),
            (user,),
        )
        for table in USER_TABLES
    )


def test_deleting_a_user_over_http_erases_the_key_then_every_row(sealed_api: Api) -> None:
    """Given two users of a tenant with memories written over HTTP,
    when a token with the forget scope sends DELETE /v1/users/acme:zoe,
    then the API answers 202 with the event id after zoe's key is destroyed, zoe's rows
    disappear from every table, and max's stay."""
    with sealed_api.client() as http:
        for user, text in ((ZOE, "Zoe hides her diary in the piano"), (MAX, "Max likes tea")):
            written = http.post(f"/v1/users/{user}/memories", json={"content": text})
            assert written.status_code == 202, written.text
        wait_until(
            lambda: rows_of(sealed_api, ZOE) and rows_of(sealed_api, MAX),
            timeout=90,
            what="both users' memories projected",
            describe=sealed_api.pipeline.logs,
        )
        keep = rows_of(sealed_api, MAX)

        forgotten = http.delete(f"/v1/users/{ZOE}", headers={"Authorization": f"Bearer {token()}"})

    assert forgotten.status_code == 202, forgotten.text
    assert forgotten.json()["event_id"]
    assert not sealed_api.pipeline.query(
        "SELECT 1 FROM memstream_data_keys WHERE key_user_id = %s", (ZOE,)
    )
    wait_until(
        lambda: rows_of(sealed_api, ZOE) == 0,
        timeout=90,
        what="zoe's rows erased",
        describe=sealed_api.pipeline.logs,
    )
    assert rows_of(sealed_api, MAX) == keep
