"""Knowledge-graph reads: neighbourhoods (nexusAI ``getNeighborhood``), bulk 1-hop neighbours
(``getEntityNeighbors``) and entity search by name, keyword and vector.

Everything is tenant-scoped: an entity id of another tenant is ``NotFound``, and a walk never
crosses into another tenant's graph.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from omoide.engine.knowledge import KnowledgeMixin
from omoide.errors import InvalidInput
from omoide.types import (
    DEFAULT_ID,
    Entity,
    EntityHit,
    EntitySearchResult,
    Scope,
    Subgraph,
)
from omoide.validate import check_limit, check_text

MAX_DEPTH = 6
MAX_NODES = 500


class GraphMixin(KnowledgeMixin):
    def neighborhood(
        self,
        entity_id: str,
        depth: int = 1,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        max_nodes: int = 200,
    ) -> Subgraph:
        """Entities within ``depth`` relationships of ``entity_id``, following edges in both
        directions, with the relationships between them: ``{nodes, edges}``. Each node carries
        its shortest distance (``depth`` 0 is the entity itself). Cycles are harmless; past
        ``max_nodes`` the nearest nodes are kept and ``truncated`` is set.

            >>> g = m.neighborhood(mei.id, depth=2, user_id="mei")
            >>> [(n.name, n.depth) for n in g.nodes]
            [('Mei', 0), ('Lin', 1), ('Shenzhen', 1), ('Acme', 2)]
        """
        _check_graph_args(depth, max_nodes)
        check_text(entity_id, 256, what="entity id")
        scope = Scope(user_id=user_id, scope_id=scope_id)
        return self.store.graph.neighborhood(scope, entity_id, depth, max_nodes)

    def neighbors(
        self,
        entity_ids: Sequence[str],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        max_nodes: int = MAX_NODES,
    ) -> Subgraph:
        """One hop around several entities at once: the entities (depth 0), every entity
        related to one of them (depth 1), and those relationships. Unknown ids are ignored."""
        if isinstance(entity_ids, str) or not isinstance(entity_ids, Sequence):
            raise InvalidInput("entity_ids must be a list of entity ids")
        if len(entity_ids) > 1000:
            raise InvalidInput("at most 1000 entity ids at once")
        _check_graph_args(1, max_nodes)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        return self.store.graph.neighbors(scope, [str(i) for i in entity_ids], max_nodes)

    def search_entities(
        self,
        query: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 10,
    ) -> EntitySearchResult:
        """Entities by name: first those named in the query, or whose name contains it
        (keyword, score 1.0, most mentioned first), then the most similar names (vector,
        cosine). When the embedder is down only the keyword hits come back, marked degraded.

            >>> [h.entity.name for h in m.search_entities("where does mei live?").hits]
            ['Mei', 'Shenzhen', ...]
        """
        check_text(query, 10_000, what="query")
        check_limit(limit, 0, maximum=1000)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        named = self.entities_named(scope, query, limit)
        vector = super().search_entities(query, user_id=user_id, scope_id=scope_id, limit=limit)
        hits = [EntityHit(entity=e, score=1.0) for e in named]
        seen = {e.id for e in named}
        hits += [h for h in vector.hits if h.entity.id not in seen and not vector.degraded]
        return EntitySearchResult(
            hits=hits[:limit], degraded=vector.degraded, warnings=vector.warnings
        )

    def entities_named(
        self, scope: Scope, text: str, limit: int = 20, *, contained: bool = True
    ) -> list[Entity]:
        """Entities whose name occurs in ``text`` as whole words (ignoring case), and with
        ``contained`` those whose name contains ``text``; most mentioned first."""
        found = self.store.graph.find_entities(scope, text, limit * 5, contained=contained)
        folded = text.casefold().strip()
        named = [
            e
            for e in found
            if _mentions(folded, e.name.casefold()) or (contained and folded in e.name.casefold())
        ]
        return named[:limit]


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def _check_graph_args(depth: int, max_nodes: int) -> None:
    if not isinstance(depth, int) or not 0 <= depth <= MAX_DEPTH:
        raise InvalidInput(f"depth must be between 0 and {MAX_DEPTH}, got {depth!r}")
    if not isinstance(max_nodes, int) or not 1 <= max_nodes <= MAX_NODES * 10:
        raise InvalidInput(f"max_nodes must be between 1 and {MAX_NODES * 10}, got {max_nodes!r}")
