"""Expired memories: the ones nobody used for a while, counted and deleted as durable jobs.

A memory's last use is the later of its last access (a search or context hit that records
one, ``touch``) and its last change; it is expired when that is more than ``days`` ago. The
counts are read live (``report``); a *refresh* job counts them in the background, a *delete*
job deletes them user by user, one step per user recorded in the transaction of that user's
deletes, so its progress is the job's steps and a rerun after a crash skips the users done.

Every task belongs to an *owner* tenant: the caller's own for a tenant-bound key, else
``ADMIN``; a task is visible to whoever owns it (the full-access caller sees them all), and the
guards (a task of the kind still running, or one started in the last ``COOLDOWN_MS``) look at
the owner's tasks only, so one tenant never learns about or blocks another's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from omoide.engine.shared.events import MemoryEvents
from omoide.engine.shared.job_signal import JobSignal
from omoide.errors import NotFound, OmoideError
from omoide.jobs.kinds import (
    EXPIRY_DELETE,
    EXPIRY_REFRESH,
    ExpiryDeletePayload,
    ExpiryRefreshPayload,
    JobKind,
    Tenant,
)
from omoide.jobs.queue import enqueue
from omoide.jobs.worker import LEASE_MS
from omoide.store.ports.access import AccessReads
from omoide.store.ports.jobs import JobQueue
from omoide.store.protocol import TenantActivity, Transactions
from omoide.types import Job, JobState, Scope, now_ms

ADMIN = Scope(user_id="__omoide_admin__", scope_id="__expiry__")
# where a user-wide key's tasks are filed: not a scope a client uses (a task under the user's
# "__default__" was listed by /v1/jobs to a key bound to that scope, other scopes' counts too)
USER_TASKS = "__omoide_expiry__"
COOLDOWN_MS = 300_000  # upstream's: a second task of a kind within 5 minutes is skipped
DAY_MS = 86_400_000
RECENT = 200  # how many of the owner's newest jobs the guards look at
KINDS = {EXPIRY_REFRESH.name, EXPIRY_DELETE.name}


@dataclass(frozen=True)
class Owner:
    """Who asks: the tenant their tasks belong to, and which tenants they may count or delete
    (``user_id`` / ``scope_id`` None: any)."""

    tasks: Scope
    user_id: str | None = None
    scope_id: str | None = None

    def sees(self, job: Job) -> bool:
        """Whether every tenant the task reached is one the owner may reach: a user-wide
        key's tasks are filed under (user, "__default__"), which a key bound to that scope
        must not read (their counts cover the user's other scopes)."""
        if self.user_id is None:
            return True
        if job.user_id != self.user_id or self.scope_id not in (None, job.scope_id):
            return False
        payload = job.payload
        reached = payload.get("tenants") or [payload]
        return all(
            t.get("user_id") == self.user_id and self.scope_id in (None, t.get("scope_id"))
            for t in reached
        )


@dataclass(frozen=True)
class UserExpiry:
    user_id: str
    total: int
    superseded: int
    expired: int


@dataclass(frozen=True)
class Submitted:
    """A task enqueued (``job`` set) or refused (``existing``: the task in the way)."""

    job: Job | None = None
    existing: Job | None = None
    reason: str = ""
    users: int = 0


@dataclass
class Progress:
    job: Job
    total_users: int
    processed_users: int
    deleted: int
    steps: list[dict[str, Any]] = field(default_factory=list)


class ExpiryService:
    def __init__(
        self,
        jobs: JobQueue,
        access_reads: AccessReads,
        transactions: Transactions,
        signal: JobSignal,
        *,
        actor: str,
        events: MemoryEvents | None = None,
    ) -> None:
        self._jobs = jobs
        self._access_reads = access_reads
        self._transactions = transactions
        self._signal = signal
        self._actor = actor
        # told after each user's deletes commit (e.g. so the markdown mirror drops them)
        self._events = events or MemoryEvents()

    # reads ------------------------------------------------------------------------------
    def by_user(
        self, owner: Owner, days: int, user_ids: Sequence[str] | None = None
    ) -> list[UserExpiry]:
        """Each user's memories (of the tenants the owner may see), most expired first."""
        totals: dict[str, list[int]] = {}
        for row in self._activity(owner, days):
            if user_ids is None or row.scope.user_id in user_ids:
                sums = totals.setdefault(row.scope.user_id, [0, 0, 0])
                sums[0] += row.total
                sums[1] += row.superseded
                sums[2] += row.inactive
        users = [UserExpiry(u, *counts) for u, counts in totals.items()]
        return sorted(users, key=lambda u: (-u.expired, u.user_id))

    def latest(self, owner: Owner, kind: str | None = None) -> Job | None:
        """The owner's newest task (of ``kind``), or None."""
        for job in self._jobs.list_jobs(owner.tasks, None, RECENT, 0):
            if job.kind in KINDS and kind in (None, job.kind) and owner.sees(job):
                return job
        return None

    def progress(self, owner: Owner, job_id: int) -> Progress:
        """A task's state and counts; ``NotFound`` for an unknown id, another kind's job or
        another owner's task."""
        try:
            job = self._jobs.get_job(job_id)
        except NotFound:
            job = None
        if job is None or job.kind not in KINDS or not owner.sees(job):
            raise NotFound(f"task {job_id} not found", id=str(job_id))
        steps = self._steps(job.id)
        total = 1
        if job.kind == EXPIRY_DELETE.name:
            total = len({t["user_id"] for t in job.payload.get("tenants", [])})
        done = len(steps) if job.kind == EXPIRY_DELETE.name else int(job.state is JobState.DONE)
        deleted = sum(int(s.get("deleted", 0)) for s in steps)
        return Progress(job, total, done, deleted, steps)

    # submits ----------------------------------------------------------------------------
    def refresh(self, owner: Owner, days: int, *, force: bool) -> Submitted:
        """Enqueue a count of the expired memories (result: the counts), unless ``force`` is
        off and one is running or started within the cooldown."""
        if not force and (busy := self._guard(owner, EXPIRY_REFRESH)):
            return busy
        payload = ExpiryRefreshPayload(
            before_ms=now_ms() - days * DAY_MS,
            days=days,
            user_id=owner.user_id,
            scope_id=owner.scope_id,
        )
        return Submitted(job=self._enqueue(owner, EXPIRY_REFRESH, payload))

    def delete(
        self,
        owner: Owner,
        days: int,
        user_ids: Sequence[str] | None,
        *,
        dry_run: bool,
        force: bool,
    ) -> Submitted:
        """Enqueue deleting (or, ``dry_run``, counting) the expired memories of ``user_ids``
        (None: of every user with some); nothing to do is ``Submitted()`` with no job."""
        cutoff = now_ms() - days * DAY_MS
        wanted = None if user_ids is None else set(user_ids)
        tenants = [
            Tenant(user_id=a.scope.user_id, scope_id=a.scope.scope_id)
            for a in self._access_reads.tenant_activity(cutoff, owner.user_id, owner.scope_id)
            if a.inactive and (wanted is None or a.scope.user_id in wanted)
        ]
        users = len({t.user_id for t in tenants})
        if not tenants:
            return Submitted(reason="no expired memories: nothing to delete")
        if not force and (busy := self._guard(owner, EXPIRY_DELETE)):
            return busy
        payload = ExpiryDeletePayload(before_ms=cutoff, tenants=tenants, dry_run=dry_run)
        return Submitted(job=self._enqueue(owner, EXPIRY_DELETE, payload), users=users)

    def _steps(self, job_id: int) -> list[dict[str, Any]]:
        """What each user step of a delete job recorded, in order."""
        found = self._jobs.job_steps(job_id).values()
        return [json.loads(step.get("detail") or "{}") for step in found]

    def _activity(self, owner: Owner, days: int) -> list[TenantActivity]:
        cutoff = now_ms() - days * DAY_MS
        return self._access_reads.tenant_activity(cutoff, owner.user_id, owner.scope_id)

    def _guard(self, owner: Owner, kind: JobKind[Any]) -> Submitted | None:
        job = self.latest(owner, kind.name)
        if job is None:
            return None
        if job.state in (JobState.PENDING, JobState.RUNNING):
            return Submitted(existing=job, reason="a task of this kind is still running")
        if now_ms() - int(job.created_at.timestamp() * 1000) < COOLDOWN_MS:
            return Submitted(existing=job, reason=f"within the cooldown ({COOLDOWN_MS // 1000} s)")
        return None

    def _enqueue(self, owner: Owner, kind: JobKind[Any], payload: Any) -> Job:
        with self._transactions.transaction() as tx:
            job_id = enqueue(tx.jobs, owner.tasks, kind, payload)
        self._signal.wake()
        return self._jobs.get_job(job_id)

    # handlers ---------------------------------------------------------------------------
    def run_refresh_jobs(
        self, batch: Sequence[tuple[Job, ExpiryRefreshPayload]]
    ) -> dict[int, BaseException]:
        """The ``expiry_refresh`` handler: the job's result is the counts."""
        for job, payload in batch:
            rows = self._access_reads.tenant_activity(
                payload.before_ms, payload.user_id, payload.scope_id
            )
            result = {
                "total_scanned": sum(r.total for r in rows),
                "total_users": len({r.scope.user_id for r in rows}),
                "expired": sum(r.inactive for r in rows),
                "inactive_days_threshold": payload.days,
            }
            with self._transactions.transaction() as tx:
                tx.jobs.finish_job(job.id, result)
        return {}

    def run_delete_jobs(
        self, batch: Sequence[tuple[Job, ExpiryDeletePayload]]
    ) -> dict[int, BaseException]:
        """The ``expiry_delete`` handler: one step per user, then the summary as the result."""
        errors: dict[int, BaseException] = {}
        for job, payload in batch:
            try:
                self._delete_job(job, payload)
            except OmoideError as exc:
                errors[job.id] = exc
        return errors

    def _delete_job(self, job: Job, payload: ExpiryDeletePayload) -> None:
        by_user: dict[str, list[Tenant]] = {}
        for tenant in payload.tenants:
            by_user.setdefault(tenant.user_id, []).append(tenant)
        for user_id, tenants in by_user.items():
            self._delete_user(job, payload, user_id, tenants)
        steps = self._steps(job.id)
        result = {
            "processed": len(steps),
            "deleted": sum(int(s.get("deleted", 0)) for s in steps),
            "failed": 0,
            "skipped": sum(1 for s in steps if not s.get("deleted")),
            "dry_run": payload.dry_run,
            "details": steps,
        }
        with self._transactions.transaction() as tx:
            tx.jobs.finish_job(job.id, result)

    def _delete_user(
        self, job: Job, payload: ExpiryDeletePayload, user_id: str, tenants: list[Tenant]
    ) -> None:
        """One user's expired memories, chosen just before the transaction that deletes them
        and records the user's step (a memory used in between is still deleted)."""
        chosen = {
            t.scope_id: self._access_reads.inactive_memories(
                Scope(user_id=user_id, scope_id=t.scope_id), payload.before_ms, 1_000_000
            )
            for t in tenants
        }
        step = f"user:{user_id}"
        with self._transactions.transaction() as tx:
            if not tx.jobs.claim_step(job.id, step, LEASE_MS):
                return  # done by an earlier run of this job
            deleted = 0
            for scope_id, ids in chosen.items():
                scope = Scope(user_id=user_id, scope_id=scope_id)
                for memory_id in [] if payload.dry_run else ids:
                    try:
                        tx.memories.delete_memory(scope, memory_id, self._actor)
                    except NotFound:
                        continue  # deleted meanwhile
                    deleted += 1
            found = sum(len(ids) for ids in chosen.values())
            detail = {
                "user_id": user_id,
                "total_deleted": found if payload.dry_run else deleted,
                "deleted": 0 if payload.dry_run else deleted,
                "would_delete": found if payload.dry_run else None,
                "scopes_affected": sum(1 for ids in chosen.values() if ids),
                "status": "success",
            }
            tx.jobs.record_step(job.id, step, {"status": "done", "detail": json.dumps(detail)})
        if deleted:
            for scope_id, ids in chosen.items():
                if ids:
                    self._events.written(Scope(user_id=user_id, scope_id=scope_id))
