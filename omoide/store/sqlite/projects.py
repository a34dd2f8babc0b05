"""SQLite reads and writes of projects (nexusAI seed), and the deletion of one episode.

A project is named within its tenant: ``(user_id, scope_id, name)`` is unique, and sessions
point at it by row id. Deleting a project first detaches its sessions, then deletes it, in the
caller's transaction (the seed's ``db.transaction``), so sessions are never lost with it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from omoide.errors import Conflict, NotFound
from omoide.store.sqlite import rows
from omoide.types import Project, Scope, now_ms

# The columns a caller may set; the keys are validated by the engine, never by SQL text.
PROJECT_COLUMNS = ("name", "description", "colour", "icon", "isolated", "notes", "system_prompt")
_SELECT = "SELECT * FROM projects WHERE user_id = ? AND scope_id = ? AND name = ?"


def project_from_row(row: sqlite3.Row) -> Project:
    return Project(
        name=row["name"],
        user_id=row["user_id"],
        scope_id=row["scope_id"],
        description=row["description"],
        isolated=bool(row["isolated"]),
        colour=row["colour"],
        icon=row["icon"],
        notes=row["notes"],
        system_prompt=row["system_prompt"],
        created_at=rows.ms_to_dt(row["created_at"]),
        updated_at=rows.ms_to_dt(row["updated_at"]),
    )


def _fetch(conn: sqlite3.Connection, scope: Scope, name: str) -> sqlite3.Row:
    row = conn.execute(_SELECT, (scope.user_id, scope.scope_id, name)).fetchone()
    if row is None:
        raise NotFound(f"project {name!r} not found", id=name)
    return row


def _columns(fields: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
    unknown = set(fields) - set(PROJECT_COLUMNS)
    if unknown:  # the engine validates first; this guards the SQL below
        raise ValueError(f"not project columns: {sorted(unknown)}")
    names = [c for c in PROJECT_COLUMNS if c in fields]
    values = [int(fields[c]) if c == "isolated" else fields[c] for c in names]
    return names, values


class ProjectsStoreMixin:
    if TYPE_CHECKING:  # SQLiteStore

        def _reader(self) -> sqlite3.Connection: ...

    def get_project(self, scope: Scope, name: str) -> Project:
        return project_from_row(_fetch(self._reader(), scope, name))

    def list_projects(self, scope: Scope, limit: int, offset: int) -> tuple[list[Project], int]:
        conn = self._reader()
        found = conn.execute(
            "SELECT * FROM projects WHERE user_id = ? AND scope_id = ? ORDER BY name"
            " LIMIT ? OFFSET ?",
            (scope.user_id, scope.scope_id, limit, offset),
        ).fetchall()
        total = conn.execute(
            "SELECT count(*) FROM projects WHERE user_id = ? AND scope_id = ?",
            (scope.user_id, scope.scope_id),
        ).fetchone()[0]
        return [project_from_row(r) for r in found], int(total)


class ProjectsTxMixin:
    conn: sqlite3.Connection

    def insert_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project:
        """A new project (``Conflict`` when the tenant has one of that name)."""
        names, values = _columns({**fields, "name": name})
        ts = now_ms()
        try:
            self.conn.execute(
                f"INSERT INTO projects (user_id, scope_id, {', '.join(names)}, created_at,"
                f" updated_at) VALUES (?, ?, {', '.join('?' * len(names))}, ?, ?)",
                (scope.user_id, scope.scope_id, *values, ts, ts),
            )
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"project {name!r} already exists", id=name) from exc
        return project_from_row(_fetch(self.conn, scope, name))

    def update_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project:
        """Set only the columns in ``fields``; a rename onto a taken name is ``Conflict``."""
        pk = int(_fetch(self.conn, scope, name)["id"])
        names, values = _columns(fields)
        sets = ", ".join([*(f"{c} = ?" for c in names), "updated_at = ?"])
        try:
            self.conn.execute(f"UPDATE projects SET {sets} WHERE id = ?", (*values, now_ms(), pk))
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"project {fields['name']!r} already exists", id=name) from exc
        return project_from_row(_fetch(self.conn, scope, fields.get("name") or name))

    def delete_project(self, scope: Scope, name: str) -> int:
        """Detach the project's sessions, then delete it; return how many were detached."""
        pk = int(_fetch(self.conn, scope, name)["id"])
        detached = self.conn.execute(
            "UPDATE sessions SET project_id = NULL, updated_at = ? WHERE project_id = ?",
            (now_ms(), pk),
        ).rowcount
        self.conn.execute("DELETE FROM projects WHERE id = ?", (pk,))
        return int(detached)

    def delete_episode(self, scope: Scope, episode_id: str) -> int:
        """Delete an episode and the memories that come from it alone (with their index rows,
        vectors and history); return how many memories went. Memories that other episodes
        also support, and the entities it mentioned, stay."""
        found = self.conn.execute(
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
        self.conn.execute(
            "DELETE FROM history WHERE memory_id IN"
            f" (SELECT id FROM memories WHERE seq IN ({only}))",
            (episode_id,),
        )
        deleted = self.conn.execute(
            f"DELETE FROM memories WHERE seq IN ({only})", (episode_id,)
        ).rowcount
        self.conn.execute("DELETE FROM episodes WHERE id = ?", (episode_id,))
        return int(deleted)
