"""Lookups and writes that several SQLite ports share: plain functions over a connection.

Each takes the connection it runs on, so the same function serves a reader (outside a
transaction) and the writer (inside one, seeing its own writes).
"""

from __future__ import annotations

import sqlite3

from omoide.store.sql import sessions, shared
from omoide.store.sqlite import rows
from omoide.store.sqlite.dialect import SQLITE
from omoide.types import MemoryItem, Scope


def session_pk(conn: sqlite3.Connection, scope: Scope, session_id: str) -> int:
    """The row id of the tenant's session with this external id; ``NotFound`` if none."""
    return sessions.session_pk(conn, SQLITE, scope, session_id)


def fetch_memory(conn: sqlite3.Connection, scope: Scope, memory_id: str) -> MemoryItem:
    select = f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM}"
    return shared.fetch_memory(conn, SQLITE, select, rows.memory_from_row, scope, memory_id)
