"""The HTTP API fuzzed from its own OpenAPI document by schemathesis, as an outside client
would try it (issue 37): a real `memstream serve` in front of the real worker, projector,
Kafka and PostgreSQL, a token of one tenant's user (so requests get past authorization), and
every check schemathesis has but the two that assume a write is readable at once
(`use_after_free`, `ensure_resource_availability`): a write is answered 202 once Kafka has
it, and reaches the read models shortly after (docs/http-api.md).

The run is bounded: a fixed number of examples per operation and a fixed seed, so it takes
the same couple of minutes every time and a failure reproduces."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstream.waiting import wait_until
from tests.integration.test_http_api import Api, reader_login, start_api, token
from tests.support import Pipeline

pytestmark = pytest.mark.integration

REPOSITORY = Path(__file__).parents[2]
FUZZED_USER = "acme:fuzz"
MAX_EXAMPLES = 40  # per operation and phase: 16 operations, about a minute on 2 cores
SEED = 37
# Schemathesis's checks, less the two that read a resource right after writing it.
ASYNCHRONOUS = ("use_after_free", "ensure_resource_availability")
# The fuzzed user in every path; the token as the document's bearer scheme, so that
# schemathesis also sends requests without it (and expects 401).
CONFIG = f"""
[parameters]
"path.user_id" = "{FUZZED_USER}"

[auth.openapi.HTTPBearer]
bearer = "${{MEMSTREAM_FUZZ_TOKEN}}"
"""


@pytest.fixture(scope="module")
def fuzzed_api(stack: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """The API with rate limits out of the fuzzer's way, and one memory of the fuzzed user in
    the read models (so reads of that user answer, not only 404)."""
    workdir = tmp_path_factory.mktemp("http-fuzz")
    pipeline = Pipeline.create(stack, workdir)
    with reader_login(stack.database_url, pipeline.settings.database_url, workdir) as reader:
        try:
            pipeline.start_all()
            api = start_api(
                pipeline,
                workdir,
                "api-fuzzed",
                reader,
                http_requests_per_second=100_000,
                http_bytes_per_minute=1_000_000_000,
            )
            with api.client() as http:
                written = http.put(
                    f"/v1/users/{FUZZED_USER}/memories/seed",
                    json={"content": "The fuzzer's first memory."},
                )
                assert written.status_code == 202, written.text
                wait_until(
                    lambda: http.get(f"/v1/users/{FUZZED_USER}/memories/seed").status_code == 200,
                    timeout=60,
                    what="the fuzzed user's memory in the read models",
                    describe=pipeline.logs,
                )
            yield api
        finally:
            pipeline.close()


def test_schemathesis_finds_no_failure(fuzzed_api: Api, tmp_path: Path) -> None:
    """Given the live API and a token of the fuzzed user with every scope, when schemathesis
    runs its examples, coverage and fuzzing phases against /openapi.json (valid and invalid
    requests alike), then no check fails: no 5xx, every status, header and body as the
    document says, invalid data refused, valid data accepted, auth enforced."""
    executable = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    assert executable, "schemathesis is a test dependency: pip install -e '.[test]'"
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG)
    user_token = token(scope="read write forget admin", user_id=FUZZED_USER)
    command = [
        executable,
        "--config-file",
        str(config),
        "run",
        f"{fuzzed_api.url}/openapi.json",
        "--checks",
        "all",
        "--exclude-checks",
        ",".join(ASYNCHRONOUS),
        "--phases",
        "examples,coverage,fuzzing",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        str(SEED),
        "--generation-database",
        "none",
        # One worker: with two, hypothesis's ast.parse in threads trips a CPython 3.11.7
        # bug ("AST constructor recursion depth mismatch", fixed in 3.11.8).
        "--workers",
        "1",
        "--request-timeout",
        "30",
        "--no-color",
        "--report",
        "junit",
        "--report-dir",
        str(tmp_path / "report"),
    ]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=tmp_path,  # schemathesis leaves a .schemathesis cache in its working directory
        env={
            **os.environ,
            "SCHEMATHESIS_HOOKS": "tests.integration.schemathesis_hooks",
            "PYTHONPATH": str(REPOSITORY),
            "MEMSTREAM_FUZZ_TOKEN": user_token,
        },
    )

    assert result.returncode == 0, result.stdout[-20_000:] + result.stderr[-5_000:]
