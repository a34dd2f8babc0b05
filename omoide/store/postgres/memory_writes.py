"""PostgreSQL ``MemoryWrites``: inserts, versions (supersede/invalidate), edits, vectors.

The full-text vector follows the memory by trigger (``memories_tsv``), in the same
transaction, built from the segmented text the writes store beside CJK text (``bulk``).
Inserts and vectors go through ``bulk``: one statement per table for a whole batch.
``supersede_memory`` and ``invalidate_memory`` lock the old row before checking that it is
still valid, so of two writers racing on one version exactly one succeeds and the other gets
``Conflict`` (SQLite gets the same from its single writer).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from omoide.errors import Conflict, NotFound
from omoide.store.ports.memories import LatestTurn, Neighbour, NewMemory
from omoide.store.postgres import bulk
from omoide.store.postgres.db import Conn
from omoide.store.postgres.shared import (
    fetch_memory,
    invalidate_row,
    jsonb,
    write_history,
)
from omoide.types import HistoryEvent, MemoryItem, MemoryType, Scope, now_ms


class PostgresMemoryWrites:
    """Writes of memories on the transaction's connection (see ``MemoryWrites``)."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn
        # rows written by tenant, for the maintenance after the commit (``upkeep``)
        self.written: dict[tuple[str, str], int] = {}

    def _note(self, scope: Scope, rows: int = 1) -> None:
        tenant = (scope.user_id, scope.scope_id)
        self.written[tenant] = self.written.get(tenant, 0) + rows

    def insert_memory(self, scope: Scope, new: NewMemory, actor: str) -> MemoryItem:
        return self._insert(scope, new, actor, HistoryEvent.ADD, None)

    def insert_memories(
        self, scope: Scope, news: Sequence[NewMemory], actor: str
    ) -> list[MemoryItem]:
        self._note(scope, len(news))
        return bulk.insert_memories(self._conn, scope, news, actor)

    def supersede_memory(
        self, scope: Scope, old_id: str, new: NewMemory, at_ms: int, actor: str
    ) -> MemoryItem:
        old_text, valid_from = self._valid_memory(scope, old_id)
        at_ms = max(at_ms, valid_from)
        invalidate_row(self._conn, scope, old_id, at_ms)
        new.supersedes, new.valid_from_ms = old_id, at_ms
        return self._insert(scope, new, actor, HistoryEvent.UPDATE, old_text)

    def invalidate_memory(self, scope: Scope, memory_id: str, at_ms: int, actor: str) -> MemoryItem:
        old_text, valid_from = self._valid_memory(scope, memory_id)
        invalidate_row(self._conn, scope, memory_id, max(at_ms, valid_from))
        write_history(self._conn, scope, memory_id, HistoryEvent.DELETE, old_text, None, actor)
        return fetch_memory(self._conn, scope, memory_id)

    def last_in_session(self, scope: Scope, session_id: str, type_: MemoryType) -> Neighbour | None:
        # The session as a scalar subquery, not a join: the generic plan psycopg's prepared
        # statement gets after a few calls then still walks memories_session backwards (a join
        # was planned as a scan of the tenant's whole type index: 6 ms a call at 5k rows).
        row = self._conn.execute(
            "SELECT m.id, m.text, m.context FROM memories m"
            " WHERE m.user_id = %s AND m.session_id = (SELECT s.id FROM sessions s"
            " WHERE s.user_id = %s AND s.scope_id = %s AND s.external_id = %s) AND m.type = %s"
            " ORDER BY m.seq DESC LIMIT 1",
            (scope.user_id, scope.user_id, scope.scope_id, session_id, type_.value),
        ).fetchone()
        return None if row is None else Neighbour(row["id"], row["text"], row["context"])

    def latest_turn(self, scope: Scope, type_: MemoryType) -> LatestTurn | None:
        # memories_type (user_id, scope_id, type, created_at) serves the order: one index step
        row = self._conn.execute(
            "SELECT m.id, m.text, m.context, m.created_at, s.external_id FROM memories m"
            " LEFT JOIN sessions s ON s.user_id = m.user_id AND s.id = m.session_id"
            " WHERE m.user_id = %s AND m.scope_id = %s AND m.type = %s"
            " ORDER BY m.created_at DESC, m.seq DESC LIMIT 1",
            (scope.user_id, scope.scope_id, type_.value),
        ).fetchone()
        if row is None:
            return None
        return LatestTurn(
            row["id"], row["text"], row["context"], row["external_id"], int(row["created_at"])
        )

    def set_context(self, scope: Scope, memory_id: str, context: str) -> None:
        self._note(scope)
        self._conn.execute(
            "UPDATE memories SET context = %s, context_seg = %s"
            " WHERE user_id = %s AND scope_id = %s AND id = %s",
            (context, bulk.segmented(context), scope.user_id, scope.scope_id, memory_id),
        )

    def update_memory(
        self,
        scope: Scope,
        memory_id: str,
        text: str | None,
        metadata: dict[str, Any] | None,
        actor: str,
    ) -> MemoryItem:
        self._note(scope)
        old = fetch_memory(self._conn, scope, memory_id)
        sets: list[str] = ["updated_at = %s"]
        params: list[Any] = [now_ms()]
        if text is not None:
            sets.append("text = %s, text_seg = %s")
            params.extend((text, bulk.segmented(text)))
        if metadata is not None:
            sets.append("metadata = %s::jsonb")
            params.append(jsonb(metadata))
        self._conn.execute(
            f"UPDATE memories SET {', '.join(sets)} WHERE user_id = %s AND id = %s",
            (*params, scope.user_id, memory_id),
        )
        if text is not None and text != old.text:  # the old vectors describe the old text
            for table in ("memory_vectors", "vector_rebuild"):
                self._conn.execute(
                    f"DELETE FROM {table} WHERE user_id = %s AND memory_id = %s",
                    (scope.user_id, memory_id),
                )
        new_text = text or old.text
        write_history(self._conn, scope, memory_id, HistoryEvent.UPDATE, old.text, new_text, actor)
        return fetch_memory(self._conn, scope, memory_id)

    def delete_memory(self, scope: Scope, memory_id: str, actor: str) -> None:
        self._note(scope)
        old = fetch_memory(self._conn, scope, memory_id)
        self._conn.execute(  # cascades to sources and vector
            "DELETE FROM memories WHERE user_id = %s AND id = %s", (scope.user_id, memory_id)
        )
        write_history(self._conn, scope, memory_id, HistoryEvent.DELETE, old.text, None, actor)

    def put_vector(
        self, scope: Scope, memory_id: str, vector: np.ndarray, text: str | None = None
    ) -> bool:
        return self._write_vector("memory_vectors", scope, memory_id, vector, text)

    def put_vectors(self, scope: Scope, memory_ids: Sequence[str], vectors: np.ndarray) -> int:
        self._note(scope, len(memory_ids))
        return bulk.put_vectors(self._conn, scope, memory_ids, vectors)

    def stage_vector(self, scope: Scope, memory_id: str, vector: np.ndarray, text: str) -> bool:
        return self._write_vector("vector_rebuild", scope, memory_id, vector, text)

    def clear_staged_vectors(self) -> None:
        self._conn.execute("DELETE FROM vector_rebuild")

    def swap_staged_vectors(self) -> list[tuple[Scope, str]]:
        self._conn.execute("DELETE FROM memory_vectors")
        self._conn.execute(
            "INSERT INTO memory_vectors (user_id, scope_id, memory_id, embedding)"
            " SELECT user_id, scope_id, memory_id, embedding FROM vector_rebuild"
        )
        self._conn.execute("DELETE FROM vector_rebuild")
        missing = self._conn.execute(
            "SELECT m.id, m.user_id, m.scope_id FROM memories m WHERE NOT EXISTS"
            " (SELECT 1 FROM memory_vectors v WHERE v.user_id = m.user_id AND v.memory_id = m.id)"
            " ORDER BY m.seq"
        ).fetchall()
        return [(Scope(user_id=r["user_id"], scope_id=r["scope_id"]), r["id"]) for r in missing]

    def _write_vector(
        self, table: str, scope: Scope, memory_id: str, vector: np.ndarray, text: str | None
    ) -> bool:
        # INSERT ... SELECT inside the writer's transaction: nothing when the memory was
        # deleted, or its text changed (an update() committed after the vector was computed),
        # since the vector was computed.
        self._note(scope)
        cursor = self._conn.execute(
            f"INSERT INTO {table} (user_id, scope_id, memory_id, embedding)"
            " SELECT user_id, scope_id, id, %s FROM memories"
            " WHERE user_id = %s AND scope_id = %s AND id = %s"
            " AND (%s::text IS NULL OR text = %s::text)"
            " ON CONFLICT (user_id, memory_id) DO UPDATE SET embedding = excluded.embedding",
            (vector.astype(np.float32), scope.user_id, scope.scope_id, memory_id, text, text),
        )
        return cursor.rowcount > 0

    def clear_vectors(self) -> None:
        self._conn.execute("DELETE FROM memory_vectors")
        self._conn.execute("DELETE FROM entity_vectors")

    def _valid_memory(self, scope: Scope, memory_id: str) -> tuple[str, int]:
        """The text and ``valid_from`` of a currently valid memory of ``scope``, row-locked
        until the transaction ends."""
        row = self._conn.execute(
            "SELECT text, valid_from, invalid_at FROM memories"
            " WHERE user_id = %s AND scope_id = %s AND id = %s FOR UPDATE",
            (scope.user_id, scope.scope_id, memory_id),
        ).fetchone()
        if row is None:
            raise NotFound(f"memory {memory_id!r} not found", id=memory_id)
        if row["invalid_at"] is not None:
            raise Conflict(f"memory {memory_id!r} is no longer valid", id=memory_id)
        return str(row["text"]), int(row["valid_from"])

    def _insert(
        self, scope: Scope, new: NewMemory, actor: str, event: HistoryEvent, old_text: str | None
    ) -> MemoryItem:
        self._note(scope)
        return bulk.insert_memories(self._conn, scope, [new], actor, event, old_text)[0]
