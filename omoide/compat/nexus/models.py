"""Request and response bodies of the nexusAI memory-service routes.

Requests forbid unknown fields (a 422 naming the field), so ``PATCH /projects/:name`` accepts
exactly the seed's ``updateProject`` allowlist. ``user_id`` and ``scope_id`` are optional (query
string for GET and DELETE, body for POST and PATCH): omitted means ``"default"``, or the tenant
a bound API key is limited to. Responses reuse the domain models of ``omoide.types``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from omoide.api.models import MAX_COUNT, PageQuery, Tenant, TenantQuery
from omoide.compat.nexus.wire import NexusEpisode
from omoide.types import ExtractionStatus

SessionId = Annotated[
    str, Field(min_length=1, max_length=512, description="The session's external id.")
]
Text = Annotated[str | None, Field(max_length=100_000)]


def _examples(*examples: dict[str, Any]) -> ConfigDict:
    return ConfigDict(extra="forbid", json_schema_extra={"examples": list(examples)})


# sessions --------------------------------------------------------------------------------
class NexusCreateSession(Tenant):
    model_config = _examples(
        {"external_id": "chat-42", "name": "Garden plans", "project": "garden", "user_id": "mei"}
    )

    external_id: SessionId
    name: str | None = None
    project: str | None = Field(None, description="A project name (created if needed).")
    metadata: dict[str, Any] | None = None


class NexusUpdateSession(Tenant):
    model_config = _examples(
        {"name": "Garden plans 2025", "user_id": "mei"}, {"project": None, "user_id": "mei"}
    )

    name: str | None = Field(None, description="Omitted or null: unchanged.")
    project: str | None = Field(
        None, description="Omitted: unchanged; null: detached from its project."
    )
    metadata: dict[str, Any] | None = Field(None, description="Omitted or null: unchanged.")


# episodes --------------------------------------------------------------------------------
class NexusCreateEpisode(Tenant):
    model_config = _examples(
        {
            "session_id": "chat-42",
            "user_message": "I planted tomatoes with Lin today",
            "ai_response": "Lovely! Which variety?",
            "user_id": "mei",
        }
    )

    session_id: SessionId = Field(
        description="External id of a session of the tenant (404 if none)."
    )
    user_message: str = Field(min_length=1)
    ai_response: str | None = Field(None, description="The assistant's reply, if any.")
    metadata: dict[str, Any] | None = None


class EpisodeSearchQuery(TenantQuery):
    q: str = Field(min_length=1, max_length=10_000, description="Keywords.")
    session_id: SessionId | None = Field(None, description="Only this session's episodes.")
    project: str | None = Field(None, description="Only this project's sessions.")
    limit: int = Field(20, ge=1, le=1000)


class ProjectDeleteQuery(TenantQuery):
    sessions: Literal["detach", "delete"] | None = Field(
        None,
        description="detach: keep them in no project (shared); delete: delete them with their "
        "memories. Omitted: detach for a plain project, 409 for an isolated one with sessions.",
    )


class ConsolidationQuery(TenantQuery):
    min_age_days: float | None = Field(None, ge=0, description="Default: the server setting.")
    min_session_episodes: int | None = Field(
        None, ge=1, le=MAX_COUNT, description="The session floor."
    )
    limit: int = Field(100, ge=1, le=10_000)


# entities --------------------------------------------------------------------------------
class EntityListQuery(PageQuery):
    type: str | None = Field(None, description="Only entities of this type, e.g. person.")


class RelationshipListQuery(PageQuery):
    entity_id: str | None = Field(None, description="Only this entity's (either direction).")


# projects --------------------------------------------------------------------------------
class _ProjectFields(Tenant):
    description: Text = None
    colour: str | None = Field(None, max_length=64, examples=["#2e7d32"])
    icon: str | None = Field(None, max_length=256, examples=["sprout"])
    notes: Text = None
    system_prompt: Text = None

    def fields(self) -> dict[str, Any]:
        """The project fields the caller sent (tenant fields excluded)."""
        return self.model_dump(exclude_unset=True, exclude={"user_id", "scope_id"})


class NexusCreateProject(_ProjectFields):
    model_config = _examples(
        {
            "name": "garden",
            "description": "Everything about the allotment",
            "colour": "#2e7d32",
            "icon": "sprout",
            "isolated": True,
            "user_id": "mei",
        }
    )

    name: str = Field(min_length=1, max_length=256)
    isolated: bool = False


class NexusUpdateProject(_ProjectFields):
    model_config = _examples(
        {"notes": "Seedlings go out in May", "isolated": False, "user_id": "mei"},
        {"name": "allotment", "user_id": "mei"},
    )

    name: str | None = Field(None, min_length=1, max_length=256, description="Renames it.")
    isolated: bool | None = None


# responses -------------------------------------------------------------------------------
class EpisodeCreated(BaseModel):
    episode_id: str | None = Field(description="The stored exchange.")
    session_id: str
    episode: NexusEpisode | None = Field(description="The stored exchange, nexusAI's shape.")
    memory_ids: list[str] = Field(description="Its messages, stored as raw memories.")
    extraction: ExtractionStatus = Field(
        description="The queued extraction job (pending), or disabled without an LLM."
    )


class Removed(BaseModel):
    deleted: int = Field(description="How many memories (or entities) were deleted.")
