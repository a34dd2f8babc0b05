"""SQLite reads and writes of projects (nexusAI seed): plain functions over a connection.

A project is named within its tenant: ``(user_id, scope_id, name)`` is unique, and sessions
point at it by row id. Deleting a project first detaches its sessions, then deletes it, in the
caller's transaction (the seed's ``db.transaction``), so sessions are never lost with it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from omoide.errors import Conflict, NotFound
from omoide.store import records
from omoide.store.sqlite import cipher
from omoide.store.sqlite.db import snapshot
from omoide.types import Project, Scope, ms_to_dt, now_ms

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
        created_at=records.ms_to_dt_required(row["created_at"]),
        updated_at=ms_to_dt(row["updated_at"]),
    )


def fetch(conn: sqlite3.Connection, scope: Scope, name: str) -> sqlite3.Row:
    """The tenant's project row; ``NotFound`` if it has none of that name."""
    row: sqlite3.Row | None = conn.execute(
        _SELECT, (scope.user_id, scope.scope_id, name)
    ).fetchone()
    if row is None:
        raise NotFound(f"project {name!r} not found", id=name)
    return row


def list_projects(
    conn: sqlite3.Connection, scope: Scope, limit: int, offset: int
) -> tuple[list[Project], int]:
    with snapshot(conn):  # the page and its total from one state
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


def project_pk(conn: sqlite3.Connection, scope: Scope, name: str) -> int:
    """The project's row id, creating a plain project of that name if the tenant has none."""
    row = conn.execute(
        "SELECT id FROM projects WHERE user_id = ? AND scope_id = ? AND name = ?",
        (scope.user_id, scope.scope_id, name),
    ).fetchone()
    if row is not None:
        return int(row["id"])
    cur = conn.execute(
        "INSERT INTO projects (user_id, scope_id, name, created_at) VALUES (?, ?, ?, ?)",
        (scope.user_id, scope.scope_id, name, now_ms()),
    )
    return int(cur.lastrowid or 0)


def upsert_project(
    conn: sqlite3.Connection, scope: Scope, name: str, description: str | None, isolated: bool
) -> Project:
    conn.execute(
        "INSERT INTO projects (user_id, scope_id, name, description, isolated, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, scope_id, name) DO UPDATE SET"
        " description = coalesce(excluded.description, description),"
        " isolated = excluded.isolated",
        (scope.user_id, scope.scope_id, name, description, int(isolated), now_ms()),
    )
    return project_from_row(fetch(conn, scope, name))


def _columns(fields: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
    unknown = set(fields) - set(PROJECT_COLUMNS)
    if unknown:  # the engine validates first; this guards the SQL below
        raise ValueError(f"not project columns: {sorted(unknown)}")
    names = [c for c in PROJECT_COLUMNS if c in fields]
    values = [int(fields[c]) if c == "isolated" else fields[c] for c in names]
    return names, values


def insert_project(
    conn: sqlite3.Connection, scope: Scope, name: str, fields: Mapping[str, Any]
) -> Project:
    names, values = _columns({**fields, "name": name})
    ts = now_ms()
    try:
        conn.execute(
            f"INSERT INTO projects (user_id, scope_id, {', '.join(names)}, created_at,"
            f" updated_at) VALUES (?, ?, {', '.join('?' * len(names))}, ?, ?)",
            (scope.user_id, scope.scope_id, *values, ts, ts),
        )
    except cipher.IntegrityError as exc:
        raise Conflict(f"project {name!r} already exists", id=name) from exc
    return project_from_row(fetch(conn, scope, name))


def update_project(
    conn: sqlite3.Connection, scope: Scope, name: str, fields: Mapping[str, Any]
) -> Project:
    pk = int(fetch(conn, scope, name)["id"])
    names, values = _columns(fields)
    sets = ", ".join([*(f"{c} = ?" for c in names), "updated_at = ?"])
    try:
        conn.execute(f"UPDATE projects SET {sets} WHERE id = ?", (*values, now_ms(), pk))
    except cipher.IntegrityError as exc:
        raise Conflict(f"project {fields['name']!r} already exists", id=name) from exc
    return project_from_row(fetch(conn, scope, fields.get("name") or name))


def delete_project(conn: sqlite3.Connection, scope: Scope, name: str) -> int:
    pk = int(fetch(conn, scope, name)["id"])
    detached = conn.execute(
        "UPDATE sessions SET project_id = NULL, updated_at = ? WHERE project_id = ?",
        (now_ms(), pk),
    ).rowcount
    conn.execute("DELETE FROM projects WHERE id = ?", (pk,))
    return int(detached)
