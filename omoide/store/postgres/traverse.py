"""Knowledge-graph traversal on PostgreSQL: a recursive CTE walks relationships both ways.

The walk is cycle-safe and bounded: ``UNION`` (not ``UNION ALL``) drops a ``(node, depth)``
pair already seen, and no row goes deeper than ``depth``. A node reached by several paths keeps
its shortest distance. Every relationship read is filtered by tenant, so a walk never leaves
the tenant it started in. Callers run these inside one snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence

from omoide.errors import NotFound
from omoide.store import records
from omoide.store.postgres import rows
from omoide.store.postgres.db import Conn
from omoide.types import Entity, GraphNode, Relationship, Scope, Subgraph

# PostgreSQL allows one recursive reference per CTE, so both directions go in one step.
_WALK = """
WITH RECURSIVE walk(id, depth) AS (
    SELECT %s::text, 0
    UNION
    SELECT CASE WHEN r.from_id = w.id THEN r.to_id ELSE r.from_id END, w.depth + 1
    FROM walk w JOIN relationships r
      ON r.user_id = %s AND r.scope_id = %s AND (r.from_id = w.id OR r.to_id = w.id)
    WHERE w.depth < %s
)
SELECT id, min(depth) AS depth FROM walk GROUP BY id ORDER BY min(depth), id COLLATE "C" LIMIT %s
"""


def entity(conn: Conn, scope: Scope, entity_id: str) -> Entity:
    """One entity of ``scope``; ``NotFound`` if it is not the tenant's."""
    found = _entities(conn, scope, [entity_id])
    if entity_id not in found:
        raise NotFound(f"entity {entity_id!r} not found", id=entity_id)
    return found[entity_id]


def neighborhood(conn: Conn, scope: Scope, entity_id: str, depth: int, max_nodes: int) -> Subgraph:
    """Every entity within ``depth`` edges of ``entity_id`` (either direction), and the
    edges between them. ``NotFound`` when the entity is not in ``scope``."""
    entity(conn, scope, entity_id)
    found = conn.execute(
        _WALK, (entity_id, scope.user_id, scope.scope_id, depth, max_nodes + 1)
    ).fetchall()
    depths = {r["id"]: int(r["depth"]) for r in found[:max_nodes]}
    graph = _subgraph(conn, scope, depths, _edges(conn, scope, list(depths), within=True))
    graph.truncated = len(found) > max_nodes
    return graph


def find_entities(
    conn: Conn, scope: Scope, text: str, limit: int, *, contained: bool = False
) -> list[Entity]:
    """Entities whose name occurs in ``text`` (or, with ``contained``, contains it),
    ignoring case; most mentioned first."""
    cursor = conn.execute(
        rows.ENTITY_SELECT + " WHERE e.user_id = %s AND e.scope_id = %s AND"
        " (strpos(lower(%s), lower(e.name)) > 0 OR (%s AND strpos(lower(e.name), lower(%s)) > 0))"
        ' ORDER BY e.mention_count DESC, e.name COLLATE "C", e.id COLLATE "C" LIMIT %s',
        (scope.user_id, scope.scope_id, text, contained, text.strip(), limit),
    )
    return [rows.entity(r) for r in cursor]


def neighbors(conn: Conn, scope: Scope, entity_ids: Sequence[str], max_nodes: int) -> Subgraph:
    """The given entities (depth 0), every entity one edge away (depth 1), and the edges
    touching the given ones. Ids not in ``scope`` are ignored."""
    wanted = list(dict.fromkeys(entity_ids))
    known = _entities(conn, scope, wanted)
    seeds = [i for i in wanted if i in known]
    edges = _edges(conn, scope, seeds, within=False)
    depths = dict.fromkeys(seeds, 0)
    for edge in edges:
        for end in (edge.from_id, edge.to_id):
            depths.setdefault(end, 1)
    truncated = len(depths) > max_nodes
    if truncated:
        kept = sorted(depths, key=lambda i: (depths[i], i))[:max_nodes]
        depths = {i: depths[i] for i in kept}
        edges = [e for e in edges if e.from_id in depths and e.to_id in depths]
    graph = _subgraph(conn, scope, depths, edges)
    graph.truncated = truncated
    return graph


def _subgraph(
    conn: Conn, scope: Scope, depths: dict[str, int], edges: list[Relationship]
) -> Subgraph:
    entities = _entities(conn, scope, list(depths))
    nodes = [
        GraphNode(**entities[i].model_dump(), depth=depths[i])
        for i in sorted(depths, key=lambda i: (depths[i], entities[i].name.casefold(), i))
        if i in entities
    ]
    return Subgraph(nodes=nodes, edges=edges, truncated=False)


def _entities(conn: Conn, scope: Scope, ids: list[str]) -> dict[str, Entity]:
    if not ids:
        return {}
    cursor = conn.execute(
        rows.ENTITY_SELECT + " WHERE e.user_id = %s AND e.scope_id = %s AND e.id = ANY(%s)",
        (scope.user_id, scope.scope_id, ids),
    )
    return {r["id"]: rows.entity(r) for r in cursor}


def _edges(conn: Conn, scope: Scope, ids: list[str], *, within: bool) -> list[Relationship]:
    """Relationships with both ends (``within``) or at least one end in ``ids``."""
    if not ids:
        return []
    join = "AND" if within else "OR"
    cursor = conn.execute(
        rows.RELATIONSHIP_SELECT + " WHERE r.user_id = %s AND r.scope_id = %s"
        f' AND (r.from_id = ANY(%s) {join} r.to_id = ANY(%s)) ORDER BY r.id COLLATE "C"',
        (scope.user_id, scope.scope_id, ids, ids),
    )
    return [records.relationship(r) for r in cursor]
