"""The optional LLM adapter (docs/consolidation.md, 'The optional LLM': "an optional LLM adapter
(OpenAI-compatible HTTP) with timeouts and fallback to the built-in one"), exercised against a real
HTTP server on 127.0.0.1 whose answers each test scripts: retries, timeouts, unusable answers
falling back to the built-in implementation and being counted, and the shape of the request it
sends."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from streams.engine.judge import Judgement, judge_contradiction
from streams.llm import (
    ChatClient,
    LLMError,
    LLMJudge,
    LLMPatternWriter,
    LLMSettings,
)

# Generous, so a loaded machine never times out an answer the test expects to arrive; only
# the slow-server test gives the client a short one, shorter than the server's delay.
CLIENT_TIMEOUT_SECONDS = 10.0
SHORT_TIMEOUT_SECONDS = 0.2
SLOW_RESPONSE_SECONDS = 0.5  # longer than the short timeout: the client gives up first

FIRST = "The team's standup is at 9am"
SECOND = "The team's standup is at 10am"
MEMBERS = [
    "User ran the tests before committing on Monday",
    "User ran the tests before committing the migration",
    "User always runs the test suite before a commit",
]


# --- the fake OpenAI-compatible server -------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    delay_seconds: float = 0.0


@dataclass(frozen=True)
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def completion(content: str) -> Reply:
    """A 200 chat-completions answer whose message content is ``content``."""
    document = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    return Reply(200, json.dumps(document).encode())


def judgement_answer(**fields: Any) -> Reply:
    return completion(json.dumps(fields))


def server_error(status: int = 500) -> Reply:
    return Reply(status, b'{"error": {"message": "boom"}}')


def slow(reply: Reply) -> Reply:
    return Reply(reply.status, reply.body, SLOW_RESPONSE_SECONDS)


@dataclass
class FakeLLMServer:
    """Answers each request with the next scripted reply (the last one repeats) and records it."""

    base_url: str
    replies: list[Reply] = field(default_factory=list)
    seen: list[SeenRequest] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def script(self, *replies: Reply) -> None:
        self.replies = list(replies)

    def next_reply(self, request: SeenRequest) -> Reply:
        with self.lock:
            self.seen.append(request)
            index = min(len(self.seen), len(self.replies)) - 1
            return self.replies[index]


def handler_for(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            request = SeenRequest(
                method=self.command,
                path=self.path,
                headers={name.lower(): value for name, value in self.headers.items()},
                body=self.rfile.read(length),
            )
            reply = server.next_reply(request)
            if reply.delay_seconds:
                server.released.wait(reply.delay_seconds)  # the deliberately slow response
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
            except OSError:
                pass  # the client gave up waiting (timeout) and closed the connection

        do_POST = answer
        do_GET = answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def llm_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    state = FakeLLMServer(base_url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(state))
    host, port = httpd.server_address[:2]
    state.base_url = f"http://{host!s}:{port}/v1"
    state.script(completion("{}"))
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, name="fake-llm", daemon=True
    )
    thread.start()
    try:
        yield state
    finally:
        state.released.set()  # let slow handlers finish at once
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def client_for(base_url: str, **overrides: Any) -> ChatClient:
    settings = LLMSettings(
        **{
            "base_url": base_url,
            "model": "test-model",
            "timeout_seconds": CLIENT_TIMEOUT_SECONDS,
            **overrides,
        }
    )
    return ChatClient(settings, sleep=lambda _seconds: None)


def closed_port_url() -> str:
    """A base URL on which nothing listens (connection refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# --- stand-in fallbacks ----------------------------------------------------------------------


STAND_IN_JUDGEMENT = Judgement(
    contradicts=False, confidence=0.1, cue="none", explanation="stand-in fallback"
)
STAND_IN_STATEMENT = "stand-in statement"


class StandInJudge:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def __call__(self, first: str, second: str) -> Judgement:
        self.calls.append((first, second))
        return STAND_IN_JUDGEMENT


class StandInPatternWriter:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, contents: list[str]) -> str:
        self.calls.append(contents)
        return STAND_IN_STATEMENT


# --- ChatClient ------------------------------------------------------------------------------


def test_given_a_completion_when_complete_is_called_then_the_message_content_is_returned(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(completion("hello"))

    answer = client_for(llm_server.base_url).complete("system", "user")

    assert answer == "hello"


def test_given_a_500_then_a_200_when_complete_is_called_then_it_retries_and_returns_the_answer(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(server_error(500), completion("second time lucky"))

    answer = client_for(llm_server.base_url).complete("system", "user")

    assert answer == "second time lucky"
    assert len(llm_server.seen) == 2


def test_given_failing_attempts_when_complete_retries_then_it_waits_backoff_times_attempt(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(server_error(503))
    waits: list[float] = []
    settings = LLMSettings(
        base_url=llm_server.base_url,
        model="test-model",
        timeout_seconds=CLIENT_TIMEOUT_SECONDS,
        attempts=3,
        backoff_seconds=0.5,
    )

    with pytest.raises(LLMError):
        ChatClient(settings, sleep=waits.append).complete("system", "user")

    assert waits == [0.5, 1.0]
    assert len(llm_server.seen) == 3


def test_given_a_slow_server_when_complete_is_called_then_each_attempt_times_out_and_it_fails(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(slow(completion("too late")))

    with pytest.raises(LLMError, match="timed out"):
        client = client_for(llm_server.base_url, attempts=2, timeout_seconds=SHORT_TIMEOUT_SECONDS)
        client.complete("system", "user")

    assert len(llm_server.seen) == 2


def test_given_a_garbage_body_when_complete_is_called_then_it_retries_and_fails(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(Reply(200, b"<html>not json</html>"))

    with pytest.raises(LLMError, match="not a chat-completions JSON"):
        client_for(llm_server.base_url).complete("system", "user")

    assert len(llm_server.seen) == 2


def test_given_a_400_when_complete_is_called_then_it_fails_at_once_without_retrying(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(server_error(400))

    with pytest.raises(LLMError, match="HTTP 400"):
        client_for(llm_server.base_url, attempts=3).complete("system", "user")

    assert len(llm_server.seen) == 1


def test_given_no_server_listening_when_complete_is_called_then_it_fails_with_llm_error() -> None:
    with pytest.raises(LLMError, match="connection failed"):
        client_for(closed_port_url()).complete("system", "user")


def test_given_a_request_when_it_is_sent_then_it_is_a_post_to_chat_completions(
    llm_server: FakeLLMServer,
) -> None:
    client_for(llm_server.base_url).complete("system", "user")

    (request,) = llm_server.seen
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"


def test_given_an_api_key_when_a_request_is_sent_then_it_carries_a_bearer_token(
    llm_server: FakeLLMServer,
) -> None:
    client_for(llm_server.base_url, api_key="k").complete("system", "user")

    (request,) = llm_server.seen
    assert request.headers["authorization"] == "Bearer k"


def test_given_no_api_key_when_a_request_is_sent_then_it_has_no_authorization_header(
    llm_server: FakeLLMServer,
) -> None:
    client_for(llm_server.base_url).complete("system", "user")

    (request,) = llm_server.seen
    assert "authorization" not in request.headers


# --- LLMJudge --------------------------------------------------------------------------------


def test_given_two_statements_when_judged_then_the_body_names_the_model_and_both_statements(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(judgement_answer(contradicts=True, confidence=0.9, explanation="9 vs 10"))

    LLMJudge(client_for(llm_server.base_url), fallback=StandInJudge())(FIRST, SECOND)

    body = llm_server.seen[0].json()
    assert body["model"] == "test-model"
    assert [message["role"] for message in body["messages"]] == ["system", "user"]
    user_message = body["messages"][1]["content"]
    assert FIRST in user_message
    assert SECOND in user_message
    assert '"contradicts"' in user_message and '"confidence"' in user_message


def test_given_a_valid_answer_when_judged_then_the_llm_judgement_is_returned(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(judgement_answer(contradicts=True, confidence=0.9, explanation="9am vs 10am"))
    fallback = StandInJudge()
    judge = LLMJudge(client_for(llm_server.base_url), fallback=fallback)

    judgement = judge(FIRST, SECOND)

    assert judgement == Judgement(
        contradicts=True, confidence=0.9, cue="llm", explanation="9am vs 10am"
    )
    assert judge.fallbacks == 0
    assert fallback.calls == []


def test_given_an_answer_in_a_code_fence_when_judged_then_it_is_parsed(
    llm_server: FakeLLMServer,
) -> None:
    fenced = (
        'Here you go:\n```json\n{"contradicts": false, "confidence": 0.2, '
        '"explanation": "compatible"}\n```'
    )
    llm_server.script(completion(fenced))
    judge = LLMJudge(client_for(llm_server.base_url), fallback=StandInJudge())

    judgement = judge(FIRST, SECOND)

    assert judgement == Judgement(
        contradicts=False, confidence=0.2, cue="llm", explanation="compatible"
    )


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("Yes, they contradict.", id="not-json"),
        pytest.param('{"contradicts": true, "confidence": 0.9}', id="missing-explanation"),
        pytest.param('{"explanation": "no verdict"}', id="missing-verdict"),
        pytest.param(
            '{"contradicts": true, "confidence": 3.0, "explanation": "x"}', id="confidence-3.0"
        ),
        pytest.param(
            '{"contradicts": "yes", "confidence": 0.9, "explanation": "x"}', id="verdict-a-string"
        ),
        pytest.param('["contradicts", true]', id="not-an-object"),
    ],
)
def test_given_an_unusable_answer_when_judged_then_the_fallback_is_used_and_counted(
    llm_server: FakeLLMServer, content: str
) -> None:
    llm_server.script(completion(content))
    fallback = StandInJudge()
    judge = LLMJudge(client_for(llm_server.base_url), fallback=fallback)

    judgement = judge(FIRST, SECOND)

    assert judgement == STAND_IN_JUDGEMENT
    assert fallback.calls == [(FIRST, SECOND)]
    assert judge.fallbacks == 1


def test_given_a_garbage_http_body_when_judged_then_the_fallback_is_used_and_counted(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(Reply(200, b"garbage"))
    judge = LLMJudge(client_for(llm_server.base_url), fallback=StandInJudge())

    judgement = judge(FIRST, SECOND)

    assert judgement == STAND_IN_JUDGEMENT
    assert judge.fallbacks == 1


def test_given_a_server_slower_than_the_timeout_when_judged_then_it_falls_back_after_attempts(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(slow(judgement_answer(contradicts=True, confidence=0.9, explanation="x")))
    client = client_for(llm_server.base_url, attempts=2, timeout_seconds=SHORT_TIMEOUT_SECONDS)
    judge = LLMJudge(client, fallback=StandInJudge())

    judgement = judge(FIRST, SECOND)

    assert judgement == STAND_IN_JUDGEMENT
    assert judge.fallbacks == 1
    assert len(llm_server.seen) == 2  # bounded: timeout x attempts, no further requests


def test_given_repeated_failures_when_judged_twice_then_each_fallback_is_counted(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(server_error(500))
    judge = LLMJudge(client_for(llm_server.base_url), fallback=StandInJudge())

    judge(FIRST, SECOND)
    judge(SECOND, FIRST)

    assert judge.fallbacks == 2


def test_given_no_fallback_when_the_llm_is_unreachable_then_the_built_in_judge_answers() -> None:
    judge = LLMJudge(client_for(closed_port_url()))

    judgement = judge(FIRST, SECOND)

    assert judgement == judge_contradiction(FIRST, SECOND)
    assert judge.fallbacks == 1


def test_given_a_failing_llm_when_judged_then_no_statement_appears_in_the_logs(
    llm_server: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    llm_server.script(completion(f"I cannot judge '{FIRST}'"))
    judge = LLMJudge(client_for(llm_server.base_url), fallback=StandInJudge())

    with caplog.at_level(logging.DEBUG, logger="streams.llm"):
        judge(FIRST, SECOND)

    assert caplog.records  # the fallback is visible to operators...
    assert all(FIRST not in r.getMessage() and SECOND not in r.getMessage() for r in caplog.records)


# --- LLMPatternWriter ------------------------------------------------------------------------


def test_given_a_json_array_when_a_pattern_is_written_then_its_first_statement_is_returned(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(completion('["User tests before committing", "User uses git"]'))
    writer = LLMPatternWriter(client_for(llm_server.base_url), fallback=StandInPatternWriter())

    statement = writer(MEMBERS)

    assert statement == "User tests before committing"
    assert writer.fallbacks == 0


def test_given_a_fenced_array_when_a_pattern_is_written_then_it_is_parsed(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(completion('```json\n["User tests before committing"]\n```'))
    writer = LLMPatternWriter(client_for(llm_server.base_url), fallback=StandInPatternWriter())

    assert writer(MEMBERS) == "User tests before committing"


def test_given_memory_contents_when_a_pattern_is_written_then_the_prompt_lists_them_all(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(completion('["User tests before committing"]'))

    LLMPatternWriter(client_for(llm_server.base_url), fallback=StandInPatternWriter())(MEMBERS)

    user_message = llm_server.seen[0].json()["messages"][1]["content"]
    assert "Extract generalizable facts" in user_message
    assert "JSON array of strings" in user_message
    assert all(content in user_message for content in MEMBERS)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("User tests before committing.", id="not-json"),
        pytest.param('{"pattern": "User tests before committing"}', id="not-an-array"),
        pytest.param("[]", id="empty-array"),
        pytest.param('[1, "  "]', id="no-non-empty-string"),
    ],
)
def test_given_an_unusable_answer_when_a_pattern_is_written_then_the_fallback_is_used_and_counted(
    llm_server: FakeLLMServer, content: str
) -> None:
    llm_server.script(completion(content))
    fallback = StandInPatternWriter()
    writer = LLMPatternWriter(client_for(llm_server.base_url), fallback=fallback)

    statement = writer(MEMBERS)

    assert statement == STAND_IN_STATEMENT
    assert fallback.calls == [MEMBERS]
    assert writer.fallbacks == 1


def test_given_an_unreachable_llm_when_a_pattern_is_written_then_the_fallback_is_used() -> None:
    writer = LLMPatternWriter(client_for(closed_port_url()), fallback=StandInPatternWriter())

    statement = writer(MEMBERS)

    assert statement == STAND_IN_STATEMENT
    assert writer.fallbacks == 1


# --- LLMSettings.from_env --------------------------------------------------------------------


def test_given_no_base_url_when_settings_are_read_then_there_is_no_llm() -> None:
    assert LLMSettings.from_env({"MEMSTREAM_LLM_MODEL": "m"}) is None


def test_given_a_base_url_when_settings_are_read_then_every_variable_is_used() -> None:
    settings = LLMSettings.from_env(
        {
            "MEMSTREAM_LLM_BASE_URL": "http://127.0.0.1:8080/v1",
            "MEMSTREAM_LLM_MODEL": "qwen2.5",
            "MEMSTREAM_LLM_API_KEY": "k",
            "MEMSTREAM_LLM_TIMEOUT_SECONDS": "2.5",
        }
    )

    assert settings == LLMSettings(
        base_url="http://127.0.0.1:8080/v1", model="qwen2.5", api_key="k", timeout_seconds=2.5
    )


def test_given_only_base_url_and_model_when_settings_are_read_then_defaults_fill_the_rest() -> None:
    settings = LLMSettings.from_env(
        {"MEMSTREAM_LLM_BASE_URL": "http://127.0.0.1:8080/v1", "MEMSTREAM_LLM_MODEL": "m"}
    )

    assert settings == LLMSettings(base_url="http://127.0.0.1:8080/v1", model="m")
    assert settings.api_key is None
    assert settings.timeout_seconds == 10.0


def test_given_a_base_url_without_model_when_settings_are_read_then_the_error_names_it() -> None:
    with pytest.raises(ValueError, match="MEMSTREAM_LLM_MODEL"):
        LLMSettings.from_env({"MEMSTREAM_LLM_BASE_URL": "http://127.0.0.1:8080/v1"})


def test_given_a_malformed_timeout_when_settings_are_read_then_the_error_names_it() -> None:
    with pytest.raises(ValueError, match="MEMSTREAM_LLM_TIMEOUT_SECONDS"):
        LLMSettings.from_env(
            {
                "MEMSTREAM_LLM_BASE_URL": "http://127.0.0.1:8080/v1",
                "MEMSTREAM_LLM_MODEL": "m",
                "MEMSTREAM_LLM_TIMEOUT_SECONDS": "soon",
            }
        )
