"""PostgreSQL: which memories are in use (JiuwenMemory's expired-memory maintenance).

A memory's last use is the later of its last access (``touch``) and its last change, as on
SQLite; each query reads one snapshot.
"""

from __future__ import annotations

from omoide.store.ports.ledger import TenantActivity
from omoide.store.postgres.db import Conn
from omoide.types import Scope

_USED = "GREATEST(coalesce(last_accessed_at, 0), updated_at)"


def tenant_activity(
    conn: Conn, before_ms: int, user_id: str | None, scope_id: str | None
) -> list[TenantActivity]:
    sql = (
        "SELECT user_id, scope_id, count(*) AS n, count(invalid_at) AS old,"
        f" count(*) FILTER (WHERE {_USED} < %s) AS idle FROM memories WHERE true"
    )
    params: list[object] = [before_ms]
    if user_id is not None:
        sql += " AND user_id = %s"
        params.append(user_id)
    if scope_id is not None:
        sql += " AND scope_id = %s"
        params.append(scope_id)
    sql += ' GROUP BY user_id, scope_id ORDER BY user_id COLLATE "C", scope_id COLLATE "C"'
    return [
        TenantActivity(
            Scope(user_id=r["user_id"], scope_id=r["scope_id"]),
            int(r["n"]),
            int(r["old"]),
            int(r["idle"]),
        )
        for r in conn.execute(sql, params)
    ]


def inactive_memories(conn: Conn, scope: Scope, before_ms: int, limit: int) -> list[str]:
    cursor = conn.execute(
        f"SELECT id FROM memories WHERE user_id = %s AND scope_id = %s AND {_USED} < %s"
        f' ORDER BY {_USED}, id COLLATE "C" LIMIT %s',
        (scope.user_id, scope.scope_id, before_ms, limit),
    )
    return [r["id"] for r in cursor]
