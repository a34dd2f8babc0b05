"""PostgreSQL job queue: rows claimed with a lease by ``FOR UPDATE SKIP LOCKED``.

Workers in any number of processes claim disjoint jobs: a claim locks the rows it takes and
skips rows another claim holds, and a running job whose lease expired is claimable again
(a crashed worker's jobs are picked up). Every state change is guarded by the state it leaves
(``... WHERE state = 'running'``) in one statement, so a late or duplicate report never moves
a job backwards: a ``done`` job stays ``done`` whatever a failing batch reports afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from omoide.errors import Conflict, NotFound
from omoide.store.postgres import rows
from omoide.store.postgres.db import Conn, Database
from omoide.store.postgres.dialect import POSTGRES
from omoide.store.postgres.wakeups import notify_jobs
from omoide.store.sql.jobs import ERROR_CHARS, JobLayout, dumps
from omoide.types import Job, JobState, Scope, now_ms

_CLAIM = """
WITH ready AS (
    SELECT user_id, id FROM jobs
    WHERE (state = 'pending' AND run_after <= %s) OR (state = 'running' AND lease_until < %s)
    ORDER BY run_after, id LIMIT %s
    FOR UPDATE SKIP LOCKED
)
UPDATE jobs j SET state = 'running', attempts = j.attempts + 1, lease_until = %s, updated_at = %s
FROM ready WHERE j.user_id = ready.user_id AND j.id = ready.id
RETURNING j.*
"""


class PostgresJobQueue:
    """The queue operations that run in their own short write transactions, and job reads."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def claim_jobs(self, limit: int, lease_ms: int) -> list[Job]:
        ts = now_ms()
        with self._db.write() as conn:
            found = conn.execute(_CLAIM, (ts, ts, limit, ts + lease_ms, ts)).fetchall()
        claimed = [rows.job(r) for r in found]
        return sorted(claimed, key=lambda j: (j.run_after, j.id))

    def fail_job(
        self, job_id: int, error: str, backoff_ms: int, result: dict[str, Any] | None = None
    ) -> JobState:
        ts = now_ms()
        with self._db.write() as conn:
            conn.execute(
                "UPDATE jobs SET state = CASE WHEN attempts >= max_attempts THEN 'failed'"
                " ELSE 'pending' END, last_error = %s, run_after = %s, lease_until = NULL,"
                " updated_at = %s, result = coalesce(%s::jsonb, result)"
                " WHERE id = %s AND state = 'running'",
                (error[-ERROR_CHARS:], ts + backoff_ms, ts, dumps(POSTGRES, result), job_id),
            )
            return _due_later(conn, job_id, backoff_ms)

    def defer_job(
        self, job_id: int, error: str, delay_ms: int, result: dict[str, Any] | None = None
    ) -> JobState:
        ts = now_ms()
        with self._db.write() as conn:
            conn.execute(
                "UPDATE jobs SET state = 'pending', max_attempts = max_attempts + 1,"
                " last_error = %s, run_after = %s, lease_until = NULL, updated_at = %s,"
                " result = coalesce(%s::jsonb, result) WHERE id = %s AND state = 'running'",
                (error[-ERROR_CHARS:], ts + delay_ms, ts, dumps(POSTGRES, result), job_id),
            )
            return _due_later(conn, job_id, delay_ms)

    def release_jobs(self, job_ids: Sequence[int]) -> int:
        if not job_ids:
            return 0
        ts = now_ms()
        with self._db.write() as conn:
            cursor = conn.execute(
                "UPDATE jobs SET run_after = %s, updated_at = %s"
                " WHERE state = 'pending' AND run_after > %s AND id = ANY(%s)",
                (ts, ts, ts, list(job_ids)),
            )
            return cursor.rowcount

    def renew_lease(self, job_id: int, lease_ms: int) -> bool:
        ts = now_ms()
        with self._db.write() as conn:
            cursor = conn.execute(
                "UPDATE jobs SET lease_until = %s, updated_at = %s"
                " WHERE id = %s AND state = 'running'",
                (ts + lease_ms, ts, job_id),
            )
            return cursor.rowcount > 0

    def retry_job(self, scope: Scope | None, job_id: int) -> Job:
        with self._db.write() as conn:
            job = _job(conn, job_id, lock=True)
            if scope is not None and (job.user_id, job.scope_id) != (scope.user_id, scope.scope_id):
                raise NotFound(f"job {job_id} not found", id=job_id)
            if job.state != JobState.FAILED:
                raise Conflict(f"job {job_id} is {job.state.value}; only failed jobs retry")
            ts = now_ms()
            conn.execute(
                "UPDATE jobs SET state = 'pending', attempts = 0, run_after = %s, updated_at = %s,"
                " last_error = NULL WHERE id = %s AND state = 'failed'",
                (ts, ts, job_id),
            )
            notify_jobs(conn)  # due now: workers of every process take it at once
            return _job(conn, job_id)

    def list_jobs(
        self, scope: Scope | None, state: JobState | None, limit: int, offset: int
    ) -> list[Job]:
        where, params = _job_where(scope, state)
        with self._db.read() as conn:
            cursor = conn.execute(
                f"SELECT * FROM jobs WHERE {where} ORDER BY id DESC LIMIT %s OFFSET %s",
                (*params, limit, offset),
            )
            return [rows.job(r) for r in cursor]

    def job_counts(self, scope: Scope | None) -> dict[str, int]:
        where, params = _job_where(scope, None)
        counts = {s.value: 0 for s in JobState}
        with self._db.read() as conn:
            cursor = conn.execute(
                f"SELECT state, count(*) AS n FROM jobs WHERE {where} GROUP BY state", params
            )
            counts.update({r["state"]: int(r["n"]) for r in cursor})
        return counts

    def get_job(self, job_id: int) -> Job:
        with self._db.read() as conn:
            return _job(conn, job_id)

    def job_steps(self, job_id: int) -> dict[str, dict[str, Any]]:
        with self._db.read() as conn:
            cursor = conn.execute(
                "SELECT step, status, detail, calls, prompt_tokens, completion_tokens"
                " FROM job_steps WHERE job_id = %s ORDER BY created_at, step",
                (job_id,),
            )
            return {r["step"]: {k: v for k, v in r.items() if k != "step"} for r in cursor}


LAYOUT = JobLayout(
    insert_step=(
        "INSERT INTO job_steps (user_id, job_id, step, status, detail, calls, prompt_tokens,"
        " completion_tokens, created_at) SELECT user_id, id, ?, ?, ?, ?, ?, ?, ?"
        " FROM jobs WHERE id = ? AND state = 'running'"
    ),
    announce=notify_jobs,
)


def _due_later(conn: Conn, job_id: int, delay_ms: int) -> JobState:
    """The job's state after a retry or deferral; if it is ``pending`` again, the watchers of
    every process are told to wake their workers when it becomes due (see ``wakeups``)."""
    state = _job(conn, job_id).state
    if state is JobState.PENDING:
        notify_jobs(conn, delay_ms)
    return state


def _job_where(scope: Scope | None, state: JobState | None) -> tuple[str, list[Any]]:
    clauses: list[str] = ["true"]
    params: list[Any] = []
    if scope is not None:
        clauses.append("user_id = %s AND scope_id = %s")
        params += [scope.user_id, scope.scope_id]
    if state is not None:
        clauses.append("state = %s")
        params.append(state.value)
    return " AND ".join(clauses), params


def _job(conn: Conn, job_id: int, *, lock: bool = False) -> Job:
    row = conn.execute(
        "SELECT * FROM jobs WHERE id = %s" + (" FOR UPDATE" if lock else ""), (job_id,)
    ).fetchone()
    if row is None:
        raise NotFound(f"job {job_id} not found", id=job_id)
    return rows.job(row)
