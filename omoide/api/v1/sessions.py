"""``/v1/sessions``: conversations of one tenant, and the episodes (exchanges) inside them.

Session ids are the caller's own strings; one containing ``/`` must be percent-encoded in the
path (``chat%2F1``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from omoide.api.deps import MemoryDep, TenancyDep
from omoide.api.models import (
    ERROR_RESPONSES,
    Added,
    AddEpisode,
    CreateSession,
    Deleted,
    EpisodePage,
    PageQuery,
    SessionPage,
    TenantQuery,
    UpdateSession,
    error_doc,
)
from omoide.types import Session

router = APIRouter(prefix="/v1/sessions", tags=["sessions"], responses=ERROR_RESPONSES)
conflict: dict[int | str, dict[str, Any]] = {
    409: error_doc("The session id is already taken in this tenant.")
}


@router.post("", status_code=201, responses=conflict)
def create_session(body: CreateSession, engine: MemoryDep, tenancy: TenancyDep) -> Session:
    """Create a session (409 if this tenant already has one with that id)."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.create_session(
        body.session_id,
        **scope.model_dump(),
        name=body.name,
        project=body.project,
        metadata=body.metadata,
    )


@router.get("")
def list_sessions(
    query: Annotated[PageQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> SessionPage:
    """One page of a tenant's sessions, newest first; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    items, total = engine.list_sessions(
        **scope.model_dump(), limit=query.limit, offset=query.offset
    )
    return SessionPage(items=items, total=total, limit=query.limit, offset=query.offset)


# The episode routes come first: `{session_id:path}` would otherwise swallow "/episodes".
@router.post("/{session_id:path}/episodes", status_code=201)
def add_episode(session_id: str, body: AddEpisode, engine: MemoryDep, tenancy: TenancyDep) -> Added:
    """Add an exchange to a session (created if needed); each message becomes a memory."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    items = engine.add(
        body.messages,
        **scope.model_dump(),
        session_id=session_id,
        metadata=body.metadata,
        **body.options(),
    )
    return Added(items=items)


@router.get("/{session_id:path}/episodes")
def list_episodes(
    session_id: str, query: Annotated[PageQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> EpisodePage:
    """One page of a session's episodes, oldest first; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    items, total = engine.list_episodes(
        session_id, **scope.model_dump(), limit=query.limit, offset=query.offset
    )
    return EpisodePage(items=items, total=total, limit=query.limit, offset=query.offset)


@router.get("/{session_id:path}")
def get_session(
    session_id: str, query: Annotated[TenantQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> Session:
    """One session by its id."""
    return engine.get_session(
        session_id, **tenancy.scope(query.user_id, query.scope_id).model_dump()
    )


@router.patch("/{session_id:path}")
def update_session(
    session_id: str, body: UpdateSession, engine: MemoryDep, tenancy: TenancyDep
) -> Session:
    """Change only the fields given; omitted (or null) fields keep their value."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.update_session(
        session_id,
        **scope.model_dump(),
        name=body.name,
        project=body.project,
        metadata=body.metadata,
    )


@router.delete("/{session_id:path}")
def delete_session(
    session_id: str, query: Annotated[TenantQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> Deleted:
    """Delete a session with its episodes and every memory from it; returns that count."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return Deleted(deleted=engine.delete_session(session_id, **scope.model_dump()))
