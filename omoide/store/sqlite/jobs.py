"""Durable job rows: claimed with a lease, so a crashed worker's jobs are picked up again."""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

from omoide.errors import Conflict, NotFound
from omoide.store.sqlite import rows
from omoide.types import Job, JobState, Scope, now_ms


class JobsMixin:
    _writer: sqlite3.Connection
    _write_lock: threading.RLock

    def _reader(self) -> sqlite3.Connection:
        raise NotImplementedError

    def claim_jobs(self, limit: int, lease_ms: int) -> list[Job]:
        """Take up to ``limit`` due jobs (or ones whose worker's lease expired)."""
        ts = now_ms()
        with self._write_lock:
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
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
                jobs = [self._job(conn, i) for i in ids]
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        return jobs

    def fail_job(self, job_id: int, error: str, backoff_ms: int) -> JobState:
        """Record a failure: reschedule after ``backoff_ms``, or mark failed when out of tries."""
        ts = now_ms()
        with self._write_lock:
            conn = self._writer
            row = conn.execute(
                "SELECT attempts, max_attempts FROM jobs WHERE id = ?", (job_id,)
            ).fetchone()
            if row is None:
                raise NotFound(f"job {job_id} not found", id=job_id)
            state = JobState.FAILED if row[0] >= row[1] else JobState.PENDING
            conn.execute(
                "UPDATE jobs SET state = ?, last_error = ?, run_after = ?, lease_until = NULL,"
                " updated_at = ? WHERE id = ?",
                (state.value, error[-4000:], ts + backoff_ms, ts, job_id),
            )
        return state

    def retry_job(self, scope: Scope | None, job_id: int) -> Job:
        with self._write_lock:
            conn = self._writer
            job = self._job(conn, job_id)
            if scope is not None and (job.user_id, job.scope_id) != (scope.user_id, scope.scope_id):
                raise NotFound(f"job {job_id} not found", id=job_id)
            if job.state != JobState.FAILED:
                raise Conflict(f"job {job_id} is {job.state.value}; only failed jobs retry")
            conn.execute(
                "UPDATE jobs SET state = 'pending', attempts = 0, run_after = ?, updated_at = ?"
                " WHERE id = ?",
                (now_ms(), now_ms(), job_id),
            )
            return self._job(conn, job_id)

    def list_jobs(
        self, scope: Scope | None, state: JobState | None, limit: int, offset: int
    ) -> list[Job]:
        where, params = self._job_where(scope, state)
        cursor = self._reader().execute(
            f"SELECT * FROM jobs WHERE {where} ORDER BY id DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return [rows.job_from_row(r) for r in cursor]

    def job_counts(self, scope: Scope | None) -> dict[str, int]:
        where, params = self._job_where(scope, None)
        counts = {s.value: 0 for s in JobState}
        cursor = self._reader().execute(
            f"SELECT state, count(*) FROM jobs WHERE {where} GROUP BY state", params
        )
        counts.update({r[0]: int(r[1]) for r in cursor})
        return counts

    @staticmethod
    def _job_where(scope: Scope | None, state: JobState | None) -> tuple[str, list[Any]]:
        clauses, params = ["1"], []
        if scope is not None:
            clauses.append("user_id = ? AND scope_id = ?")
            params += [scope.user_id, scope.scope_id]
        if state is not None:
            clauses.append("state = ?")
            params.append(state.value)
        return " AND ".join(clauses), params

    @staticmethod
    def _job(conn: sqlite3.Connection, job_id: int) -> Job:
        row = conn.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is None:
            raise NotFound(f"job {job_id} not found", id=job_id)
        return rows.job_from_row(row)
