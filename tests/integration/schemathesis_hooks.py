"""Schemathesis hooks for tests/integration/test_http_fuzz.py (loaded by the CLI through
``SCHEMATHESIS_HOOKS``).

A valid ``Idempotency-Key`` the fuzzer generates is made unique per request: schemathesis
draws the same few keys ("0", "00") for every operation, and the API rightly refuses a key
sent again with another request (422) or while its first request is in flight (409), which
the document cannot express. Invalid keys are sent as generated, so their refusal is still
fuzzed; the key store's behaviour is tested in tests/integration/test_http_api.py."""

from __future__ import annotations

import re
import uuid
from typing import Any

import schemathesis

from memstream.http.idempotency import KEY_PATTERN, MAX_KEY_CHARS

_KEY = re.compile(KEY_PATTERN)
HEADER = "Idempotency-Key"


@schemathesis.hook
def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    key = (case.headers or {}).get(HEADER)
    if isinstance(key, str) and len(key) <= MAX_KEY_CHARS and _KEY.fullmatch(key.strip()):
        case.headers[HEADER] = str(uuid.uuid4())
