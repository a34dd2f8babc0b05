"""SQLite ``ScheduleReads`` / ``ScheduleWrites``: dreaming schedules and scope configs.

``claim_due`` is one ``UPDATE ... RETURNING`` inside the caller's ``BEGIN IMMEDIATE``: the
single writer makes the claim and the sweep job it enqueues one unit (see the port).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from omoide.store.ports.schedules import Schedule
from omoide.store.sqlite.db import Database
from omoide.types import Scope

_COLUMNS = (
    "user_id, scope_id, enabled, interval_ms, next_run_at, settings, last_run_at, last_job_id,"
    " sweeps"
)


def _schedule(row: sqlite3.Row | tuple[Any, ...]) -> Schedule:
    user, scope, enabled, interval, next_run, settings, last_run, job, sweeps = row
    return Schedule(
        scope=Scope(user_id=user, scope_id=scope),
        enabled=bool(enabled),
        interval_ms=int(interval),
        next_run_ms=int(next_run),
        settings=json.loads(settings),
        last_run_ms=last_run,
        last_job_id=job,
        sweeps=int(sweeps),
    )


class SQLiteScheduleReads:
    """Reads on reader connections (see ``ScheduleReads``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get_schedule(self, scope: Scope) -> Schedule | None:
        row = (
            self._db.reader()
            .execute(
                f"SELECT {_COLUMNS} FROM dreaming_schedules WHERE user_id = ? AND scope_id = ?",
                (scope.user_id, scope.scope_id),
            )
            .fetchone()
        )
        return _schedule(row) if row else None

    def list_schedules(self, user_id: str | None, scope_id: str | None) -> list[Schedule]:
        sql = f"SELECT {_COLUMNS} FROM dreaming_schedules WHERE 1 = 1"
        params: list[str] = []
        if user_id is not None:
            sql += " AND user_id = ?"
            params.append(user_id)
        if scope_id is not None:
            sql += " AND scope_id = ?"
            params.append(scope_id)
        cursor = self._db.reader().execute(sql + " ORDER BY user_id, scope_id", params)
        return [_schedule(r) for r in cursor]

    def next_due(self) -> int | None:
        row = (
            self._db.reader()
            .execute("SELECT min(next_run_at) FROM dreaming_schedules WHERE enabled = 1")
            .fetchone()
        )
        return None if row[0] is None else int(row[0])

    def get_scope_config(self, scope: Scope) -> dict[str, Any] | None:
        row = (
            self._db.reader()
            .execute(
                "SELECT config FROM scope_configs WHERE user_id = ? AND scope_id = ?",
                (scope.user_id, scope.scope_id),
            )
            .fetchone()
        )
        return None if row is None else dict(json.loads(row[0]))


class SQLiteScheduleWrites:
    """Writes on the transaction's connection (see ``ScheduleWrites``)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def put_schedule(self, schedule: Schedule, at_ms: int) -> None:
        s = schedule
        self._conn.execute(
            "INSERT INTO dreaming_schedules (user_id, scope_id, enabled, interval_ms,"
            " next_run_at, settings, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (user_id, scope_id) DO UPDATE SET enabled = excluded.enabled,"
            " interval_ms = excluded.interval_ms, next_run_at = excluded.next_run_at,"
            " settings = excluded.settings, updated_at = excluded.updated_at",
            (
                s.scope.user_id,
                s.scope.scope_id,
                int(s.enabled),
                s.interval_ms,
                s.next_run_ms,
                json.dumps(s.settings),
                at_ms,
                at_ms,
            ),
        )

    def disable_schedules(self, user_id: str | None, scope_id: str | None, at_ms: int) -> int:
        sql = "UPDATE dreaming_schedules SET enabled = 0, updated_at = ? WHERE enabled = 1"
        params: list[object] = [at_ms]
        if user_id is not None:
            sql += " AND user_id = ?"
            params.append(user_id)
        if scope_id is not None:
            sql += " AND scope_id = ?"
            params.append(scope_id)
        return int(self._conn.execute(sql, params).rowcount)

    def claim_due(self, now_ms: int, limit: int) -> list[Schedule]:
        cursor = self._conn.execute(
            "UPDATE dreaming_schedules SET next_run_at = ? + interval_ms, last_run_at = ?,"
            " sweeps = sweeps + 1 WHERE (user_id, scope_id) IN (SELECT user_id, scope_id"
            " FROM dreaming_schedules WHERE enabled = 1 AND next_run_at <= ?"
            f" ORDER BY next_run_at, user_id, scope_id LIMIT ?) RETURNING {_COLUMNS}",
            (now_ms, now_ms, now_ms, limit),
        )
        claimed = [_schedule(r) for r in cursor.fetchall()]
        return sorted(claimed, key=lambda s: (s.scope.user_id, s.scope.scope_id))

    def set_last_job(self, scope: Scope, job_id: int) -> None:
        self._conn.execute(
            "UPDATE dreaming_schedules SET last_job_id = ? WHERE user_id = ? AND scope_id = ?",
            (job_id, scope.user_id, scope.scope_id),
        )

    def set_scope_config(self, scope: Scope, config: dict[str, Any], at_ms: int) -> None:
        self._conn.execute(
            "INSERT INTO scope_configs (user_id, scope_id, config, updated_at)"
            " VALUES (?, ?, ?, ?) ON CONFLICT (user_id, scope_id) DO UPDATE SET"
            " config = excluded.config, updated_at = excluded.updated_at",
            (scope.user_id, scope.scope_id, json.dumps(config), at_ms),
        )

    def delete_scope_config(self, scope: Scope) -> bool:
        cursor = self._conn.execute(
            "DELETE FROM scope_configs WHERE user_id = ? AND scope_id = ?",
            (scope.user_id, scope.scope_id),
        )
        return cursor.rowcount > 0
