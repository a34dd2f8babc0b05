"""Lookups and writes that several PostgreSQL ports share: plain functions over a connection.

Each takes the connection it runs on, so the same function serves a read snapshot and a write
transaction (seeing its own writes). Every query names the tenant.
"""

from __future__ import annotations

import json
from typing import Any

from omoide.errors import NotFound
from omoide.store.postgres import rows
from omoide.store.postgres.db import Conn
from omoide.store.postgres.dialect import POSTGRES
from omoide.store.sql import sessions
from omoide.types import HistoryEvent, MemoryItem, Scope, now_ms


def jsonb(value: Any) -> str:
    """A value for a ``%s::jsonb`` parameter."""
    return json.dumps(value)


def session_row(conn: Conn, scope: Scope, session_id: str) -> rows.Row | None:
    """The session's row (with its project's name), or None."""
    row: rows.Row | None = sessions.session_row(conn, POSTGRES, scope, session_id)
    return row


def session_pk(conn: Conn, scope: Scope, session_id: str, *, lock: bool = False) -> int:
    """The row id of the tenant's session; ``NotFound`` if none. ``lock`` takes its row lock,
    which serialises writers that re-check session-wide state (the chunk ledger)."""
    return sessions.session_pk(conn, POSTGRES, scope, session_id, lock)


def fetch_memory(conn: Conn, scope: Scope, memory_id: str) -> MemoryItem:
    """One memory of ``scope`` (valid or not); ``NotFound`` if it is not the tenant's."""
    row = conn.execute(
        f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM}"
        " WHERE m.user_id = %s AND m.id = %s AND m.scope_id = %s",
        (scope.user_id, memory_id, scope.scope_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"memory {memory_id!r} not found", id=memory_id)
    return rows.memory(row)


def write_history(
    conn: Conn,
    scope: Scope,
    memory_id: str,
    event: HistoryEvent,
    old: str | None,
    new: str | None,
    actor: str,
) -> None:
    """Append one entry to a memory's history (the audit trail is never rewritten)."""
    conn.execute(
        "INSERT INTO history (memory_id, user_id, scope_id, event, old_text, new_text, actor,"
        " created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (memory_id, scope.user_id, scope.scope_id, event.value, old, new, actor, now_ms()),
    )


def invalidate_row(conn: Conn, scope: Scope, memory_id: str, at_ms: int) -> None:
    """Set ``invalid_at`` (the row stays for ``as_of`` queries and its history)."""
    conn.execute(
        "UPDATE memories SET invalid_at = %s, updated_at = %s"
        " WHERE user_id = %s AND scope_id = %s AND id = %s",
        (at_ms, now_ms(), scope.user_id, scope.scope_id, memory_id),
    )
