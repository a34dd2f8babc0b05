"""SQLite ``GraphReads`` / ``GraphWrites``: entities and relationships with upsert semantics.

Entities are unique per tenant by ``(name, type)`` (names compare ignoring ASCII case), so the
same person mentioned by two users is two entities. Upserts count mentions; deleting an entity
cascades to its relationships, provenance rows and vector. Traversals live in ``traverse``.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator, Sequence

import numpy as np

from omoide.errors import InvalidInput, NotFound
from omoide.store import records
from omoide.store.sqlite import rows, traverse
from omoide.store.sqlite.db import Database, snapshot
from omoide.types import Entity, Relationship, Scope, Subgraph, entity_text


class SQLiteGraphReads:
    """Reads of the knowledge graph on reader connections (see ``GraphReads``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get_entity(self, scope: Scope, entity_id: str) -> Entity:
        row = (
            self._db.reader()
            .execute(
                rows.ENTITY_SELECT + " WHERE e.id = ? AND e.user_id = ? AND e.scope_id = ?",
                (entity_id, scope.user_id, scope.scope_id),
            )
            .fetchone()
        )
        if row is None:
            raise NotFound(f"entity {entity_id!r} not found", id=entity_id)
        return rows.entity_from_row(row)

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
        where, params = "e.user_id = ? AND e.scope_id = ?", [scope.user_id, scope.scope_id]
        if type_ is not None:
            where += " AND e.type = ?"
            params.append(type_)
        if mentioned_in is not None:
            where += " AND instr(lower(?), lower(e.name)) > 0"
            params.append(mentioned_in)
        with snapshot(self._db.reader()) as conn:  # the page and its total from one state
            total = conn.execute(f"SELECT count(*) FROM entities e WHERE {where}", params)
            count = int(total.fetchone()[0])
            found = conn.execute(
                rows.ENTITY_SELECT + f" WHERE {where} ORDER BY e.last_seen_at DESC, e.rowid DESC"
                " LIMIT ? OFFSET ?",
                (*params, limit, offset),
            ).fetchall()
        return [rows.entity_from_row(r) for r in found], count

    def list_relationships(
        self, scope: Scope, entity_id: str | None, limit: int, offset: int
    ) -> tuple[list[Relationship], int]:
        """Edges of the tenant, or only those touching ``entity_id`` (either direction)."""
        where, params = "r.user_id = ? AND r.scope_id = ?", [scope.user_id, scope.scope_id]
        if entity_id is not None:
            self.get_entity(scope, entity_id)  # NotFound for another tenant's id
            where += " AND (r.from_id = ? OR r.to_id = ?)"
            params += [entity_id, entity_id]
        with snapshot(self._db.reader()) as conn:
            total = conn.execute(f"SELECT count(*) FROM relationships r WHERE {where}", params)
            count = int(total.fetchone()[0])
            found = conn.execute(
                rows.RELATIONSHIP_SELECT + f" WHERE {where}"
                " ORDER BY r.last_seen_at DESC, r.rowid DESC LIMIT ? OFFSET ?",
                (*params, limit, offset),
            ).fetchall()
        return [records.relationship(r) for r in found], count

    def entity_vector_search(
        self, scope: Scope, vector: np.ndarray, limit: int
    ) -> list[tuple[str, float]]:
        """Exact cosine scan of the tenant's entity vectors (entities number in thousands,
        not millions, per tenant). Vectors of another dimension (before a reindex) are skipped.
        """
        cursor = self._db.reader().execute(
            "SELECT entity_id, vec FROM entity_vectors WHERE tenant = ?", (rows.tenant_key(scope),)
        )
        query = vector.astype(np.float32, copy=False)
        width = query.shape[0] * 4
        found = [(r[0], r[1]) for r in cursor if len(r[1]) == width]
        if not found:
            return []
        matrix = np.frombuffer(b"".join(blob for _, blob in found), dtype=np.float32)
        scores = matrix.reshape(len(found), -1) @ query
        order = np.argsort(-scores, kind="stable")[:limit]
        return [(found[i][0], float(scores[i])) for i in order]

    def iter_entity_texts(self, batch: int) -> Iterator[list[tuple[Scope, str, str]]]:
        """Every entity as ``(scope, id, text to embed)``, for a reindex."""
        last = 0
        conn = self._db.reader()
        while True:
            chunk = conn.execute(
                "SELECT rowid, id, user_id, scope_id, name, type FROM entities WHERE rowid > ?"
                " ORDER BY rowid LIMIT ?",
                (last, batch),
            ).fetchall()
            if not chunk:
                return
            last = int(chunk[-1]["rowid"])
            yield [
                (
                    Scope(user_id=r["user_id"], scope_id=r["scope_id"]),
                    r["id"],
                    entity_text(r["name"], r["type"]),
                )
                for r in chunk
            ]

    def neighborhood(self, scope: Scope, entity_id: str, depth: int, max_nodes: int) -> Subgraph:
        return traverse.neighborhood(self._db.reader(), scope, entity_id, depth, max_nodes)

    def neighbors(self, scope: Scope, entity_ids: Sequence[str], max_nodes: int) -> Subgraph:
        return traverse.neighbors(self._db.reader(), scope, entity_ids, max_nodes)

    def find_entities(
        self, scope: Scope, text: str, limit: int, *, contained: bool = False
    ) -> list[Entity]:
        return traverse.find_entities(self._db.reader(), scope, text, limit, contained=contained)


class SQLiteGraphWrites:
    """Writes of the knowledge graph on the transaction's connection (see ``GraphWrites``)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    # entities and relationships -------------------------------------------------------
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
        # entities_name (0006) makes the name unique per tenant; the name column is NOCASE.
        row = self._conn.execute(
            "SELECT id FROM entities WHERE user_id = ? AND scope_id = ? AND name = ?",
            (scope.user_id, scope.scope_id, name),
        ).fetchone()
        if row is None:
            entity_id = uuid.uuid4().hex
            self._conn.execute(
                "INSERT INTO entities (id, user_id, scope_id, name, type, source, last_seen_at,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (entity_id, scope.user_id, scope.scope_id, name, type_, source, at_ms, at_ms),
            )
        else:
            entity_id = str(row["id"])
            self._conn.execute(
                "UPDATE entities SET mention_count = mention_count + 1,"
                " last_seen_at = max(last_seen_at, ?),"
                " type = CASE WHEN type = 'other' THEN ? ELSE type END WHERE id = ?",
                (at_ms, type_, entity_id),
            )
        if episode_id is not None:
            self._link_episode(scope, entity_id, episode_id)
        return self._entity(scope, entity_id)

    def put_entity_vector(self, scope: Scope, entity_id: str, vector: np.ndarray) -> None:
        if self._entity_row(scope, entity_id) is None:
            return  # deleted before its embedding arrived
        self._conn.execute(
            "INSERT INTO entity_vectors (entity_id, tenant, vec) VALUES (?, ?, ?)"
            " ON CONFLICT (entity_id) DO UPDATE SET vec = excluded.vec",
            (entity_id, rows.tenant_key(scope), vector.astype(np.float32).tobytes()),
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
            if self._entity_row(scope, entity_id) is None:
                raise NotFound(f"entity {entity_id!r} not found", id=entity_id)
        new_id = uuid.uuid4().hex
        self._conn.execute(
            "INSERT INTO relationships (id, user_id, scope_id, from_id, to_id, label, notes,"
            " last_seen_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (from_id, to_id, label) DO UPDATE SET"
            " mention_count = mention_count + 1, notes = coalesce(notes, excluded.notes),"
            " last_seen_at = max(last_seen_at, excluded.last_seen_at)",
            (new_id, scope.user_id, scope.scope_id, from_id, to_id, label, notes, at_ms, at_ms),
        )
        row = self._conn.execute(
            rows.RELATIONSHIP_SELECT + " WHERE r.from_id = ? AND r.to_id = ? AND r.label = ?",
            (from_id, to_id, label),
        ).fetchone()
        return records.relationship(row)

    def delete_entity(self, scope: Scope, entity_id: str) -> None:
        """Delete an entity with its relationships, provenance and vector (by cascade)."""
        if self._entity_row(scope, entity_id) is None:
            raise NotFound(f"entity {entity_id!r} not found", id=entity_id)
        self._conn.execute("DELETE FROM entities WHERE id = ?", (entity_id,))

    def _link_episode(self, scope: Scope, entity_id: str, episode_id: str) -> None:
        """Provenance, once; only an episode of the same tenant (``NotFound`` otherwise)."""
        self._conn.execute(
            "INSERT OR IGNORE INTO entity_episodes (entity_id, episode_id) SELECT ?, id"
            " FROM episodes WHERE id = ? AND user_id = ? AND scope_id = ?",
            (entity_id, episode_id, scope.user_id, scope.scope_id),
        )
        linked = self._conn.execute(
            "SELECT 1 FROM entity_episodes WHERE entity_id = ? AND episode_id = ?",
            (entity_id, episode_id),
        ).fetchone()
        if linked is None:
            raise NotFound(f"episode {episode_id!r} not found", id=episode_id)

    def _entity_row(self, scope: Scope, entity_id: str) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self._conn.execute(
            "SELECT id FROM entities WHERE id = ? AND user_id = ? AND scope_id = ?",
            (entity_id, scope.user_id, scope.scope_id),
        ).fetchone()
        return row

    def _entity(self, scope: Scope, entity_id: str) -> Entity:
        row = self._conn.execute(
            rows.ENTITY_SELECT + " WHERE e.id = ? AND e.user_id = ? AND e.scope_id = ?",
            (entity_id, scope.user_id, scope.scope_id),
        ).fetchone()
        return rows.entity_from_row(row)
