"""PostgreSQL ``ScheduleReads`` / ``ScheduleWrites``: dreaming schedules and scope configs.

``claim_due`` is one ``UPDATE ... RETURNING`` over rows picked ``FOR UPDATE SKIP LOCKED``: two
processes claiming at once never take the same schedule, and a schedule one of them holds is
left to it rather than waited for (see the port).
"""

from __future__ import annotations

from typing import Any

from omoide.store.ports.schedules import Schedule
from omoide.store.postgres import rows
from omoide.store.postgres.db import Conn, Database
from omoide.store.postgres.shared import jsonb
from omoide.types import Scope

_COLUMNS = (
    "user_id, scope_id, enabled, interval_ms, next_run_at, settings, last_run_at, last_job_id,"
    " sweeps"
)
_ORDER = ' ORDER BY user_id COLLATE "C", scope_id COLLATE "C"'


def _schedule(row: rows.Row) -> Schedule:
    return Schedule(
        scope=Scope(user_id=row["user_id"], scope_id=row["scope_id"]),
        enabled=bool(row["enabled"]),
        interval_ms=int(row["interval_ms"]),
        next_run_ms=int(row["next_run_at"]),
        settings=dict(row["settings"]),
        last_run_ms=row["last_run_at"],
        last_job_id=row["last_job_id"],
        sweeps=int(row["sweeps"]),
    )


def _where(user_id: str | None, scope_id: str | None) -> tuple[str, list[object]]:
    sql, params = "", list[object]()
    if user_id is not None:
        sql += " AND user_id = %s"
        params.append(user_id)
    if scope_id is not None:
        sql += " AND scope_id = %s"
        params.append(scope_id)
    return sql, params


class PostgresScheduleReads:
    """Reads, each in one snapshot (see ``ScheduleReads``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get_schedule(self, scope: Scope) -> Schedule | None:
        with self._db.read() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM dreaming_schedules WHERE user_id = %s AND scope_id = %s",
                (scope.user_id, scope.scope_id),
            ).fetchone()
        return _schedule(row) if row else None

    def list_schedules(self, user_id: str | None, scope_id: str | None) -> list[Schedule]:
        where, params = _where(user_id, scope_id)
        with self._db.read() as conn:
            cursor = conn.execute(
                f"SELECT {_COLUMNS} FROM dreaming_schedules WHERE true{where}{_ORDER}", params
            )
            return [_schedule(r) for r in cursor]

    def next_due(self) -> int | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT min(next_run_at) AS due FROM dreaming_schedules WHERE enabled"
            ).fetchone()
        return None if row is None or row["due"] is None else int(row["due"])

    def get_scope_config(self, scope: Scope) -> dict[str, Any] | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT config FROM scope_configs WHERE user_id = %s AND scope_id = %s",
                (scope.user_id, scope.scope_id),
            ).fetchone()
        return None if row is None else dict(row["config"])


class PostgresScheduleWrites:
    """Writes on the transaction's connection (see ``ScheduleWrites``)."""

    def __init__(self, conn: Conn) -> None:
        self._conn = conn

    def put_schedule(self, schedule: Schedule, at_ms: int) -> None:
        s = schedule
        self._conn.execute(
            "INSERT INTO dreaming_schedules (user_id, scope_id, enabled, interval_ms,"
            " next_run_at, settings, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s, %s)"
            " ON CONFLICT (user_id, scope_id) DO UPDATE SET enabled = excluded.enabled,"
            " interval_ms = excluded.interval_ms, next_run_at = excluded.next_run_at,"
            " settings = excluded.settings, updated_at = excluded.updated_at",
            (
                s.scope.user_id,
                s.scope.scope_id,
                s.enabled,
                s.interval_ms,
                s.next_run_ms,
                jsonb(s.settings),
                at_ms,
                at_ms,
            ),
        )

    def disable_schedules(self, user_id: str | None, scope_id: str | None, at_ms: int) -> int:
        where, params = _where(user_id, scope_id)
        cursor = self._conn.execute(
            f"UPDATE dreaming_schedules SET enabled = false, updated_at = %s WHERE enabled{where}",
            [at_ms, *params],
        )
        return int(cursor.rowcount)

    def claim_due(self, now_ms: int, limit: int) -> list[Schedule]:
        cursor = self._conn.execute(
            "UPDATE dreaming_schedules SET next_run_at = %s + interval_ms, last_run_at = %s,"
            " sweeps = sweeps + 1 WHERE (user_id, scope_id) IN (SELECT user_id, scope_id"
            " FROM dreaming_schedules WHERE enabled AND next_run_at <= %s"
            " ORDER BY next_run_at LIMIT %s FOR UPDATE SKIP LOCKED)"
            # the re-check: a row claimed by a transaction that committed meanwhile is skipped
            f" AND enabled AND next_run_at <= %s RETURNING {_COLUMNS}",
            (now_ms, now_ms, now_ms, limit, now_ms),
        )
        claimed = [_schedule(r) for r in cursor.fetchall()]
        return sorted(claimed, key=lambda s: (s.scope.user_id, s.scope.scope_id))

    def set_last_job(self, scope: Scope, job_id: int) -> None:
        self._conn.execute(
            "UPDATE dreaming_schedules SET last_job_id = %s WHERE user_id = %s AND scope_id = %s",
            (job_id, scope.user_id, scope.scope_id),
        )

    def set_scope_config(self, scope: Scope, config: dict[str, Any], at_ms: int) -> None:
        self._conn.execute(
            "INSERT INTO scope_configs (user_id, scope_id, config, updated_at)"
            " VALUES (%s, %s, %s::jsonb, %s) ON CONFLICT (user_id, scope_id) DO UPDATE SET"
            " config = excluded.config, updated_at = excluded.updated_at",
            (scope.user_id, scope.scope_id, jsonb(config), at_ms),
        )

    def delete_scope_config(self, scope: Scope) -> bool:
        cursor = self._conn.execute(
            "DELETE FROM scope_configs WHERE user_id = %s AND scope_id = %s",
            (scope.user_id, scope.scope_id),
        )
        return cursor.rowcount > 0
