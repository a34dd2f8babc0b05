"""The knowledge graph: entities and relationships with upsert semantics.

``GraphReads`` is read outside a transaction (``store.graph``);
``GraphWrites`` is used inside one (``with store.transaction() as tx: tx.graph...``)
and sees the transaction's own writes.

Tenant rule: every method but ``iter_entity_texts`` (a whole-store reindex) takes a ``Scope``;
entities, relationships, walks and vectors never cross tenants, and another tenant's entity id
behaves as an unknown one. An entity is unique per tenant by ``(name, type)``, names compared
ignoring ASCII case (the first spelling seen is kept), so the same person mentioned by two
users is two entities. A relationship is unique by ``(from, to, label)``.

Concurrency: upserts are single atomic statements in the caller's transaction, so two
transactions upserting the same entity or edge end with one row and both mentions counted.
Walks (``neighborhood``, ``neighbors``) read their nodes and edges from one snapshot.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

import numpy as np

from omoide.types import (
    Entity,
    Relationship,
    Scope,
    Subgraph,
)


class GraphReads(Protocol):
    """Reads of the knowledge graph."""

    def get_entity(self, scope: Scope, entity_id: str) -> Entity:
        """One entity with its provenance episodes. ``NotFound`` if not the tenant's."""
        ...

    def list_entities(
        self,
        scope: Scope,
        type_: str | None,
        limit: int,
        offset: int,
        mentioned_in: str | None = None,
    ) -> tuple[list[Entity], int]:
        """One page of the tenant's entities, most recently seen first (then newest), and
        the total, from one snapshot. ``type_``: only that type; ``mentioned_in``: only
        entities whose name occurs in that text, ignoring case."""
        ...

    def list_relationships(
        self, scope: Scope, entity_id: str | None, limit: int, offset: int
    ) -> tuple[list[Relationship], int]:
        """One page of the tenant's relationships, most recently seen first, and the total;
        with ``entity_id`` only those touching it (either direction). ``NotFound`` if
        ``entity_id`` is not the tenant's."""
        ...

    def entity_vector_search(
        self, scope: Scope, vector: np.ndarray, limit: int
    ) -> list[tuple[str, float]]:
        """Up to ``limit`` ``(entity id, cosine)`` of the tenant's embedded entities, most
        similar first: an exact scan, dot product of float32 unit vectors. Vectors of another
        dimension than ``vector`` (left from a previous embedder) are skipped."""
        ...

    def iter_entity_texts(self, batch: int) -> Iterator[list[tuple[Scope, str, str]]]:
        """Every entity of every tenant as ``(scope, id, text to embed)``, ``batch`` at a
        time, in insertion order, for a reindex (not a tenant read)."""
        ...

    def neighborhood(self, scope: Scope, entity_id: str, depth: int, max_nodes: int) -> Subgraph:
        """Every entity within ``depth`` edges of ``entity_id`` (edges followed both ways),
        each with its shortest distance, and the edges among them.

        Cycle-safe. At most ``max_nodes`` nodes, nearest first (then by id);
        ``truncated`` says whether more were in reach. Nodes come ordered by distance, then
        name ignoring case. ``NotFound`` if the entity is not the tenant's.
        """
        ...

    def neighbors(self, scope: Scope, entity_ids: Sequence[str], max_nodes: int) -> Subgraph:
        """The given entities (depth 0), every entity one edge away (depth 1), and the edges
        touching the given ones. Ids not the tenant's are ignored (no error). At most
        ``max_nodes`` nodes, seeds first, ``truncated`` when some were cut."""
        ...

    def find_entities(
        self, scope: Scope, text: str, limit: int, *, contained: bool = False
    ) -> list[Entity]:
        """The tenant's entities whose name occurs in ``text`` (or, with ``contained``, whose
        name contains ``text``), ignoring case; most mentioned first, then by name and id."""
        ...


class GraphWrites(Protocol):
    """Writes of the knowledge graph, inside the caller's transaction."""

    def upsert_entity(
        self,
        scope: Scope,
        name: str,
        type_: str,
        at_ms: int,
        episode_id: str | None = None,
        source: str = "extraction",
    ) -> Entity:
        """Insert the entity named ``name`` for the tenant, or count one more mention of the
        one with that name, equal ignoring case (and move ``last_seen_at`` forward to
        ``at_ms``, never back; a stored type ``other`` becomes ``type_``, any other stays: the
        first specific type wins); link ``episode_id`` as provenance once. A tenant has one
        entity per name. ``source`` is set on insert only. ``InvalidInput`` for a blank name
        or type. ``NotFound`` if ``episode_id`` is not an episode of the tenant."""
        ...

    def put_entity_vector(self, scope: Scope, entity_id: str, vector: np.ndarray) -> None:
        """Store (or replace) the entity's vector as float32; silently skipped if the entity
        was deleted before its embedding arrived."""
        ...

    def upsert_relationship(
        self, scope: Scope, from_id: str, to_id: str, label: str, notes: str | None, at_ms: int
    ) -> Relationship:
        """Insert the edge, or count one more mention of it; existing notes are kept (set
        only when it had none). ``NotFound`` if either end is not the tenant's."""
        ...

    def delete_entity(self, scope: Scope, entity_id: str) -> None:
        """Delete the entity with its relationships (both directions), provenance and vector.
        ``NotFound`` if not the tenant's."""
        ...
