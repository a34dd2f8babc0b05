"""Writes of one unit of work on SQLite. Created only by ``SQLiteStore.transaction()``."""

from __future__ import annotations

import json
import sqlite3
import uuid
from typing import Any

import numpy as np

from omoide.errors import Conflict, InvalidInput, NotFound
from omoide.store.protocol import Neighbour, NewMemory, SessionPatch
from omoide.store.sqlite import rows
from omoide.store.sqlite.consolidation import ConsolidationTxMixin
from omoide.store.sqlite.graph import GraphTxMixin
from omoide.store.sqlite.ledger import LedgerTxMixin
from omoide.store.sqlite.projects import ProjectsTxMixin
from omoide.types import (
    Episode,
    HistoryEvent,
    MemoryItem,
    MemoryType,
    Message,
    Project,
    Scope,
    Session,
    now_ms,
)


class SQLiteTx(GraphTxMixin, LedgerTxMixin, ConsolidationTxMixin, ProjectsTxMixin):
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        # Each port is this object until the ports are split into their own classes.
        self.memories = self.sessions = self.jobs = self.graph = self
        self.ledger = self.variables = self.admin = self

    # sessions and projects -------------------------------------------------------------
    def _session_row(self, scope: Scope, session_id: str) -> sqlite3.Row | None:
        return self.conn.execute(
            rows.SESSION_SELECT + " WHERE s.user_id = ? AND s.scope_id = ? AND s.external_id = ?",
            (scope.user_id, scope.scope_id, session_id),
        ).fetchone()

    def _session_pk(self, scope: Scope, session_id: str) -> int:
        row = self._session_row(scope, session_id)
        if row is None:
            raise NotFound(f"session {session_id!r} not found", id=session_id)
        return int(row["id"])

    def ensure_session(self, scope: Scope, session_id: str) -> Session:
        row = self._session_row(scope, session_id)
        if row is not None:
            return rows.session_from_row(row)
        return self.create_session(scope, session_id, None, None, {})

    def create_session(
        self,
        scope: Scope,
        session_id: str,
        name: str | None,
        project: str | None,
        metadata: dict[str, Any],
    ) -> Session:
        if not session_id:
            raise InvalidInput("session id must not be empty")
        project_pk = self._project_pk(scope, project) if project else None
        ts = now_ms()
        try:
            self.conn.execute(
                "INSERT INTO sessions (user_id, scope_id, external_id, name, project_id, metadata,"
                " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    scope.user_id,
                    scope.scope_id,
                    session_id,
                    name,
                    project_pk,
                    json.dumps(metadata),
                    ts,
                    ts,
                ),
            )
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"session {session_id!r} already exists", id=session_id) from exc
        row = self._session_row(scope, session_id)
        assert row is not None
        return rows.session_from_row(row)

    def update_session(self, scope: Scope, session_id: str, patch: SessionPatch) -> Session:
        pk = self._session_pk(scope, session_id)
        sets, params = ["updated_at = ?"], [now_ms()]
        if patch.name is not None:
            sets.append("name = ?")
            params.append(patch.name)
        if patch.project is not None:
            sets.append("project_id = ?")
            params.append(self._project_pk(scope, patch.project) if patch.project else None)
        if patch.metadata is not None:
            sets.append("metadata = ?")
            params.append(json.dumps(patch.metadata))
        self.conn.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", (*params, pk))
        row = self._session_row(scope, session_id)
        assert row is not None
        return rows.session_from_row(row)

    def delete_session(self, scope: Scope, session_id: str) -> int:
        pk = self._session_pk(scope, session_id)
        count = self.conn.execute(
            "SELECT count(*) FROM memories WHERE session_id = ?", (pk,)
        ).fetchone()[0]
        self.conn.execute(
            "DELETE FROM history WHERE memory_id IN (SELECT id FROM memories WHERE session_id = ?)",
            (pk,),
        )
        self.conn.execute("DELETE FROM sessions WHERE id = ?", (pk,))  # cascades
        return int(count)

    def _project_pk(self, scope: Scope, name: str) -> int:
        row = self.conn.execute(
            "SELECT id FROM projects WHERE user_id = ? AND scope_id = ? AND name = ?",
            (scope.user_id, scope.scope_id, name),
        ).fetchone()
        if row is not None:
            return int(row["id"])
        cur = self.conn.execute(
            "INSERT INTO projects (user_id, scope_id, name, created_at) VALUES (?, ?, ?, ?)",
            (scope.user_id, scope.scope_id, name, now_ms()),
        )
        return int(cur.lastrowid or 0)

    def upsert_project(
        self, scope: Scope, name: str, description: str | None, isolated: bool
    ) -> Project:
        ts = now_ms()
        self.conn.execute(
            "INSERT INTO projects (user_id, scope_id, name, description, isolated, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, scope_id, name) DO UPDATE SET"
            " description = coalesce(excluded.description, description),"
            " isolated = excluded.isolated",
            (scope.user_id, scope.scope_id, name, description, int(isolated), ts),
        )
        row = self.conn.execute(
            "SELECT * FROM projects WHERE user_id = ? AND scope_id = ? AND name = ?",
            (scope.user_id, scope.scope_id, name),
        ).fetchone()
        return Project(
            name=row["name"],
            user_id=row["user_id"],
            scope_id=row["scope_id"],
            description=row["description"],
            isolated=bool(row["isolated"]),
            created_at=rows.ms_to_dt(row["created_at"]),
        )

    # episodes and memories --------------------------------------------------------------
    def insert_episode(self, scope: Scope, session_id: str, messages: list[Message]) -> Episode:
        pk = self._session_pk(scope, session_id)
        episode_id = uuid.uuid4().hex
        self.conn.execute(
            "INSERT INTO episodes (id, session_id, user_id, scope_id, messages, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (
                episode_id,
                pk,
                scope.user_id,
                scope.scope_id,
                json.dumps([m.model_dump() for m in messages]),
                now_ms(),
            ),
        )
        row = self.conn.execute("SELECT * FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        return rows.episode_from_row(row, session_id)

    def insert_memory(self, scope: Scope, new: NewMemory, actor: str) -> MemoryItem:
        return self._insert_memory(scope, new, actor, HistoryEvent.ADD, None)

    def supersede_memory(
        self, scope: Scope, old_id: str, new: NewMemory, at_ms: int, actor: str
    ) -> MemoryItem:
        """Invalidate ``old_id`` at ``at_ms`` and insert ``new`` as its next version.

        Nothing is erased: the old memory stays (``as_of`` finds it) and one UPDATE history
        entry on the new memory records both texts. ``Conflict`` if the old one is no longer
        valid (someone else superseded it first).
        """
        old_text, valid_from = self._valid_memory(scope, old_id)
        at_ms = max(at_ms, valid_from)
        self._set_invalid(old_id, at_ms)
        new.supersedes, new.valid_from_ms = old_id, at_ms
        return self._insert_memory(scope, new, actor, HistoryEvent.UPDATE, old_text)

    def invalidate_memory(self, scope: Scope, memory_id: str, at_ms: int, actor: str) -> MemoryItem:
        """Mark a memory no longer true from ``at_ms`` on, recorded as a DELETE in its history;
        the row stays for ``as_of`` queries. ``Conflict`` if it is already invalid."""
        old_text, valid_from = self._valid_memory(scope, memory_id)
        self._set_invalid(memory_id, max(at_ms, valid_from))
        self._history(scope, memory_id, HistoryEvent.DELETE, old_text, None, actor)
        return self._memory(scope, memory_id)

    def _valid_memory(self, scope: Scope, memory_id: str) -> tuple[str, int]:
        """The text and ``valid_from`` (ms) of a currently valid memory of ``scope``."""
        row = self.conn.execute(
            "SELECT text, valid_from, invalid_at FROM memories"
            " WHERE id = ? AND user_id = ? AND scope_id = ?",
            (memory_id, scope.user_id, scope.scope_id),
        ).fetchone()
        if row is None:
            raise NotFound(f"memory {memory_id!r} not found", id=memory_id)
        if row["invalid_at"] is not None:
            raise Conflict(f"memory {memory_id!r} is no longer valid", id=memory_id)
        return row["text"], int(row["valid_from"])

    def _set_invalid(self, memory_id: str, at_ms: int) -> None:
        self.conn.execute(
            "UPDATE memories SET invalid_at = ?, updated_at = ? WHERE id = ?",
            (at_ms, now_ms(), memory_id),
        )

    def _insert_memory(
        self, scope: Scope, new: NewMemory, actor: str, event: HistoryEvent, old_text: str | None
    ) -> MemoryItem:
        ts = now_ms()
        created = new.created_at_ms or ts
        session_pk = self._session_pk(scope, new.session_id) if new.session_id else None
        memory_id = uuid.uuid4().hex
        cur = self.conn.execute(
            "INSERT INTO memories (id, user_id, scope_id, session_id, type, text, context,"
            " tenant_token, metadata, valid_from, supersedes, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                memory_id,
                scope.user_id,
                scope.scope_id,
                session_pk,
                new.type.value,
                new.text,
                new.context,
                rows.tenant_token(scope),
                json.dumps(new.metadata),
                new.valid_from_ms or created,
                new.supersedes,
                created,
                ts,
            ),
        )
        seq = cur.lastrowid
        for episode_id in new.source_episodes:
            self.conn.execute(
                "INSERT INTO memory_sources (memory_seq, episode_id) VALUES (?, ?)",
                (seq, episode_id),
            )
        self._history(scope, memory_id, event, old_text, new.text, actor)
        return self._memory(scope, memory_id)

    def last_in_session(self, scope: Scope, session_id: str, type_: MemoryType) -> Neighbour | None:
        row = self.conn.execute(
            "SELECT m.id, m.text, m.context FROM memories m JOIN sessions s ON s.id = m.session_id"
            " WHERE s.user_id = ? AND s.scope_id = ? AND s.external_id = ? AND m.type = ?"
            " ORDER BY m.seq DESC LIMIT 1",
            (scope.user_id, scope.scope_id, session_id, type_.value),
        ).fetchone()
        return None if row is None else Neighbour(row["id"], row["text"], row["context"])

    def set_context(self, scope: Scope, memory_id: str, context: str) -> None:
        self.conn.execute(
            "UPDATE memories SET context = ? WHERE id = ? AND user_id = ? AND scope_id = ?",
            (context, memory_id, scope.user_id, scope.scope_id),
        )

    def update_memory(
        self,
        scope: Scope,
        memory_id: str,
        text: str | None,
        metadata: dict[str, Any] | None,
        actor: str,
    ) -> MemoryItem:
        old = self._memory(scope, memory_id)
        sets, params = ["updated_at = ?"], [now_ms()]
        if text is not None:
            sets.append("text = ?")
            params.append(text)
        if metadata is not None:
            sets.append("metadata = ?")
            params.append(json.dumps(metadata))
        self.conn.execute(
            f"UPDATE memories SET {', '.join(sets)} WHERE id = ?", (*params, memory_id)
        )
        if text is not None and text != old.text:
            self.conn.execute(
                "DELETE FROM memory_vectors"
                " WHERE memory_seq = (SELECT seq FROM memories WHERE id = ?)",
                (memory_id,),
            )
        self._history(scope, memory_id, HistoryEvent.UPDATE, old.text, text or old.text, actor)
        return self._memory(scope, memory_id)

    def delete_memory(self, scope: Scope, memory_id: str, actor: str) -> None:
        old = self._memory(scope, memory_id)
        self.conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))  # cascades
        self._history(scope, memory_id, HistoryEvent.DELETE, old.text, None, actor)

    def delete_scope(self, scope: Scope) -> int:
        args = (scope.user_id, scope.scope_id)
        count = self.conn.execute(
            "SELECT count(*) FROM memories WHERE user_id = ? AND scope_id = ?", args
        ).fetchone()[0]
        tables = ("memories", "sessions", "projects", "history", "jobs", "entities", "variables")
        for table in (*tables, "token_usage"):
            self.conn.execute(f"DELETE FROM {table} WHERE user_id = ? AND scope_id = ?", args)
        return int(count)

    def delete_everything(self) -> None:
        tables = ("memories", "episodes", "sessions", "projects", "history", "jobs", "meta")
        for table in (*tables, "entities", "variables", "token_usage"):
            self.conn.execute(f"DELETE FROM {table}")

    def put_vector(self, scope: Scope, memory_id: str, vector: np.ndarray) -> None:
        row = self.conn.execute(
            "SELECT seq FROM memories WHERE id = ? AND user_id = ? AND scope_id = ?",
            (memory_id, scope.user_id, scope.scope_id),
        ).fetchone()
        if row is None:
            return  # deleted before its embedding arrived: nothing to index
        self.conn.execute(
            "INSERT INTO memory_vectors (memory_seq, tenant, vec) VALUES (?, ?, ?)"
            " ON CONFLICT (memory_seq) DO UPDATE SET vec = excluded.vec",
            (row["seq"], rows.tenant_key(scope), vector.astype(np.float32).tobytes()),
        )

    def clear_vectors(self) -> None:
        self.conn.execute("DELETE FROM memory_vectors")
        self.conn.execute("DELETE FROM entity_vectors")

    # jobs and meta --------------------------------------------------------------------
    def enqueue_job(
        self, scope: Scope, kind: str, payload: dict[str, Any], max_attempts: int = 5
    ) -> int:
        ts = now_ms()
        cur = self.conn.execute(
            "INSERT INTO jobs (kind, user_id, scope_id, payload, max_attempts, run_after,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (kind, scope.user_id, scope.scope_id, json.dumps(payload), max_attempts, ts, ts, ts),
        )
        return int(cur.lastrowid or 0)

    def finish_job(self, job_id: int, result: dict[str, Any] | None = None) -> None:
        self.conn.execute(
            "UPDATE jobs SET state = 'done', lease_until = NULL, updated_at = ?,"
            " result = coalesce(?, result) WHERE id = ?",
            (now_ms(), None if result is None else json.dumps(result), job_id),
        )

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE"
            " SET value = excluded.value",
            (key, value),
        )

    # helpers --------------------------------------------------------------------------
    def _memory(self, scope: Scope, memory_id: str) -> MemoryItem:
        row = self.conn.execute(
            f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM}"
            " WHERE m.id = ? AND m.user_id = ? AND m.scope_id = ?",
            (memory_id, scope.user_id, scope.scope_id),
        ).fetchone()
        if row is None:
            raise NotFound(f"memory {memory_id!r} not found", id=memory_id)
        return rows.memory_from_row(row)

    def _history(
        self,
        scope: Scope,
        memory_id: str,
        event: HistoryEvent,
        old: str | None,
        new: str | None,
        actor: str,
    ) -> None:
        self.conn.execute(
            "INSERT INTO history (memory_id, user_id, scope_id, event, old_text, new_text, actor,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (memory_id, scope.user_id, scope.scope_id, event.value, old, new, actor, now_ms()),
        )
