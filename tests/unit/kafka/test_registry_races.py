"""Several processes start together and register the same schema (a worker of two
processes does): a registry may answer the ones that lose the race 409 (Apicurio says
"artifact already exists"). The schema is then registered, and its id is looked up; a 409
that is a real refusal (an incompatible schema: the lookup finds nothing) still stands.

A real HTTP server on 127.0.0.1 plays the registry's two answers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from streams.kafka.schema_registry import (
    RegistryClient,
    RegistryRefused,
    RegistryUnavailable,
    with_retries,
)

SUBJECT = "memory.consolidation-value"


class Registry(BaseHTTPRequestHandler):
    """Every registration and compatibility rule loses the race; the winner's schema and rule
    are there, unless told otherwise. ``refusal`` is what its 409 to a registration says;
    ``known_after`` lookups find nothing before the winner's version is readable."""

    knows_schema = True
    refusal = "An artifact with ID 'memory.consolidation-value' in group 'null' already exists."
    known_after = 0
    lookups = 0

    def do_PUT(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._answer(409, {"error_code": 409, "message": "A rule named 'COMPATIBILITY' exists"})

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        level = "BACKWARD" if self.knows_schema else "NONE"
        self._answer(200, {"compatibilityLevel": level})

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.endswith("/versions"):
            self._answer(409, {"error_code": 409, "message": self.refusal})
            return
        type(self).lookups += 1
        if self.knows_schema and type(self).lookups > self.known_after:
            self._answer(200, {"subject": SUBJECT, "id": 7, "version": 1})
        else:
            self._answer(404, {"error_code": 40403, "message": "Schema not found"})

    def _answer(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def registry() -> Iterator[type[Registry]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Registry.knows_schema = True
    Registry.refusal = (
        "An artifact with ID 'memory.consolidation-value' in group 'null' already exists."
    )
    Registry.known_after = Registry.lookups = 0
    Registry.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    try:
        yield Registry
    finally:
        server.shutdown()
        server.server_close()


def test_a_registration_that_lost_the_race_takes_the_id_the_winner_registered(
    registry: type[Registry],
) -> None:
    client = RegistryClient(registry.url)  # type: ignore[attr-defined]
    assert client.register(SUBJECT, '"string"') == 7


def test_a_409_the_lookup_cannot_explain_is_still_a_refusal(registry: type[Registry]) -> None:
    registry.knows_schema = False
    registry.refusal = "Incompatible artifact: the new schema is not BACKWARD-compatible"
    client = RegistryClient(registry.url)  # type: ignore[attr-defined]
    with pytest.raises(RegistryRefused, match="HTTP 409") as refused:
        client.register(SUBJECT, '"string"')
    assert refused.value.status == 409


def test_a_race_whose_winner_is_not_readable_yet_is_waited_for(registry: type[Registry]) -> None:
    """CI: the loser's lookup found nothing yet, and the worker stopped with 'not
    BACKWARD-compatible'. It waits instead, and the next attempt takes the winner's id."""
    registry.known_after = 1  # the first lookup comes before the winner's version
    client = RegistryClient(registry.url)  # type: ignore[attr-defined]
    with pytest.raises(RegistryUnavailable, match="another process is creating"):
        client.register(SUBJECT, '"string"')
    registry.lookups = 0
    pauses: list[float] = []
    got = with_retries(
        lambda: client.register(SUBJECT, '"string"'), 60, "registering", pauses.append
    )
    assert got == 7 and len(pauses) == 1


def test_a_compatibility_rule_that_lost_the_race_is_fine_when_it_is_ours(
    registry: type[Registry],
) -> None:
    client = RegistryClient(registry.url)  # type: ignore[attr-defined]
    client.set_compatibility(SUBJECT, "BACKWARD")
    registry.knows_schema = False  # the rule there is another one
    with pytest.raises(RegistryRefused, match="HTTP 409"):
        client.set_compatibility(SUBJECT, "BACKWARD")
