"""The nexusAI memory-service routes (seed 000): sessions, episodes, entities, projects.

Ids in paths: a session's ``:id`` is its external id (omoide names sessions by the caller's
id within a tenant; there is no separate integer id), so ``/sessions/:id`` and
``/sessions/by-external/:id`` are the same session. A project's ``:name`` is its name within
the tenant. Entity, relationship, episode and summary ids are omoide's own. Session ids
containing ``/`` are percent-encoded (``chat%2F1``).

Every route is thin: it resolves the tenant and calls one ``Memory`` method; errors keep
omoide's shape (404 unknown id, 409 conflict, 422 bad input).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from omoide.api.compat.nexus_models import (
    ConsolidationQuery,
    EntityListQuery,
    EntityPage,
    EpisodeCreated,
    EpisodeSearchQuery,
    NexusCreateEpisode,
    NexusCreateProject,
    NexusCreateSession,
    NexusUpdateProject,
    NexusUpdateSession,
    ProjectPage,
    ProjectRemoved,
    RelationshipListQuery,
    RelationshipPage,
    Removed,
)
from omoide.api.deps import EngineDep, TenancyDep
from omoide.api.models import ERROR_RESPONSES, EpisodePage, PageQuery, SessionPage, TenantQuery
from omoide.api.models import error_doc as _error_doc
from omoide.api.v1.knowledge import (
    CreateSummary,
    NeighborhoodQuery,
    NeighborsRequest,
    SummaryListQuery,
    Touched,
    TouchEpisodes,
    UpdateSummary,
)
from omoide.types import (
    ConsolidationCandidates,
    Entity,
    Episode,
    MemoryItem,
    MemoryType,
    Message,
    Page,
    Project,
    SearchFilters,
    SearchResult,
    Session,
    Subgraph,
)

router = APIRouter(tags=["nexusAI"], responses=ERROR_RESPONSES)
conflict: dict[int | str, dict[str, Any]] = {
    409: _error_doc("The id or name is already taken in this tenant.")
}
TenantQ = Annotated[TenantQuery, Query()]
KEYWORD = "keyword"


# sessions --------------------------------------------------------------------------------
@router.post("/sessions", status_code=201, responses=conflict)
def create_session(body: NexusCreateSession, engine: EngineDep, tenancy: TenancyDep) -> Session:
    """Create a session named by its external id (409 if the tenant has it already)."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.create_session(
        body.external_id,
        **scope.model_dump(),
        name=body.name,
        project=body.project,
        metadata=body.metadata,
    )


@router.get("/sessions")
def list_sessions(
    query: Annotated[PageQuery, Query()], engine: EngineDep, tenancy: TenancyDep
) -> SessionPage:
    """One page of the tenant's sessions, newest first; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    items, total = engine.list_sessions(
        **scope.model_dump(), limit=query.limit, offset=query.offset
    )
    return SessionPage(items=items, total=total, limit=query.limit, offset=query.offset)


@router.get("/sessions/by-external/{session_id:path}")
def get_session_by_external(
    session_id: str, query: TenantQ, engine: EngineDep, tenancy: TenancyDep
) -> Session:
    """One session by its external id (the same as `GET /sessions/:id`)."""
    return engine.get_session(
        session_id, **tenancy.scope(query.user_id, query.scope_id).model_dump()
    )


@router.delete("/sessions/by-external/{session_id:path}")
def delete_session_by_external(
    session_id: str, query: TenantQ, engine: EngineDep, tenancy: TenancyDep
) -> Removed:
    """Delete a session with its episodes, memories, vectors and graph provenance in one
    transaction; returns how many memories went. Other sessions are untouched."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return Removed(deleted=engine.delete_session(session_id, **scope.model_dump()))


# Sub-resources come before `/sessions/{id:path}`, which would otherwise swallow them.
@router.get("/sessions/{session_id:path}/consolidation-candidates")
def consolidation_candidates(
    session_id: str,
    query: Annotated[ConsolidationQuery, Query()],
    engine: EngineDep,
    tenancy: TenancyDep,
) -> ConsolidationCandidates:
    """The session's episodes scored `access_count / (1 + days since last access)`, most
    eligible first; `eligible` is false under the session floor. Observe-only."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return engine.consolidation_candidates(
        session_id,
        **scope.model_dump(),
        min_age_days=query.min_age_days,
        min_session_episodes=query.min_session_episodes,
        limit=query.limit,
    )


@router.get("/sessions/{session_id:path}/episodes")
def list_episodes(
    session_id: str,
    query: Annotated[PageQuery, Query()],
    engine: EngineDep,
    tenancy: TenancyDep,
) -> EpisodePage:
    """One page of the session's episodes, oldest first; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    items, total = engine.list_episodes(
        session_id, **scope.model_dump(), limit=query.limit, offset=query.offset
    )
    return EpisodePage(items=items, total=total, limit=query.limit, offset=query.offset)


@router.get("/sessions/{session_id:path}")
def get_session(session_id: str, query: TenantQ, engine: EngineDep, tenancy: TenancyDep) -> Session:
    """One session by its external id."""
    return engine.get_session(
        session_id, **tenancy.scope(query.user_id, query.scope_id).model_dump()
    )


@router.patch("/sessions/{session_id:path}")
def update_session(
    session_id: str, body: NexusUpdateSession, engine: EngineDep, tenancy: TenancyDep
) -> Session:
    """Change only the fields given; `"project": null` detaches the session."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    detach = "project" in body.model_fields_set and body.project is None
    return engine.update_session(
        session_id,
        **scope.model_dump(),
        name=body.name,
        project="" if detach else body.project,
        metadata=body.metadata,
    )


@router.delete("/sessions/{session_id:path}")
def delete_session(
    session_id: str, query: TenantQ, engine: EngineDep, tenancy: TenancyDep
) -> Removed:
    """Delete a session by its external id (the same as `DELETE /sessions/by-external/:id`)."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return Removed(deleted=engine.delete_session(session_id, **scope.model_dump()))


# episodes --------------------------------------------------------------------------------
@router.post("/episodes", status_code=201)
def create_episode(
    body: NexusCreateEpisode, engine: EngineDep, tenancy: TenancyDep
) -> EpisodeCreated:
    """Store one exchange (user message + AI response) in a session. It is saved before the
    reply; embedding and entity extraction follow as durable jobs."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    messages = [Message(role="user", content=body.user_message)]
    if body.ai_response:
        messages.append(Message(role="assistant", content=body.ai_response))
    result = engine.add_messages(
        messages,
        **scope.model_dump(),
        session_id=body.session_id,
        metadata=body.metadata,
        wait=False,
    )
    sources = result.items[0].source_episodes if result.items else []
    return EpisodeCreated(
        episode_id=sources[0] if sources else None,
        session_id=body.session_id,
        items=result.items,
        extraction=result.extraction,
    )


@router.get("/episodes/search")
def search_episodes(
    query: Annotated[EpisodeSearchQuery, Query()], engine: EngineDep, tenancy: TenancyDep
) -> SearchResult:
    """Full-text (keyword) search over the stored exchanges, best first; narrowed to one
    session or project when given. Isolated projects' exchanges appear only when it is named."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    filters = SearchFilters(
        session_id=query.session_id, project=query.project, types=[MemoryType.RAW]
    )
    return engine.search(
        query.q, **scope.model_dump(), filters=filters, limit=query.limit, recipe=KEYWORD
    )


@router.post("/episodes/touch")
def touch_episodes(body: TouchEpisodes, engine: EngineDep, tenancy: TenancyDep) -> Touched:
    """One more access, now, for each episode: `access_count` + 1 and `last_accessed_at`."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return Touched(touched=engine.touch_episodes(body.episode_ids, **scope.model_dump()))


@router.get("/episodes/{episode_id}")
def get_episode(episode_id: str, query: TenantQ, engine: EngineDep, tenancy: TenancyDep) -> Episode:
    """One episode with its messages and access counters."""
    return engine.get_episode(
        episode_id, **tenancy.scope(query.user_id, query.scope_id).model_dump()
    )


@router.delete("/episodes/{episode_id}")
def delete_episode(
    episode_id: str, query: TenantQ, engine: EngineDep, tenancy: TenancyDep
) -> Removed:
    """Delete an episode and the memories only it supports, with their vectors, in one
    transaction; returns how many memories went."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return Removed(deleted=engine.delete_episode(episode_id, **scope.model_dump()))


# entities and relationships ----------------------------------------------------------------
@router.get("/entities")
def list_entities(
    query: Annotated[EntityListQuery, Query()], engine: EngineDep, tenancy: TenancyDep
) -> EntityPage:
    """One page of the tenant's entities, most recently seen first; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    items, total = engine.list_entities(
        **scope.model_dump(), type=query.type, limit=query.limit, offset=query.offset
    )
    return EntityPage(items=items, total=total, limit=query.limit, offset=query.offset)


@router.post("/entities/neighbors")
def entity_neighbors(body: NeighborsRequest, engine: EngineDep, tenancy: TenancyDep) -> Subgraph:
    """One hop around several entities at once, `{nodes, edges}` (unknown ids are ignored)."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.neighbors(body.entity_ids, **scope.model_dump(), max_nodes=body.max_nodes)


@router.get("/entities/{entity_id}/neighborhood")
def entity_neighborhood(
    entity_id: str,
    query: Annotated[NeighborhoodQuery, Query()],
    engine: EngineDep,
    tenancy: TenancyDep,
) -> Subgraph:
    """Entities within `depth` relationships (both directions) and the edges among them,
    `{nodes, edges}`; each node carries its distance."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return engine.neighborhood(
        entity_id, query.depth, **scope.model_dump(), max_nodes=query.max_nodes
    )


@router.get("/entities/{entity_id}")
def get_entity(entity_id: str, query: TenantQ, engine: EngineDep, tenancy: TenancyDep) -> Entity:
    """One entity with its mention count and the episodes it was extracted from."""
    return engine.get_entity(entity_id, **tenancy.scope(query.user_id, query.scope_id).model_dump())


@router.delete("/entities/{entity_id}")
def delete_entity(
    entity_id: str, query: TenantQ, engine: EngineDep, tenancy: TenancyDep
) -> Removed:
    """Delete an entity with its relationships, provenance and vector, in one transaction."""
    engine.delete_entity(entity_id, **tenancy.scope(query.user_id, query.scope_id).model_dump())
    return Removed(deleted=1)


@router.get("/relationships")
def list_relationships(
    query: Annotated[RelationshipListQuery, Query()], engine: EngineDep, tenancy: TenancyDep
) -> RelationshipPage:
    """The tenant's relationships, or one entity's; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    items, total = engine.list_relationships(
        entity_id=query.entity_id, **scope.model_dump(), limit=query.limit, offset=query.offset
    )
    return RelationshipPage(items=items, total=total, limit=query.limit, offset=query.offset)


# summaries -------------------------------------------------------------------------------
@router.post("/summaries", status_code=201)
def create_summary(body: CreateSummary, engine: EngineDep, tenancy: TenancyDep) -> MemoryItem:
    """Store a session summary (the orchestrator's); the newest is the rolling summary."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.create_summary(
        body.session_id, body.text, **scope.model_dump(), metadata=body.metadata
    )


@router.get("/summaries")
def list_summaries(
    query: Annotated[SummaryListQuery, Query()], engine: EngineDep, tenancy: TenancyDep
) -> Page:
    """A session's summaries, newest first; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return engine.list_summaries(
        query.session_id,
        **scope.model_dump(),
        include_history=query.include_history,
        limit=query.limit,
        offset=query.offset,
    )


@router.get("/summaries/{summary_id}")
def get_summary(
    summary_id: str, query: TenantQ, engine: EngineDep, tenancy: TenancyDep
) -> MemoryItem:
    """One summary by id (404 when it is not a summary of this tenant)."""
    return engine.get_summary(
        summary_id, **tenancy.scope(query.user_id, query.scope_id).model_dump()
    )


@router.patch("/summaries/{summary_id}")
def update_summary(
    summary_id: str, body: UpdateSummary, engine: EngineDep, tenancy: TenancyDep
) -> MemoryItem:
    """Change a summary's text and/or metadata; its history keeps the old text."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.update_summary(summary_id, body.text, body.metadata, **scope.model_dump())


@router.delete("/summaries/{summary_id}")
def delete_summary(
    summary_id: str, query: TenantQ, engine: EngineDep, tenancy: TenancyDep
) -> Removed:
    """Delete a summary; its history keeps the delete."""
    engine.delete_summary(summary_id, **tenancy.scope(query.user_id, query.scope_id).model_dump())
    return Removed(deleted=1)


# projects --------------------------------------------------------------------------------
@router.post("/projects", status_code=201, responses=conflict)
def create_project(body: NexusCreateProject, engine: EngineDep, tenancy: TenancyDep) -> Project:
    """Create a project (409 if the tenant has one of that name)."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    fields = {k: v for k, v in body.fields().items() if k != "name"}
    return engine.add_project(
        body.name, **scope.model_dump(), **(fields | {"isolated": body.isolated})
    )


@router.get("/projects")
def list_projects(
    query: Annotated[PageQuery, Query()], engine: EngineDep, tenancy: TenancyDep
) -> ProjectPage:
    """One page of the tenant's projects by name; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    items, total = engine.list_projects(
        **scope.model_dump(), limit=query.limit, offset=query.offset
    )
    return ProjectPage(items=items, total=total, limit=query.limit, offset=query.offset)


@router.get("/projects/{name}")
def get_project(name: str, query: TenantQ, engine: EngineDep, tenancy: TenancyDep) -> Project:
    """One project by name."""
    return engine.get_project(name, **tenancy.scope(query.user_id, query.scope_id).model_dump())


@router.patch("/projects/{name}", responses=conflict)
def update_project(
    name: str, body: NexusUpdateProject, engine: EngineDep, tenancy: TenancyDep
) -> Project:
    """Change only the fields given, from name, description, colour, icon, isolated, notes
    and system_prompt; any other field is a 422, a rename onto a taken name a 409."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.update_project(name, body.fields(), **scope.model_dump())


@router.delete("/projects/{name}")
def delete_project(
    name: str, query: TenantQ, engine: EngineDep, tenancy: TenancyDep
) -> ProjectRemoved:
    """Detach the project's sessions (they keep their memories) and delete it, in one
    transaction."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    detached = engine.delete_project(name, **scope.model_dump())
    return ProjectRemoved(name=name, sessions_detached=detached)
