"""Request and response bodies of the native API.

Requests forbid unknown fields (a typo is a 422 naming the field, never silently ignored); query
parameters are models too, for the same reason. ``user_id`` and ``scope_id`` are optional
everywhere: omitted means ``"default"``, or the tenant a bound API key is limited to.
Responses reuse the domain models of ``omoide.types``.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field, Json, field_validator, model_validator

from omoide.extract import MemVariable
from omoide.types import (
    AddInput,
    Episode,
    Job,
    JobState,
    MemoryItem,
    MemoryType,
    Message,
    SearchFilters,
    Session,
)
from omoide.validate import MAX_INT, check_value

UserId = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=256,
        description='Tenant user; default "default" (or the user an API key is bound to).',
        examples=["alice"],
    ),
]
ScopeId = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=256,
        description='Tenant scope (app, agent, project); default "default".',
        examples=["default"],
    ),
]
MAX_WAIT_S = 300  # a request that waits holds one of the server's worker threads
Limit = Annotated[int, Field(ge=1, le=10_000, description="Page size, 1 to 10000.")]
# Every integer a request carries has an upper bound, so none reaches SQLite (64-bit) or an
# offset computation as a number it cannot hold: out of range is a 422, never a 500.
MAX_OFFSET = 2**53 - 1  # also the largest integer a JavaScript client can send exactly
MAX_COUNT = 2**31 - 1  # thresholds and sizes counted in items, turns or tokens
Offset = Annotated[int, Field(ge=0, le=MAX_OFFSET, description="Items to skip.")]
JobId = Annotated[int, Path(ge=1, le=MAX_INT, description="The job's id.")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _examples(*examples: dict[str, Any]) -> ConfigDict:
    return ConfigDict(extra="forbid", json_schema_extra={"examples": list(examples)})


class Tenant(_Strict):
    user_id: UserId = None
    scope_id: ScopeId = None


# queries ---------------------------------------------------------------------------------
class TenantQuery(Tenant):
    """Query parameters of a route that only needs the tenant."""


class PageQuery(Tenant):
    limit: Limit = 100
    offset: Offset = 0


class MemoryListQuery(PageQuery):
    filters: Json[SearchFilters] | None = Field(
        None,
        description='Optional SearchFilters as JSON, e.g. {"session_id": "chat-1"}.',
        examples=['{"session_id": "chat-1"}'],
    )

    @field_validator("filters", mode="before")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        # JSON inside a query string escapes the request-wide check: a "\ud800" escape or a
        # 20-digit integer only appears once it is parsed.
        if isinstance(value, str):
            try:
                parsed = json.loads(value)
            except (ValueError, RecursionError):
                return value  # Json[...] names the syntax error
            check_value(parsed, "")  # pydantic names the parameter: query.filters
        return value


class ScopeDeleteQuery(_Strict):
    user_id: str = Field(min_length=1, max_length=256, examples=["alice"])
    scope_id: str = Field(min_length=1, max_length=256, examples=["default"])


class JobQuery(PageQuery):
    state: JobState | None = Field(None, description="Only jobs in this state.")


class HealthQuery(_Strict):
    probe: bool = Field(
        False,
        description="Embed a probe text to check the embedder for real, and check the store's"
        " file again (at most once a minute per server process; meanwhile the last check's"
        " result).",
    )


# memories --------------------------------------------------------------------------------
class Extraction(Tenant):
    """LLM extraction options of an add (see ``Memory.add``); ignored without an LLM."""

    infer: bool | None = Field(
        None,
        description="Extract derived memories with the LLM: null = when one is configured; "
        "true without an LLM is a 501 and stores nothing.",
    )
    mem_variables: list[MemVariable] | None = Field(
        None, description="Variables to extract, e.g. [{name, description}]; needs an LLM."
    )
    enable_long_term_mem: bool = True
    enable_user_profile: bool = True
    enable_semantic_memory: bool = True
    enable_episodic_memory: bool = True
    enable_summary_memory: bool = True
    enable_graph: bool = True
    wait: bool = Field(False, description="Reply once the extraction jobs finished.")
    timestamp: datetime | None = Field(
        None,
        description="When the exchange happened (ISO 8601; UTC without an offset): the time of "
        "each message that has no `timestamp` of its own; extraction reads relative dates "
        "from it.",
    )
    timeout: float = Field(60.0, gt=0, le=MAX_WAIT_S, description="Longest wait, seconds.")

    def options(self) -> dict[str, Any]:
        """The keyword arguments of ``Engine.add`` these fields stand for."""
        names = set(Extraction.model_fields) - set(Tenant.model_fields)
        return {name: getattr(self, name) for name in sorted(names)}


class AddMemories(Extraction):
    model_config = _examples(
        {"text": "I like jasmine tea", "user_id": "alice"},
        {
            "messages": [
                {"role": "user", "content": "I moved to Lisbon last month"},
                {"role": "assistant", "content": "Nice! How do you like it?"},
            ],
            "user_id": "alice",
            "session_id": "chat-1",
            "metadata": {"source": "chat"},
        },
    )

    messages: list[Message] | None = Field(
        None, min_length=1, description="Messages to remember; give this or `text`."
    )
    text: str | None = Field(None, description="One text to remember; give this or `messages`.")
    session_id: str | None = Field(None, min_length=1, max_length=512)
    metadata: dict[str, Any] | None = None
    type: MemoryType = MemoryType.RAW

    @model_validator(mode="after")
    def _one_input(self) -> AddMemories:
        if (self.messages is None) == (self.text is None):
            raise ValueError("give exactly one of `messages` or `text`")
        return self

    def content(self) -> AddInput:
        return self.text if self.text is not None else list(self.messages or [])


class SearchMemories(Tenant):
    model_config = _examples(
        {"query": "what does alice drink?", "user_id": "alice", "limit": 5},
        {
            "query": "where does alice live",
            "user_id": "alice",
            "filters": {"session_id": "chat-1"},
            "threshold": 0.2,
            "recipe": "hybrid",
        },
    )

    query: str
    filters: SearchFilters | None = None
    limit: int = Field(10, ge=1, le=1000)
    threshold: float | None = Field(
        None,
        description="Drop hits whose `score` is lower (with the default recipe, the estimated "
        "probability that the hit is relevant; a cosine with `vector`).",
    )
    recipe: str | None = Field(None, description="hybrid, hybrid_weighted, keyword or vector.")


class UpdateMemory(Tenant):
    model_config = _examples({"text": "I like green tea now", "user_id": "alice"})

    text: str | None = None
    metadata: dict[str, Any] | None = None


# sessions --------------------------------------------------------------------------------
class CreateSession(Tenant):
    model_config = _examples(
        {"session_id": "chat-1", "user_id": "alice", "name": "Moving", "project": "life"}
    )

    session_id: str = Field(min_length=1, max_length=512, description="Your id for the session.")
    name: str | None = None
    project: str | None = None
    metadata: dict[str, Any] | None = None


class UpdateSession(Tenant):
    model_config = _examples({"name": "Moving to Lisbon", "user_id": "alice"})

    name: str | None = Field(None, description="Omitted or null: unchanged.")
    project: str | None = Field(None, description="Omitted or null: unchanged.")
    metadata: dict[str, Any] | None = Field(None, description="Omitted or null: unchanged.")


class AddEpisode(Extraction):
    model_config = _examples(
        {
            "messages": [
                {"role": "user", "content": "Book me a table for two"},
                {"role": "assistant", "content": "Done, 8pm at Tasca."},
            ],
            "user_id": "alice",
        }
    )

    messages: list[Message] = Field(min_length=1)
    metadata: dict[str, Any] | None = None


# responses -------------------------------------------------------------------------------
class Added(BaseModel):
    items: list[MemoryItem]


class Deleted(BaseModel):
    deleted: int = Field(description="How many memories were deleted.")


class SessionPage(BaseModel):
    items: list[Session]
    total: int
    limit: int
    offset: int


class EpisodePage(BaseModel):
    items: list[Episode]
    total: int
    limit: int
    offset: int


class JobList(BaseModel):
    items: list[Job]


class ErrorInfo(BaseModel):
    code: str = Field(examples=["not_found"])
    message: str = Field(examples=["memory 'abc' not found"])
    details: list[dict[str, Any]] | None = None


class ErrorBody(BaseModel):
    """The shape of every error response."""

    detail: str = Field(examples=["memory 'abc' not found"])
    error: ErrorInfo
    request_id: str | None = Field(None, examples=["5f0c2b7e9d8a4c1e"])


def error_doc(description: str) -> dict[str, Any]:
    return {"model": ErrorBody, "description": description}


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: error_doc("Missing or wrong API key."),
    403: error_doc("The API key is bound to another tenant."),
    404: error_doc("No such id in this tenant."),
    413: error_doc("The body is larger than OMOIDE_MAX_BODY_BYTES."),
    415: error_doc("The body is not sent as application/json."),
    422: error_doc("Invalid input; the message names the field."),
    500: error_doc("Unexpected error; the body carries the request id to find it in the log."),
}
