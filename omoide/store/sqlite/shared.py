"""Lookups and writes that several SQLite ports share: plain functions over a connection.

Each takes the connection it runs on, so the same function serves a reader (outside a
transaction) and the writer (inside one, seeing its own writes).
"""

from __future__ import annotations

import sqlite3

from omoide.errors import NotFound
from omoide.store.sql import sessions
from omoide.store.sqlite import rows
from omoide.store.sqlite.dialect import SQLITE
from omoide.types import MemoryItem, Scope


def session_pk(conn: sqlite3.Connection, scope: Scope, session_id: str) -> int:
    """The row id of the tenant's session with this external id; ``NotFound`` if none."""
    return sessions.session_pk(conn, SQLITE, scope, session_id)


def fetch_memory(conn: sqlite3.Connection, scope: Scope, memory_id: str) -> MemoryItem:
    """One memory of ``scope`` (valid or not); ``NotFound`` if it is not the tenant's."""
    row = conn.execute(
        f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM}"
        " WHERE m.id = ? AND m.user_id = ? AND m.scope_id = ?",
        (memory_id, scope.user_id, scope.scope_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"memory {memory_id!r} not found", id=memory_id)
    return rows.memory_from_row(row)
