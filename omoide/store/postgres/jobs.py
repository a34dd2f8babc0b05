"""How PostgreSQL claims jobs for the shared job ports (``store.sql.jobs``).

Workers in any number of processes claim disjoint jobs: a claim locks the rows it takes and
skips rows another claim holds (``FOR UPDATE SKIP LOCKED``), in one statement. New or retried
work is announced with ``pg_notify`` on commit, so the workers of every process wake (a new job
by the statement that inserts it).
"""

from __future__ import annotations

from typing import Any

from omoide.store.postgres.wakeups import NOTIFY_NOW_SQL, notify_jobs
from omoide.store.sql.dialect import Conn
from omoide.store.sql.jobs import JobLayout

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


def _claim(conn: Conn, now: int, limit: int, lease_ms: int) -> list[Any]:
    found: list[Any] = conn.execute(_CLAIM, (now, now, limit, now + lease_ms, now)).fetchall()
    return found


LAYOUT = JobLayout(
    insert_step=(
        "INSERT INTO job_steps (user_id, job_id, step, status, detail, calls, prompt_tokens,"
        " completion_tokens, created_at) SELECT user_id, id, ?, ?, ?, ?, ?, ?, ?"
        " FROM jobs WHERE id = ? AND state = 'running'"
    ),
    announce=notify_jobs,
    claim=_claim,
    announce_new=NOTIFY_NOW_SQL,  # the insert of a job announces it: no statement of its own
)
