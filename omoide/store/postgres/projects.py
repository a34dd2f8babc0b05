"""PostgreSQL reads and writes of projects (nexusAI seed): plain functions over a connection.

A project is named within its tenant: ``(user_id, scope_id, name)`` is unique. Statements that
may hit that key run in a savepoint, so a ``Conflict`` leaves the caller's transaction usable
(PostgreSQL otherwise aborts the whole transaction on the first error).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import psycopg

from omoide.errors import Conflict, NotFound
from omoide.store.postgres import rows
from omoide.store.postgres.db import Conn
from omoide.types import Project, Scope, now_ms

# The columns a caller may set; the keys are validated by the engine, never by SQL text.
PROJECT_COLUMNS = ("name", "description", "colour", "icon", "isolated", "notes", "system_prompt")
_SELECT = "SELECT * FROM projects WHERE user_id = %s AND scope_id = %s AND name = %s"


def fetch(conn: Conn, scope: Scope, name: str) -> rows.Row:
    """The tenant's project row; ``NotFound`` if it has none of that name."""
    row = conn.execute(_SELECT, (scope.user_id, scope.scope_id, name)).fetchone()
    if row is None:
        raise NotFound(f"project {name!r} not found", id=name)
    return row


def list_projects(conn: Conn, scope: Scope, limit: int, offset: int) -> tuple[list[Project], int]:
    found = conn.execute(
        "SELECT * FROM projects WHERE user_id = %s AND scope_id = %s"
        ' ORDER BY name COLLATE "C" LIMIT %s OFFSET %s',
        (scope.user_id, scope.scope_id, limit, offset),
    ).fetchall()
    total = conn.execute(
        "SELECT count(*) AS n FROM projects WHERE user_id = %s AND scope_id = %s",
        (scope.user_id, scope.scope_id),
    ).fetchone()
    return [rows.project(r) for r in found], int(total["n"]) if total else 0


def project_pk(conn: Conn, scope: Scope, name: str) -> int:
    """The project's row id, creating a plain project of that name if the tenant has none."""
    conn.execute(
        "INSERT INTO projects (user_id, scope_id, name, created_at) VALUES (%s, %s, %s, %s)"
        " ON CONFLICT (user_id, scope_id, name) DO NOTHING",
        (scope.user_id, scope.scope_id, name, now_ms()),
    )
    return int(fetch(conn, scope, name)["id"])


def upsert_project(
    conn: Conn, scope: Scope, name: str, description: str | None, isolated: bool
) -> Project:
    conn.execute(
        "INSERT INTO projects (user_id, scope_id, name, description, isolated, created_at)"
        " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (user_id, scope_id, name) DO UPDATE SET"
        " description = coalesce(excluded.description, projects.description),"
        " isolated = excluded.isolated",
        (scope.user_id, scope.scope_id, name, description, isolated, now_ms()),
    )
    return rows.project(fetch(conn, scope, name))


def _columns(fields: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
    unknown = set(fields) - set(PROJECT_COLUMNS)
    if unknown:  # the engine validates first; this guards the SQL below
        raise ValueError(f"not project columns: {sorted(unknown)}")
    names = [c for c in PROJECT_COLUMNS if c in fields]
    values = [bool(fields[c]) if c == "isolated" else fields[c] for c in names]
    return names, values


def insert_project(conn: Conn, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project:
    names, values = _columns({**fields, "name": name})
    ts = now_ms()
    try:
        with conn.transaction():
            conn.execute(
                f"INSERT INTO projects (user_id, scope_id, {', '.join(names)}, created_at,"
                f" updated_at) VALUES (%s, %s, {', '.join(['%s'] * len(names))}, %s, %s)",
                (scope.user_id, scope.scope_id, *values, ts, ts),
            )
    except psycopg.errors.UniqueViolation as exc:
        raise Conflict(f"project {name!r} already exists", id=name) from exc
    return rows.project(fetch(conn, scope, name))


def update_project(conn: Conn, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project:
    pk = int(fetch(conn, scope, name)["id"])
    names, values = _columns(fields)
    sets = ", ".join([*(f"{c} = %s" for c in names), "updated_at = %s"])
    try:
        with conn.transaction():
            conn.execute(
                f"UPDATE projects SET {sets} WHERE user_id = %s AND id = %s",
                (*values, now_ms(), scope.user_id, pk),
            )
    except psycopg.errors.UniqueViolation as exc:
        raise Conflict(f"project {fields['name']!r} already exists", id=name) from exc
    return rows.project(fetch(conn, scope, fields.get("name") or name))


def delete_project(conn: Conn, scope: Scope, name: str) -> int:
    pk = int(fetch(conn, scope, name)["id"])
    detached = conn.execute(
        "UPDATE sessions SET project_id = NULL, updated_at = %s"
        " WHERE user_id = %s AND project_id = %s",
        (now_ms(), scope.user_id, pk),
    ).rowcount
    conn.execute("DELETE FROM projects WHERE user_id = %s AND id = %s", (scope.user_id, pk))
    return int(detached)
