"""Request and response bodies: what the OpenAPI document describes.

Bodies are strict (a string is not a number, an unknown field is an error), so a client's
typo is refused instead of silently dropped. Ranges are repeated here for the OpenAPI
document; the contract itself is enforced by :mod:`streams.engine.validation` before any
event is published.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    WithJsonSchema,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError

from projections.recall_order import DEFAULT_DIVERSITY
from streams.engine.policy import profile_names
from streams.engine.validation import MAX_ID_CHARS, MAX_TIME_MS

# The error type of text PostgreSQL or Avro cannot hold (the contract's reason for it).
INVALID_TEXT = "invalid_text"
Layer = Literal["working", "episodic", "semantic", "procedural"]


def storable_text(value: str) -> str:
    """``value`` if PostgreSQL and Avro can hold it: no NUL (text cannot store it) and no
    lone surrogate (``"\\ud800"`` in JSON: not UTF-8, so it cannot be encoded)."""
    if "\x00" in value:
        raise PydanticCustomError(INVALID_TEXT, "contains a NUL character, which text cannot hold")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise PydanticCustomError(
            INVALID_TEXT,
            "contains a lone surrogate (such as \\ud800), which is not a character: send "
            "valid UTF-8",
        ) from None
    return value


def integral(value: Any) -> Any:
    """An integral float (``5.0``) as the integer it is: JSON Schema's ``integer`` accepts it,
    so a client generated from the OpenAPI document may send it. Anything else goes on to the
    strict integer check unchanged (``5.5`` and ``"5"`` stay errors, ``true`` is no number)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def builtin_profile_name(value: str) -> str:
    """``value`` if it names a built-in policy profile (the worker knows no other)."""
    if value not in profile_names():
        raise ValueError(f"is not a built-in profile: use one of {', '.join(profile_names())}")
    return value


# A built-in profile's name; the document lists them (the enum), the check names them.
ProfileName = Annotated[
    str,
    AfterValidator(builtin_profile_name),
    WithJsonSchema({"type": "string", "enum": list(profile_names())}),
]


@dataclass(frozen=True)
class Documented:
    """Adds ``pattern`` to a string's JSON Schema (what a check enforces in code, said in the
    document, so a generated client or a fuzzer knows it)."""

    pattern: str

    def __get_pydantic_json_schema__(
        self, core: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core)
        schema["pattern"] = self.pattern
        return schema


# Every string a body or a path carries: storable (see storable_text).
Text = Annotated[str, AfterValidator(storable_text), Documented("^[^\\u0000]*$")]
# An id: no NUL, and no U+001F, which the worker's state keys join ids with.
Id = Annotated[str, AfterValidator(storable_text), Documented("^[^\\u0000\\u001f]*$")]
# Characters str.strip() removes: a speaker's name must hold one that is none of them.
_SPACE = (
    "\\t-\\r \\u001c-\\u001f\\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
)
Speaker = Annotated[
    str,
    AfterValidator(storable_text),
    Documented(f"^[^\\u0000]*[^\\u0000{_SPACE}][^\\u0000]*$"),
]
# Every integer a body carries: integral floats accepted (see integral).
Int = Annotated[int, BeforeValidator(integral)]
# An embedding's value: a float32 (a larger one would be stored as infinity).
FLOAT32_MAX = 3.4028234663852886e38
Float32 = Annotated[float, Field(ge=-FLOAT32_MAX, le=FLOAT32_MAX)]
# A time in epoch milliseconds, 1970 to 9999 (the bounds inside the type, so the document
# states them also where the field may be null).
EpochMillis = Annotated[int, Field(ge=0, le=MAX_TIME_MS), BeforeValidator(integral)]


def _unit() -> Any:
    return Field(default=None, ge=0.0, le=1.0)


def _event_time() -> Any:
    return Field(
        default=None,
        description="When it happened (epoch milliseconds, event time); default: now.",
    )


class Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


class MemoryFields(Strict):
    """A memory's fields (the contract's: docs/analytics.md, 'The contract'); unset ones take the
    contract's default."""

    content: Text = Field(min_length=1, description="The memory (at most 64 KiB of UTF-8).")
    speaker: Speaker | None = Field(
        default=None,
        max_length=MAX_ID_CHARS,
        description="Who said it, by name; null: created_by says who.",
    )
    layer: Layer | None = None
    kind: Text | None = None
    subtype: Text | None = None
    tags: list[Text] | None = None
    importance: float | None = _unit()
    confidence: float | None = _unit()
    emotional_salience: float | None = _unit()
    valence: float | None = Field(default=None, ge=-1.0, le=1.0)
    priority: Literal["normal", "critical"] | None = None
    scope: Literal["agent", "team", "global"] | None = None
    scope_id: Id | None = Field(default=None, max_length=MAX_ID_CHARS)
    created_by: Literal["user", "agent", "system"] | None = None
    consent: bool | None = None
    conversation_id: Id | None = Field(default=None, max_length=MAX_ID_CHARS)
    session_id: Id | None = Field(default=None, max_length=MAX_ID_CHARS)
    success: float | None = _unit()
    trigger_conditions: list[Text] | None = None
    embedding: list[Float32] | None = Field(
        default=None,
        description="The memory's vector, of the deployment's dimension (default 384); "
        "omitted: the worker embeds the content.",
    )
    metadata: (
        Annotated[
            dict[Text, Text],
            WithJsonSchema(
                {
                    "type": "object",
                    "propertyNames": {"pattern": "^[^\\u0000]*$"},
                    "additionalProperties": {"type": "string", "pattern": "^[^\\u0000]*$"},
                }
            ),
        ]
        | None
    ) = None
    created_at: EpochMillis | None = None
    occurred_at: EpochMillis | None = _event_time()

    def memory_fields(self) -> dict[str, Any]:
        """The set fields that are the memory's own (not the event's)."""
        return self.model_dump(
            exclude_none=True, exclude={"content", "occurred_at", "speaker", "memory_id"}
        )


class NewMemory(MemoryFields):
    memory_id: Id | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="The memory's id; omitted: the API draws a UUID.",
    )


class Accepted(BaseModel):
    """The event was acknowledged by Kafka; its effects reach the read models shortly."""

    event_id: str = Field(description="The event's id: its idempotency key.")
    memory_id: str | None = Field(default=None, description="The memory written, for writes.")


class EventTimeOnly(Strict):
    occurred_at: EpochMillis | None = _event_time()


class PinRequest(Strict):
    reason: Text = Field(default="permanent", max_length=MAX_ID_CHARS)


class SessionEnd(Strict):
    conversation_id: Id | None = Field(default=None, max_length=MAX_ID_CHARS)
    occurred_at: EpochMillis | None = _event_time()


class ConsolidationRequest(Strict):
    operation: Literal["cycle", "procedural", "identity_reset"] = Field(
        default="cycle",
        description="cycle: a consolidation cycle; procedural: synthesize the procedural "
        "profile; identity_reset: make the current identity anchor the origin (admin).",
    )
    conversation_id: Id | None = Field(default=None, max_length=MAX_ID_CHARS)
    force: bool = Field(default=False, description="Run even where automatic is off (admin).")
    profile: ProfileName | None = Field(
        default=None,
        max_length=64,
        description="A built-in policy profile for this cycle (admin): one of "
        + ", ".join(profile_names())
        + ".",
    )
    occurred_at: EpochMillis | None = _event_time()


class RecallRequest(Strict):
    text: Text = Field(min_length=1, max_length=4000, description="What to recall, in words.")
    k: Int = Field(default=5, ge=1, le=100)
    ranking: Literal["hybrid", "vector"] = "hybrid"
    include_archived: bool = False
    diversity: float = Field(
        default=DEFAULT_DIVERSITY,
        ge=0.0,
        le=1.0,
        description="How much a memory's likeness to one already chosen costs it (maximal "
        "marginal relevance); 0 keeps alike memories in the ranking's order.",
    )


class RecalledMemory(BaseModel):
    layer: str
    memory_id: str
    content: str
    status: str
    current: bool
    similarity: float | None = Field(
        description="Cosine similarity to the text; null when the text gives no vector to "
        "compare (nothing in it the embedder reads)"
    )
    salience: float
    score: float | None = Field(description="The ranking's score; null with similarity")
    lexical: float
    derived_from: list[str]
    summarized_into: list[str]


class Recall(BaseModel):
    memories: list[RecalledMemory]


class LinkView(BaseModel):
    source_id: str
    target_id: str
    link_type: str
    confidence: float | None
    created_at: datetime


class MemoryView(BaseModel):
    """A memory as the read models hold it, with every link into or out of it."""

    layer: str
    memory_id: str
    version: int
    kind: str
    subtype: str | None
    content: str
    tags: list[str]
    importance: float
    confidence: float
    emotional_salience: float
    valence: float
    priority: str
    scope: str
    scope_id: str | None
    created_by: str
    consent: bool
    speaker: str | None
    pinned: bool
    conversation_id: str | None
    session_id: str | None
    success: float | None
    trigger_conditions: list[str]
    metadata: dict[str, Any]
    created_at: datetime
    last_accessed: datetime | None
    access_count: int
    valid_at: datetime | None
    invalid_at: datetime | None
    status: str
    lineage: list[LinkView]


class Links(BaseModel):
    links: list[LinkView]


class SessionView(BaseModel):
    session_id: str
    conversation_id: str | None
    status: str
    started_at: datetime | None
    last_event_at: datetime | None
    ended_at: datetime | None
    end_reason: str | None
    narrative_id: str | None
    memory_count: int


class Sessions(BaseModel):
    sessions: list[SessionView]


class ProfileView(BaseModel):
    profile_memory_id: str | None
    profile_version: int | None
    profile_content: str | None = Field(description="The procedural profile, if synthesized.")
    drift: float | None = Field(description="Identity drift from the origin anchor (0: none).")
    drift_level: str | None
    drift_measured_at: datetime | None
    updated_at: datetime | None


class ReportView(BaseModel):
    event_id: str
    cycle_id: str
    trigger: str
    occurred_at: datetime
    profile: str | None
    processed: int
    patterns: int
    archived: int
    decayed: int
    contradictions: int
    duplicates_merged: int
    links_created: int
    duration_ms: int
    warnings: list[str]


class Reports(BaseModel):
    reports: list[ReportView]


class Health(BaseModel):
    status: Literal["ok", "unavailable"]
    checks: dict[str, str] = Field(default_factory=dict)
