"""Reads and writes of projects: plain functions over a connection.

A project is named within its tenant: ``(user_id, scope_id, name)`` is unique, and sessions
point at it by row id. Deleting a project first detaches its sessions, then deletes it, in the
caller's transaction (the seed's ``db.transaction``), so sessions are never lost with it. A
statement that may hit the unique key runs in the dialect's savepoint, so a ``Conflict`` leaves
the caller's transaction usable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omoide.errors import Conflict, NotFound
from omoide.store.records import ms_to_dt_required
from omoide.store.sql.dialect import Conn, Dialect
from omoide.types import Project, Scope, ms_to_dt, now_ms

# The columns a caller may set; the keys are validated by the engine, never by SQL text.
PROJECT_COLUMNS = ("name", "description", "colour", "icon", "isolated", "notes", "system_prompt")
_SELECT = "SELECT * FROM projects WHERE user_id = ? AND scope_id = ? AND name = ?"
_PK = "SELECT id FROM projects WHERE user_id = ? AND scope_id = ? AND name = ?"


def project(row: Any) -> Project:
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
        created_at=ms_to_dt_required(row["created_at"]),
        updated_at=ms_to_dt(row["updated_at"]),
    )


def fetch(conn: Conn, d: Dialect, scope: Scope, name: str) -> Any:
    """The tenant's project row; ``NotFound`` if it has none of that name."""
    row = conn.execute(d.sql(_SELECT), (scope.user_id, scope.scope_id, name)).fetchone()
    if row is None:
        raise NotFound(f"project {name!r} not found", id=name)
    return row


def list_projects(
    conn: Conn, d: Dialect, scope: Scope, limit: int, offset: int
) -> tuple[list[Project], int]:
    """A page and the total; ``conn`` reads one snapshot, so both come from one state."""
    found = conn.execute(
        d.sql(
            "SELECT * FROM projects WHERE user_id = ? AND scope_id = ?"
            f" ORDER BY name{d.binary} LIMIT ? OFFSET ?"
        ),
        (scope.user_id, scope.scope_id, limit, offset),
    ).fetchall()
    total = conn.execute(
        d.sql("SELECT count(*) AS n FROM projects WHERE user_id = ? AND scope_id = ?"),
        (scope.user_id, scope.scope_id),
    ).fetchone()
    return [project(r) for r in found], int(total["n"])


def project_pk(conn: Conn, d: Dialect, scope: Scope, name: str) -> int:
    """The project's row id, creating a plain project of that name if the tenant has none."""
    key = (scope.user_id, scope.scope_id, name)
    row = conn.execute(d.sql(_PK), key).fetchone()
    if row is None:  # a writer of another process may create it meanwhile: no conflict then
        conn.execute(
            d.sql(
                "INSERT INTO projects (user_id, scope_id, name, created_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (user_id, scope_id, name) DO NOTHING"
            ),
            (*key, now_ms()),
        )
        row = conn.execute(d.sql(_PK), key).fetchone()
    return int(row["id"])


def upsert_project(
    conn: Conn, d: Dialect, scope: Scope, name: str, description: str | None, isolated: bool
) -> Project:
    conn.execute(
        d.sql(
            "INSERT INTO projects (user_id, scope_id, name, description, isolated, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id, scope_id, name) DO UPDATE SET"
            " description = coalesce(excluded.description, projects.description),"
            " isolated = excluded.isolated"
        ),
        (scope.user_id, scope.scope_id, name, description, isolated, now_ms()),
    )
    return project(fetch(conn, d, scope, name))


def _columns(fields: Mapping[str, Any]) -> tuple[list[str], list[Any]]:
    unknown = set(fields) - set(PROJECT_COLUMNS)
    if unknown:  # the engine validates first; this guards the SQL below
        raise ValueError(f"not project columns: {sorted(unknown)}")
    names = [c for c in PROJECT_COLUMNS if c in fields]
    values = [bool(fields[c]) if c == "isolated" else fields[c] for c in names]
    return names, values


def insert_project(
    conn: Conn, d: Dialect, scope: Scope, name: str, fields: Mapping[str, Any]
) -> Project:
    names, values = _columns({**fields, "name": name})
    ts = now_ms()
    try:
        with d.savepoint(conn):
            conn.execute(
                d.sql(
                    f"INSERT INTO projects (user_id, scope_id, {', '.join(names)}, created_at,"
                    f" updated_at) VALUES (?, ?, {', '.join('?' * len(names))}, ?, ?)"
                ),
                (scope.user_id, scope.scope_id, *values, ts, ts),
            )
    except d.unique_violation as exc:
        raise Conflict(f"project {name!r} already exists", id=name) from exc
    return project(fetch(conn, d, scope, name))


def update_project(
    conn: Conn, d: Dialect, scope: Scope, name: str, fields: Mapping[str, Any]
) -> Project:
    pk = int(fetch(conn, d, scope, name)["id"])
    names, values = _columns(fields)
    sets = ", ".join([*(f"{c} = ?" for c in names), "updated_at = ?"])
    try:
        with d.savepoint(conn):
            conn.execute(
                d.sql(f"UPDATE projects SET {sets} WHERE user_id = ? AND id = ?"),
                (*values, now_ms(), scope.user_id, pk),
            )
    except d.unique_violation as exc:
        raise Conflict(f"project {fields['name']!r} already exists", id=name) from exc
    return project(fetch(conn, d, scope, fields.get("name") or name))


def delete_project(conn: Conn, d: Dialect, scope: Scope, name: str) -> int:
    pk = int(fetch(conn, d, scope, name)["id"])
    detached = conn.execute(
        d.sql(
            "UPDATE sessions SET project_id = NULL, updated_at = ?"
            " WHERE user_id = ? AND project_id = ?"
        ),
        (now_ms(), scope.user_id, pk),
    ).rowcount
    conn.execute(d.sql("DELETE FROM projects WHERE user_id = ? AND id = ?"), (scope.user_id, pk))
    return int(detached)
