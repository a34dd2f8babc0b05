"""``JobWrites``: the job writes that belong to the caller's transaction.

Every state change is guarded by the state it leaves (``... WHERE state = 'running'``) in one
statement, so a late or duplicate report never moves a job backwards. Claiming jobs differs per
backend (``BEGIN IMMEDIATE`` on SQLite, ``FOR UPDATE SKIP LOCKED`` on PostgreSQL) and stays in
each backend's queue; what differs here comes in a ``JobLayout``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from omoide.errors import Conflict
from omoide.store.sql.dialect import Conn, Dialect
from omoide.types import Scope, now_ms

ERROR_CHARS = 4000  # the end of a traceback is the informative part


@dataclass(frozen=True)
class JobLayout:
    """What differs in how a backend records job steps and announces new work."""

    #: ``INSERT INTO job_steps ... SELECT``, parameters: step, status, detail, calls,
    #: prompt tokens, completion tokens, time, job id; no row unless the job is running.
    insert_step: str
    #: Tells the workers of every process that a job is due in ``delay_ms`` (on commit).
    announce: Callable[[Conn, int], None]


def dumps(d: Dialect, result: dict[str, Any] | None) -> str | None:
    return None if result is None else d.dump_json(result)


class SQLJobWrites:
    """Job writes on the transaction's connection (see ``JobWrites``)."""

    def __init__(self, conn: Conn, dialect: Dialect, layout: JobLayout) -> None:
        self._conn = conn
        self._d = dialect
        self._layout = layout

    def enqueue_job(
        self, scope: Scope, kind: str, payload: dict[str, Any], max_attempts: int = 5
    ) -> int:
        ts, d = now_ms(), self._d
        row = self._conn.execute(
            d.sql(
                "INSERT INTO jobs (kind, user_id, scope_id, payload, max_attempts, run_after,"
                f" created_at, updated_at) VALUES (?, ?, ?, {d.json_param}, ?, ?, ?, ?)"
                " RETURNING id"
            ),
            (kind, scope.user_id, scope.scope_id, d.dump_json(payload), max_attempts, ts, ts, ts),
        ).fetchone()
        self._layout.announce(self._conn, 0)
        return int(row["id"])

    def finish_job(self, job_id: int, result: dict[str, Any] | None = None) -> None:
        self._conn.execute(
            self._d.sql(
                "UPDATE jobs SET state = 'done', lease_until = NULL, updated_at = ?,"
                f" result = coalesce({self._d.json_param}, result)"
                " WHERE id = ? AND state = 'running'"
            ),
            (now_ms(), dumps(self._d, result), job_id),
        )

    def claim_step(self, job_id: int, step: str, lease_ms: int) -> bool:
        ts = now_ms()
        # The UPDATE takes the job's write lock (the row's on PostgreSQL): a racing claim of a
        # step of the same job waits here, then sees the step this one records.
        cur = self._conn.execute(
            self._d.sql(
                "UPDATE jobs SET lease_until = ?, updated_at = ? WHERE id = ? AND state = 'running'"
            ),
            (ts + lease_ms, ts, job_id),
        )
        if not cur.rowcount:
            return False
        row = self._conn.execute(
            self._d.sql("SELECT 1 FROM job_steps WHERE job_id = ? AND step = ?"), (job_id, step)
        ).fetchone()
        return row is None

    def record_step(self, job_id: int, step: str, record: dict[str, Any]) -> None:
        try:
            with self._d.savepoint(self._conn):  # a Conflict leaves the caller's tx usable
                self._conn.execute(
                    self._d.sql(self._layout.insert_step),
                    (
                        step,
                        record["status"],
                        record.get("detail", ""),
                        record.get("calls", 0),
                        record.get("prompt_tokens", 0),
                        record.get("completion_tokens", 0),
                        now_ms(),
                        job_id,
                    ),
                )
        except self._d.unique_violation as exc:
            raise Conflict(f"step {step!r} of job {job_id} is recorded already") from exc

    def fail_job_now(self, job_id: int, error: str, result: dict[str, Any] | None = None) -> None:
        self._conn.execute(
            self._d.sql(
                "UPDATE jobs SET state = 'failed', last_error = ?, lease_until = NULL,"
                f" updated_at = ?, result = coalesce({self._d.json_param}, result)"
                " WHERE id = ? AND state = 'running'"
            ),
            (error[-ERROR_CHARS:], now_ms(), dumps(self._d, result), job_id),
        )

    def has_pending_job(self, scope: Scope, kind: str, payload: dict[str, Any]) -> bool:
        row = self._conn.execute(
            self._d.sql(
                "SELECT 1 FROM jobs WHERE user_id = ? AND scope_id = ? AND state = 'pending'"
                f" AND kind = ? AND payload = {self._d.json_param} LIMIT 1"
            ),
            (scope.user_id, scope.scope_id, kind, self._d.dump_json(payload)),
        ).fetchone()
        return row is not None
