"""``/v1/memories``: add, search, read, list, update and delete memories of one tenant."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from omoide.api.deps import MemoryDep, TenancyDep
from omoide.api.models import (
    ERROR_RESPONSES,
    Added,
    AddMemories,
    Deleted,
    MemoryListQuery,
    ScopeDeleteQuery,
    SearchMemories,
    TenantQuery,
    UpdateMemory,
)
from omoide.api.pages import bounded_page
from omoide.types import HistoryEntry, MemoryItem, Page, SearchResult

router = APIRouter(prefix="/v1/memories", tags=["memories"], responses=ERROR_RESPONSES)


@router.post("", status_code=201)
def add_memories(body: AddMemories, engine: MemoryDep, tenancy: TenancyDep) -> Added:
    """Store each message (or the one `text`) as a memory, embedded before the reply.

    With a `session_id` the session is created if needed and the messages are also kept
    together as one episode of it. If the embedder is down the memories are still stored,
    with `embedded: false`, and a background job embeds them later. With an LLM configured,
    extraction (facts, profile, summary, variables, graph) runs as durable background jobs;
    `wait: true` replies once they finished (or after `timeout` seconds).
    """
    scope = tenancy.scope(body.user_id, body.scope_id)
    items = engine.add(
        body.content(),
        **scope.model_dump(),
        session_id=body.session_id,
        metadata=body.metadata,
        type=body.type,
        **body.options(),
    )
    return Added(items=items)


@router.post("/search")
def search_memories(body: SearchMemories, engine: MemoryDep, tenancy: TenancyDep) -> SearchResult:
    """Hybrid (keyword + vector) search of one tenant's memories, best first.

    `degraded: true` with a warning means a signal was unavailable (e.g. the embedder is down)
    and the hits come from keywords only.
    """
    scope = tenancy.scope(body.user_id, body.scope_id)
    return engine.search(
        body.query,
        **scope.model_dump(),
        filters=body.filters,
        limit=body.limit,
        threshold=body.threshold,
        recipe=body.recipe,
    )


@router.get("")
def list_memories(
    query: Annotated[MemoryListQuery, Query()],
    engine: MemoryDep,
    tenancy: TenancyDep,
    request: Request,
) -> Page:
    """One page of a tenant's memories, newest first; `total` counts every match."""
    scope = tenancy.scope(query.user_id, query.scope_id).model_dump()

    def read(limit: int, offset: int) -> Page:
        return engine.get_all(**scope, filters=query.filters, limit=limit, offset=offset)

    cap = request.app.state.settings.server.max_response_bytes
    return bounded_page(read, query.limit, query.offset, cap)


@router.delete("")
def delete_scope(
    query: Annotated[ScopeDeleteQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> Deleted:
    """Delete everything of one tenant: memories, sessions, history and jobs.

    Both `user_id` and `scope_id` are required, so a missing parameter never deletes the
    `default` tenant by accident.
    """
    scope = tenancy.scope(query.user_id, query.scope_id)
    return Deleted(deleted=engine.delete_all(**scope.model_dump()))


@router.get("/{memory_id}")
def get_memory(
    memory_id: str, query: Annotated[TenantQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> MemoryItem:
    """One memory by id (404 if it is not in this tenant). Without `user_id` and `scope_id`
    the id names its own tenant (one the key may reach)."""
    scope = tenancy.memory_scope(engine, memory_id, query.user_id, query.scope_id)
    return engine.get(memory_id, **scope.model_dump())


@router.patch("/{memory_id}")
def update_memory(
    memory_id: str, body: UpdateMemory, engine: MemoryDep, tenancy: TenancyDep
) -> MemoryItem:
    """Change a memory's text and/or metadata; the old text is kept in its history. Without
    `user_id` and `scope_id` the id names its own tenant."""
    scope = tenancy.memory_scope(engine, memory_id, body.user_id, body.scope_id)
    return engine.update(memory_id, body.text, body.metadata, **scope.model_dump())


@router.delete("/{memory_id}", status_code=204, response_class=Response)
def delete_memory(
    memory_id: str, query: Annotated[TenantQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> None:
    """Delete one memory with its vector; its history records the delete. Without `user_id`
    and `scope_id` the id names its own tenant."""
    scope = tenancy.memory_scope(engine, memory_id, query.user_id, query.scope_id)
    engine.delete(memory_id, **scope.model_dump())


@router.get("/{memory_id}/history")
def memory_history(
    memory_id: str, query: Annotated[TenantQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> list[HistoryEntry]:
    """Every change of one memory (ADD, UPDATE, DELETE), oldest first. Without `user_id` and
    `scope_id` the id names its own tenant (a deleted memory's too)."""
    scope = tenancy.memory_scope(engine, memory_id, query.user_id, query.scope_id)
    return engine.history(memory_id, **scope.model_dump())
