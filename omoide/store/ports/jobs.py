"""The durable job queue: rows committed with the data that caused them.

``JobQueue`` (``store.jobs``) holds the reads and the queue operations that are transactions of
their own (claim, fail, retry): call them outside ``store.transaction()``, never inside one.
``JobWrites`` (``tx.jobs``) holds the writes that must commit with other data: enqueue a job
with the memory it is about, finish a job with the result it produced.

Tenant rule: a job belongs to the tenant it was enqueued for, but the queue is global: workers
claim jobs of every tenant, and the methods that take a bare ``job_id`` (``claim_*``,
``finish_job``, ``fail_job*``, ``record_step``, ``get_job``, ``job_steps``) address it by id
regardless of tenant; callers exposing them to a tenant must check ``Job.user_id/scope_id``.
``scope=None`` means "every tenant" (an admin view) where it is accepted.

States and the one rule every backend must keep: ``pending -> running`` (claimed with a lease),
``running -> done | pending (retry later) | failed``, ``failed -> pending`` (only by
``retry_job``). A change that leaves ``running`` is applied only while the job is ``running``,
checked in the same atomic statement as the change; otherwise it is a no-op. So a ``done`` job
never goes back to ``pending`` or ``failed``: when a batch handler raises after finishing some
of its jobs, failing the whole batch leaves those ``done``. Leases make crashed workers'
jobs claimable again; they do not name an owner, so two workers can hold one job after a lease
expired (handlers are idempotent, and ``claim_step`` keeps steps from running twice).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from omoide.types import (
    Job,
    JobState,
    Scope,
)


class JobQueue(Protocol):
    """Queue operations in their own transactions, and reads of jobs (global by id)."""

    def claim_jobs(self, limit: int, lease_ms: int) -> list[Job]:
        """Take up to ``limit`` due jobs of any tenant and return them ``running``.

        Due: ``pending`` with ``run_after <= now``, or ``running`` with an expired lease (its
        worker died). Oldest ``run_after`` first, then by id. Each claimed job gets
        ``attempts + 1`` and a lease until now + ``lease_ms``. Selection and update are one
        transaction: two workers (threads or processes) never claim the same job while its
        lease holds.
        """
        ...

    def fail_job(
        self, job_id: int, error: str, backoff_ms: int, result: dict[str, Any] | None = None
    ) -> JobState:
        """Record a failed attempt of a ``running`` job and return the job's state after it.

        With attempts left the job goes back to ``pending`` with ``run_after = now +
        backoff_ms``; after ``max_attempts`` it is ``failed``. The error (its last 4,000
        characters) is kept on the row, and ``result`` (what the attempt got done) when given.
        A job that is not ``running`` (already ``done``, ``failed`` or ``pending``) is left
        exactly as it is and its current state returned: a late failure report never undoes
        a finished job. ``NotFound`` if no job has this id.
        """
        ...

    def defer_job(
        self, job_id: int, error: str, delay_ms: int, result: dict[str, Any] | None = None
    ) -> JobState:
        """Put a ``running`` job back to ``pending`` for ``delay_ms`` without using up an
        attempt (its ``max_attempts`` grows by one): the run failed for a reason outside the
        job, such as an LLM outage. Keeps ``error`` and ``result`` as ``fail_job`` does; a job
        that is not ``running`` is left as it is. ``NotFound`` if no job has this id."""
        ...

    def release_jobs(self, job_ids: Sequence[int]) -> int:
        """Make the ``pending`` jobs among ``job_ids`` due now, ending the backoff they wait out
        (the LLM answers again after an outage). Attempts, errors and results stay; jobs in
        another state, and unknown ids, are left as they are. Returns how many were made due."""
        ...

    def renew_lease(self, job_id: int, lease_ms: int) -> bool:
        """Extend a ``running`` job's lease to now + ``lease_ms`` (a long step in progress);
        False when the job is no longer ``running``."""
        ...

    def retry_job(self, scope: Scope | None, job_id: int) -> Job:
        """Give a ``failed`` job a fresh start: ``pending``, attempts 0, due now, no
        ``last_error`` (the error was of the run given up on; its ``result`` stays).

        ``NotFound`` if no such job, or it belongs to another tenant than ``scope`` (``None``:
        any tenant). ``Conflict`` if the job is not ``failed`` (pending, running or done jobs
        are never moved; the state check and the change are one transaction).
        """
        ...

    def list_jobs(
        self, scope: Scope | None, state: JobState | None, limit: int, offset: int
    ) -> list[Job]:
        """One page of jobs, newest (highest id) first, of ``scope`` (``None``: every
        tenant), optionally only in ``state``."""
        ...

    def job_counts(self, scope: Scope | None) -> dict[str, int]:
        """Jobs per state of ``scope`` (``None``: every tenant); every state is a key, 0 if
        none."""
        ...

    def get_job(self, job_id: int) -> Job:
        """One job by id, of any tenant. ``NotFound`` if none."""
        ...

    def prune_finished_jobs(self, ended_before_ms: int, limit: int) -> int:
        """Delete up to ``limit`` jobs of any tenant that are ``done`` or ``failed`` and last
        changed before ``ended_before_ms``, with their steps, oldest first; how many. A
        ``pending`` or ``running`` job is never deleted."""
        ...

    def job_steps(self, job_id: int) -> dict[str, dict[str, Any]]:
        """The job's recorded steps:
        ``{step: {status, detail, calls, prompt_tokens, completion_tokens}}``, ordered by the
        millisecond each was recorded (no order promised within one millisecond); ``{}`` for
        a job without steps or an unknown id."""
        ...


class JobWrites(Protocol):
    """Job writes inside the caller's transaction (committed with the data they concern)."""

    def enqueue_job(
        self, scope: Scope, kind: str, payload: dict[str, Any], max_attempts: int = 5
    ) -> int:
        """Add a ``pending`` job of the tenant, due now, with up to ``max_attempts``
        attempts; return its id. It becomes claimable when the transaction commits, never
        before, and vanishes if the transaction rolls back."""
        ...

    def finish_job(self, job_id: int, result: dict[str, Any] | None = None) -> None:
        """Mark a ``running`` job ``done`` and release its lease, keeping ``result`` (or the
        result it had). A job that is not ``running`` is left as it is (no error): its lease
        expired and a twin finished it, or it was deleted with its tenant."""
        ...

    def claim_step(self, job_id: int, step: str, lease_ms: int) -> bool:
        """Whether this transaction may carry out ``step`` of the job; renews its lease.

        True when the job is ``running`` and ``step`` is not recorded yet; False when the step
        is recorded (an earlier run got that far), or the job is no longer ``running``
        (finished by a twin, failed, deleted). The claim is only as good as the transaction:
        call ``record_step`` in the same one; then, of two transactions racing on one step,
        exactly one records it and the other's ``claim_step`` returns False.
        """
        ...

    def record_step(self, job_id: int, step: str, record: dict[str, Any]) -> None:
        """Record that ``step`` happened: ``record`` has ``status`` (done, skipped or failed) and
        optionally ``detail``, ``calls``, ``prompt_tokens``, ``completion_tokens``.

        Only while the job is ``running`` (otherwise nothing is written). ``Conflict`` if the
        step is recorded already (``claim_step`` in the same transaction prevents that).
        """
        ...

    def fail_job_now(self, job_id: int, error: str, result: dict[str, Any] | None = None) -> None:
        """Mark a ``running`` job ``failed`` without further attempts (an error retrying
        cannot fix), keeping ``error`` and ``result``. A job that is not ``running`` is left
        as it is; a ``done`` job stays ``done``."""
        ...

    def has_pending_job(self, scope: Scope, kind: str, payload: dict[str, Any]) -> bool:
        """Whether the tenant has a ``pending`` (not yet claimed) job of ``kind`` with this
        payload. Payloads compare as serialised JSON, so build equal payloads with their
        keys in the same order. Read in the transaction: enqueue after a False answer and
        no concurrent transaction can slip the same job in between."""
        ...
