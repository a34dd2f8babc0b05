"""The nexusAI memory-service routes (seed 000): sessions, episodes, summaries, projects
(entities and relationships: ``compat.nexus.graph``), answering in nexusAI's shapes and units
(``nexus_wire``: unix seconds, ``last_accessed_at`` in unix milliseconds).

Ids in paths: a session's ``:id`` is its external id (omoide names sessions by the caller's
id within a tenant; there is no separate integer id), so ``/sessions/:id`` and
``/sessions/by-external/:id`` are the same session. A project's ``:name`` is its name within
the tenant. Entity, relationship, episode and summary ids are omoide's own. Session ids
containing ``/`` are percent-encoded (``chat%2F1``).

Every route is thin: it resolves the tenant and calls one ``Memory`` method; errors keep
omoide's shape (404 unknown id, 409 conflict, 422 bad input). A write naming a session the
tenant does not have (an episode, a summary) is a 404, as a read of it is: create sessions
with ``POST /sessions``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from omoide.api.deps import MemoryDep, TenancyDep
from omoide.api.models import ERROR_RESPONSES, PageQuery, TenantQuery
from omoide.api.models import error_doc as _error_doc
from omoide.api.v1.knowledge import (
    CreateSummary,
    SummaryListQuery,
    Touched,
    TouchEpisodes,
    UpdateSummary,
)
from omoide.compat.nexus import graph as graph_routes
from omoide.compat.nexus.models import (
    ConsolidationQuery,
    EpisodeCreated,
    EpisodeSearchQuery,
    NexusCreateEpisode,
    NexusCreateProject,
    NexusCreateSession,
    NexusUpdateProject,
    NexusUpdateSession,
    ProjectDeleteQuery,
    Removed,
)
from omoide.compat.nexus.wire import (
    NexusCandidates,
    NexusEpisode,
    NexusEpisodeHit,
    NexusEpisodeHits,
    NexusEpisodePage,
    NexusProject,
    NexusProjectPage,
    NexusSession,
    NexusSessionPage,
    NexusSummary,
    NexusSummaryPage,
)
from omoide.memory import ProjectDeleted
from omoide.types import MemoryType, Message, SearchFilters

router = APIRouter(tags=["nexusAI"], responses=ERROR_RESPONSES)
conflict: dict[int | str, dict[str, Any]] = {
    409: _error_doc("The id or name is already taken in this tenant.")
}
TenantQ = Annotated[TenantQuery, Query()]
KEYWORD = "keyword"


# sessions --------------------------------------------------------------------------------
@router.post("/sessions", status_code=201, responses=conflict)
def create_session(
    body: NexusCreateSession, engine: MemoryDep, tenancy: TenancyDep
) -> NexusSession:
    """Create a session named by its external id (409 if the tenant has it already)."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    session = engine.create_session(
        body.external_id,
        **scope.model_dump(),
        name=body.name,
        project=body.project,
        metadata=body.metadata,
    )
    return NexusSession.of(session)


@router.get("/sessions")
def list_sessions(
    query: Annotated[PageQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> NexusSessionPage:
    """One page of the tenant's sessions, newest first; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    items, total = engine.list_sessions(
        **scope.model_dump(), limit=query.limit, offset=query.offset
    )
    sessions = [NexusSession.of(s) for s in items]
    return NexusSessionPage(items=sessions, total=total, limit=query.limit, offset=query.offset)


@router.get("/sessions/by-external/{session_id:path}")
def get_session_by_external(
    session_id: str, query: TenantQ, engine: MemoryDep, tenancy: TenancyDep
) -> NexusSession:
    """One session by its external id (the same as `GET /sessions/:id`)."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return NexusSession.of(engine.get_session(session_id, **scope.model_dump()))


@router.delete("/sessions/by-external/{session_id:path}")
def delete_session_by_external(
    session_id: str, query: TenantQ, engine: MemoryDep, tenancy: TenancyDep
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
    engine: MemoryDep,
    tenancy: TenancyDep,
) -> NexusCandidates:
    """The session's episodes scored `access_count / (1 + days since last access)`, most
    eligible first; `eligible` is false under the session floor. Observe-only."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    found = engine.consolidation_candidates(
        session_id,
        **scope.model_dump(),
        min_age_days=query.min_age_days,
        min_session_episodes=query.min_session_episodes,
        limit=query.limit,
    )
    return NexusCandidates.of(found)


@router.get("/sessions/{session_id:path}/episodes")
def list_episodes(
    session_id: str,
    query: Annotated[PageQuery, Query()],
    engine: MemoryDep,
    tenancy: TenancyDep,
) -> NexusEpisodePage:
    """One page of the session's episodes, oldest first; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    items, total = engine.list_episodes(
        session_id, **scope.model_dump(), limit=query.limit, offset=query.offset
    )
    episodes = [NexusEpisode.of(e) for e in items]
    return NexusEpisodePage(items=episodes, total=total, limit=query.limit, offset=query.offset)


@router.get("/sessions/{session_id:path}")
def get_session(
    session_id: str, query: TenantQ, engine: MemoryDep, tenancy: TenancyDep
) -> NexusSession:
    """One session by its external id."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return NexusSession.of(engine.get_session(session_id, **scope.model_dump()))


@router.patch("/sessions/{session_id:path}")
def update_session(
    session_id: str, body: NexusUpdateSession, engine: MemoryDep, tenancy: TenancyDep
) -> NexusSession:
    """Change only the fields given; `"project": null` detaches the session."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    detach = "project" in body.model_fields_set and body.project is None
    session = engine.update_session(
        session_id,
        **scope.model_dump(),
        name=body.name,
        project="" if detach else body.project,
        metadata=body.metadata,
    )
    return NexusSession.of(session)


@router.delete("/sessions/{session_id:path}")
def delete_session(
    session_id: str, query: TenantQ, engine: MemoryDep, tenancy: TenancyDep
) -> Removed:
    """Delete a session by its external id (the same as `DELETE /sessions/by-external/:id`)."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return Removed(deleted=engine.delete_session(session_id, **scope.model_dump()))


# episodes --------------------------------------------------------------------------------
@router.post("/episodes", status_code=201)
def create_episode(
    body: NexusCreateEpisode, engine: MemoryDep, tenancy: TenancyDep
) -> EpisodeCreated:
    """Store one exchange (user message + AI response) in a session of the tenant (404 when
    it has no such session: create it with `POST /sessions`). It is saved before the reply;
    embedding and entity extraction follow as durable jobs."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    engine.get_session(body.session_id, **scope.model_dump())  # a write never invents one
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
    episode = engine.get_episode(sources[0], **scope.model_dump()) if sources else None
    return EpisodeCreated(
        episode_id=episode.id if episode else None,
        session_id=body.session_id,
        episode=NexusEpisode.of(episode) if episode else None,
        memory_ids=[i.id for i in result.items],
        extraction=result.extraction,
    )


@router.get("/episodes/search")
def search_episodes(
    query: Annotated[EpisodeSearchQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> NexusEpisodeHits:
    """Full-text (keyword) search over the stored exchanges: one hit per exchange (episode),
    scored by its best-matching message, best first; narrowed to one session or project when
    given. Isolated projects' exchanges appear only when it is named."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    filters = SearchFilters(
        session_id=query.session_id, project=query.project, types=[MemoryType.RAW]
    )
    found = engine.search(
        query.q, **scope.model_dump(), filters=filters, limit=query.limit * 4, recipe=KEYWORD
    )
    best: dict[str, float] = {}
    for hit in found.hits:
        for episode_id in hit.memory.source_episodes[:1]:
            best[episode_id] = max(best.get(episode_id, 0.0), hit.score)
    ranked = sorted(best.items(), key=lambda kv: kv[1], reverse=True)[: query.limit]
    episodes = [
        NexusEpisodeHit(
            **NexusEpisode.of(engine.get_episode(i, **scope.model_dump())).model_dump(),
            score=score,
        )
        for i, score in ranked
    ]
    return NexusEpisodeHits(episodes=episodes, degraded=found.degraded, warnings=found.warnings)


@router.post("/episodes/touch")
def touch_episodes(body: TouchEpisodes, engine: MemoryDep, tenancy: TenancyDep) -> Touched:
    """One more access, now, for each episode: `access_count` + 1 and `last_accessed_at`."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return Touched(touched=engine.touch_episodes(body.episode_ids, **scope.model_dump()))


@router.get("/episodes/{episode_id}")
def get_episode(
    episode_id: str, query: TenantQ, engine: MemoryDep, tenancy: TenancyDep
) -> NexusEpisode:
    """One episode with its messages and access counters (`last_accessed_at` in ms)."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return NexusEpisode.of(engine.get_episode(episode_id, **scope.model_dump()))


@router.delete("/episodes/{episode_id}")
def delete_episode(
    episode_id: str, query: TenantQ, engine: MemoryDep, tenancy: TenancyDep
) -> Removed:
    """Delete an episode and the memories only it supports, with their vectors, in one
    transaction; returns how many memories went."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return Removed(deleted=engine.delete_episode(episode_id, **scope.model_dump()))


# summaries -------------------------------------------------------------------------------
@router.post("/summaries", status_code=201)
def create_summary(body: CreateSummary, engine: MemoryDep, tenancy: TenancyDep) -> NexusSummary:
    """Store a summary of a session of the tenant (404 when it has no such session); the
    newest is the rolling summary."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    engine.get_session(body.session_id, **scope.model_dump())  # a write never invents one
    summary = engine.create_summary(
        body.session_id, body.text, **scope.model_dump(), metadata=body.metadata
    )
    return NexusSummary.of(summary)


@router.get("/summaries")
def list_summaries(
    query: Annotated[SummaryListQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> NexusSummaryPage:
    """A session's summaries, newest first; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    page = engine.list_summaries(
        query.session_id,
        **scope.model_dump(),
        include_history=query.include_history,
        limit=query.limit,
        offset=query.offset,
    )
    items = [NexusSummary.of(m) for m in page.items]
    return NexusSummaryPage(items=items, total=page.total, limit=page.limit, offset=page.offset)


@router.get("/summaries/{summary_id}")
def get_summary(
    summary_id: str, query: TenantQ, engine: MemoryDep, tenancy: TenancyDep
) -> NexusSummary:
    """One summary by id (404 when it is not a summary of this tenant)."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return NexusSummary.of(engine.get_summary(summary_id, **scope.model_dump()))


@router.patch("/summaries/{summary_id}")
def update_summary(
    summary_id: str, body: UpdateSummary, engine: MemoryDep, tenancy: TenancyDep
) -> NexusSummary:
    """Change a summary's text and/or metadata; its history keeps the old text."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    item = engine.update_summary(summary_id, body.text, body.metadata, **scope.model_dump())
    return NexusSummary.of(item)


@router.delete("/summaries/{summary_id}")
def delete_summary(
    summary_id: str, query: TenantQ, engine: MemoryDep, tenancy: TenancyDep
) -> Removed:
    """Delete a summary; its history keeps the delete."""
    engine.delete_summary(summary_id, **tenancy.scope(query.user_id, query.scope_id).model_dump())
    return Removed(deleted=1)


# projects --------------------------------------------------------------------------------
@router.post("/projects", status_code=201, responses=conflict)
def create_project(
    body: NexusCreateProject, engine: MemoryDep, tenancy: TenancyDep
) -> NexusProject:
    """Create a project (409 if the tenant has one of that name)."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    fields = {k: v for k, v in body.fields().items() if k != "name"}
    project = engine.add_project(
        body.name, **scope.model_dump(), **(fields | {"isolated": body.isolated})
    )
    return NexusProject.of(project)


@router.get("/projects")
def list_projects(
    query: Annotated[PageQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> NexusProjectPage:
    """One page of the tenant's projects by name; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    items, total = engine.list_projects(
        **scope.model_dump(), limit=query.limit, offset=query.offset
    )
    projects = [NexusProject.of(p) for p in items]
    return NexusProjectPage(items=projects, total=total, limit=query.limit, offset=query.offset)


@router.get("/projects/{name}")
def get_project(name: str, query: TenantQ, engine: MemoryDep, tenancy: TenancyDep) -> NexusProject:
    """One project by name."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return NexusProject.of(engine.get_project(name, **scope.model_dump()))


@router.patch("/projects/{name}", responses=conflict)
def update_project(
    name: str, body: NexusUpdateProject, engine: MemoryDep, tenancy: TenancyDep
) -> NexusProject:
    """Change only the fields given, from name, description, colour, icon, isolated, notes
    and system_prompt; any other field is a 422, a rename onto a taken name a 409."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return NexusProject.of(engine.update_project(name, body.fields(), **scope.model_dump()))


@router.delete("/projects/{name}", responses=conflict)
def delete_project(
    name: str,
    query: Annotated[ProjectDeleteQuery, Query()],
    engine: MemoryDep,
    tenancy: TenancyDep,
) -> ProjectDeleted:
    """Delete the project in one transaction. Its sessions: `sessions=detach` keeps them in no
    project (visible to every search of the tenant), `sessions=delete` deletes them with their
    memories. Omitted: a plain project's sessions are detached (nexusAI's behaviour); an
    isolated project with sessions is a 409, so deleting it never widens who sees them."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return engine.delete_project(name, **scope.model_dump(), sessions=query.sessions)


router.include_router(graph_routes.router)  # entities and relationships
