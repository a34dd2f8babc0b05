"""Request and response bodies of the JiuwenMemory ``memory_server`` routes, field for field.

As upstream's pydantic models do, requests ignore fields they do not know (a client sending
``session_id`` or a newer field is never refused), except ``mem_variables`` entries, which
forbid them so that a typo such as ``descripton`` is a 422. Omitted ``user_id`` / ``scope_id``
mean ``"__default__"`` (upstream's ``DEFAULT_VALUE``), or the tenant a bound API key is limited
to. The examples are upstream's documentation's.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from omoide.extract import MemVariable
from omoide.types import ExtractionStatus, VariableValue

MAX_PAGE = 10**9  # (page_idx - 1) * page_size stays far inside SQLite's 64-bit OFFSET

Id = Annotated[
    str | None, Field(min_length=1, max_length=256, description='Default "__default__".')
]
DEFAULT_PAGE_SIZE = 10
MAX_PAGE_SIZE = 100


def _examples(*examples: dict[str, Any]) -> ConfigDict:
    return ConfigDict(extra="ignore", json_schema_extra={"examples": list(examples)})


class _Tenant(BaseModel):
    model_config = ConfigDict(extra="ignore")

    user_id: Id = None
    scope_id: Id = None


class JiuwenVariable(BaseModel):
    """Upstream's narrow ``MemVariable``: ``type`` exactly one of the four simple names."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    type: Literal["string", "boolean", "integer", "number"] = "string"
    required: bool = True
    default: Any = None

    def to_omoide(self) -> MemVariable:
        return MemVariable.model_validate(self.model_dump())

    @model_validator(mode="after")
    def _valid_for_omoide(self) -> JiuwenVariable:
        self.to_omoide()  # a blank name or a bad default is a 422 here, not a 500 later
        return self


# requests ----------------------------------------------------------------------------------
class AddMessagesRequest(_Tenant):
    model_config = _examples(
        {
            "messages": [
                {"role": "user", "content": "I like jasmine tea and live in Shenzhen"},
                {"role": "assistant", "content": "Noted."},
            ],
            "user_id": "user_001",
            "scope_id": "demo",
            "mem_variables": [
                {"name": "favorite_drink", "description": "The user's favorite drink"},
                {"name": "city", "description": "The city where the user lives", "required": False},
            ],
            "enable_user_profile": True,
            "enable_summary_memory": False,
        }
    )

    messages: list[dict[str, str]] = Field(
        description='Each {"role", "content"}: role defaults to "user", content to "" (a '
        "message without content is skipped; messages of which none has content are a 422); "
        'an optional "timestamp" (ISO 8601, UTC without an offset) says when it was said, and '
        "extraction reads relative dates from it; other keys are ignored."
    )
    timestamp: datetime | None = Field(
        None,
        description="omoide's addition: when the exchange happened, the time of each message "
        'without a "timestamp" of its own.',
    )
    session_id: Id = Field(None, description='The session the messages belong to; "__default__".')
    mem_variables: list[JiuwenVariable] = Field(
        default_factory=list,
        description="Variables to extract: name + description; type string, boolean, integer "
        "or number, exactly (anything else is a 422).",
    )
    enable_long_term_mem: bool = True
    enable_user_profile: bool = True
    enable_semantic_memory: bool = True
    enable_episodic_memory: bool = True
    enable_summary_memory: bool = True

    def variables(self) -> list[MemVariable]:
        return [v.to_omoide() for v in self.mem_variables]


class UpdateMemRequest(_Tenant):
    model_config = _examples(
        {
            "mem_id": "mem_123",
            "memory": "The user likes jasmine tea",
            "user_id": "user_001",
            "scope_id": "demo",
        }
    )

    mem_id: str = Field(min_length=1, description='A memory id, or "var:<name>" for a variable.')
    memory: str = Field(description="The new content.")


class DeleteMemRequest(_Tenant):
    model_config = _examples({"mem_id": "mem_123", "user_id": "user_001", "scope_id": "demo"})

    mem_id: str = Field(min_length=1, description='A memory id, or "var:<name>" for a variable.')


class BatchDeleteRequest(_Tenant):
    model_config = _examples(
        {"mem_ids": ["mem_123", "mem_456"], "user_id": "user_001", "scope_id": "demo"}
    )

    mem_ids: list[str] = Field(max_length=10_000)


class UpdateVariablesRequest(_Tenant):
    model_config = _examples(
        {
            "variables": {"favorite_drink": "jasmine tea", "city": "Shenzhen"},
            "user_id": "user_001",
            "scope_id": "demo",
        }
    )

    variables: dict[str, VariableValue] = Field(
        description="Name to value; a value keeps the type its variable already has."
    )


class DeleteVariablesRequest(_Tenant):
    model_config = _examples(
        {"names": ["favorite_drink", "city"], "user_id": "user_001", "scope_id": "demo"}
    )

    names: list[str]


class GetVariablesRequest(_Tenant):
    model_config = _examples(
        {"names": ["favorite_drink"], "user_id": "user_001", "scope_id": "demo"}
    )

    names: list[str] | None = Field(None, description="Omitted: every variable of the tenant.")


class DeleteScopeRequest(BaseModel):
    model_config = _examples({"scope_id": "demo"}, {"scope_id": "demo", "user_id": "user_001"})

    scope_id: str = Field(min_length=1, max_length=256)
    user_id: Id = Field(
        None, description="Only this user's scope; omitted: the scope of every user."
    )


class SearchRequest(_Tenant):
    model_config = _examples(
        {
            "query": "What tea does the user like?",
            "num": 5,
            "user_id": "user_001",
            "scope_id": "demo",
            "threshold": 0.3,
        }
    )

    query: str
    num: int = Field(10, ge=1, le=1000, description="Results to return.")
    threshold: float | None = Field(
        None,
        allow_inf_nan=False,
        description="Minimum score, compared with each hit's `score`: the same relevance score "
        "as /v1 search's (omitted or null: no cut, as /v1); with "
        "OMOIDE_JIUWEN_COSINE_THRESHOLD=true the cosine similarity, as upstream's (omitted or "
        "null: 0.3).",
    )


class PageRequest(_Tenant):
    model_config = _examples(
        {
            "user_id": "user_001",
            "scope_id": "demo",
            "page_size": 10,
            "page_idx": 1,
            "memory_type": "UNKNOWN",
        }
    )

    page_size: int = Field(
        DEFAULT_PAGE_SIZE,
        description="Missing, null, not a number or 0 and below: 10; above 100: 100.",
    )
    page_idx: int = Field(1, ge=1, le=MAX_PAGE, description="Starts from 1.")
    memory_type: str | None = Field(
        "UNKNOWN",
        description="user_profile, semantic_memory, episodic_memory, summary, variable, "
        "middle_term_memory or unknown (any case; semantic and episodic work too); anything "
        "else is unknown: every type, as upstream.",
    )

    @field_validator("page_size", mode="before")
    @classmethod
    def _clamp(cls, value: object) -> int:
        """Upstream's fallback: never a 422 for a page size, a usable one instead."""
        if value is None or isinstance(value, bool):
            return DEFAULT_PAGE_SIZE
        try:
            number: int = int(value)  # type: ignore[call-overload]
        except (TypeError, ValueError, OverflowError):
            return DEFAULT_PAGE_SIZE
        if number <= 0:
            return DEFAULT_PAGE_SIZE
        return min(number, MAX_PAGE_SIZE)


# responses ---------------------------------------------------------------------------------
class Success(BaseModel):
    status: Literal["success"] = "success"
    message: str


class Added(Success):
    extraction: ExtractionStatus = Field(
        description="omoide's addition: what became of the LLM extraction "
        "(disabled without an LLM, with the reason; pending when it outlasted the wait)."
    )


class DeletedVariables(BaseModel):
    status: Literal["success"] = "success"
    deleted: list[str] = Field(description="The names that existed.")


class DeletedScope(BaseModel):
    status: Literal["success"] = "success"
    deleted: int = Field(description="Memories deleted.")


class DeleteFailure(BaseModel):
    mem_id: str
    error: str


class BatchDeleted(BaseModel):
    status: Literal["success"] = "success"
    deleted: int
    failed: int
    errors: list[DeleteFailure] | None = Field(
        None, description="Absent for an empty mem_ids, as upstream."
    )


class Variables(BaseModel):
    variables: dict[str, VariableValue]


class PageItem(BaseModel):
    mem_id: str
    content: str
    type: str


class TimedPageItem(PageItem):
    timestamp: str | None = Field(description="When the memory was written (ISO 8601).")
    source_id: str | None = Field(
        description="The message it came from: a raw turn's own id, else its episode's id "
        "(both resolve with /get_message_by_id/)."
    )


class Hit(PageItem):
    score: float = Field(description="0 to 1, best first.")


class Hits(BaseModel):
    results: list[Hit]


class TimedMemPage(BaseModel):
    results: list[TimedPageItem]
    total: int = Field(description="Every matching memory, not only this page.")
