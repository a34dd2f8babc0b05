"""Knowledge-graph traversal on SQLite: a recursive CTE walks relationships both ways.

The walk is cycle-safe and bounded: ``UNION`` (not ``UNION ALL``) drops a ``(node, depth)``
pair already seen, and no row goes deeper than ``depth``, so a cycle ends at the depth limit. A
node reached by several paths keeps its shortest distance. Every relationship read is filtered
by tenant, so a walk never leaves the tenant it started in.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from omoide.errors import NotFound
from omoide.store import records
from omoide.store.sqlite import rows
from omoide.types import Entity, GraphNode, Relationship, Scope, Subgraph

_WALK = """
WITH RECURSIVE walk(id, depth) AS (
    SELECT ?, 0
    UNION
    SELECT r.to_id, w.depth + 1 FROM walk w JOIN relationships r ON r.from_id = w.id
     WHERE w.depth < ? AND r.user_id = ? AND r.scope_id = ?
    UNION
    SELECT r.from_id, w.depth + 1 FROM walk w JOIN relationships r ON r.to_id = w.id
     WHERE w.depth < ? AND r.user_id = ? AND r.scope_id = ?
)
SELECT id, min(depth) AS depth FROM walk GROUP BY id ORDER BY depth, id LIMIT ?
"""


def neighborhood(
    conn: sqlite3.Connection, scope: Scope, entity_id: str, depth: int, max_nodes: int
) -> Subgraph:
    """Every entity within ``depth`` edges of ``entity_id`` (either direction), and the
    edges between them. ``NotFound`` when the entity is not in ``scope``."""
    tenant = (scope.user_id, scope.scope_id)
    conn.execute("BEGIN")  # the walk, its nodes and its edges from one snapshot
    try:
        if _entities(conn, scope, [entity_id]) == {}:
            raise NotFound(f"entity {entity_id!r} not found", id=entity_id)
        found = conn.execute(
            _WALK, (entity_id, depth, *tenant, depth, *tenant, max_nodes + 1)
        ).fetchall()
        depths = {r["id"]: int(r["depth"]) for r in found[:max_nodes]}
        graph = _subgraph(conn, scope, depths, _edges_within(conn, scope, list(depths)))
    finally:
        conn.execute("COMMIT")
    graph.truncated = len(found) > max_nodes
    return graph


def find_entities(
    conn: sqlite3.Connection, scope: Scope, text: str, limit: int, *, contained: bool = False
) -> list[Entity]:
    """Entities whose name occurs in ``text`` (or, with ``contained``, contains it),
    ignoring case; most mentioned first."""
    cursor = conn.execute(
        rows.ENTITY_SELECT + " WHERE e.user_id = ? AND e.scope_id = ? AND"
        " (instr(lower(?), lower(e.name)) > 0 OR (? AND instr(lower(e.name), lower(?)) > 0))"
        " ORDER BY e.mention_count DESC, e.name, e.id LIMIT ?",
        (scope.user_id, scope.scope_id, text, int(contained), text.strip(), limit),
    )
    return [rows.entity_from_row(r) for r in cursor]


def neighbors(
    conn: sqlite3.Connection, scope: Scope, entity_ids: Sequence[str], max_nodes: int
) -> Subgraph:
    """The given entities (depth 0), every entity one edge away (depth 1), and the edges
    touching the given ones. Ids not in ``scope`` are ignored."""
    conn.execute("BEGIN")
    try:
        seeds = list(_entities(conn, scope, list(dict.fromkeys(entity_ids))))
        edges = _edges_touching(conn, scope, seeds)
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
    finally:
        conn.execute("COMMIT")
    graph.truncated = truncated
    return graph


def _subgraph(
    conn: sqlite3.Connection, scope: Scope, depths: dict[str, int], edges: list[Relationship]
) -> Subgraph:
    entities = _entities(conn, scope, list(depths))
    nodes = [
        GraphNode(**entities[i].model_dump(), depth=depths[i])
        for i in sorted(depths, key=lambda i: (depths[i], entities[i].name.casefold(), i))
        if i in entities
    ]
    return Subgraph(nodes=nodes, edges=edges, truncated=False)


def _entities(conn: sqlite3.Connection, scope: Scope, ids: list[str]) -> dict[str, Entity]:
    out: dict[str, Entity] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        cursor = conn.execute(
            rows.ENTITY_SELECT + f" WHERE e.id IN ({','.join('?' * len(chunk))})"
            " AND e.user_id = ? AND e.scope_id = ?",
            (*chunk, scope.user_id, scope.scope_id),
        )
        out.update((r["id"], rows.entity_from_row(r)) for r in cursor)
    return out


def _edges_within(conn: sqlite3.Connection, scope: Scope, ids: list[str]) -> list[Relationship]:
    """Relationships whose two ends are both in ``ids``."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    cursor = conn.execute(
        rows.RELATIONSHIP_SELECT + f" WHERE r.user_id = ? AND r.scope_id = ?"
        f" AND r.from_id IN ({marks}) AND r.to_id IN ({marks}) ORDER BY r.id",
        (scope.user_id, scope.scope_id, *ids, *ids),
    )
    return [records.relationship(r) for r in cursor]


def _edges_touching(conn: sqlite3.Connection, scope: Scope, ids: list[str]) -> list[Relationship]:
    """Relationships with at least one end in ``ids``."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    cursor = conn.execute(
        rows.RELATIONSHIP_SELECT + f" WHERE r.user_id = ? AND r.scope_id = ?"
        f" AND (r.from_id IN ({marks}) OR r.to_id IN ({marks})) ORDER BY r.id",
        (scope.user_id, scope.scope_id, *ids, *ids),
    )
    return [records.relationship(r) for r in cursor]
