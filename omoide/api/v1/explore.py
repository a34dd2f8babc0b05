"""Read-only listings the web UI (``/ui``) browses with, and any client may use: the tenants
that hold data, a tenant's variables, and a page of its entities.

``GET /v1/tenants`` has no index to read (the ``Store`` protocol keeps none), so it makes one
pass over every memory and entity, as ``Memory.delete_scope_id`` does; a tenant that holds only
sessions or variables is not listed (the UI lets the user type any tenant in). A tenant-bound
key sees only its own tenant(s).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from omoide.api.deps import MemoryDep, TenancyDep
from omoide.api.models import ERROR_RESPONSES, PageQuery, TenantQuery
from omoide.memory import Memory
from omoide.types import Entity, Scope, VariableValue

router = APIRouter(responses=ERROR_RESPONSES)
_SCAN_BATCH = 1000


class TenantList(BaseModel):
    items: list[Scope] = Field(description="Sorted by user, then scope.")
    bound: bool = Field(description="True when the key is bound to one user (or tenant).")


class VariableList(BaseModel):
    variables: dict[str, VariableValue]


class EntityQuery(PageQuery):
    type: str | None = Field(None, max_length=256, description="Only entities of this type.")


class EntityPage(BaseModel):
    items: list[Entity]
    total: int = Field(description="All matching entities, not just this page.")
    limit: int
    offset: int


def _tenants_with_data(engine: Memory) -> set[tuple[str, str]]:
    store = engine.store
    found: set[tuple[str, str]] = set()
    for batches in (
        store.memories.iter_memory_texts(_SCAN_BATCH),
        store.graph.iter_entity_texts(_SCAN_BATCH),
    ):
        for batch in batches:
            found.update((scope.user_id, scope.scope_id) for scope, _, _ in batch)
    return found


@router.get("/v1/tenants", tags=["service"])
def list_tenants(engine: MemoryDep, tenancy: TenancyDep) -> TenantList:
    """The tenants (`user_id`, `scope_id`) that hold memories or entities. A key bound to one
    tenant sees just that one; a key bound to a user sees that user's tenants."""
    bound = tenancy.bound
    if bound is not None and bound.scope_id is not None:
        return TenantList(items=[Scope(user_id=bound.user_id, scope_id=bound.scope_id)], bound=True)
    found = _tenants_with_data(engine)
    if bound is not None:
        found = {t for t in found if t[0] == bound.user_id} or {(bound.user_id, "default")}
    items = [Scope(user_id=u, scope_id=s) for u, s in sorted(found)]
    return TenantList(items=items, bound=bound is not None)


@router.get("/v1/variables", tags=["memories"])
def list_variables(
    query: Annotated[TenantQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> VariableList:
    """Every variable of one tenant, by name, with its typed value."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return VariableList(variables=engine.get_variables(None, **scope.model_dump()))


@router.get("/v1/graph/entities", tags=["graph"])
def list_entities(
    query: Annotated[EntityQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> EntityPage:
    """One page of a tenant's entities, most recently seen first; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    items, total = engine.list_entities(
        **scope.model_dump(), type=query.type, limit=query.limit, offset=query.offset
    )
    return EntityPage(items=items, total=total, limit=query.limit, offset=query.offset)
