"""SQLite ``SessionReads`` / ``SessionWrites``: sessions, their episodes, and projects.

Sessions are addressed by ``(user_id, scope_id, external_id)``; other tables point at their row
id. Deleting a session cascades (schema.sql) to its episodes, memories and chunk ledger; the
history of its memories is deleted explicitly (history rows have no foreign key, so a deleted
memory's audit trail normally survives it).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from omoide.errors import Conflict, InvalidInput, NotFound
from omoide.store.ports.sessions import SessionPatch
from omoide.store.sql import projects
from omoide.store.sqlite import cipher, rows
from omoide.store.sqlite.db import Database, snapshot
from omoide.store.sqlite.dialect import SQLITE
from omoide.store.sqlite.shared import session_pk, session_row
from omoide.types import Episode, Message, Project, Scope, Session, now_ms


class SQLiteSessionReads:
    """Reads of sessions, episodes and projects on reader connections."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get_session(self, scope: Scope, session_id: str) -> Session:
        row = session_row(self._db.reader(), scope, session_id)
        if row is None:
            raise NotFound(f"session {session_id!r} not found", id=session_id)
        return rows.session_from_row(row)

    def list_sessions(self, scope: Scope, limit: int, offset: int) -> tuple[list[Session], int]:
        args = (scope.user_id, scope.scope_id)
        with snapshot(self._db.reader()) as conn:  # the page and its total from one state
            total = conn.execute(
                "SELECT count(*) FROM sessions WHERE user_id = ? AND scope_id = ?", args
            ).fetchone()[0]
            found = conn.execute(
                rows.SESSION_SELECT + " WHERE s.user_id = ? AND s.scope_id = ?"
                " ORDER BY s.created_at DESC, s.id DESC LIMIT ? OFFSET ?",
                (*args, limit, offset),
            ).fetchall()
        return [rows.session_from_row(r) for r in found], int(total)

    def list_episodes(
        self, scope: Scope, session_id: str, limit: int, offset: int
    ) -> tuple[list[Episode], int]:
        with snapshot(self._db.reader()) as conn:
            pk = session_pk(conn, scope, session_id)
            total = conn.execute("SELECT count(*) FROM episodes WHERE session_id = ?", (pk,))
            count = int(total.fetchone()[0])
            found = conn.execute(
                "SELECT * FROM episodes WHERE session_id = ? ORDER BY created_at, rowid"
                " LIMIT ? OFFSET ?",
                (pk, limit, offset),
            ).fetchall()
        return [rows.episode_from_row(r, session_id) for r in found], count

    def get_episode(self, scope: Scope, episode_id: str) -> Episode:
        row = (
            self._db.reader()
            .execute(
                "SELECT e.*, s.external_id AS session_ext FROM episodes e"
                " JOIN sessions s ON s.id = e.session_id"
                " WHERE e.id = ? AND e.user_id = ? AND e.scope_id = ?",
                (episode_id, scope.user_id, scope.scope_id),
            )
            .fetchone()
        )
        if row is None:
            raise NotFound(f"episode {episode_id!r} not found", id=episode_id)
        return rows.episode_from_row(row, row["session_ext"])

    def get_project(self, scope: Scope, name: str) -> Project:
        with self._db.read() as conn:
            return projects.project(projects.fetch(conn, SQLITE, scope, name))

    def list_projects(self, scope: Scope, limit: int, offset: int) -> tuple[list[Project], int]:
        with self._db.read() as conn:
            return projects.list_projects(conn, SQLITE, scope, limit, offset)


class SQLiteSessionWrites:
    """Writes of sessions, episodes and projects on the transaction's connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def ensure_session(self, scope: Scope, session_id: str) -> Session:
        row = session_row(self._conn, scope, session_id)
        if row is not None:
            return rows.session_from_row(row)
        return self.create_session(scope, session_id, None, None, {})

    def ensure_sessions(self, scope: Scope, session_ids: Sequence[str]) -> None:
        for session_id in session_ids:  # in-process: a statement costs no round trip
            self.ensure_session(scope, session_id)

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
        project_pk = projects.project_pk(self._conn, SQLITE, scope, project) if project else None
        ts = now_ms()
        try:
            self._conn.execute(
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
        except cipher.IntegrityError as exc:
            raise Conflict(f"session {session_id!r} already exists", id=session_id) from exc
        return self._session(scope, session_id)

    def update_session(self, scope: Scope, session_id: str, patch: SessionPatch) -> Session:
        pk = session_pk(self._conn, scope, session_id)
        sets: list[str] = ["updated_at = ?"]
        params: list[Any] = [now_ms()]
        if patch.name is not None:
            sets.append("name = ?")
            params.append(patch.name)
        if patch.project is not None:
            sets.append("project_id = ?")
            project = patch.project
            params.append(
                projects.project_pk(self._conn, SQLITE, scope, project) if project else None
            )
        if patch.metadata is not None:
            sets.append("metadata = ?")
            params.append(json.dumps(patch.metadata))
        self._conn.execute(f"UPDATE sessions SET {', '.join(sets)} WHERE id = ?", (*params, pk))
        return self._session(scope, session_id)

    def delete_session(self, scope: Scope, session_id: str) -> int:
        pk = session_pk(self._conn, scope, session_id)
        count = self._conn.execute(
            "SELECT count(*) FROM memories WHERE session_id = ?", (pk,)
        ).fetchone()[0]
        self._conn.execute(
            "DELETE FROM history WHERE memory_id IN (SELECT id FROM memories WHERE session_id = ?)",
            (pk,),
        )
        self._conn.execute("DELETE FROM sessions WHERE id = ?", (pk,))  # cascades
        return int(count)

    def insert_episode(self, scope: Scope, session_id: str, messages: list[Message]) -> Episode:
        pk = session_pk(self._conn, scope, session_id)
        episode_id = uuid.uuid4().hex
        body = json.dumps([m.model_dump() for m in messages])
        self._conn.execute(
            "INSERT INTO episodes (id, session_id, user_id, scope_id, messages, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (episode_id, pk, scope.user_id, scope.scope_id, body, now_ms()),
        )
        row = self._conn.execute("SELECT * FROM episodes WHERE id = ?", (episode_id,)).fetchone()
        return rows.episode_from_row(row, session_id)

    def delete_episode(self, scope: Scope, episode_id: str) -> int:
        found = self._conn.execute(
            "SELECT 1 FROM episodes WHERE id = ? AND user_id = ? AND scope_id = ?",
            (episode_id, scope.user_id, scope.scope_id),
        ).fetchone()
        if found is None:
            raise NotFound(f"episode {episode_id!r} not found", id=episode_id)
        only = (
            "SELECT ms.memory_seq FROM memory_sources ms WHERE ms.episode_id = ?"
            " AND NOT EXISTS (SELECT 1 FROM memory_sources o"
            " WHERE o.memory_seq = ms.memory_seq AND o.episode_id != ms.episode_id)"
        )
        self._conn.execute(
            "DELETE FROM history WHERE memory_id IN"
            f" (SELECT id FROM memories WHERE seq IN ({only}))",
            (episode_id,),
        )
        deleted = self._conn.execute(
            f"DELETE FROM memories WHERE seq IN ({only})", (episode_id,)
        ).rowcount
        self._conn.execute("DELETE FROM episodes WHERE id = ?", (episode_id,))
        return int(deleted)

    def upsert_project(
        self, scope: Scope, name: str, description: str | None, isolated: bool
    ) -> Project:
        return projects.upsert_project(self._conn, SQLITE, scope, name, description, isolated)

    def insert_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project:
        return projects.insert_project(self._conn, SQLITE, scope, name, fields)

    def update_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project:
        return projects.update_project(self._conn, SQLITE, scope, name, fields)

    def delete_project(self, scope: Scope, name: str) -> int:
        return projects.delete_project(self._conn, SQLITE, scope, name)

    def _session(self, scope: Scope, session_id: str) -> Session:
        row = session_row(self._conn, scope, session_id)
        if row is None:  # only after a write in this transaction, so never in practice
            raise NotFound(f"session {session_id!r} not found", id=session_id)
        return rows.session_from_row(row)
