"""``SessionReads`` / ``SessionWrites``: sessions, their episodes, and projects.

Sessions are addressed by ``(user_id, scope_id, external_id)``; other tables point at their
row id. Deleting a session cascades (the schema's foreign keys) to its episodes, memories and
chunk ledger; the history of its memories is deleted explicitly (history rows have no foreign
key, so a deleted memory's audit trail normally survives it). Where the two schemas lay episodes
out differently, the backend passes an ``EpisodeLayout``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from omoide.errors import Conflict, InvalidInput, NotFound
from omoide.store.ports.sessions import SessionPatch
from omoide.store.records import ms_to_dt_required
from omoide.store.sql import projects
from omoide.store.sql.dialect import Conn, Dialect, Reader
from omoide.types import Episode, Message, Project, Scope, Session, ms_to_dt, now_ms

SESSION_SELECT = (
    "SELECT s.*, p.name AS project_name FROM sessions s"
    " LEFT JOIN projects p ON p.user_id = s.user_id AND p.id = s.project_id"
)


@dataclass(frozen=True)
class EpisodeLayout:
    """What differs in how a backend stores episodes and the memories drawn from them."""

    #: The column after ``created_at`` that orders a session's episodes as they were written.
    order: str
    #: The ids of the memories that came only from one episode (deleted with it); parameters:
    #: the user id, the episode id.
    only_from: str
    #: Creates the missing sessions of a batch at once (``None``: one ``ensure_session`` each).
    ensure_many: Callable[[Conn, Scope, list[str], int], None] | None


def session_row(conn: Conn, d: Dialect, scope: Scope, session_id: str) -> Any:
    """The session's row (with its project's name), or None."""
    return conn.execute(
        d.sql(SESSION_SELECT + " WHERE s.user_id = ? AND s.scope_id = ? AND s.external_id = ?"),
        (scope.user_id, scope.scope_id, session_id),
    ).fetchone()


def session_pk(conn: Conn, d: Dialect, scope: Scope, session_id: str, lock: bool = False) -> int:
    """The row id of the tenant's session; ``NotFound`` if none. ``lock`` takes its row lock
    where rows are locked (the dialect's), which serialises writers that re-check
    session-wide state (the chunk ledger)."""
    row = conn.execute(
        d.sql("SELECT id FROM sessions WHERE user_id = ? AND scope_id = ? AND external_id = ?")
        + (d.row_lock if lock else ""),
        (scope.user_id, scope.scope_id, session_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"session {session_id!r} not found", id=session_id)
    return int(row["id"])


def session(row: Any, d: Dialect) -> Session:
    return Session(
        id=row["external_id"],
        user_id=row["user_id"],
        scope_id=row["scope_id"],
        name=row["name"],
        project=row["project_name"],
        metadata=d.load_json(row["metadata"]),
        created_at=ms_to_dt_required(row["created_at"]),
        updated_at=ms_to_dt_required(row["updated_at"]),
    )


def episode(row: Any, d: Dialect, session_ext: str) -> Episode:
    return Episode(
        id=row["id"],
        session_id=session_ext,
        user_id=row["user_id"],
        scope_id=row["scope_id"],
        messages=[Message(**m) for m in d.load_json(row["messages"])],
        created_at=ms_to_dt_required(row["created_at"]),
        access_count=row["access_count"],
        last_accessed_at=ms_to_dt(row["last_accessed_at"]),
        consolidated_at=ms_to_dt(row["consolidated_at"]),
    )


class SQLSessionReads:
    """Reads of sessions, episodes and projects, each in one snapshot."""

    def __init__(self, db: Reader, dialect: Dialect, layout: EpisodeLayout) -> None:
        self._db = db
        self._d = dialect
        self._layout = layout

    def get_session(self, scope: Scope, session_id: str) -> Session:
        with self._db.read() as conn:
            row = session_row(conn, self._d, scope, session_id)
        if row is None:
            raise NotFound(f"session {session_id!r} not found", id=session_id)
        return session(row, self._d)

    def list_sessions(self, scope: Scope, limit: int, offset: int) -> tuple[list[Session], int]:
        d, args = self._d, (scope.user_id, scope.scope_id)
        with self._db.read() as conn:  # the page and its total from one state
            total = conn.execute(
                d.sql("SELECT count(*) AS n FROM sessions WHERE user_id = ? AND scope_id = ?"),
                args,
            ).fetchone()
            cursor = conn.execute(
                d.sql(
                    SESSION_SELECT + " WHERE s.user_id = ? AND s.scope_id = ?"
                    " ORDER BY s.created_at DESC, s.id DESC LIMIT ? OFFSET ?"
                ),
                (*args, limit, offset),
            )
            found = [session(r, d) for r in cursor]
        return found, int(total["n"])

    def list_episodes(
        self, scope: Scope, session_id: str, limit: int, offset: int
    ) -> tuple[list[Episode], int]:
        d = self._d
        with self._db.read() as conn:
            args = (scope.user_id, session_pk(conn, d, scope, session_id))
            total = conn.execute(
                d.sql("SELECT count(*) AS n FROM episodes WHERE user_id = ? AND session_id = ?"),
                args,
            ).fetchone()
            cursor = conn.execute(
                d.sql(
                    "SELECT * FROM episodes WHERE user_id = ? AND session_id = ?"
                    f" ORDER BY created_at, {self._layout.order} LIMIT ? OFFSET ?"
                ),
                (*args, limit, offset),
            )
            found = [episode(r, d, session_id) for r in cursor]
        return found, int(total["n"])

    def get_episode(self, scope: Scope, episode_id: str) -> Episode:
        with self._db.read() as conn:
            row = conn.execute(
                self._d.sql(
                    "SELECT e.*, s.external_id AS session_ext FROM episodes e"
                    " JOIN sessions s ON s.user_id = e.user_id AND s.id = e.session_id"
                    " WHERE e.user_id = ? AND e.scope_id = ? AND e.id = ?"
                ),
                (scope.user_id, scope.scope_id, episode_id),
            ).fetchone()
        if row is None:
            raise NotFound(f"episode {episode_id!r} not found", id=episode_id)
        return episode(row, self._d, row["session_ext"])

    def get_project(self, scope: Scope, name: str) -> Project:
        with self._db.read() as conn:
            return projects.project(projects.fetch(conn, self._d, scope, name))

    def list_projects(self, scope: Scope, limit: int, offset: int) -> tuple[list[Project], int]:
        with self._db.read() as conn:
            return projects.list_projects(conn, self._d, scope, limit, offset)


class SQLSessionWrites:
    """Writes of sessions, episodes and projects on the transaction's connection."""

    def __init__(self, conn: Conn, dialect: Dialect, layout: EpisodeLayout) -> None:
        self._conn = conn
        self._d = dialect
        self._layout = layout

    def ensure_session(self, scope: Scope, session_id: str) -> Session:
        row = session_row(self._conn, self._d, scope, session_id)
        if row is not None:
            return session(row, self._d)
        if not session_id:
            raise InvalidInput("session id must not be empty")
        ts = now_ms()
        # ON CONFLICT: a concurrent writer creating the same session is not an error here.
        self._conn.execute(
            self._d.sql(
                "INSERT INTO sessions (user_id, scope_id, external_id, metadata, created_at,"
                " updated_at) VALUES (?, ?, ?, '{}', ?, ?)"
                " ON CONFLICT (user_id, scope_id, external_id) DO NOTHING"
            ),
            (scope.user_id, scope.scope_id, session_id, ts, ts),
        )
        return self._session(scope, session_id)

    def ensure_sessions(self, scope: Scope, session_ids: Sequence[str]) -> None:
        if any(not session_id for session_id in session_ids):
            raise InvalidInput("session id must not be empty")
        if not session_ids:
            return
        ids = list(dict.fromkeys(session_ids))  # created in the order given
        if self._layout.ensure_many is not None:
            self._layout.ensure_many(self._conn, scope, ids, now_ms())
            return
        for session_id in ids:
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
        d = self._d
        project_pk = projects.project_pk(self._conn, d, scope, project) if project else None
        ts, meta = now_ms(), d.dump_json(metadata)
        try:
            with d.savepoint(self._conn):
                self._conn.execute(
                    d.sql(
                        "INSERT INTO sessions (user_id, scope_id, external_id, name, project_id,"
                        f" metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?,"
                        f" {d.json_param}, ?, ?)"
                    ),
                    (scope.user_id, scope.scope_id, session_id, name, project_pk, meta, ts, ts),
                )
        except d.unique_violation as exc:
            raise Conflict(f"session {session_id!r} already exists", id=session_id) from exc
        return self._session(scope, session_id)

    def update_session(self, scope: Scope, session_id: str, patch: SessionPatch) -> Session:
        d = self._d
        pk = session_pk(self._conn, d, scope, session_id)
        sets: list[str] = ["updated_at = ?"]
        params: list[Any] = [now_ms()]
        if patch.name is not None:
            sets.append("name = ?")
            params.append(patch.name)
        if patch.project is not None:
            sets.append("project_id = ?")
            project = patch.project
            params.append(projects.project_pk(self._conn, d, scope, project) if project else None)
        if patch.metadata is not None:
            sets.append(f"metadata = {d.json_param}")
            params.append(d.dump_json(patch.metadata))
        self._conn.execute(
            d.sql(f"UPDATE sessions SET {', '.join(sets)} WHERE user_id = ? AND id = ?"),
            (*params, scope.user_id, pk),
        )
        return self._session(scope, session_id)

    def delete_session(self, scope: Scope, session_id: str) -> int:
        d = self._d
        args = (scope.user_id, session_pk(self._conn, d, scope, session_id))
        count = self._conn.execute(
            d.sql("SELECT count(*) AS n FROM memories WHERE user_id = ? AND session_id = ?"), args
        ).fetchone()
        self._conn.execute(
            d.sql(
                "DELETE FROM history WHERE user_id = ? AND memory_id IN"
                " (SELECT id FROM memories WHERE user_id = ? AND session_id = ?)"
            ),
            (scope.user_id, *args),
        )
        self._conn.execute(d.sql("DELETE FROM sessions WHERE user_id = ? AND id = ?"), args)
        return int(count["n"])

    def insert_episode(self, scope: Scope, session_id: str, messages: list[Message]) -> Episode:
        d = self._d
        pk = session_pk(self._conn, d, scope, session_id)
        body = d.dump_json([m.model_dump() for m in messages])
        row = self._conn.execute(
            d.sql(
                "INSERT INTO episodes (id, session_id, user_id, scope_id, messages, created_at)"
                f" VALUES (?, ?, ?, ?, {d.json_param}, ?) RETURNING *"
            ),
            (uuid.uuid4().hex, pk, scope.user_id, scope.scope_id, body, now_ms()),
        ).fetchone()
        return episode(row, d, session_id)

    def delete_episode(self, scope: Scope, episode_id: str) -> int:
        d = self._d
        found = self._conn.execute(
            d.sql("SELECT 1 FROM episodes WHERE user_id = ? AND scope_id = ? AND id = ?"),
            (scope.user_id, scope.scope_id, episode_id),
        ).fetchone()
        if found is None:
            raise NotFound(f"episode {episode_id!r} not found", id=episode_id)
        only, args = self._layout.only_from, (scope.user_id, scope.user_id, episode_id)
        self._conn.execute(
            d.sql(f"DELETE FROM history WHERE user_id = ? AND memory_id IN ({only})"), args
        )
        deleted = self._conn.execute(
            d.sql(f"DELETE FROM memories WHERE user_id = ? AND id IN ({only})"), args
        ).rowcount
        self._conn.execute(
            d.sql("DELETE FROM episodes WHERE user_id = ? AND id = ?"), (scope.user_id, episode_id)
        )
        return int(deleted)

    def upsert_project(
        self, scope: Scope, name: str, description: str | None, isolated: bool
    ) -> Project:
        return projects.upsert_project(self._conn, self._d, scope, name, description, isolated)

    def insert_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project:
        return projects.insert_project(self._conn, self._d, scope, name, fields)

    def update_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project:
        return projects.update_project(self._conn, self._d, scope, name, fields)

    def delete_project(self, scope: Scope, name: str) -> int:
        return projects.delete_project(self._conn, self._d, scope, name)

    def _session(self, scope: Scope, session_id: str) -> Session:
        row = session_row(self._conn, self._d, scope, session_id)
        if row is None:  # only after a write in this transaction, so never in practice
            raise NotFound(f"session {session_id!r} not found", id=session_id)
        return session(row, self._d)
