"""The knowledge graph: entities and relationships with upsert semantics.

``GraphReads`` is read outside a transaction (``store.graph``);
``GraphWrites`` is used inside one (``with store.transaction() as tx: tx.graph...``)
and sees the transaction's own writes.
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
    """Reads of graph."""

    def get_entity(self, scope: Scope, entity_id: str) -> Entity: ...
    def list_entities(
        self,
        scope: Scope,
        type_: str | None,
        limit: int,
        offset: int,
        mentioned_in: str | None = None,
    ) -> tuple[list[Entity], int]: ...
    def list_relationships(
        self, scope: Scope, entity_id: str | None, limit: int, offset: int
    ) -> tuple[list[Relationship], int]: ...
    def entity_vector_search(
        self, scope: Scope, vector: np.ndarray, limit: int
    ) -> list[tuple[str, float]]: ...
    def iter_entity_texts(self, batch: int) -> Iterator[list[tuple[Scope, str, str]]]: ...
    def neighborhood(
        self, scope: Scope, entity_id: str, depth: int, max_nodes: int
    ) -> Subgraph: ...
    def neighbors(self, scope: Scope, entity_ids: Sequence[str], max_nodes: int) -> Subgraph: ...
    def find_entities(
        self, scope: Scope, text: str, limit: int, *, contained: bool = False
    ) -> list[Entity]: ...


class GraphWrites(Protocol):
    """Writes of graph."""

    def upsert_entity(
        self,
        scope: Scope,
        name: str,
        type_: str,
        at_ms: int,
        episode_id: str | None = None,
        source: str = "extraction",
    ) -> Entity: ...
    def put_entity_vector(self, scope: Scope, entity_id: str, vector: np.ndarray) -> None: ...
    def upsert_relationship(
        self, scope: Scope, from_id: str, to_id: str, label: str, notes: str | None, at_ms: int
    ) -> Relationship: ...
    def delete_entity(self, scope: Scope, entity_id: str) -> None: ...
