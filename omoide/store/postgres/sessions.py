"""PostgreSQL ``SessionReads`` / ``SessionWrites``: sessions, their episodes, and projects.

Sessions are addressed by ``(user_id, scope_id, external_id)``; other tables point at their
row id. Deleting a session cascades to its episodes, memories and chunk ledger; the history
of its memories is deleted explicitly (history rows have no foreign key, so a deleted memory's
audit trail normally survives it).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg

from omoide.errors import Conflict, InvalidInput, NotFound
from omoide.store.ports.sessions import SessionPatch
from omoide.store.postgres import rows
from omoide.store.postgres.db import Conn, Database
from omoide.store.postgres.dialect import POSTGRES
from omoide.store.postgres.shared import jsonb, session_pk, session_row
from omoide.store.sql import projects
from omoide.types import Episode, Message, Project, Scope, Session, now_ms

# Memories that came only from one episode (deleted with it), as memory ids.
_ONLY_FROM = (
    "SELECT ms.memory_id FROM memory_sources ms WHERE ms.user_id = %s AND ms.episode_id = %s"
    " AND NOT EXISTS (SELECT 1 FROM memory_sources o WHERE o.user_id = ms.user_id"
    " AND o.memory_id = ms.memory_id AND o.episode_id <> ms.episode_id)"
)


class PostgresSessionReads:
    """Reads of sessions, episodes and projects, each in one snapshot."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get_session(self, scope: Scope, session_id: str) -> Session:
        with self._db.read() as conn:
            row = session_row(conn, scope, session_id)
        if row is None:
            raise NotFound(f"session {session_id!r} not found", id=session_id)
        return rows.session(row)

    def list_sessions(self, scope: Scope, limit: int, offset: int) -> tuple[list[Session], int]:
        args = (scope.user_id, scope.scope_id)
        with self._db.read() as conn:
            total = conn.execute(
                "SELECT count(*) AS n FROM sessions WHERE user_id = %s AND scope_id = %s", args
            ).fetchone()
            cursor = conn.execute(
                rows.SESSION_SELECT + " WHERE s.user_id = %s AND s.scope_id = %s"
                " ORDER BY s.created_at DESC, s.id DESC LIMIT %s OFFSET %s",
                (*args, limit, offset),
            )
            found = [rows.session(r) for r in cursor]
        return found, int(total["n"]) if total else 0

    def list_episodes(
        self, scope: Scope, session_id: str, limit: int, offset: int
    ) -> tuple[list[Episode], int]:
        with self._db.read() as conn:
            pk = session_pk(conn, scope, session_id)
            args = (scope.user_id, pk)
            total = conn.execute(
                "SELECT count(*) AS n FROM episodes WHERE user_id = %s AND session_id = %s", args
            ).fetchone()
            cursor = conn.execute(
                "SELECT * FROM episodes WHERE user_id = %s AND session_id = %s"
                " ORDER BY created_at, seq LIMIT %s OFFSET %s",
                (*args, limit, offset),
            )
            found = [rows.episode(r, session_id) for r in cursor]
        return found, int(total["n"]) if total else 0

    def get_episode(self, scope: Scope, episode_id: str) -> Episode:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT e.*, s.external_id AS session_ext FROM episodes e"
                " JOIN sessions s ON s.user_id = e.user_id AND s.id = e.session_id"
                " WHERE e.user_id = %s AND e.scope_id = %s AND e.id = %s",
                (scope.user_id, scope.scope_id, episode_id),
            ).fetchone()
        if row is None:
            raise NotFound(f"episode {episode_id!r} not found", id=episode_id)
        return rows.episode(row, row["session_ext"])

    def get_project(self, scope: Scope, name: str) -> Project:
        with self._db.read() as conn:
            return projects.project(projects.fetch(conn, POSTGRES, scope, name))

    def list_projects(self, scope: Scope, limit: int, offset: int) -> tuple[list[Project], int]:
        with self._db.read() as conn:
            return projects.list_projects(conn, POSTGRES, scope, limit, offset)


class PostgresSessionWrites:
    """Writes of sessions, episodes and projects on the transaction's connection."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn

    def ensure_session(self, scope: Scope, session_id: str) -> Session:
        row = session_row(self._conn, scope, session_id)
        if row is not None:
            return rows.session(row)
        if not session_id:
            raise InvalidInput("session id must not be empty")
        ts = now_ms()
        # ON CONFLICT: a concurrent writer creating the same session is not an error here.
        self._conn.execute(
            "INSERT INTO sessions (user_id, scope_id, external_id, metadata, created_at,"
            " updated_at) VALUES (%s, %s, %s, '{}', %s, %s)"
            " ON CONFLICT (user_id, scope_id, external_id) DO NOTHING",
            (scope.user_id, scope.scope_id, session_id, ts, ts),
        )
        return self._session(scope, session_id)

    def ensure_sessions(self, scope: Scope, session_ids: Sequence[str]) -> None:
        if any(not session_id for session_id in session_ids):
            raise InvalidInput("session id must not be empty")
        if not session_ids:
            return
        ts = now_ms()
        # NOT EXISTS: existing sessions take no identity value; ON CONFLICT: nor is a session
        # a concurrent writer just created an error. Ids are inserted in the order given.
        self._conn.execute(
            "INSERT INTO sessions (user_id, scope_id, external_id, metadata, created_at,"
            " updated_at) SELECT %s, %s, u.id, '{}', %s, %s"
            " FROM unnest(%s::text[]) WITH ORDINALITY AS u(id, ord)"
            " WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = %s"
            " AND s.scope_id = %s AND s.external_id = u.id) ORDER BY u.ord"
            " ON CONFLICT (user_id, scope_id, external_id) DO NOTHING",
            (
                scope.user_id,
                scope.scope_id,
                ts,
                ts,
                list(dict.fromkeys(session_ids)),
                scope.user_id,
                scope.scope_id,
            ),
        )

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
        project_pk = projects.project_pk(self._conn, POSTGRES, scope, project) if project else None
        ts = now_ms()
        try:
            with self._conn.transaction():
                self._conn.execute(
                    "INSERT INTO sessions (user_id, scope_id, external_id, name, project_id,"
                    " metadata, created_at, updated_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s, %s)",
                    (
                        scope.user_id,
                        scope.scope_id,
                        session_id,
                        name,
                        project_pk,
                        jsonb(metadata),
                        ts,
                        ts,
                    ),
                )
        except psycopg.errors.UniqueViolation as exc:
            raise Conflict(f"session {session_id!r} already exists", id=session_id) from exc
        return self._session(scope, session_id)

    def update_session(self, scope: Scope, session_id: str, patch: SessionPatch) -> Session:
        pk = session_pk(self._conn, scope, session_id)
        sets: list[str] = ["updated_at = %s"]
        params: list[Any] = [now_ms()]
        if patch.name is not None:
            sets.append("name = %s")
            params.append(patch.name)
        if patch.project is not None:
            sets.append("project_id = %s")
            project = patch.project
            params.append(
                projects.project_pk(self._conn, POSTGRES, scope, project) if project else None
            )
        if patch.metadata is not None:
            sets.append("metadata = %s::jsonb")
            params.append(jsonb(patch.metadata))
        self._conn.execute(
            f"UPDATE sessions SET {', '.join(sets)} WHERE user_id = %s AND id = %s",
            (*params, scope.user_id, pk),
        )
        return self._session(scope, session_id)

    def delete_session(self, scope: Scope, session_id: str) -> int:
        pk = session_pk(self._conn, scope, session_id)
        args = (scope.user_id, pk)
        count = self._conn.execute(
            "SELECT count(*) AS n FROM memories WHERE user_id = %s AND session_id = %s", args
        ).fetchone()
        self._conn.execute(
            "DELETE FROM history WHERE user_id = %s AND memory_id IN"
            " (SELECT id FROM memories WHERE user_id = %s AND session_id = %s)",
            (scope.user_id, *args),
        )
        self._conn.execute("DELETE FROM sessions WHERE user_id = %s AND id = %s", args)
        return int(count["n"]) if count else 0

    def insert_episode(self, scope: Scope, session_id: str, messages: list[Message]) -> Episode:
        pk = session_pk(self._conn, scope, session_id)
        row = self._conn.execute(
            "INSERT INTO episodes (id, session_id, user_id, scope_id, messages, created_at)"
            " VALUES (%s, %s, %s, %s, %s::jsonb, %s) RETURNING *",
            (
                uuid.uuid4().hex,
                pk,
                scope.user_id,
                scope.scope_id,
                jsonb([m.model_dump() for m in messages]),
                now_ms(),
            ),
        ).fetchone()
        assert row is not None  # RETURNING of an INSERT that did not fail
        return rows.episode(row, session_id)

    def delete_episode(self, scope: Scope, episode_id: str) -> int:
        found = self._conn.execute(
            "SELECT 1 FROM episodes WHERE user_id = %s AND scope_id = %s AND id = %s",
            (scope.user_id, scope.scope_id, episode_id),
        ).fetchone()
        if found is None:
            raise NotFound(f"episode {episode_id!r} not found", id=episode_id)
        only = (scope.user_id, episode_id)
        self._conn.execute(
            f"DELETE FROM history WHERE user_id = %s AND memory_id IN ({_ONLY_FROM})",
            (scope.user_id, *only),
        )
        deleted = self._conn.execute(
            f"DELETE FROM memories WHERE user_id = %s AND id IN ({_ONLY_FROM})",
            (scope.user_id, *only),
        ).rowcount
        self._conn.execute(
            "DELETE FROM episodes WHERE user_id = %s AND id = %s", (scope.user_id, episode_id)
        )
        return int(deleted)

    def upsert_project(
        self, scope: Scope, name: str, description: str | None, isolated: bool
    ) -> Project:
        return projects.upsert_project(self._conn, POSTGRES, scope, name, description, isolated)

    def insert_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project:
        return projects.insert_project(self._conn, POSTGRES, scope, name, fields)

    def update_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project:
        return projects.update_project(self._conn, POSTGRES, scope, name, fields)

    def delete_project(self, scope: Scope, name: str) -> int:
        return projects.delete_project(self._conn, POSTGRES, scope, name)

    def _session(self, scope: Scope, session_id: str) -> Session:
        row = session_row(self._conn, scope, session_id)
        if row is None:  # only after a write in this transaction, so never in practice
            raise NotFound(f"session {session_id!r} not found", id=session_id)
        return rows.session(row)
