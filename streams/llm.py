"""The optional LLM adapter: an OpenAI-compatible chat-completions client and the two engine
callables built on it (a contradiction judge and a pattern-statement writer).

docs/consolidation.md, 'The optional LLM': contradiction judgements and pattern statements have a
deterministic built-in implementation and an optional LLM adapter with timeouts and fallback to the
built-in one. This module is that adapter. It does I/O, so it lives outside ``streams.engine``; the
engine only ever receives ``LLMJudge`` / ``LLMPatternWriter`` as plain callables with the built-in
signatures.

It must never let an LLM failure escape into the engine: every failure (timeout, HTTP error,
unparsable or out-of-range answer) returns the built-in answer and is counted in ``fallbacks``.
It must never log memory content (it logs failure reasons only), and uses the standard library
only.
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from streams.engine.judge import Judgement, judge_contradiction

log = logging.getLogger(__name__)

ENV_BASE_URL = "MEMSTREAM_LLM_BASE_URL"
ENV_MODEL = "MEMSTREAM_LLM_MODEL"
ENV_API_KEY = "MEMSTREAM_LLM_API_KEY"
ENV_TIMEOUT_SECONDS = "MEMSTREAM_LLM_TIMEOUT_SECONDS"

LLM_CUE = "llm"
MAX_PATTERN_MEMBERS = 20  # seed 001 sends at most 20 memories per extraction prompt

JUDGE_SYSTEM_PROMPT = (
    "You compare two statements from one user's long-term memory and decide whether they "
    "contradict each other: the same subject, a single-valued attribute, and values that "
    "cannot both be true at the same time. Answer with one JSON object and nothing else."
)
PATTERN_SYSTEM_PROMPT = (
    "You consolidate an AI agent's memories into general facts about the user or project. "
    "Answer with one JSON array of strings and nothing else."
)


class LLMError(RuntimeError):
    """The LLM endpoint gave no usable answer after all attempts; the message says why."""


@dataclass(frozen=True)
class LLMSettings:
    """Where and how to reach an OpenAI-compatible endpoint: POST
    ``{base_url}/chat/completions``."""

    base_url: str
    model: str
    api_key: str | None = None
    timeout_seconds: float = 10.0
    attempts: int = 2
    backoff_seconds: float = 0.5

    def __post_init__(self) -> None:
        if not self.base_url:
            raise ValueError(f"LLM base URL is empty: set {ENV_BASE_URL}")
        if not self.model:
            raise ValueError(f"LLM model is empty: set {ENV_MODEL}")
        if not (self.timeout_seconds > 0 and math.isfinite(self.timeout_seconds)):
            raise ValueError(
                f"LLM timeout must be a positive number of seconds, got {self.timeout_seconds}"
            )
        if self.attempts < 1:
            raise ValueError(f"LLM attempts must be at least 1, got {self.attempts}")
        if self.backoff_seconds < 0:
            raise ValueError(f"LLM backoff must not be negative, got {self.backoff_seconds}")

    @property
    def completions_url(self) -> str:
        return f"{self.base_url.rstrip('/')}/chat/completions"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LLMSettings | None:
        """The LLM settings in ``environ`` (default: the process environment), or None when
        MEMSTREAM_LLM_BASE_URL is unset or empty (no LLM: the engine uses its built-ins).

        Raises ValueError naming the variable to fix when a value is missing or malformed.
        """
        if environ is None:
            environ = os.environ
        base_url = environ.get(ENV_BASE_URL, "").strip()
        if not base_url:
            return None
        model = environ.get(ENV_MODEL, "").strip()
        if not model:
            raise ValueError(f"{ENV_BASE_URL} is set but {ENV_MODEL} is not: set the model name")
        api_key = environ.get(ENV_API_KEY, "").strip() or None
        raw_timeout = environ.get(ENV_TIMEOUT_SECONDS, "").strip()
        if not raw_timeout:
            return cls(base_url=base_url, model=model, api_key=api_key)
        try:
            timeout = float(raw_timeout)
        except ValueError:
            raise ValueError(
                f"{ENV_TIMEOUT_SECONDS}={raw_timeout!r} is not a number of seconds"
            ) from None
        if not (timeout > 0 and math.isfinite(timeout)):
            raise ValueError(f"{ENV_TIMEOUT_SECONDS}={raw_timeout!r} must be positive")
        return cls(base_url=base_url, model=model, api_key=api_key, timeout_seconds=timeout)


class _RetryableFailure(Exception):
    """One attempt failed in a way another attempt may fix (timeout, 5xx, 429, bad body)."""


class ChatClient:
    """A minimal OpenAI-compatible chat-completions client with a per-request timeout and
    retries with linear backoff (``backoff_seconds * attempt``) on retryable failures."""

    def __init__(self, settings: LLMSettings, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self._sleep = sleep
        self._opener = urllib.request.build_opener()

    def complete(self, system: str, user: str) -> str:
        """``choices[0].message.content`` for a system + user message pair.

        Raises LLMError when every attempt failed, or at once on a non-retryable HTTP status
        (a 4xx other than 408/429: wrong URL, model or key will not fix itself).
        """
        request = self._request(system, user)
        failure = "no attempt made"
        for attempt in range(1, self.settings.attempts + 1):
            try:
                return self._attempt(request)
            except _RetryableFailure as retryable:
                failure = str(retryable)
            log.warning("LLM attempt %d/%d failed: %s", attempt, self.settings.attempts, failure)
            if attempt < self.settings.attempts:
                self._sleep(self.settings.backoff_seconds * attempt)
        raise LLMError(
            f"LLM at {self.settings.completions_url} gave no answer after "
            f"{self.settings.attempts} attempts (last: {failure}); check that the server is up "
            f"or raise {ENV_TIMEOUT_SECONDS}"
        )

    def _request(self, system: str, user: str) -> urllib.request.Request:
        body = {
            "model": self.settings.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "temperature": 0,
        }
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        return urllib.request.Request(
            self.settings.completions_url,
            data=json.dumps(body).encode("utf-8"),
            headers=headers,
            method="POST",
        )

    def _attempt(self, request: urllib.request.Request) -> str:
        try:
            with self._opener.open(request, timeout=self.settings.timeout_seconds) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            error.close()
            if error.code >= 500 or error.code in (408, 429):
                raise _RetryableFailure(f"HTTP {error.code}") from error
            raise LLMError(
                f"LLM at {self.settings.completions_url} refused the request with HTTP "
                f"{error.code}: check {ENV_BASE_URL}, {ENV_MODEL} and {ENV_API_KEY}"
            ) from error
        except urllib.error.URLError as error:
            raise _RetryableFailure(f"connection failed: {error.reason}") from error
        except TimeoutError as error:
            raise _RetryableFailure(f"timed out after {self.settings.timeout_seconds} s") from error
        except (OSError, http.client.HTTPException) as error:  # reset or cut off mid-response
            raise _RetryableFailure(f"connection failed: {type(error).__name__}") from error
        return _completion_content(raw)


def _completion_content(raw: bytes) -> str:
    try:
        document = json.loads(raw)
        content = document["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as error:
        raise _RetryableFailure("the response is not a chat-completions JSON document") from error
    if not isinstance(content, str):
        raise _RetryableFailure("the response's message content is not a string")
    return content


def _reason(error: Exception) -> str:
    """Why a call fell back, for the log. LLMError and the answer checks never quote memory
    content; anything else is named by its type only, in case its message does."""
    if isinstance(error, LLMError | ValueError) and not isinstance(error, UnicodeError):
        return str(error)
    return type(error).__name__


_CODE_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


def parse_json_answer(content: str, opening: str, closing: str) -> Any:
    """The JSON value in a model's answer, tolerating a code fence (```json … ```) or prose
    around it: the text between the first ``opening`` and the last ``closing`` bracket is
    tried when the whole answer is not JSON. Raises ValueError when there is none."""
    fenced = _CODE_FENCE.search(content)
    text = (fenced.group(1) if fenced else content).strip()
    try:
        return json.loads(text)
    except ValueError:
        start, end = text.find(opening), text.rfind(closing)
        if start < 0 or end <= start:
            raise ValueError("the answer holds no JSON value") from None
        return json.loads(text[start : end + 1])


@dataclass(frozen=True)
class _Verdict:
    contradicts: bool
    confidence: float
    explanation: str


def _verdict(answer: Any) -> _Verdict:
    """The judge's answer checked field by field; ValueError says which field is wrong."""
    if not isinstance(answer, dict):
        raise ValueError("the answer is not a JSON object")
    contradicts = answer.get("contradicts")
    confidence = answer.get("confidence")
    explanation = answer.get("explanation")
    if not isinstance(contradicts, bool):
        raise ValueError("'contradicts' is missing or not a boolean")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise ValueError("'confidence' is missing or not a number")
    if not (0.0 <= confidence <= 1.0):
        raise ValueError(f"'confidence' {confidence} is outside 0..1")
    if not isinstance(explanation, str):
        raise ValueError("'explanation' is missing or not a string")
    return _Verdict(contradicts, float(confidence), explanation.strip())


def judge_prompt(first: str, second: str) -> str:
    """Seed 001's contradiction prompt."""
    return (
        "Do these two statements contradict each other?\n\n"
        f"Statement 1: {first}\n"
        f"Statement 2: {second}\n\n"
        'Respond with JSON: {"contradicts": true/false, "confidence": 0.0-1.0, '
        '"explanation": "..."}\n'
        "Return only that JSON object: contradicts is a boolean, confidence a number between "
        "0 and 1, explanation one short sentence."
    )


class LLMJudge:
    """A contradiction judge with the built-in judge's signature, asking the LLM and falling
    back to ``fallback`` on any failure; ``fallbacks`` counts those fallbacks."""

    def __init__(
        self,
        client: ChatClient,
        fallback: Callable[[str, str], Judgement] = judge_contradiction,
    ) -> None:
        self.client = client
        self.fallback = fallback
        self.fallbacks = 0

    def __call__(self, first: str, second: str) -> Judgement:
        try:
            content = self.client.complete(JUDGE_SYSTEM_PROMPT, judge_prompt(first, second))
            verdict = _verdict(parse_json_answer(content, "{", "}"))
            return Judgement(
                contradicts=verdict.contradicts,
                confidence=verdict.confidence,
                cue=LLM_CUE,
                explanation=verdict.explanation,
            )
        except Exception as error:  # any failure: the engine must get a judgement regardless
            self.fallbacks += 1
            log.warning("LLM judge fell back to the built-in judge: %s", _reason(error))
            return self.fallback(first, second)


def pattern_prompt(contents: list[str]) -> str:
    """Seed 001's extraction prompt over at most MAX_PATTERN_MEMBERS memory contents."""
    listed = "\n".join(f"- {content}" for content in contents[:MAX_PATTERN_MEMBERS])
    return (
        "Analyze these memories and extract recurring patterns or facts:\n\n"
        f"{listed}\n\n"
        "Extract generalizable facts or patterns. Output as JSON array of strings:\n"
        'Example: ["User prefers to run tests before committing", "Project uses PostgreSQL"]\n'
        "Return only the JSON array, the one statement that best generalises all of these "
        "memories first."
    )


def _first_statement(answer: Any) -> str:
    if not isinstance(answer, list):
        raise ValueError("the answer is not a JSON array")
    for item in answer:
        if isinstance(item, str) and item.strip():
            return item.strip()
    raise ValueError("the answer holds no non-empty string")


class LLMPatternWriter:
    """Writes one generalised statement for a group of memory contents with the LLM (the first
    string of the JSON array it returns), falling back to ``fallback`` on any failure;
    ``fallbacks`` counts those fallbacks."""

    def __init__(self, client: ChatClient, fallback: Callable[[list[str]], str]) -> None:
        self.client = client
        self.fallback = fallback
        self.fallbacks = 0

    def __call__(self, contents: list[str]) -> str:
        if not contents:
            return self.fallback(contents)
        try:
            answer = self.client.complete(PATTERN_SYSTEM_PROMPT, pattern_prompt(contents))
            return _first_statement(parse_json_answer(answer, "[", "]"))
        except Exception as error:  # any failure: the engine must get a statement regardless
            self.fallbacks += 1
            log.warning(
                "LLM pattern writer fell back to the built-in statement: %s", _reason(error)
            )
            return self.fallback(contents)
