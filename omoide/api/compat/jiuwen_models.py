"""Request and response bodies of the JiuwenMemory ``memory_server`` interface, field for field.

Requests forbid unknown fields (a typo such as ``descripton`` is a 422, never silently ignored).
``user_id`` and ``scope_id`` omitted mean ``"default"`` (the seed's ``DEFAULT_VALUE``), or the
tenant a bound API key is limited to. The examples are the seed document's.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from omoide.extract import MemVariable
from omoide.types import ExtractionStatus, VariableValue

MAX_PAGE = 10**9  # (page_idx - 1) * page_size stays far inside SQLite's 64-bit OFFSET

Id = Annotated[str | None, Field(min_length=1, max_length=256, description='Default "default".')]


def _examples(*examples: dict[str, Any]) -> ConfigDict:
    return ConfigDict(extra="forbid", json_schema_extra={"examples": list(examples)})


class _Tenant(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: Id = None
    scope_id: Id = None


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
        min_length=1,
        description='Each {"role", "content"}; a missing role is "user", other keys are ignored.',
    )
    mem_variables: list[MemVariable] = Field(
        default_factory=list,
        description="Variables to extract: name + description; type string, boolean, integer "
        "or number (array and object are a 422).",
    )
    enable_long_term_mem: bool = True
    enable_user_profile: bool = True
    enable_semantic_memory: bool = True
    enable_episodic_memory: bool = True
    enable_summary_memory: bool = True


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
    threshold: float = Field(
        0.3,
        allow_inf_nan=False,
        description="Minimum cosine similarity of query and memory (negative counts as 0).",
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

    page_size: int = Field(10, ge=1, le=10_000)
    page_idx: int = Field(1, ge=1, le=MAX_PAGE, description="Starts from 1.")
    memory_type: str = Field(
        "UNKNOWN",
        description="user_profile, semantic, episodic, summary or variable (any case); "
        "anything else is UNKNOWN: all of them.",
    )


# responses ---------------------------------------------------------------------------------
class Success(BaseModel):
    status: Literal["success"] = "success"
    message: str


class Added(Success):
    extraction: ExtractionStatus = Field(
        description="omoide's addition: what became of the LLM extraction "
        "(disabled without an LLM; pending when it outlasted the wait)."
    )


class DeletedVariables(BaseModel):
    status: Literal["success"] = "success"
    deleted: list[str] = Field(description="The names that existed.")


class DeletedScope(BaseModel):
    status: Literal["success"] = "success"
    deleted: int = Field(description="Memories deleted.")


class Variables(BaseModel):
    variables: dict[str, VariableValue]


class PageItem(BaseModel):
    mem_id: str
    content: str
    type: str


class Hit(PageItem):
    score: float = Field(description="Cosine similarity of query and memory, 0 to 1.")


class Hits(BaseModel):
    results: list[Hit]


class MemPage(BaseModel):
    results: list[PageItem]
    total: int = Field(description="Every matching memory, not only this page.")
