"""SQLite job queue: rows claimed with a lease, so a crashed worker's jobs are picked up again.

Every state change is guarded by the state it leaves (``... WHERE state = 'running'``), in one
statement, so a late or duplicate report can never move a job backwards: a ``done`` job stays
``done`` whatever a failing batch reports afterwards.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from omoide.errors import Conflict, NotFound
from omoide.store.sql.dialect import Conn
from omoide.store.sql.jobs import ERROR_CHARS, JobLayout, dumps
from omoide.store.sqlite import rows
from omoide.store.sqlite.db import Database
from omoide.store.sqlite.dialect import SQLITE
from omoide.types import Job, JobState, Scope, now_ms


class SQLiteJobQueue:
    """The queue operations that run in their own short write transactions, and job reads."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def claim_jobs(self, limit: int, lease_ms: int) -> list[Job]:
        ts = now_ms()
        with self._db.immediate() as conn:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM jobs WHERE (state = 'pending' AND run_after <= ?)"
                    " OR (state = 'running' AND lease_until < ?)"
                    " ORDER BY run_after, id LIMIT ?",
                    (ts, ts, limit),
                )
            ]
            for job_id in ids:
                conn.execute(
                    "UPDATE jobs SET state = 'running', attempts = attempts + 1,"
                    " lease_until = ?, updated_at = ? WHERE id = ?",
                    (ts + lease_ms, ts, job_id),
                )
            return [_job(conn, i) for i in ids]

    def fail_job(
        self, job_id: int, error: str, backoff_ms: int, result: dict[str, Any] | None = None
    ) -> JobState:
        ts = now_ms()
        with self._db.immediate() as conn:
            conn.execute(
                "UPDATE jobs SET state = CASE WHEN attempts >= max_attempts THEN 'failed'"
                " ELSE 'pending' END, last_error = ?, run_after = ?, lease_until = NULL,"
                " updated_at = ?, result = coalesce(?, result) WHERE id = ? AND state = 'running'",
                (error[-ERROR_CHARS:], ts + backoff_ms, ts, dumps(SQLITE, result), job_id),
            )
            return _job(conn, job_id).state

    def defer_job(
        self, job_id: int, error: str, delay_ms: int, result: dict[str, Any] | None = None
    ) -> JobState:
        ts = now_ms()
        with self._db.immediate() as conn:
            conn.execute(
                "UPDATE jobs SET state = 'pending', max_attempts = max_attempts + 1,"
                " last_error = ?, run_after = ?, lease_until = NULL, updated_at = ?,"
                " result = coalesce(?, result) WHERE id = ? AND state = 'running'",
                (error[-ERROR_CHARS:], ts + delay_ms, ts, dumps(SQLITE, result), job_id),
            )
            return _job(conn, job_id).state

    def release_jobs(self, job_ids: Sequence[int]) -> int:
        if not job_ids:
            return 0
        ts = now_ms()
        marks = ",".join("?" * len(job_ids))
        with self._db.immediate() as conn:
            cur = conn.execute(
                "UPDATE jobs SET run_after = ?, updated_at = ?"
                f" WHERE state = 'pending' AND run_after > ? AND id IN ({marks})",
                (ts, ts, ts, *job_ids),
            )
            return cur.rowcount

    def renew_lease(self, job_id: int, lease_ms: int) -> bool:
        ts = now_ms()
        with self._db.immediate() as conn:
            cur = conn.execute(
                "UPDATE jobs SET lease_until = ?, updated_at = ?"
                " WHERE id = ? AND state = 'running'",
                (ts + lease_ms, ts, job_id),
            )
            return cur.rowcount > 0

    def retry_job(self, scope: Scope | None, job_id: int) -> Job:
        with self._db.immediate() as conn:
            job = _job(conn, job_id)
            if scope is not None and (job.user_id, job.scope_id) != (scope.user_id, scope.scope_id):
                raise NotFound(f"job {job_id} not found", id=job_id)
            if job.state != JobState.FAILED:
                raise Conflict(f"job {job_id} is {job.state.value}; only failed jobs retry")
            ts = now_ms()
            conn.execute(
                "UPDATE jobs SET state = 'pending', attempts = 0, run_after = ?, updated_at = ?,"
                " last_error = NULL WHERE id = ? AND state = 'failed'",
                (ts, ts, job_id),
            )
            return _job(conn, job_id)

    def list_jobs(
        self, scope: Scope | None, state: JobState | None, limit: int, offset: int
    ) -> list[Job]:
        where, params = _job_where(scope, state)
        cursor = self._db.reader().execute(
            f"SELECT * FROM jobs WHERE {where} ORDER BY id DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [rows.job_from_row(r) for r in cursor]

    def job_counts(self, scope: Scope | None) -> dict[str, int]:
        where, params = _job_where(scope, None)
        counts = {s.value: 0 for s in JobState}
        cursor = self._db.reader().execute(
            f"SELECT state, count(*) FROM jobs WHERE {where} GROUP BY state", params
        )
        counts.update({r[0]: int(r[1]) for r in cursor})
        return counts

    def get_job(self, job_id: int) -> Job:
        return _job(self._db.reader(), job_id)

    def job_steps(self, job_id: int) -> dict[str, dict[str, Any]]:
        cursor = self._db.reader().execute(
            "SELECT step, status, detail, calls, prompt_tokens, completion_tokens FROM job_steps"
            " WHERE job_id = ? ORDER BY created_at",
            (job_id,),
        )
        return {r["step"]: {k: v for k, v in dict(r).items() if k != "step"} for r in cursor}


def _announce(conn: Conn, delay_ms: int) -> None:
    del conn, delay_ms  # one process's workers are woken by the engine's own signal


LAYOUT = JobLayout(
    insert_step=(
        "INSERT INTO job_steps (job_id, step, status, detail, calls, prompt_tokens,"
        " completion_tokens, created_at) SELECT id, ?, ?, ?, ?, ?, ?, ?"
        " FROM jobs WHERE id = ? AND state = 'running'"
    ),
    announce=_announce,
)


def _job_where(scope: Scope | None, state: JobState | None) -> tuple[str, list[Any]]:
    clauses: list[str] = ["1"]
    params: list[Any] = []
    if scope is not None:
        clauses.append("user_id = ? AND scope_id = ?")
        params += [scope.user_id, scope.scope_id]
    if state is not None:
        clauses.append("state = ?")
        params.append(state.value)
    return " AND ".join(clauses), params


def _job(conn: sqlite3.Connection, job_id: int) -> Job:
    row = conn.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
    if row is None:
        raise NotFound(f"job {job_id} not found", id=job_id)
    return rows.job_from_row(row)
