"""Lookups and writes that several PostgreSQL ports share: plain functions over a connection.

Each takes the connection it runs on, so the same function serves a read snapshot and a write
transaction (seeing its own writes). Every query names the tenant.
"""

from __future__ import annotations

import json
from typing import Any

from omoide.store.postgres import rows
from omoide.store.postgres.db import Conn
from omoide.store.postgres.dialect import POSTGRES
from omoide.store.sql import sessions, shared
from omoide.types import MemoryItem, Scope


def jsonb(value: Any) -> str:
    """A value for a ``%s::jsonb`` parameter."""
    return json.dumps(value)


def session_pk(conn: Conn, scope: Scope, session_id: str, *, lock: bool = False) -> int:
    """The row id of the tenant's session; ``NotFound`` if none. ``lock`` takes its row lock,
    which serialises writers that re-check session-wide state (the chunk ledger)."""
    return sessions.session_pk(conn, POSTGRES, scope, session_id, lock)


def fetch_memory(conn: Conn, scope: Scope, memory_id: str) -> MemoryItem:
    select = f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM}"
    return shared.fetch_memory(conn, POSTGRES, select, rows.memory, scope, memory_id)
