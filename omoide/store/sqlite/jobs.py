"""How SQLite claims jobs for the shared job ports (``store.sql.jobs``).

The claim runs inside ``BEGIN IMMEDIATE``: the single writer picks the due jobs and marks them
running before any other process can. New work needs no announcement across processes here:
the engine wakes its own workers.
"""

from __future__ import annotations

from typing import Any

from omoide.store.sql.dialect import Conn
from omoide.store.sql.jobs import JobLayout


def _claim(conn: Conn, now: int, limit: int, lease_ms: int) -> list[Any]:
    ids = [
        r["id"]
        for r in conn.execute(
            "SELECT id FROM jobs WHERE (state = 'pending' AND run_after <= ?)"
            " OR (state = 'running' AND lease_until < ?) ORDER BY run_after, id LIMIT ?",
            (now, now, limit),
        )
    ]
    for job_id in ids:
        conn.execute(
            "UPDATE jobs SET state = 'running', attempts = attempts + 1, lease_until = ?,"
            " updated_at = ? WHERE id = ?",
            (now + lease_ms, now, job_id),
        )
    return [conn.execute("SELECT * FROM jobs WHERE id = ?", (i,)).fetchone() for i in ids]


def _announce(conn: Conn, delay_ms: int) -> None:
    del conn, delay_ms  # one process's workers are woken by the engine's own signal


LAYOUT = JobLayout(
    insert_step=(
        "INSERT INTO job_steps (job_id, step, status, detail, calls, prompt_tokens,"
        " completion_tokens, created_at) SELECT id, ?, ?, ?, ?, ?, ?, ?"
        " FROM jobs WHERE id = ? AND state = 'running'"
    ),
    announce=_announce,
    claim=_claim,
)
