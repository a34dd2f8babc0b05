"""``MemoryWrites``: versions (supersede/invalidate), edits and deletes, written once.

What each backend tunes stays its own and comes in as a ``MemoryStorage``: inserting memories
(PostgreSQL's bulk statements, SQLite's loop), vectors, the full-text side of a text change
(SQLite's keyword index at commit, PostgreSQL's segmented text), the session lookup it plans its
own way. ``supersede_memory`` and ``invalidate_memory`` take the old row's lock where rows are
locked (the dialect's) before checking that it is still valid, so of two writers racing on one
version exactly one succeeds and the other gets ``Conflict`` (SQLite gets the same from its
single writer).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from omoide.errors import Conflict, InvalidInput, NotFound
from omoide.store.ports.memories import LatestTurn, Neighbour, NewMemory
from omoide.store.sql.dialect import Conn, Dialect
from omoide.store.sql.shared import write_history
from omoide.types import HistoryEvent, MemoryItem, MemoryType, Scope, now_ms


class MemoryStorage(Protocol):
    """The memory writes a backend does its own way, on the transaction's connection."""

    def insert(
        self,
        scope: Scope,
        news: Sequence[NewMemory],
        actor: str,
        event: HistoryEvent,
        old_text: str | None,
        vectors: np.ndarray | None = None,
    ) -> list[MemoryItem]:
        """Insert ``news`` in order with their source links and one history entry each, and
        ``vectors`` (row ``i`` for ``news[i]``) if given: then the items are embedded."""
        ...

    def fetch(self, scope: Scope, memory_id: str) -> MemoryItem:
        """One memory of ``scope`` (valid or not); ``NotFound`` if it is not the tenant's."""
        ...

    def changed(self, scope: Scope, memory_id: str, text: str | None) -> None:
        """The memory was edited (``text``: its new text, if that changed) or deleted."""
        ...

    def text_sets(self, text: str) -> tuple[str, list[Any]]:
        """The ``SET`` assignments (``?`` placeholders) that store a new text, and values."""
        ...

    def vectors_of(self, scope: Scope, memory_id: str) -> tuple[str, tuple[Any, ...]]:
        """The condition on ``memory_vectors`` / ``vector_rebuild`` rows of one memory."""
        ...

    def write_vector(
        self, table: str, scope: Scope, memory_id: str, vector: np.ndarray, text: str | None
    ) -> bool: ...

    def put_vectors(self, scope: Scope, memory_ids: Sequence[str], vectors: np.ndarray) -> int: ...

    #: The columns ``memory_vectors`` and ``vector_rebuild`` share.
    vector_columns: str
    #: The condition that ``memory_vectors v`` holds the vector of ``memories m``.
    vector_of: str

    def last_in_session(
        self, scope: Scope, session_id: str, type_: MemoryType
    ) -> Neighbour | None: ...

    def set_context(self, scope: Scope, memory_id: str, context: str) -> None: ...


S = TypeVar("S", bound=MemoryStorage)


class SQLMemoryWrites(Generic[S]):
    """Writes of memories on the transaction's connection (see ``MemoryWrites``); ``own`` is
    the backend's part (the store reaches it after the transaction: its index, its upkeep)."""

    def __init__(self, conn: Conn, dialect: Dialect, own: S) -> None:
        self._conn = conn
        self._d = dialect
        self.own = own

    def insert_memory(self, scope: Scope, new: NewMemory, actor: str) -> MemoryItem:
        return self.own.insert(scope, [new], actor, HistoryEvent.ADD, None)[0]

    def insert_memories(
        self,
        scope: Scope,
        news: Sequence[NewMemory],
        actor: str,
        vectors: np.ndarray | None = None,
    ) -> list[MemoryItem]:
        if vectors is not None and len(vectors) != len(news):
            raise InvalidInput(f"{len(vectors)} vectors for {len(news)} memories")
        return self.own.insert(scope, news, actor, HistoryEvent.ADD, None, vectors)

    def supersede_memory(
        self, scope: Scope, old_id: str, new: NewMemory, at_ms: int, actor: str
    ) -> MemoryItem:
        old_text, valid_from = self._valid_memory(scope, old_id)
        at_ms = max(at_ms, valid_from)
        self._invalidate(scope, old_id, at_ms)
        new.supersedes, new.valid_from_ms = old_id, at_ms
        return self.own.insert(scope, [new], actor, HistoryEvent.UPDATE, old_text)[0]

    def invalidate_memory(self, scope: Scope, memory_id: str, at_ms: int, actor: str) -> MemoryItem:
        old_text, valid_from = self._valid_memory(scope, memory_id)
        self._invalidate(scope, memory_id, max(at_ms, valid_from))
        self._history(scope, memory_id, HistoryEvent.DELETE, old_text, None, actor)
        return self.own.fetch(scope, memory_id)

    def last_in_session(self, scope: Scope, session_id: str, type_: MemoryType) -> Neighbour | None:
        return self.own.last_in_session(scope, session_id, type_)

    def latest_turn(self, scope: Scope, type_: MemoryType) -> LatestTurn | None:
        # memories_type (user_id, scope_id, type, created_at) serves the order: one index step
        row = self._conn.execute(
            self._d.sql(
                "SELECT m.id, m.text, m.context, m.created_at, s.external_id FROM memories m"
                " LEFT JOIN sessions s ON s.user_id = m.user_id AND s.id = m.session_id"
                " WHERE m.user_id = ? AND m.scope_id = ? AND m.type = ?"
                " ORDER BY m.created_at DESC, m.seq DESC LIMIT 1"
            ),
            (scope.user_id, scope.scope_id, type_.value),
        ).fetchone()
        if row is None:
            return None
        return LatestTurn(
            row["id"], row["text"], row["context"], row["external_id"], int(row["created_at"])
        )

    def set_context(self, scope: Scope, memory_id: str, context: str) -> None:
        self.own.set_context(scope, memory_id, context)

    def update_memory(
        self,
        scope: Scope,
        memory_id: str,
        text: str | None,
        metadata: dict[str, Any] | None,
        actor: str,
    ) -> MemoryItem:
        d = self._d
        old = self.own.fetch(scope, memory_id)
        sets: list[str] = ["updated_at = ?"]
        params: list[Any] = [now_ms()]
        if text is not None:
            assignments, values = self.own.text_sets(text)
            sets.append(assignments)
            params += values
        if metadata is not None:
            sets.append(f"metadata = {d.json_param}")
            params.append(d.dump_json(metadata))
        self._conn.execute(
            d.sql(f"UPDATE memories SET {', '.join(sets)} WHERE user_id = ? AND id = ?"),
            (*params, scope.user_id, memory_id),
        )
        edited = text is not None and text != old.text
        self.own.changed(scope, memory_id, text if edited else None)
        if edited:  # the old vectors describe the old text
            where, args = self.own.vectors_of(scope, memory_id)
            for table in ("memory_vectors", "vector_rebuild"):
                self._conn.execute(d.sql(f"DELETE FROM {table} WHERE {where}"), args)
        new_text = text or old.text
        self._history(scope, memory_id, HistoryEvent.UPDATE, old.text, new_text, actor)
        return self.own.fetch(scope, memory_id)

    def delete_memory(self, scope: Scope, memory_id: str, actor: str) -> None:
        old = self.own.fetch(scope, memory_id)
        self.own.changed(scope, memory_id, None)
        self._conn.execute(  # cascades to sources and vector
            self._d.sql("DELETE FROM memories WHERE user_id = ? AND id = ?"),
            (scope.user_id, memory_id),
        )
        self._history(scope, memory_id, HistoryEvent.DELETE, old.text, None, actor)

    def put_vector(
        self, scope: Scope, memory_id: str, vector: np.ndarray, text: str | None = None
    ) -> bool:
        return self.own.write_vector("memory_vectors", scope, memory_id, vector, text)

    def put_vectors(self, scope: Scope, memory_ids: Sequence[str], vectors: np.ndarray) -> int:
        return self.own.put_vectors(scope, memory_ids, vectors)

    def stage_vector(self, scope: Scope, memory_id: str, vector: np.ndarray, text: str) -> bool:
        return self.own.write_vector("vector_rebuild", scope, memory_id, vector, text)

    def clear_staged_vectors(self) -> None:
        self._conn.execute("DELETE FROM vector_rebuild")

    def swap_staged_vectors(self) -> list[tuple[Scope, str]]:
        columns = self.own.vector_columns
        self._conn.execute("DELETE FROM memory_vectors")
        self._conn.execute(
            f"INSERT INTO memory_vectors ({columns}) SELECT {columns} FROM vector_rebuild"
        )
        self._conn.execute("DELETE FROM vector_rebuild")
        missing = self._conn.execute(
            "SELECT m.id, m.user_id, m.scope_id FROM memories m WHERE NOT EXISTS"
            f" (SELECT 1 FROM memory_vectors v WHERE {self.own.vector_of}) ORDER BY m.seq"
        ).fetchall()
        return [(Scope(user_id=r["user_id"], scope_id=r["scope_id"]), r["id"]) for r in missing]

    def clear_vectors(self) -> None:
        self._conn.execute("DELETE FROM memory_vectors")
        self._conn.execute("DELETE FROM entity_vectors")

    def _invalidate(self, scope: Scope, memory_id: str, at_ms: int) -> None:
        """Set ``invalid_at`` (the row stays for ``as_of`` queries and its history)."""
        self._conn.execute(
            self._d.sql(
                "UPDATE memories SET invalid_at = ?, updated_at = ?"
                " WHERE user_id = ? AND scope_id = ? AND id = ?"
            ),
            (at_ms, now_ms(), scope.user_id, scope.scope_id, memory_id),
        )

    def _valid_memory(self, scope: Scope, memory_id: str) -> tuple[str, int]:
        """The text and ``valid_from`` (ms) of a currently valid memory of ``scope``, row-locked
        until the transaction ends where rows are locked."""
        row = self._conn.execute(
            self._d.sql(
                "SELECT text, valid_from, invalid_at FROM memories"
                " WHERE user_id = ? AND scope_id = ? AND id = ?"
            )
            + self._d.row_lock,
            (scope.user_id, scope.scope_id, memory_id),
        ).fetchone()
        if row is None:
            raise NotFound(f"memory {memory_id!r} not found", id=memory_id)
        if row["invalid_at"] is not None:
            raise Conflict(f"memory {memory_id!r} is no longer valid", id=memory_id)
        return str(row["text"]), int(row["valid_from"])

    def _history(
        self,
        scope: Scope,
        memory_id: str,
        event: HistoryEvent,
        old: str | None,
        new: str | None,
        actor: str,
    ) -> None:
        write_history(self._conn, self._d, scope, memory_id, event, old, new, actor)
