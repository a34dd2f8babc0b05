"""The nexusAI entity and relationship routes (seed 000), in nexusAI's shapes
(``nexus_wire``): reads, neighbourhoods, deletes, and the upserts that let the graph be used
without an LLM:

    POST /entities       {name, type, source?, episode_id?}   (name, type) known: mention + 1
    POST /relationships  {from_id, to_id, label, notes?}      edge known: mention + 1, notes kept

Both answer 201 with the entity or relationship as stored (``mention_count`` shows whether it
was new). Included by ``omoide.compat.nexus.routes``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import ConfigDict, Field

from omoide.api.deps import MemoryDep, TenancyDep
from omoide.api.models import ERROR_RESPONSES, Tenant, TenantQuery
from omoide.api.v1.knowledge import NeighborhoodQuery, NeighborsRequest
from omoide.compat.nexus.models import EntityListQuery, RelationshipListQuery, Removed
from omoide.compat.nexus.wire import (
    NexusEntity,
    NexusEntityPage,
    NexusRelationship,
    NexusRelationshipPage,
    NexusSubgraph,
)

router = APIRouter(tags=["nexusAI"], responses=ERROR_RESPONSES)
TenantQ = Annotated[TenantQuery, Query()]


class UpsertEntity(Tenant):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"name": "Lin", "type": "person", "user_id": "mei"}]},
    )

    name: str = Field(min_length=1, max_length=256)
    type: str = Field(min_length=1, max_length=64, examples=["person"])
    source: str = Field("api", min_length=1, max_length=64, description="Set on insert only.")
    episode_id: str | None = Field(None, description="An episode it was seen in (provenance).")


class UpsertRelationship(Tenant):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"from_id": "<Lin's id>", "to_id": "<Acme's id>", "label": "works at"},
            ]
        },
    )

    from_id: str = Field(min_length=1, max_length=64)
    to_id: str = Field(min_length=1, max_length=64)
    label: str = Field(min_length=1, max_length=256, examples=["works at"])
    notes: str | None = Field(None, max_length=10_000, description="Kept if it has notes.")


@router.post("/entities", status_code=201)
def upsert_entity(body: UpsertEntity, engine: MemoryDep, tenancy: TenancyDep) -> NexusEntity:
    """Create the entity, or count one more mention of `(name, type)` (`mention_count` + 1,
    `last_seen_at` now); `episode_id` is linked as provenance once."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    entity = engine.upsert_entity(
        body.name,
        body.type,
        **scope.model_dump(),
        source=body.source,
        episode_id=body.episode_id,
    )
    return NexusEntity.of(entity)


@router.post("/relationships", status_code=201)
def upsert_relationship(
    body: UpsertRelationship, engine: MemoryDep, tenancy: TenancyDep
) -> NexusRelationship:
    """Create the edge `from -[label]-> to`, or count one more mention of it, keeping its
    notes (given notes are set only when it had none). 404 if an entity is not the tenant's."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    edge = engine.upsert_relationship(
        body.from_id, body.to_id, body.label, notes=body.notes, **scope.model_dump()
    )
    return NexusRelationship.of(edge)


@router.get("/entities")
def list_entities(
    query: Annotated[EntityListQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> NexusEntityPage:
    """One page of the tenant's entities, most recently seen first; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    items, total = engine.list_entities(
        **scope.model_dump(), type=query.type, limit=query.limit, offset=query.offset
    )
    return NexusEntityPage(
        items=[NexusEntity.of(e) for e in items],
        total=total,
        limit=query.limit,
        offset=query.offset,
    )


@router.post("/entities/neighbors")
def entity_neighbors(
    body: NeighborsRequest, engine: MemoryDep, tenancy: TenancyDep
) -> NexusSubgraph:
    """One hop around several entities at once, `{nodes, edges}` (unknown ids are ignored)."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    graph = engine.neighbors(body.entity_ids, **scope.model_dump(), max_nodes=body.max_nodes)
    return NexusSubgraph.of(graph)


@router.get("/entities/{entity_id}/neighborhood")
def entity_neighborhood(
    entity_id: str,
    query: Annotated[NeighborhoodQuery, Query()],
    engine: MemoryDep,
    tenancy: TenancyDep,
) -> NexusSubgraph:
    """Entities within `depth` relationships (both directions) and the edges among them,
    `{nodes, edges}`; each node carries its distance."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    graph = engine.neighborhood(
        entity_id, query.depth, **scope.model_dump(), max_nodes=query.max_nodes
    )
    return NexusSubgraph.of(graph)


@router.get("/entities/{entity_id}")
def get_entity(
    entity_id: str, query: TenantQ, engine: MemoryDep, tenancy: TenancyDep
) -> NexusEntity:
    """One entity with its mention count and the episodes it was extracted from."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    return NexusEntity.of(engine.get_entity(entity_id, **scope.model_dump()))


@router.delete("/entities/{entity_id}")
def delete_entity(
    entity_id: str, query: TenantQ, engine: MemoryDep, tenancy: TenancyDep
) -> Removed:
    """Delete an entity with its relationships, provenance and vector, in one transaction."""
    engine.delete_entity(entity_id, **tenancy.scope(query.user_id, query.scope_id).model_dump())
    return Removed(deleted=1)


@router.get("/relationships")
def list_relationships(
    query: Annotated[RelationshipListQuery, Query()], engine: MemoryDep, tenancy: TenancyDep
) -> NexusRelationshipPage:
    """The tenant's relationships, or one entity's; `total` counts them all."""
    scope = tenancy.scope(query.user_id, query.scope_id)
    items, total = engine.list_relationships(
        entity_id=query.entity_id, **scope.model_dump(), limit=query.limit, offset=query.offset
    )
    return NexusRelationshipPage(
        items=[NexusRelationship.of(r) for r in items],
        total=total,
        limit=query.limit,
        offset=query.offset,
    )
