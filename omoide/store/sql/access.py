"""``AccessReads`` / ``AccessWrites``: access counters, and what went unused.

A memory's last use is the later of its last access (``touch``) and its last change; the
activity queries compute it in SQL so a tenant's counts are one scan of its rows. What differs
per backend comes in the ``AccessLayout``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from omoide.store.ports.access import TenantActivity
from omoide.store.sql.dialect import Conn, Dialect, Reader
from omoide.types import Scope


@dataclass(frozen=True)
class AccessLayout:
    """What differs in how a backend links memories to the episodes they come from."""

    #: The join condition of ``memory_sources ms`` with ``memories m``.
    sources_join: str


class SQLAccessReads:
    """Activity reads, each in one snapshot (see ``AccessReads``)."""

    def __init__(self, db: Reader, dialect: Dialect) -> None:
        self._db = db
        self._d = dialect

    def tenant_activity(
        self, before_ms: int, user_id: str | None, scope_id: str | None
    ) -> list[TenantActivity]:
        d = self._d
        sql = (
            "SELECT user_id, scope_id, count(*) AS n, count(invalid_at) AS old,"
            f" count(CASE WHEN {_used(d)} < ? THEN 1 END) AS idle FROM memories WHERE 1 = 1"
        )
        params: list[object] = [before_ms]
        if user_id is not None:
            sql += " AND user_id = ?"
            params.append(user_id)
        if scope_id is not None:
            sql += " AND scope_id = ?"
            params.append(scope_id)
        sql += f" GROUP BY user_id, scope_id ORDER BY user_id{d.binary}, scope_id{d.binary}"
        with self._db.read() as conn:
            return [
                TenantActivity(
                    Scope(user_id=r["user_id"], scope_id=r["scope_id"]),
                    int(r["n"]),
                    int(r["old"]),
                    int(r["idle"]),
                )
                for r in conn.execute(d.sql(sql), params)
            ]

    def inactive_memories(self, scope: Scope, before_ms: int, limit: int) -> list[str]:
        d, used = self._d, _used(self._d)
        with self._db.read() as conn:
            cursor = conn.execute(
                d.sql(
                    f"SELECT id FROM memories WHERE user_id = ? AND scope_id = ? AND {used} < ?"
                    f" ORDER BY {used}, id{d.binary} LIMIT ?"
                ),
                (scope.user_id, scope.scope_id, before_ms, limit),
            )
            return [r["id"] for r in cursor]


def _used(d: Dialect) -> str:
    """A memory's last use: the later of its last access and its last change."""
    return f"{d.greatest}(coalesce(last_accessed_at, 0), updated_at)"


class SQLAccessWrites:
    """Access counters on the transaction's connection."""

    def __init__(self, conn: Conn, dialect: Dialect, layout: AccessLayout) -> None:
        self._conn = conn
        self._d = dialect
        self._layout = layout

    def touch(
        self, scope: Scope, memory_ids: Sequence[str], episode_ids: Sequence[str], at_ms: int
    ) -> int:
        """One more access, now, for each memory and its source episodes, and each episode
        given; return how many memories and episodes changed."""
        d, u = self._d, self._d.unindexed  # u: the lookup by id beats a scan of the tenant's
        changed = 0
        args = (at_ms, scope.user_id, scope.scope_id)
        if memory_ids:
            among, ids = d.in_list("id", memory_ids)
            their, _ = d.in_list("m.id", memory_ids)
            changed += self._conn.execute(
                d.sql(
                    "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ?"
                    f" WHERE {u}user_id = ? AND {u}scope_id = ? AND {among}"
                ),
                (*args, *ids),
            ).rowcount
            sources = self._conn.execute(
                d.sql(
                    "SELECT DISTINCT ms.episode_id FROM memory_sources ms JOIN memories m"
                    f" ON {self._layout.sources_join} WHERE {u}m.user_id = ?"
                    f" AND {u}m.scope_id = ? AND {their}"
                ),
                (scope.user_id, scope.scope_id, *ids),
            )
            episode_ids = sorted({*episode_ids, *(r["episode_id"] for r in sources)})
        if episode_ids:
            among, ids = d.in_list("id", episode_ids)
            changed += self._conn.execute(
                d.sql(
                    "UPDATE episodes SET access_count = access_count + 1, last_accessed_at = ?"
                    f" WHERE user_id = ? AND scope_id = ? AND {among}"
                ),
                (*args, *ids),
            ).rowcount
        return changed
