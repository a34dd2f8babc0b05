"""PostgreSQL ``GraphReads`` / ``GraphWrites``: entities and relationships with upsert semantics.

Entities are unique per tenant by ``lower(name)`` (one entity per name; a stored ``other``
type takes a more specific one), so the same person mentioned by two users is two entities.
Upserts count mentions (``ON CONFLICT``: atomic under concurrent writers); deleting an entity
cascades to its relationships, provenance rows and vector.
Traversals live in ``traverse``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence

import numpy as np

from omoide.errors import InvalidInput, NotFound
from omoide.store import records
from omoide.store.postgres import rows, traverse
from omoide.store.postgres.db import Conn, Database
from omoide.types import Entity, Relationship, Scope, Subgraph, entity_text


class PostgresGraphReads:
    """Reads of the knowledge graph, each in one snapshot (see ``GraphReads``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get_entity(self, scope: Scope, entity_id: str) -> Entity:
        with self._db.read() as conn:
            return traverse.entity(conn, scope, entity_id)

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
        where, params = "e.user_id = %s AND e.scope_id = %s", [scope.user_id, scope.scope_id]
        if type_ is not None:
            where += " AND e.type = %s"
            params.append(type_)
        if mentioned_in is not None:
            where += " AND strpos(lower(%s), lower(e.name)) > 0"
            params.append(mentioned_in)
        with self._db.read() as conn:
            total = conn.execute(f"SELECT count(*) AS n FROM entities e WHERE {where}", params)
            row = total.fetchone()
            cursor = conn.execute(
                rows.ENTITY_SELECT + f" WHERE {where} ORDER BY e.last_seen_at DESC, e.seq DESC"
                " LIMIT %s OFFSET %s",
                (*params, limit, offset),
            )
            found = [rows.entity(r) for r in cursor]
        return found, int(row["n"]) if row else 0

    def list_relationships(
        self, scope: Scope, entity_id: str | None, limit: int, offset: int
    ) -> tuple[list[Relationship], int]:
        """Edges of the tenant, or only those touching ``entity_id`` (either direction)."""
        where, params = "r.user_id = %s AND r.scope_id = %s", [scope.user_id, scope.scope_id]
        if entity_id is not None:
            where += " AND (r.from_id = %s OR r.to_id = %s)"
            params += [entity_id, entity_id]
        with self._db.read() as conn:
            if entity_id is not None:
                traverse.entity(conn, scope, entity_id)  # NotFound for another tenant's id
            total = conn.execute(f"SELECT count(*) AS n FROM relationships r WHERE {where}", params)
            row = total.fetchone()
            cursor = conn.execute(
                rows.RELATIONSHIP_SELECT + f" WHERE {where}"
                " ORDER BY r.last_seen_at DESC, r.seq DESC LIMIT %s OFFSET %s",
                (*params, limit, offset),
            )
            found = [records.relationship(r) for r in cursor]
        return found, int(row["n"]) if row else 0

    def entity_vector_search(
        self, scope: Scope, vector: np.ndarray, limit: int
    ) -> list[tuple[str, float]]:
        """Exact inner product over the tenant's entity vectors of the query's dimension."""
        query = vector.astype(np.float32, copy=False)
        with self._db.read() as conn:
            cursor = conn.execute(
                "SELECT entity_id, -(embedding <#> %s) AS score FROM entity_vectors"
                " WHERE user_id = %s AND scope_id = %s AND vector_dims(embedding) = %s"
                " ORDER BY embedding <#> %s, entity_id LIMIT %s",
                (query, scope.user_id, scope.scope_id, query.shape[0], query, limit),
            )
            return [(str(r["entity_id"]), float(r["score"])) for r in cursor]

    def iter_entity_texts(self, batch: int) -> Iterator[list[tuple[Scope, str, str]]]:
        """Every entity as ``(scope, id, text to embed)``, for a reindex."""
        last = 0
        while True:
            with self._db.read() as conn:
                chunk = conn.execute(
                    "SELECT seq, id, user_id, scope_id, name, type FROM entities WHERE seq > %s"
                    " ORDER BY seq LIMIT %s",
                    (last, batch),
                ).fetchall()
            if not chunk:
                return
            last = int(chunk[-1]["seq"])
            yield [
                (
                    Scope(user_id=r["user_id"], scope_id=r["scope_id"]),
                    r["id"],
                    entity_text(r["name"], r["type"]),
                )
                for r in chunk
            ]

    def neighborhood(self, scope: Scope, entity_id: str, depth: int, max_nodes: int) -> Subgraph:
        with self._db.read() as conn:
            return traverse.neighborhood(conn, scope, entity_id, depth, max_nodes)

    def neighbors(self, scope: Scope, entity_ids: Sequence[str], max_nodes: int) -> Subgraph:
        with self._db.read() as conn:
            return traverse.neighbors(conn, scope, entity_ids, max_nodes)

    def find_entities(
        self, scope: Scope, text: str, limit: int, *, contained: bool = False
    ) -> list[Entity]:
        with self._db.read() as conn:
            return traverse.find_entities(conn, scope, text, limit, contained=contained)


class PostgresGraphWrites:
    """Writes of the knowledge graph on the transaction's connection (see ``GraphWrites``)."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn

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
        row = self._conn.execute(
            "INSERT INTO entities (id, user_id, scope_id, name, type, source, last_seen_at,"
            " created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (user_id, scope_id, lower(name)) DO UPDATE SET"
            " mention_count = entities.mention_count + 1,"
            " last_seen_at = greatest(entities.last_seen_at, excluded.last_seen_at),"
            " type = CASE WHEN entities.type = 'other' THEN excluded.type ELSE entities.type END"
            " RETURNING id",
            (uuid.uuid4().hex, scope.user_id, scope.scope_id, name, type_, source, at_ms, at_ms),
        ).fetchone()
        assert row is not None  # an upsert always returns its row
        if episode_id is not None:
            self._link_episode(scope, row["id"], episode_id)
        return traverse.entity(self._conn, scope, row["id"])

    def _link_episode(self, scope: Scope, entity_id: str, episode_id: str) -> None:
        """Provenance, once; only an episode of the same tenant (``NotFound`` otherwise, as
        on SQLite: the foreign key alone let an unknown id fail as a driver error, a 500, and
        let an episode of the user's other scope through)."""
        self._conn.execute(
            "INSERT INTO entity_episodes (user_id, entity_id, episode_id)"
            " SELECT user_id, %s, id FROM episodes"
            " WHERE user_id = %s AND scope_id = %s AND id = %s ON CONFLICT DO NOTHING",
            (entity_id, scope.user_id, scope.scope_id, episode_id),
        )
        linked = self._conn.execute(
            "SELECT 1 FROM entity_episodes"
            " WHERE user_id = %s AND entity_id = %s AND episode_id = %s",
            (scope.user_id, entity_id, episode_id),
        ).fetchone()
        if linked is None:
            raise NotFound(f"episode {episode_id!r} not found", id=episode_id)

    def put_entity_vector(self, scope: Scope, entity_id: str, vector: np.ndarray) -> None:
        # INSERT ... SELECT: nothing when the entity was deleted before its embedding arrived.
        self._conn.execute(
            "INSERT INTO entity_vectors (user_id, scope_id, entity_id, embedding)"
            " SELECT user_id, scope_id, id, %s FROM entities"
            " WHERE user_id = %s AND scope_id = %s AND id = %s"
            " ON CONFLICT (user_id, entity_id) DO UPDATE SET embedding = excluded.embedding",
            (vector.astype(np.float32), scope.user_id, scope.scope_id, entity_id),
        )

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
        self._conn.execute(
            "INSERT INTO relationships (id, user_id, scope_id, from_id, to_id, label, notes,"
            " last_seen_at, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (user_id, from_id, to_id, label) DO UPDATE SET"
            " mention_count = relationships.mention_count + 1,"
            " notes = coalesce(relationships.notes, excluded.notes),"
            " last_seen_at = greatest(relationships.last_seen_at, excluded.last_seen_at)",
            (
                uuid.uuid4().hex,
                scope.user_id,
                scope.scope_id,
                from_id,
                to_id,
                label,
                notes,
                at_ms,
                at_ms,
            ),
        )
        row = self._conn.execute(
            rows.RELATIONSHIP_SELECT
            + " WHERE r.user_id = %s AND r.from_id = %s AND r.to_id = %s AND r.label = %s",
            (scope.user_id, from_id, to_id, label),
        ).fetchone()
        assert row is not None  # written just above
        return records.relationship(row)

    def delete_entity(self, scope: Scope, entity_id: str) -> None:
        """Delete an entity with its relationships, provenance and vector (by cascade)."""
        if not self._exists(scope, entity_id):
            raise NotFound(f"entity {entity_id!r} not found", id=entity_id)
        self._conn.execute(
            "DELETE FROM entities WHERE user_id = %s AND id = %s", (scope.user_id, entity_id)
        )

    def _exists(self, scope: Scope, entity_id: str) -> bool:
        row = self._conn.execute(
            "SELECT 1 FROM entities WHERE user_id = %s AND scope_id = %s AND id = %s",
            (scope.user_id, scope.scope_id, entity_id),
        ).fetchone()
        return row is not None
