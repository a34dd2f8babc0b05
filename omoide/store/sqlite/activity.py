"""SQLite: which memories are in use (JiuwenMemory's expired-memory maintenance).

A memory's last use is the later of its last access (``touch``) and its last change; the
queries compute it in SQL so a tenant's counts are one scan of its rows.
"""

from __future__ import annotations

import sqlite3

from omoide.store.ports.ledger import TenantActivity
from omoide.types import Scope

_USED = "max(coalesce(last_accessed_at, 0), updated_at)"


def tenant_activity(
    conn: sqlite3.Connection, before_ms: int, user_id: str | None, scope_id: str | None
) -> list[TenantActivity]:
    sql = (
        "SELECT user_id, scope_id, count(*), sum(invalid_at IS NOT NULL),"
        f" sum({_USED} < ?) FROM memories WHERE 1 = 1"
    )
    params: list[object] = [before_ms]
    if user_id is not None:
        sql += " AND user_id = ?"
        params.append(user_id)
    if scope_id is not None:
        sql += " AND scope_id = ?"
        params.append(scope_id)
    sql += " GROUP BY user_id, scope_id ORDER BY user_id, scope_id"
    return [
        TenantActivity(Scope(user_id=u, scope_id=s), int(n), int(old), int(idle))
        for u, s, n, old, idle in conn.execute(sql, params)
    ]


def inactive_memories(
    conn: sqlite3.Connection, scope: Scope, before_ms: int, limit: int
) -> list[str]:
    cursor = conn.execute(
        f"SELECT id FROM memories WHERE user_id = ? AND scope_id = ? AND {_USED} < ?"
        f" ORDER BY {_USED}, id LIMIT ?",
        (scope.user_id, scope.scope_id, before_ms, limit),
    )
    return [r[0] for r in cursor]
