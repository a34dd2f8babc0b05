"""The durable job queue: rows committed with the data that caused them.

``JobQueue`` is read outside a transaction (``store.jobs``);
``JobWrites`` is used inside one (``with store.transaction() as tx: tx.jobs...``)
and sees the transaction's own writes.
"""

from __future__ import annotations

from typing import Any, Protocol

from omoide.types import (
    Job,
    JobState,
    Scope,
)


class JobQueue(Protocol):
    """Reads of jobs."""

    def claim_jobs(self, limit: int, lease_ms: int) -> list[Job]: ...
    def fail_job(self, job_id: int, error: str, backoff_ms: int) -> JobState: ...
    def retry_job(self, scope: Scope | None, job_id: int) -> Job: ...
    def list_jobs(
        self, scope: Scope | None, state: JobState | None, limit: int, offset: int
    ) -> list[Job]: ...
    def job_counts(self, scope: Scope | None) -> dict[str, int]: ...
    def get_job(self, job_id: int) -> Job: ...
    def job_steps(self, job_id: int) -> dict[str, dict[str, Any]]: ...


class JobWrites(Protocol):
    """Writes of jobs."""

    def enqueue_job(
        self, scope: Scope, kind: str, payload: dict[str, Any], max_attempts: int = 5
    ) -> int: ...
    def finish_job(self, job_id: int, result: dict[str, Any] | None = None) -> None: ...
    def claim_step(self, job_id: int, step: str, lease_ms: int) -> bool: ...
    def record_step(self, job_id: int, step: str, record: dict[str, Any]) -> None: ...
    def fail_job_now(
        self, job_id: int, error: str, result: dict[str, Any] | None = None
    ) -> None: ...
    def has_pending_job(self, scope: Scope, kind: str, payload: dict[str, Any]) -> bool: ...
