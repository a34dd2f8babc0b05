"""``ScheduleReads`` / ``ScheduleWrites``: dreaming schedules and scope configs.

``claim_due`` is one ``UPDATE ... RETURNING``. On SQLite it runs inside the caller's
``BEGIN IMMEDIATE``: the single writer makes the claim and the sweep job it enqueues one unit.
On PostgreSQL its rows are picked ``FOR UPDATE SKIP LOCKED``: two processes claiming at once
never take the same schedule, and a schedule one of them holds is left to it rather than waited
for (see the port).
"""

from __future__ import annotations

from typing import Any

from omoide.store.ports.schedules import Schedule
from omoide.store.sql.dialect import Conn, Dialect, Reader
from omoide.types import Scope

_COLUMNS = (
    "user_id, scope_id, enabled, interval_ms, next_run_at, settings, last_run_at, last_job_id,"
    " sweeps"
)


def _where(user_id: str | None, scope_id: str | None) -> tuple[str, list[Any]]:
    sql, params = "", list[Any]()
    if user_id is not None:
        sql += " AND user_id = ?"
        params.append(user_id)
    if scope_id is not None:
        sql += " AND scope_id = ?"
        params.append(scope_id)
    return sql, params


class SQLScheduleReads:
    """Reads, each on one read connection (see ``ScheduleReads``)."""

    def __init__(self, db: Reader, dialect: Dialect) -> None:
        self._db = db
        self._d = dialect

    def get_schedule(self, scope: Scope) -> Schedule | None:
        with self._db.read() as conn:
            row = conn.execute(
                self._d.sql(
                    f"SELECT {_COLUMNS} FROM dreaming_schedules WHERE user_id = ? AND scope_id = ?"
                ),
                (scope.user_id, scope.scope_id),
            ).fetchone()
        return _schedule(row, self._d) if row else None

    def list_schedules(self, user_id: str | None, scope_id: str | None) -> list[Schedule]:
        where, params = _where(user_id, scope_id)
        order = f" ORDER BY user_id{self._d.binary}, scope_id{self._d.binary}"
        sql = f"SELECT {_COLUMNS} FROM dreaming_schedules WHERE 1 = 1{where}{order}"
        with self._db.read() as conn:
            return [_schedule(r, self._d) for r in conn.execute(self._d.sql(sql), params)]

    def next_due(self) -> int | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT min(next_run_at) AS due FROM dreaming_schedules"
                f" WHERE enabled = {self._d.true}"
            ).fetchone()
        return None if row is None or row["due"] is None else int(row["due"])

    def get_scope_config(self, scope: Scope) -> dict[str, Any] | None:
        with self._db.read() as conn:
            row = conn.execute(
                self._d.sql("SELECT config FROM scope_configs WHERE user_id = ? AND scope_id = ?"),
                (scope.user_id, scope.scope_id),
            ).fetchone()
        return None if row is None else dict(self._d.load_json(row["config"]))


class SQLScheduleWrites:
    """Writes on the transaction's connection (see ``ScheduleWrites``)."""

    def __init__(self, conn: Conn, dialect: Dialect) -> None:
        self._conn = conn
        self._d = dialect

    def put_schedule(self, schedule: Schedule, at_ms: int) -> None:
        s = schedule
        self._conn.execute(
            self._d.sql(
                "INSERT INTO dreaming_schedules (user_id, scope_id, enabled, interval_ms,"
                " next_run_at, settings, created_at, updated_at)"
                f" VALUES (?, ?, ?, ?, ?, {self._d.json_param}, ?, ?)"
                " ON CONFLICT (user_id, scope_id) DO UPDATE SET enabled = excluded.enabled,"
                " interval_ms = excluded.interval_ms, next_run_at = excluded.next_run_at,"
                " settings = excluded.settings, updated_at = excluded.updated_at"
            ),
            (
                s.scope.user_id,
                s.scope.scope_id,
                s.enabled,
                s.interval_ms,
                s.next_run_ms,
                self._d.dump_json(s.settings),
                at_ms,
                at_ms,
            ),
        )

    def disable_schedules(self, user_id: str | None, scope_id: str | None, at_ms: int) -> int:
        where, params = _where(user_id, scope_id)
        d = self._d
        sql = f"UPDATE dreaming_schedules SET enabled = {d.false}, updated_at = ?"
        sql += f" WHERE enabled = {d.true}{where}"
        return int(self._conn.execute(d.sql(sql), [at_ms, *params]).rowcount)

    def claim_due(self, now_ms: int, limit: int, min_interval_ms: int = 0) -> list[Schedule]:
        d = self._d
        cursor = self._conn.execute(
            d.sql(
                "UPDATE dreaming_schedules SET next_run_at = ?"
                " + CASE WHEN interval_ms < ? THEN ? ELSE interval_ms END, last_run_at = ?,"
                " sweeps = sweeps + 1 WHERE (user_id, scope_id) IN (SELECT user_id, scope_id"
                f" FROM dreaming_schedules WHERE enabled = {d.true} AND next_run_at <= ?"
                f" ORDER BY next_run_at, user_id{d.binary}, scope_id{d.binary}"
                f" LIMIT ?{d.skip_locked})"
                # the re-check: where rows are locked one by one (PostgreSQL), a row claimed by
                # a transaction that committed meanwhile is skipped
                f" AND enabled = {d.true} AND next_run_at <= ? RETURNING {_COLUMNS}"
            ),
            (now_ms, min_interval_ms, min_interval_ms, now_ms, now_ms, limit, now_ms),
        )
        claimed = [_schedule(r, d) for r in cursor.fetchall()]
        return sorted(claimed, key=lambda s: (s.scope.user_id, s.scope.scope_id))

    def set_last_job(self, scope: Scope, job_id: int) -> None:
        self._conn.execute(
            self._d.sql(
                "UPDATE dreaming_schedules SET last_job_id = ? WHERE user_id = ? AND scope_id = ?"
            ),
            (job_id, scope.user_id, scope.scope_id),
        )

    def set_scope_config(self, scope: Scope, config: dict[str, Any], at_ms: int) -> None:
        self._conn.execute(
            self._d.sql(
                "INSERT INTO scope_configs (user_id, scope_id, config, updated_at)"
                f" VALUES (?, ?, {self._d.json_param}, ?) ON CONFLICT (user_id, scope_id)"
                " DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at"
            ),
            (scope.user_id, scope.scope_id, self._d.dump_json(config), at_ms),
        )

    def delete_scope_config(self, scope: Scope) -> bool:
        cursor = self._conn.execute(
            self._d.sql("DELETE FROM scope_configs WHERE user_id = ? AND scope_id = ?"),
            (scope.user_id, scope.scope_id),
        )
        return cursor.rowcount > 0


def _schedule(row: Any, dialect: Dialect) -> Schedule:
    return Schedule(
        scope=Scope(user_id=row["user_id"], scope_id=row["scope_id"]),
        enabled=bool(row["enabled"]),
        interval_ms=int(row["interval_ms"]),
        next_run_ms=int(row["next_run_at"]),
        settings=dialect.load_json(row["settings"]),
        last_run_ms=row["last_run_at"],
        last_job_id=row["last_job_id"],
        sweeps=int(row["sweeps"]),
    )
