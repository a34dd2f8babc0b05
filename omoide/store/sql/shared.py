"""Reads and writes that several shared ports make: plain functions over a connection."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omoide.errors import NotFound
from omoide.store.sql.dialect import Conn, Dialect
from omoide.types import HistoryEvent, MemoryItem, Scope, now_ms


def write_history(
    conn: Conn,
    d: Dialect,
    scope: Scope,
    memory_id: str,
    event: HistoryEvent,
    old: str | None,
    new: str | None,
    actor: str,
) -> None:
    """Append one entry to a memory's history (the audit trail is never rewritten)."""
    conn.execute(
        d.sql(
            "INSERT INTO history (memory_id, user_id, scope_id, event, old_text, new_text, actor,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        ),
        (memory_id, scope.user_id, scope.scope_id, event.value, old, new, actor, now_ms()),
    )


def fetch_memory(
    conn: Conn,
    d: Dialect,
    select: str,
    convert: Callable[[Any], MemoryItem],
    scope: Scope,
    memory_id: str,
) -> MemoryItem:
    """One memory of ``scope`` (valid or not); ``NotFound`` if it is not the tenant's.
    ``select``: the backend's ``SELECT <memory columns> FROM <memories and sessions>``."""
    row = conn.execute(
        d.sql(f"{select} WHERE m.user_id = ? AND m.id = ? AND m.scope_id = ?"),
        (scope.user_id, memory_id, scope.scope_id),
    ).fetchone()
    if row is None:
        raise NotFound(f"memory {memory_id!r} not found", id=memory_id)
    return convert(row)
