"""``JobQueue`` and ``JobWrites``: jobs as rows claimed with a lease.

A running job whose lease expired is claimable again (a crashed worker's jobs are picked up).
Every state change is guarded by the state it leaves (``... WHERE state = 'running'``) in one
statement, so a late or duplicate report never moves a job backwards. Claiming jobs differs per
backend (``BEGIN IMMEDIATE`` on SQLite, ``FOR UPDATE SKIP LOCKED`` on PostgreSQL) and stays in
each backend's queue; what differs here comes in a ``JobLayout``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from omoide.errors import Conflict, NotFound
from omoide.store.records import ms_to_dt_required
from omoide.store.sql.dialect import Conn, Dialect, Reader
from omoide.types import Job, JobState, Scope, now_ms

ERROR_CHARS = 4000  # the end of a traceback is the informative part


@dataclass(frozen=True)
class JobLayout:
    """What differs in how a backend records job steps and announces new work."""

    #: ``INSERT INTO job_steps ... SELECT``, parameters: step, status, detail, calls,
    #: prompt tokens, completion tokens, time, job id; no row unless the job is running.
    insert_step: str
    #: Tells the workers of every process that a job is due in ``delay_ms`` (on commit).
    announce: Callable[[Conn, int], None]
    #: Marks up to ``limit`` claimable jobs running with a lease until ``now + lease_ms`` and
    #: returns their rows; called with (connection, now, limit, lease_ms) in a write
    #: transaction. The one step the backends do their own way (see the module docstring).
    claim: Callable[[Conn, int, int, int], list[Any]]
    #: An expression the insert of a new job returns that announces it (as ``announce`` with no
    #: delay), so the announcement costs no statement of its own; empty: ``announce`` is called.
    announce_new: str = ""


class Database(Reader, Protocol):
    """Reads (``Reader``) and short write transactions of their own."""

    def write(self) -> AbstractContextManager[Conn]: ...


def dumps(d: Dialect, result: dict[str, Any] | None) -> str | None:
    return None if result is None else d.dump_json(result)


def job(row: Any, d: Dialect) -> Job:
    return Job(
        id=row["id"],
        kind=row["kind"],
        state=JobState(row["state"]),
        user_id=row["user_id"],
        scope_id=row["scope_id"],
        payload=d.load_json(row["payload"]),
        attempts=row["attempts"],
        max_attempts=row["max_attempts"],
        last_error=row["last_error"],
        run_after=ms_to_dt_required(row["run_after"]),
        created_at=ms_to_dt_required(row["created_at"]),
        updated_at=ms_to_dt_required(row["updated_at"]),
        result=d.load_json(row["result"]) if row["result"] else None,
    )


def _job(conn: Conn, d: Dialect, job_id: int, lock: bool = False) -> Job:
    sql = d.sql("SELECT * FROM jobs WHERE id = ?") + (d.row_lock if lock else "")
    row = conn.execute(sql, (job_id,)).fetchone()
    if row is None:
        raise NotFound(f"job {job_id} not found", id=job_id)
    return job(row, d)


def _job_where(scope: Scope | None, state: JobState | None) -> tuple[str, list[Any]]:
    clauses: list[str] = ["1 = 1"]
    params: list[Any] = []
    if scope is not None:
        clauses.append("user_id = ? AND scope_id = ?")
        params += [scope.user_id, scope.scope_id]
    if state is not None:
        clauses.append("state = ?")
        params.append(state.value)
    return " AND ".join(clauses), params


class SQLJobQueue:
    """The queue operations that run in their own short write transactions, and job reads."""

    def __init__(self, db: Database, dialect: Dialect, layout: JobLayout) -> None:
        self._db = db
        self._d = dialect
        self._layout = layout

    def claim_jobs(self, limit: int, lease_ms: int) -> list[Job]:
        with self._db.write() as conn:
            found = self._layout.claim(conn, now_ms(), limit, lease_ms)
        claimed = [job(r, self._d) for r in found]
        return sorted(claimed, key=lambda j: (j.run_after, j.id))

    def fail_job(
        self, job_id: int, error: str, backoff_ms: int, result: dict[str, Any] | None = None
    ) -> JobState:
        ts, d = now_ms(), self._d
        with self._db.write() as conn:
            conn.execute(
                d.sql(
                    "UPDATE jobs SET state = CASE WHEN attempts >= max_attempts THEN 'failed'"
                    " ELSE 'pending' END, last_error = ?, run_after = ?, lease_until = NULL,"
                    f" updated_at = ?, result = coalesce({d.json_param}, result)"
                    " WHERE id = ? AND state = 'running'"
                ),
                (error[-ERROR_CHARS:], ts + backoff_ms, ts, dumps(d, result), job_id),
            )
            return self._due_later(conn, job_id, backoff_ms)

    def defer_job(
        self, job_id: int, error: str, delay_ms: int, result: dict[str, Any] | None = None
    ) -> JobState:
        ts, d = now_ms(), self._d
        with self._db.write() as conn:
            conn.execute(
                d.sql(
                    "UPDATE jobs SET state = 'pending', max_attempts = max_attempts + 1,"
                    " last_error = ?, run_after = ?, lease_until = NULL, updated_at = ?,"
                    f" result = coalesce({d.json_param}, result)"
                    " WHERE id = ? AND state = 'running'"
                ),
                (error[-ERROR_CHARS:], ts + delay_ms, ts, dumps(d, result), job_id),
            )
            return self._due_later(conn, job_id, delay_ms)

    def release_jobs(self, job_ids: Sequence[int]) -> int:
        if not job_ids:
            return 0
        ts, d = now_ms(), self._d
        among, ids = d.in_list("id", job_ids)
        with self._db.write() as conn:
            cursor = conn.execute(
                d.sql(
                    "UPDATE jobs SET run_after = ?, updated_at = ?"
                    f" WHERE state = 'pending' AND run_after > ? AND {among}"
                ),
                (ts, ts, ts, *ids),
            )
            return cursor.rowcount

    def renew_lease(self, job_id: int, lease_ms: int) -> bool:
        ts = now_ms()
        with self._db.write() as conn:
            cursor = conn.execute(
                self._d.sql(
                    "UPDATE jobs SET lease_until = ?, updated_at = ?"
                    " WHERE id = ? AND state = 'running'"
                ),
                (ts + lease_ms, ts, job_id),
            )
            return cursor.rowcount > 0

    def retry_job(self, scope: Scope | None, job_id: int) -> Job:
        d = self._d
        with self._db.write() as conn:
            found = _job(conn, d, job_id, lock=True)
            if scope is not None and (found.user_id, found.scope_id) != (
                scope.user_id,
                scope.scope_id,
            ):
                raise NotFound(f"job {job_id} not found", id=job_id)
            if found.state != JobState.FAILED:
                raise Conflict(f"job {job_id} is {found.state.value}; only failed jobs retry")
            ts = now_ms()
            conn.execute(
                d.sql(
                    "UPDATE jobs SET state = 'pending', attempts = 0, run_after = ?,"
                    " updated_at = ?, last_error = NULL WHERE id = ? AND state = 'failed'"
                ),
                (ts, ts, job_id),
            )
            self._layout.announce(conn, 0)  # due now: workers of every process take it
            return _job(conn, d, job_id)

    def list_jobs(
        self, scope: Scope | None, state: JobState | None, limit: int, offset: int
    ) -> list[Job]:
        where, params = _job_where(scope, state)
        with self._db.read() as conn:
            cursor = conn.execute(
                self._d.sql(f"SELECT * FROM jobs WHERE {where} ORDER BY id DESC LIMIT ? OFFSET ?"),
                (*params, limit, offset),
            )
            return [job(r, self._d) for r in cursor]

    def job_counts(self, scope: Scope | None) -> dict[str, int]:
        where, params = _job_where(scope, None)
        counts = {s.value: 0 for s in JobState}
        with self._db.read() as conn:
            cursor = conn.execute(
                self._d.sql(f"SELECT state, count(*) AS n FROM jobs WHERE {where} GROUP BY state"),
                params,
            )
            counts.update({r["state"]: int(r["n"]) for r in cursor})
        return counts

    def get_job(self, job_id: int) -> Job:
        with self._db.read() as conn:
            return _job(conn, self._d, job_id)

    def prune_finished_jobs(self, ended_before_ms: int, limit: int) -> int:
        with self._db.write() as conn:
            cursor = conn.execute(
                self._d.sql(
                    "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs"
                    " WHERE state IN ('done', 'failed') AND updated_at < ? ORDER BY id LIMIT ?)"
                ),
                (ended_before_ms, limit),
            )
            return cursor.rowcount

    def job_steps(self, job_id: int) -> dict[str, dict[str, Any]]:
        with self._db.read() as conn:
            cursor = conn.execute(
                self._d.sql(
                    "SELECT step, status, detail, calls, prompt_tokens, completion_tokens"
                    f" FROM job_steps WHERE job_id = ? ORDER BY created_at, step{self._d.binary}"
                ),
                (job_id,),
            )
            return {r["step"]: {k: v for k, v in dict(r).items() if k != "step"} for r in cursor}

    def _due_later(self, conn: Conn, job_id: int, delay_ms: int) -> JobState:
        """The job's state after a retry or deferral; if it is ``pending`` again, the workers
        of every process are told when it becomes due."""
        state = _job(conn, self._d, job_id).state
        if state is JobState.PENDING:
            self._layout.announce(conn, delay_ms)
        return state


class SQLJobWrites:
    """Job writes on the transaction's connection (see ``JobWrites``)."""

    def __init__(self, conn: Conn, dialect: Dialect, layout: JobLayout) -> None:
        self._conn = conn
        self._d = dialect
        self._layout = layout

    def enqueue_job(
        self, scope: Scope, kind: str, payload: dict[str, Any], max_attempts: int = 5
    ) -> int:
        ts, d, announce = now_ms(), self._d, self._layout.announce_new
        row = self._conn.execute(
            d.sql(
                "INSERT INTO jobs (kind, user_id, scope_id, payload, max_attempts, run_after,"
                f" created_at, updated_at) VALUES (?, ?, ?, {d.json_param}, ?, ?, ?, ?)"
                f" RETURNING id{', ' + announce if announce else ''}"
            ),
            (kind, scope.user_id, scope.scope_id, d.dump_json(payload), max_attempts, ts, ts, ts),
        ).fetchone()
        if not announce:
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
