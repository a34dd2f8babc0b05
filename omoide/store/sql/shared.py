"""Writes that several shared ports make: plain functions over a connection and a dialect."""

from __future__ import annotations

from omoide.store.sql.dialect import Conn, Dialect
from omoide.types import HistoryEvent, Scope, now_ms


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
