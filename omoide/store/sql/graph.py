"""``GraphReads`` / ``GraphWrites``: entities and relationships with upsert semantics, and walks.

Entities are unique per tenant by name, ignoring case (one entity per name; a stored ``other``
type takes a more specific one), so the same person mentioned by two users is two entities.
Upserts count mentions (``ON CONFLICT``: atomic under concurrent writers); deleting an entity
cascades to its relationships, provenance rows and vector.

Walks are cycle-safe and bounded: the backend's recursive CTE drops a ``(node, depth)`` pair
already seen, and no row goes deeper than ``depth``. A node reached by several paths keeps its
shortest distance. Every relationship read is filtered by tenant, so a walk never leaves the
tenant it started in; a walk, its nodes and its edges come from one snapshot.

What differs per backend (the walk's CTE, entity vectors, how rows are keyed and read) comes in
a ``GraphLayout``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from omoide.errors import InvalidInput, NotFound
from omoide.store import records
from omoide.store.records import ms_to_dt_required
from omoide.store.sql.dialect import Conn, Dialect, Reader
from omoide.types import Entity, GraphNode, Relationship, Scope, Subgraph, entity_text

_IDS_PER_STATEMENT = 500  # where ids are bound one parameter each (SQLite's limit is lower)


@dataclass(frozen=True)
class GraphLayout:
    """What differs in how a backend stores and walks the graph."""

    #: The column that orders entities and relationships as they were written.
    order: str
    #: ``SELECT e.*, <episode ids> AS episodes FROM entities e``, and those ids as a list.
    entity_select: str
    episode_ids: Callable[[Any], list[str]]
    #: ``SELECT r.*, <from_name>, <to_name> FROM relationships r`` joined with both ends.
    relationship_select: str
    #: The columns of the unique keys an upsert of an entity / a relationship conflicts on.
    entity_key: str
    relationship_key: str
    #: Whether ``entity_episodes`` rows carry the tenant's ``user_id``.
    links_by_tenant: bool
    #: The recursive walk: rows of (id, depth), shallowest first, and its parameters from
    #: (scope, entity id, depth, limit); in the backend's own placeholders.
    walk: str
    walk_args: Callable[[Scope, str, int, int], tuple[Any, ...]]
    #: (connection, scope, query vector, limit) -> (entity id, score), best first.
    vector_search: Callable[[Conn, Scope, np.ndarray, int], list[tuple[str, float]]]
    #: (connection, scope, entity id, vector); nothing when the entity is gone.
    put_vector: Callable[[Conn, Scope, str, np.ndarray], None]


def entity(row: Any, layout: GraphLayout) -> Entity:
    return Entity(
        id=row["id"],
        user_id=row["user_id"],
        scope_id=row["scope_id"],
        name=row["name"],
        type=row["type"],
        mention_count=row["mention_count"],
        confidence=row["confidence"],
        source=row["source"],
        episodes=layout.episode_ids(row["episodes"]),
        last_seen_at=ms_to_dt_required(row["last_seen_at"]),
        created_at=ms_to_dt_required(row["created_at"]),
    )


class _Graph:
    """The reads both graph ports run, on a connection they are given."""

    def __init__(self, d: Dialect, layout: GraphLayout) -> None:
        self._d = d
        self._layout = layout

    def entity(self, conn: Conn, scope: Scope, entity_id: str) -> Entity:
        """One entity of ``scope``; ``NotFound`` if it is not the tenant's."""
        found = self.entities(conn, scope, [entity_id])
        if entity_id not in found:
            raise NotFound(f"entity {entity_id!r} not found", id=entity_id)
        return found[entity_id]

    def entities(self, conn: Conn, scope: Scope, ids: list[str]) -> dict[str, Entity]:
        out: dict[str, Entity] = {}
        step = max(len(ids), 1) if self._d.array_params else _IDS_PER_STATEMENT
        for start in range(0, len(ids), step):
            among, values = self._d.in_list("e.id", ids[start : start + step])
            cursor = conn.execute(
                self._d.sql(
                    f"{self._layout.entity_select} WHERE e.user_id = ? AND e.scope_id = ?"
                    f" AND {among}"
                ),
                (scope.user_id, scope.scope_id, *values),
            )
            out.update((r["id"], entity(r, self._layout)) for r in cursor)
        return out

    def edges(self, conn: Conn, scope: Scope, ids: list[str], within: bool) -> list[Relationship]:
        """Relationships with both ends (``within``) or at least one end in ``ids``."""
        if not ids:
            return []
        d = self._d
        starts, values = d.in_list("r.from_id", ids)
        ends, _ = d.in_list("r.to_id", ids)
        join = "AND" if within else "OR"
        cursor = conn.execute(
            d.sql(
                f"{self._layout.relationship_select} WHERE r.user_id = ? AND r.scope_id = ?"
                f" AND ({starts} {join} {ends}) ORDER BY r.id{d.binary}"
            ),
            (scope.user_id, scope.scope_id, *values, *values),
        )
        return [records.relationship(r) for r in cursor]

    def subgraph(
        self, conn: Conn, scope: Scope, depths: dict[str, int], edges: list[Relationship]
    ) -> Subgraph:
        entities = self.entities(conn, scope, list(depths))
        nodes = [
            GraphNode(**entities[i].model_dump(), depth=depths[i])
            for i in sorted(depths, key=lambda i: (depths[i], entities[i].name.casefold(), i))
            if i in entities
        ]
        return Subgraph(nodes=nodes, edges=edges, truncated=False)


class SQLGraphReads:
    """Reads of the knowledge graph, each in one snapshot (see ``GraphReads``)."""

    def __init__(self, db: Reader, dialect: Dialect, layout: GraphLayout) -> None:
        self._db = db
        self._d = dialect
        self._layout = layout
        self._graph = _Graph(dialect, layout)

    def get_entity(self, scope: Scope, entity_id: str) -> Entity:
        with self._db.read() as conn:
            return self._graph.entity(conn, scope, entity_id)

    def list_entities(
        self,
        scope: Scope,
        type_: str | None,
        limit: int,
        offset: int,
        mentioned_in: str | None = None,
    ) -> tuple[list[Entity], int]:
        """Most recently seen first, with the true total. ``mentioned_in``: only entities whose
        name occurs in that text, ignoring case."""
        d, layout = self._d, self._layout
        where, params = "e.user_id = ? AND e.scope_id = ?", [scope.user_id, scope.scope_id]
        if type_ is not None:
            where += " AND e.type = ?"
            params.append(type_)
        if mentioned_in is not None:
            where += f" AND {d.strpos}(lower(?), lower(e.name)) > 0"
            params.append(mentioned_in)
        with self._db.read() as conn:  # the page and its total from one state
            total = conn.execute(
                d.sql(f"SELECT count(*) AS n FROM entities e WHERE {where}"), params
            ).fetchone()
            cursor = conn.execute(
                d.sql(
                    f"{layout.entity_select} WHERE {where}"
                    f" ORDER BY e.last_seen_at DESC, e.{layout.order} DESC LIMIT ? OFFSET ?"
                ),
                (*params, limit, offset),
            )
            found = [entity(r, layout) for r in cursor]
        return found, int(total["n"])

    def list_relationships(
        self, scope: Scope, entity_id: str | None, limit: int, offset: int
    ) -> tuple[list[Relationship], int]:
        """Edges of the tenant, or only those touching ``entity_id`` (either direction)."""
        d, layout = self._d, self._layout
        where, params = "r.user_id = ? AND r.scope_id = ?", [scope.user_id, scope.scope_id]
        if entity_id is not None:
            where += " AND (r.from_id = ? OR r.to_id = ?)"
            params += [entity_id, entity_id]
        with self._db.read() as conn:
            if entity_id is not None:
                self._graph.entity(conn, scope, entity_id)  # NotFound for another tenant's id
            total = conn.execute(
                d.sql(f"SELECT count(*) AS n FROM relationships r WHERE {where}"), params
            ).fetchone()
            cursor = conn.execute(
                d.sql(
                    f"{layout.relationship_select} WHERE {where}"
                    f" ORDER BY r.last_seen_at DESC, r.{layout.order} DESC LIMIT ? OFFSET ?"
                ),
                (*params, limit, offset),
            )
            found = [records.relationship(r) for r in cursor]
        return found, int(total["n"])

    def entity_vector_search(
        self, scope: Scope, vector: np.ndarray, limit: int
    ) -> list[tuple[str, float]]:
        """The tenant's entities nearest ``vector`` by inner product; vectors of another
        dimension (before a reindex) are skipped."""
        with self._db.read() as conn:
            return self._layout.vector_search(conn, scope, vector, limit)

    def iter_entity_texts(self, batch: int) -> Iterator[list[tuple[Scope, str, str]]]:
        """Every entity as ``(scope, id, text to embed)``, for a reindex."""
        order, last = self._layout.order, 0
        while True:
            with self._db.read() as conn:
                chunk = conn.execute(
                    self._d.sql(
                        f"SELECT {order} AS n, id, user_id, scope_id, name, type FROM entities"
                        f" WHERE {order} > ? ORDER BY {order} LIMIT ?"
                    ),
                    (last, batch),
                ).fetchall()
            if not chunk:
                return
            last = int(chunk[-1]["n"])
            yield [
                (
                    Scope(user_id=r["user_id"], scope_id=r["scope_id"]),
                    r["id"],
                    entity_text(r["name"], r["type"]),
                )
                for r in chunk
            ]

    def neighborhood(self, scope: Scope, entity_id: str, depth: int, max_nodes: int) -> Subgraph:
        """Every entity within ``depth`` edges of ``entity_id`` (either direction), and the
        edges between them. ``NotFound`` when the entity is not in ``scope``."""
        with self._db.read() as conn:
            self._graph.entity(conn, scope, entity_id)
            args = self._layout.walk_args(scope, entity_id, depth, max_nodes + 1)
            found = conn.execute(self._layout.walk, args).fetchall()
            depths = {r["id"]: int(r["depth"]) for r in found[:max_nodes]}
            edges = self._graph.edges(conn, scope, list(depths), within=True)
            graph = self._graph.subgraph(conn, scope, depths, edges)
        graph.truncated = len(found) > max_nodes
        return graph

    def neighbors(self, scope: Scope, entity_ids: Sequence[str], max_nodes: int) -> Subgraph:
        """The given entities (depth 0), every entity one edge away (depth 1), and the edges
        touching the given ones. Ids not in ``scope`` are ignored."""
        wanted = list(dict.fromkeys(entity_ids))
        with self._db.read() as conn:
            known = self._graph.entities(conn, scope, wanted)
            seeds = [i for i in wanted if i in known]
            edges = self._graph.edges(conn, scope, seeds, within=False)
            depths = dict.fromkeys(seeds, 0)
            for edge in edges:
                for end in (edge.from_id, edge.to_id):
                    depths.setdefault(end, 1)
            truncated = len(depths) > max_nodes
            if truncated:
                kept = sorted(depths, key=lambda i: (depths[i], i))[:max_nodes]
                depths = {i: depths[i] for i in kept}
                edges = [e for e in edges if e.from_id in depths and e.to_id in depths]
            graph = self._graph.subgraph(conn, scope, depths, edges)
        graph.truncated = truncated
        return graph

    def find_entities(
        self, scope: Scope, text: str, limit: int, *, contained: bool = False
    ) -> list[Entity]:
        """Entities whose name occurs in ``text`` (or, with ``contained``, contains it),
        ignoring case; most mentioned first."""
        d, layout = self._d, self._layout
        with self._db.read() as conn:
            cursor = conn.execute(
                d.sql(
                    f"{layout.entity_select} WHERE e.user_id = ? AND e.scope_id = ? AND"
                    f" ({d.strpos}(lower(?), lower(e.name)) > 0"
                    f" OR (? AND {d.strpos}(lower(e.name), lower(?)) > 0))"
                    f" ORDER BY e.mention_count DESC, e.name{d.binary}, e.id{d.binary} LIMIT ?"
                ),
                (scope.user_id, scope.scope_id, text, contained, text.strip(), limit),
            )
            return [entity(r, layout) for r in cursor]


class SQLGraphWrites:
    """Writes of the knowledge graph on the transaction's connection (see ``GraphWrites``)."""

    def __init__(self, conn: Conn, dialect: Dialect, layout: GraphLayout) -> None:
        self._conn = conn
        self._d = dialect
        self._layout = layout
        self._graph = _Graph(dialect, layout)

    def upsert_entity(
        self,
        scope: Scope,
        name: str,
        type_: str,
        at_ms: int,
        episode_id: str | None = None,
        source: str = "extraction",
    ) -> Entity:
        """Insert, or count one more mention of, the entity named ``name`` (ignoring case)
        in ``scope``; an entity stored as ``other`` takes the more specific ``type_``."""
        if not name.strip() or not type_.strip():
            raise InvalidInput("an entity needs a name and a type")
        d = self._d
        row = self._conn.execute(
            d.sql(
                "INSERT INTO entities (id, user_id, scope_id, name, type, source, last_seen_at,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                f" ON CONFLICT ({self._layout.entity_key}) DO UPDATE SET"
                " mention_count = entities.mention_count + 1,"
                f" last_seen_at = {d.greatest}(entities.last_seen_at, excluded.last_seen_at),"
                " type = CASE WHEN entities.type = 'other' THEN excluded.type"
                " ELSE entities.type END RETURNING id"
            ),
            (uuid.uuid4().hex, scope.user_id, scope.scope_id, name, type_, source, at_ms, at_ms),
        ).fetchone()
        if episode_id is not None:
            self._link_episode(scope, row["id"], episode_id)
        return self._graph.entity(self._conn, scope, row["id"])

    def _link_episode(self, scope: Scope, entity_id: str, episode_id: str) -> None:
        """Provenance, once; only an episode of the same tenant (``NotFound`` otherwise: the
        foreign key alone would let an unknown id fail as a driver error, and let an episode
        of the user's other scope through)."""
        owner: tuple[str, ...] = (scope.user_id,) if self._layout.links_by_tenant else ()
        column = "user_id, " if owner else ""
        self._conn.execute(
            self._d.sql(
                f"INSERT INTO entity_episodes ({column}entity_id, episode_id)"
                f" SELECT {column}?, id FROM episodes WHERE user_id = ? AND scope_id = ?"
                " AND id = ? ON CONFLICT DO NOTHING"
            ),
            (entity_id, scope.user_id, scope.scope_id, episode_id),
        )
        mine = "user_id = ? AND " if owner else ""
        linked = self._conn.execute(
            self._d.sql(
                f"SELECT 1 FROM entity_episodes WHERE {mine}entity_id = ? AND episode_id = ?"
            ),
            (*owner, entity_id, episode_id),
        ).fetchone()
        if linked is None:
            raise NotFound(f"episode {episode_id!r} not found", id=episode_id)

    def put_entity_vector(self, scope: Scope, entity_id: str, vector: np.ndarray) -> None:
        self._layout.put_vector(self._conn, scope, entity_id, vector)

    def upsert_relationship(
        self,
        scope: Scope,
        from_id: str,
        to_id: str,
        label: str,
        notes: str | None,
        at_ms: int,
    ) -> Relationship:
        """Insert, or count one more mention of, an edge; existing notes are kept."""
        for entity_id in (from_id, to_id):
            if not self._exists(scope, entity_id):
                raise NotFound(f"entity {entity_id!r} not found", id=entity_id)
        d, new_id = self._d, uuid.uuid4().hex
        self._conn.execute(
            d.sql(
                "INSERT INTO relationships (id, user_id, scope_id, from_id, to_id, label, notes,"
                " last_seen_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                f" ON CONFLICT ({self._layout.relationship_key}) DO UPDATE SET"
                " mention_count = relationships.mention_count + 1,"
                " notes = coalesce(relationships.notes, excluded.notes),"
                f" last_seen_at = {d.greatest}(relationships.last_seen_at,"
                " excluded.last_seen_at)"
            ),
            (new_id, scope.user_id, scope.scope_id, from_id, to_id, label, notes, at_ms, at_ms),
        )
        row = self._conn.execute(
            d.sql(
                f"{self._layout.relationship_select} WHERE r.user_id = ? AND r.from_id = ?"
                " AND r.to_id = ? AND r.label = ?"
            ),
            (scope.user_id, from_id, to_id, label),
        ).fetchone()
        return records.relationship(row)

    def delete_entity(self, scope: Scope, entity_id: str) -> None:
        """Delete an entity with its relationships, provenance and vector (by cascade)."""
        if not self._exists(scope, entity_id):
            raise NotFound(f"entity {entity_id!r} not found", id=entity_id)
        self._conn.execute(
            self._d.sql("DELETE FROM entities WHERE user_id = ? AND id = ?"),
            (scope.user_id, entity_id),
        )

    def _exists(self, scope: Scope, entity_id: str) -> bool:
        row = self._conn.execute(
            self._d.sql("SELECT 1 FROM entities WHERE user_id = ? AND scope_id = ? AND id = ?"),
            (scope.user_id, scope.scope_id, entity_id),
        ).fetchone()
        return row is not None
