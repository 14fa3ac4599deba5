"""The HTTP API's OpenAPI document is valid, and a client generated from it in another
language type-checks: TypeScript types from npm's openapi-typescript, checked by tsc.

The npm packages are installed into a temporary directory from the npm registry (the
machine image has node and npm); nothing is installed globally."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from openapi_spec_validator import validate

from memstream.http.routes import create_app
from streams.config.settings import Settings

# Versions known to work together: openapi-typescript 7 wants TypeScript 5.
NPM_PACKAGES = ("openapi-typescript@7", "typescript@5")
# openapi-typescript makes a field with a default required unless told not to: a request
# may leave such fields out (docs/http-api.md says the same to client authors).
GENERATE = [
    "openapi-typescript",
    "openapi.json",
    "-o",
    "memstream.ts",
    "--default-non-nullable=false",
]


def openapi_document(tmp_path: Path) -> dict[str, Any]:
    key = tmp_path / "secret"
    key.write_text("s" * 40)
    settings = Settings.from_env({"MEMSTREAM_STATE_DIR": str(tmp_path)}).with_overrides(
        http_jwt_key_file=str(key)
    )
    return create_app(settings).openapi()


def test_the_openapi_document_validates(tmp_path: Path) -> None:
    document = openapi_document(tmp_path)
    validate(document)  # raises on an invalid document
    assert document["openapi"].startswith("3.1")
    write = document["paths"]["/v1/users/{user_id}/memories"]["post"]
    assert set(write["responses"]) >= {"202", "400", "401", "403", "413", "422", "429"}
    assert "speaker" in document["components"]["schemas"]["NewMemory"]["properties"]


def test_the_document_says_which_routes_need_a_token_and_every_status_they_give(
    tmp_path: Path,
) -> None:
    """Bearer auth on the routes under /v1 only (the probes and the document need none);
    every operation lists the statuses any request may get (404 for an unknown path, 405
    for a method the path does not take, 414 for a long query string)."""
    document = openapi_document(tmp_path)
    operations = {
        (path, method): operation
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
    }
    secured = {key for key, operation in operations.items() if operation.get("security")}

    assert "security" not in document
    assert secured == {key for key in operations if key[0].startswith("/v1/")}
    assert all({"405", "414"} <= set(op["responses"]) for op in operations.values())
    assert all(
        {"401", "403", "404", "422", "429"} <= set(op["responses"])
        for (path, _), op in operations.items()
        if path.startswith("/v1/")
    )
    assert "/docs" not in document["paths"]


CLIENT = """
import type { paths, components } from "./memstream";

type Write = paths["/v1/users/{user_id}/memories"]["post"];
type Recall = paths["/v1/users/{user_id}/recall"]["post"];
type WriteBody = Write["requestBody"]["content"]["application/json"];
type RecallBody = Recall["requestBody"]["content"]["application/json"];

const body: Write["requestBody"]["content"]["application/json"] = {
  content: "My flight to Lisbon leaves at 9:30 tomorrow.",
  speaker: "Ana",
  layer: "working",
  session_id: "s1",
  importance: 0.8,
};
const user: Write["parameters"]["path"]["user_id"] = "acme:ana";
const header: Write["parameters"]["header"] = { "Idempotency-Key": "k-1" };
const key: string = header["Idempotency-Key"] ?? crypto.randomUUID();

async function write(): Promise<string> {
  const response = await fetch(`http://api/v1/users/${encodeURIComponent(user)}/memories`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Idempotency-Key": key },
    body: JSON.stringify(body),
  });
  const accepted: Write["responses"][202]["content"]["application/json"] = await response.json();
  return accepted.event_id;
}

async function recall(text: string): Promise<string[]> {
  const question: Recall["requestBody"]["content"]["application/json"] = {
    text, k: 3, ranking: "hybrid",
  };
  const response = await fetch(`http://api/v1/users/${user}/recall`, {
    method: "POST", body: JSON.stringify(question),
  });
  const found: Recall["responses"][200]["content"]["application/json"] = await response.json();
  // score is null when the question or the memory has no vector to compare (the schema says so)
  return found.memories.map((m) => `${m.memory_id} ${m.score?.toFixed(2) ?? "-"} ${m.content}`);
}

const problem: components["schemas"]["Problem"] = {
  type: "urn:memstream:problem:not-found", title: "Not found", status: 404, detail: "x",
};

// @ts-expect-error: importance is a number, not a string
const wrong: WriteBody = { content: "x", importance: "high" };
// @ts-expect-error: ranking is hybrid or vector
const badRanking: RecallBody = { text: "x", ranking: "bm25" };

export { write, recall, problem, wrong, badRanking };
"""

TSCONFIG = {
    "compilerOptions": {
        "strict": True,
        "noEmit": True,
        "target": "ES2022",
        "module": "ES2022",
        "moduleResolution": "bundler",
        "lib": ["ES2022", "DOM"],
        "skipLibCheck": True,
    },
    "files": ["client.ts"],
}


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def typescript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with openapi-typescript and tsc installed and the API's types generated
    into memstream.ts."""
    npm, npx = shutil.which("npm"), shutil.which("npx")
    assert npm and npx, (
        "node and npm are needed to check the generated TypeScript client: install them "
        "(e.g. apt-get install nodejs npm)"
    )
    workdir = tmp_path_factory.mktemp("typescript")
    (workdir / "openapi.json").write_text(json.dumps(openapi_document(workdir)))
    (workdir / "package.json").write_text('{"private": true}')
    installed = run([npm, "install", "--no-audit", "--no-fund", *NPM_PACKAGES], workdir)
    assert installed.returncode == 0, f"npm install failed:\n{installed.stderr[-2000:]}"
    generated = run([npx, "--no-install", *GENERATE], workdir)
    assert generated.returncode == 0, generated.stderr[-2000:]
    (workdir / "tsconfig.json").write_text(json.dumps(TSCONFIG))
    return workdir


def type_check(workdir: Path, source: str) -> subprocess.CompletedProcess[str]:
    (workdir / "client.ts").write_text(source)
    return run(["npx", "--no-install", "tsc", "-p", "."], workdir)


def test_a_typescript_client_generated_from_it_type_checks(typescript: Path) -> None:
    """Given the OpenAPI document, openapi-typescript generates types from it, and calls
    written against them (and two deliberate type errors, which tsc must catch) compile."""
    checked = type_check(typescript, CLIENT)
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]


@pytest.mark.parametrize("mistake", ["content: 42", 'speaker: ["Ana"]', "importance: 0.5"])
def test_tsc_refuses_a_call_that_breaks_the_document(typescript: Path, mistake: str) -> None:
    """The check can fail: a body of the wrong shape, or without its content, does not
    compile."""
    checked = type_check(
        typescript,
        'import type { paths } from "./memstream";\n'
        'type W = paths["/v1/users/{user_id}/memories"]["post"];\n'
        f'export const b: W["requestBody"]["content"]["application/json"] = {{ {mistake} }};\n',
    )
    assert checked.returncode != 0
    assert "error TS" in checked.stdout
