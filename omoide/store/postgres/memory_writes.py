"""What PostgreSQL does its own way for the shared ``MemoryWrites``
(``store.sql.memory_writes``).

The full-text vector follows the memory by trigger (``memories_tsv``), in the same
transaction, built from the segmented text the writes store beside CJK text (``bulk``).
Inserts and vectors go through ``bulk``: one statement per table for a whole batch. The rows
written are counted by tenant for the maintenance after the commit (``upkeep``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from omoide.store.ports.memories import Neighbour, NewMemory
from omoide.store.postgres import bulk
from omoide.store.postgres.db import Conn
from omoide.store.postgres.shared import (
    fetch_memory,
)
from omoide.types import HistoryEvent, MemoryItem, MemoryType, Scope


class PostgresMemoryStorage:
    """PostgreSQL's part of the memory writes (see ``MemoryStorage``)."""

    vector_columns = "user_id, scope_id, memory_id, embedding"
    vector_of = "v.user_id = m.user_id AND v.memory_id = m.id"

    def __init__(self, conn: Conn) -> None:
        self._conn = conn
        # rows written by tenant, for the maintenance after the commit (``upkeep``)
        self.written: dict[tuple[str, str], int] = {}

    def _note(self, scope: Scope, rows: int = 1) -> None:
        tenant = (scope.user_id, scope.scope_id)
        self.written[tenant] = self.written.get(tenant, 0) + rows

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

    def insert(
        self,
        scope: Scope,
        news: Sequence[NewMemory],
        actor: str,
        event: HistoryEvent,
        old_text: str | None,
        vectors: np.ndarray | None = None,
    ) -> list[MemoryItem]:
        self._note(scope, len(news) * (1 if vectors is None else 2))
        return bulk.insert_memories(self._conn, scope, news, actor, event, old_text, vectors)

    def fetch(self, scope: Scope, memory_id: str) -> MemoryItem:
        return fetch_memory(self._conn, scope, memory_id)

    def changed(self, scope: Scope, memory_id: str, text: str | None) -> None:
        del memory_id, text  # the full-text vector follows by trigger
        self._note(scope)

    def text_sets(self, text: str) -> tuple[str, list[Any]]:
        return "text = ?, text_seg = ?", [text, bulk.segmented(text)]

    def vectors_of(self, scope: Scope, memory_id: str) -> tuple[str, tuple[Any, ...]]:
        return "user_id = ? AND memory_id = ?", (scope.user_id, memory_id)

    def set_context(self, scope: Scope, memory_id: str, context: str) -> None:
        self._note(scope)
        self._conn.execute(
            "UPDATE memories SET context = %s, context_seg = %s"
            " WHERE user_id = %s AND scope_id = %s AND id = %s",
            (context, bulk.segmented(context), scope.user_id, scope.scope_id, memory_id),
        )

    def put_vectors(self, scope: Scope, memory_ids: Sequence[str], vectors: np.ndarray) -> int:
        self._note(scope, len(memory_ids))
        return bulk.put_vectors(self._conn, scope, memory_ids, vectors)

    def write_vector(
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
