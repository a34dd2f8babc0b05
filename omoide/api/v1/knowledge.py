"""The knowledge routes: graph traversal, summaries and chunks, context, access, consolidation.

Session ids travel in the query string or the body here (never in the path), so these routes
never collide with ``/v1/sessions/{session_id:path}``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from omoide.api.deps import MemoryDep, TenancyDep
from omoide.api.models import ERROR_RESPONSES, MAX_COUNT, Offset, Tenant, TenantQuery, error_doc
from omoide.types import (
    ChunkResult,
    ConsolidationCandidates,
    ConsolidationReport,
    ContextResult,
    EntitySearchResult,
    MemoryItem,
    Page,
    Subgraph,
)

router = APIRouter(responses=ERROR_RESPONSES)
SessionId = Annotated[str, Field(min_length=1, max_length=512, examples=["chat-1"])]
IdList = Annotated[list[str], Field(max_length=10_000)]
no_llm: dict[int | str, dict[str, Any]] = {
    501: error_doc("The operation needs an LLM and none is configured.")
}


# requests --------------------------------------------------------------------------------
class NeighborhoodQuery(TenantQuery):
    depth: int = Field(1, ge=0, le=6, description="How many relationships away.")
    max_nodes: int = Field(200, ge=1, le=5000)


class NeighborsRequest(Tenant):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"entity_ids": ["3f2a9c"], "user_id": "mei"}]},
    )

    entity_ids: IdList = Field(min_length=1)
    max_nodes: int = Field(500, ge=1, le=5000)


class EntitySearchQuery(TenantQuery):
    query: str = Field(min_length=1)
    limit: int = Field(10, ge=1, le=1000)


class SummaryListQuery(TenantQuery):
    session_id: SessionId
    include_history: bool = Field(False, description="Also the superseded versions.")
    limit: int = Field(100, ge=1, le=10_000)
    offset: Offset = 0


class CreateSummary(Tenant):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"session_id": "s1", "text": "Mei moved to Shenzhen.", "user_id": "mei"}]
        },
    )

    session_id: SessionId
    text: str
    metadata: dict[str, Any] | None = None


class UpdateSummary(Tenant):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"text": "Mei lives in Shenzhen and loves jasmine tea.", "user_id": "mei"}]
        },
    )

    text: str | None = None
    metadata: dict[str, Any] | None = None


class SessionRequest(Tenant):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"session_id": "s1", "user_id": "mei"}]}
    )

    session_id: SessionId


class ContextRequest(Tenant):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"query": "where does Mei live?", "user_id": "mei", "session_id": "s1"}]
        },
    )

    query: str = Field(min_length=1)
    session_id: SessionId | None = None
    token_budget: int = Field(2000, ge=100, le=200_000)
    recent_turns: int | None = Field(None, ge=0, le=100)
    recipe: str | None = None
    track_access: bool = True


class TouchEpisodes(Tenant):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"episode_ids": ["9b1d0e"], "user_id": "mei"}]},
    )

    episode_ids: IdList


class TouchMemories(Tenant):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"memory_ids": ["4c7e21"], "user_id": "mei"}]},
    )

    memory_ids: IdList


class CandidatesQuery(TenantQuery):
    session_id: SessionId
    min_age_days: float | None = Field(None, ge=0)
    min_session_episodes: int | None = Field(None, ge=1, le=MAX_COUNT)
    limit: int = Field(100, ge=1, le=10_000)


class ConsolidateRequest(Tenant):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"session_id": "s1", "run": False, "user_id": "mei"}]},
    )

    session_id: SessionId
    run: bool = Field(False, description="Do it; the default only reports what would change.")
    max_score: float | None = Field(None, ge=0)
    min_age_days: float | None = Field(None, ge=0)
    min_session_episodes: int | None = Field(None, ge=1, le=MAX_COUNT)
    limit: int | None = Field(None, ge=1, le=1000)


class RevertConsolidation(Tenant):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"user_id": "mei"}]})


class ScheduleConsolidation(Tenant):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"session_id": "s1", "user_id": "mei"}]}
    )

    session_id: SessionId
    max_score: float | None = Field(None, ge=0)


class Touched(BaseModel):
    touched: int = Field(description="Rows whose access count went up.")


class Invalidated(BaseModel):
    invalidated: list[str]


class Queued(BaseModel):
    job_id: int


class Reverted(BaseModel):
    memories: list[str]
    entities: list[str]
    summary_id: str | None = None


# graph -----------------------------------------------------------------------------------
@router.get("/v1/graph/entities/{entity_id}/neighborhood", tags=["graph"])
def neighborhood(
    entity_id: str,
    query: Annotated[NeighborhoodQuery, Query()],
    engine: MemoryDep,
    tenancy: TenancyDep,
) -> Subgraph:
    """Entities within `depth` relationships of one (both directions), with the edges among
    them; each node carries its distance. Cycle-safe; `truncated` past `max_nodes`."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return engine.neighborhood(
        entity_id, query.depth, **scope.model_dump(), max_nodes=query.max_nodes
    )


@router.post("/v1/graph/neighbors", tags=["graph"])
def neighbors(body: NeighborsRequest, engine: MemoryDep, tenancy: TenancyDep) -> Subgraph:
    """One hop around several entities at once (unknown ids are ignored)."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.neighbors(body.entity_ids, **scope.model_dump(), max_nodes=body.max_nodes)


@router.get("/v1/graph/search", tags=["graph"])
def search_entities(
    query: Annotated[EntitySearchQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> EntitySearchResult:
    """Entities by name: those named in the query first, then the most similar names."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return engine.search_entities(query.query, **scope.model_dump(), limit=query.limit)


# summaries and chunks ----------------------------------------------------------------------
@router.get("/v1/summaries", tags=["summaries"])
def list_summaries(
    query: Annotated[SummaryListQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> Page:
    """A session's summaries, newest (the rolling summary) first; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return engine.list_summaries(
        query.session_id,
        **scope.model_dump(),
        include_history=query.include_history,
        limit=query.limit,
        offset=query.offset,
    )


@router.post("/v1/summaries", status_code=201, tags=["summaries"])
def create_summary(body: CreateSummary, engine: MemoryDep, tenancy: TenancyDep) -> MemoryItem:
    """Store a summary of a session; the newest summary is the session's rolling summary."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.create_summary(
        body.session_id, body.text, **scope.model_dump(), metadata=body.metadata
    )


@router.get("/v1/summaries/{summary_id}", tags=["summaries"])
def get_summary(
    summary_id: str, query: Annotated[TenantQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> MemoryItem:
    """One summary by id (404 when it is not a summary of this tenant)."""
    return engine.get_summary(
        summary_id, **tenancy.scope(query.user_id, query.scope_id).model_dump()
    )


@router.patch("/v1/summaries/{summary_id}", tags=["summaries"])
def update_summary(
    summary_id: str, body: UpdateSummary, engine: MemoryDep, tenancy: TenancyDep
) -> MemoryItem:
    """Change a summary's text and/or metadata; its history keeps the old text."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.update_summary(summary_id, body.text, body.metadata, **scope.model_dump())


@router.delete(
    "/v1/summaries/{summary_id}", status_code=204, response_class=Response, tags=["summaries"]
)
def delete_summary(
    summary_id: str, query: Annotated[TenantQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> None:
    """Delete a summary; its history keeps the delete."""
    engine.delete_summary(summary_id, **tenancy.scope(query.user_id, query.scope_id).model_dump())


@router.post("/v1/chunks/update", tags=["summaries"])
def update_chunks(body: SessionRequest, engine: MemoryDep, tenancy: TenancyDep) -> ChunkResult:
    """Run a chunking pass over a session now (chunk memories from its messages) and report it."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.update_chunks(body.session_id, **scope.model_dump())


@router.post("/v1/chunks/reset", tags=["summaries"])
def reset_chunks(body: SessionRequest, engine: MemoryDep, tenancy: TenancyDep) -> Invalidated:
    """Forget a session's chunks: the next pass re-chunks it in consolidation mode."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return Invalidated(invalidated=engine.reset_chunks(body.session_id, **scope.model_dump()))


# context and access ------------------------------------------------------------------------
@router.post("/v1/context", tags=["context"])
def context(body: ContextRequest, engine: MemoryDep, tenancy: TenancyDep) -> ContextResult:
    """A ready-to-paste context block for `query` within `token_budget` tokens: profile,
    variables, the session's summary, relevant memories, graph and recent turns, each line
    citing its id, plus the same parts as structured items."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.context(
        body.query,
        **scope.model_dump(),
        session_id=body.session_id,
        token_budget=body.token_budget,
        recent_turns=body.recent_turns,
        recipe=body.recipe,
        track_access=body.track_access,
    )


@router.post("/v1/episodes/touch", tags=["context"])
def touch_episodes(body: TouchEpisodes, engine: MemoryDep, tenancy: TenancyDep) -> Touched:
    """One more access, now, for each episode (an episode in use is consolidated later)."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return Touched(touched=engine.touch_episodes(body.episode_ids, **scope.model_dump()))


@router.post("/v1/memories/touch", tags=["context"])
def touch_memories(body: TouchMemories, engine: MemoryDep, tenancy: TenancyDep) -> Touched:
    """One more access, now, for each memory and its source episodes."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return Touched(touched=engine.touch_memories(body.memory_ids, **scope.model_dump()))


# consolidation -------------------------------------------------------------------------------
@router.get("/v1/consolidation/candidates", tags=["consolidation"])
def consolidation_candidates(
    query: Annotated[CandidatesQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> ConsolidationCandidates:
    """A session's episodes scored for consolidation, most eligible first; observe-only."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return engine.consolidation_candidates(
        query.session_id,
        **scope.model_dump(),
        min_age_days=query.min_age_days,
        min_session_episodes=query.min_session_episodes,
        limit=query.limit,
    )


@router.post("/v1/consolidation", tags=["consolidation"], responses=no_llm)
def consolidate(
    body: ConsolidateRequest, engine: MemoryDep, tenancy: TenancyDep
) -> ConsolidationReport:
    """What consolidating a session's low-value old episodes changes; `run: true` does it
    (one transaction, reversible) and needs an LLM."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.consolidate(
        body.session_id,
        **scope.model_dump(),
        run=body.run,
        max_score=body.max_score,
        min_age_days=body.min_age_days,
        min_session_episodes=body.min_session_episodes,
        limit=body.limit,
    )


@router.post("/v1/consolidation/jobs", status_code=202, tags=["consolidation"])
def schedule_consolidation(
    body: ScheduleConsolidation, engine: MemoryDep, tenancy: TenancyDep
) -> Queued:
    """Queue a consolidation run as a durable job; its result is the run's report."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    job_id = engine.schedule_consolidation(
        body.session_id, **scope.model_dump(), max_score=body.max_score
    )
    return Queued(job_id=job_id)


@router.post("/v1/consolidation/{consolidation_id}/revert", tags=["consolidation"])
def revert_consolidation(
    consolidation_id: str, body: RevertConsolidation, engine: MemoryDep, tenancy: TenancyDep
) -> Reverted:
    """Undo a consolidation pass from its record."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return Reverted(**engine.revert_consolidation(consolidation_id, **scope.model_dump()))
