"""Dreaming: a tenant's sessions consolidated on a schedule.

A schedule is a row (``store.schedules``), so it survives a restart and every worker process
sees it. The scheduler (``enqueue_due``, called by each process that runs jobs) claims due
schedules by moving their next run forward in the transaction that enqueues their
``dream_sweep`` job: with several processes, a due schedule is enqueued once.

A sweep takes the tenant's sessions, newest first, that have at least ``min_session_rounds``
open (not yet consolidated) episodes, at most ``max_sessions_per_sweep`` of them, and runs
omoide's consolidation on each (``ConsolidationService.consolidate``, any age: dreaming is
about recent sessions). Without an LLM nothing can be summarised: the sweep reports, as a dry
run, what it would consolidate, and says why. ``max_compress_tokens`` and
``max_items_per_session`` are kept and reported; consolidation's own bounds apply.

The scope config store keeps one JSON object per tenant for the client; omoide's extraction
does not read it (its prompts are omoide's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from omoide.engine.consolidation.service import ConsolidationService
from omoide.engine.shared.job_signal import JobSignal
from omoide.errors import NotFound, OmoideError
from omoide.jobs.kinds import DREAM_SWEEP, DreamSweepPayload
from omoide.jobs.queue import enqueue
from omoide.llm import LLM
from omoide.store.ports.consolidation import ConsolidationReads
from omoide.store.ports.jobs import JobQueue
from omoide.store.ports.schedules import ScheduleReads
from omoide.store.ports.sessions import SessionReads
from omoide.store.protocol import Schedule, Transactions
from omoide.types import Job, JobState, Scope, now_ms

CLAIM_BATCH = 50
NO_LLM = "no LLM configured: nothing consolidated; the sessions are what a run would consolidate"


@dataclass(frozen=True)
class DreamingStatus:
    schedule: Schedule
    last_job: Job | None


class DreamingService:
    def __init__(
        self,
        session_reads: SessionReads,
        jobs: JobQueue,
        consolidation_reads: ConsolidationReads,
        schedule_reads: ScheduleReads,
        transactions: Transactions,
        consolidation: ConsolidationService,
        llm: LLM | None,
        signal: JobSignal,
        *,
        min_interval_s: float = 0.0,
    ) -> None:
        self._session_reads = session_reads
        self._jobs = jobs
        self._consolidation_reads = consolidation_reads
        self._schedule_reads = schedule_reads
        self._transactions = transactions
        self._consolidation = consolidation
        self._llm = llm
        self._signal = signal
        self._min_interval_ms = round(min_interval_s * 1000)

    # schedules --------------------------------------------------------------------------
    def start(
        self, scope: Scope, *, enabled: bool, interval_s: float, settings: dict[str, Any]
    ) -> bool:
        """Create or replace the tenant's schedule; its first sweep is due one interval from
        now. An interval under ``min_interval_s`` is raised to it (kept as the schedule's, so
        its status says how often it sweeps). Whether it is running (``enabled``)."""
        now = now_ms()
        interval = max(1, round(interval_s * 1000), self._min_interval_ms)
        schedule = Schedule(scope, enabled, interval, now + interval, dict(settings))
        with self._transactions.transaction() as tx:
            tx.schedules.put_schedule(schedule, now)
        return enabled

    def stop(self, user_id: str | None, scope_id: str | None) -> int:
        """Disable the matching schedules (None: any); how many were running."""
        with self._transactions.transaction() as tx:
            return tx.schedules.disable_schedules(user_id, scope_id, now_ms())

    def status(self, user_id: str | None, scope_id: str | None) -> list[DreamingStatus]:
        """The matching schedules with the job of each one's last sweep."""
        out = []
        for schedule in self._schedule_reads.list_schedules(user_id, scope_id):
            job = None
            if schedule.last_job_id is not None:
                try:
                    job = self._jobs.get_job(schedule.last_job_id)
                except NotFound:
                    job = None
            out.append(DreamingStatus(schedule, job))
        return out

    def enqueue_due(self) -> int:
        """Claim the due schedules and enqueue their sweeps; how many. A read first, so an
        idle scheduler never takes the write lock."""
        now = now_ms()
        due = self._schedule_reads.next_due()
        if due is None or due > now:
            return 0
        enqueued = 0
        with self._transactions.transaction() as tx:
            # the floor again: a schedule stored before it (or under a lower one) keeps its own
            # interval, but is not swept more often than the floor
            for schedule in tx.schedules.claim_due(now, CLAIM_BATCH, self._min_interval_ms):
                # a sweep still queued or running is not queued behind again: a short
                # interval (1 ms is valid) would otherwise add a job every poll, unbounded
                if self._unfinished(schedule.last_job_id):
                    continue
                fields = {k: v for k, v in schedule.settings.items() if k in _PAYLOAD_FIELDS}
                payload = DreamSweepPayload(scheduled_ms=now, **fields)
                job_id = enqueue(tx.jobs, schedule.scope, DREAM_SWEEP, payload)
                tx.schedules.set_last_job(schedule.scope, job_id)
                enqueued += 1
        if enqueued:
            self._signal.wake()
        return enqueued

    def _unfinished(self, job_id: int | None) -> bool:
        if job_id is None:
            return False
        try:
            job = self._jobs.get_job(job_id)
        except NotFound:
            return False
        return job.state in (JobState.PENDING, JobState.RUNNING)

    # scope configs ----------------------------------------------------------------------
    def get_scope_config(self, scope: Scope) -> dict[str, Any] | None:
        return self._schedule_reads.get_scope_config(scope)

    def set_scope_config(self, scope: Scope, config: dict[str, Any]) -> None:
        with self._transactions.transaction() as tx:
            tx.schedules.set_scope_config(scope, config, now_ms())

    def delete_scope_config(self, scope: Scope) -> bool:
        with self._transactions.transaction() as tx:
            return tx.schedules.delete_scope_config(scope)

    # the sweep --------------------------------------------------------------------------
    def run_sweeps(
        self, batch: Sequence[tuple[Job, DreamSweepPayload]]
    ) -> dict[int, BaseException]:
        """The ``dream_sweep`` handler: the job's result is the sweep's report."""
        errors: dict[int, BaseException] = {}
        for job, payload in batch:
            scope = Scope(user_id=job.user_id, scope_id=job.scope_id)
            try:
                report = self.sweep(scope, payload)
            except OmoideError as exc:
                errors[job.id] = exc
                continue
            with self._transactions.transaction() as tx:
                tx.jobs.finish_job(job.id, report)
        return errors

    def sweep(self, scope: Scope, payload: DreamSweepPayload) -> dict[str, Any]:
        """Consolidate (or, without an LLM, report) the tenant's eligible sessions."""
        run = self._llm is not None
        chosen, scanned = self._eligible(scope, payload)
        sessions = []
        for session_id in chosen:
            try:
                report = self._consolidation.consolidate(
                    session_id,
                    user_id=scope.user_id,
                    scope_id=scope.scope_id,
                    run=run,
                    min_age_days=0,
                    min_session_episodes=payload.min_session_rounds,
                )
            except NotFound:
                continue  # deleted since it was listed
            sessions.append(
                {
                    "session_id": session_id,
                    "episodes": len(report.episodes),
                    "summary_id": report.summary_id,
                    "reason": report.reason,
                }
            )
        promoted = sum(1 for s in sessions if s["summary_id"])
        return {
            "mode": "run" if run else "dry_run",
            "reason": None if run else NO_LLM,
            "scanned_sessions": scanned,
            "sessions": sessions,
            "promoted": promoted,
            "settings": payload.model_dump(exclude={"v", "scheduled_ms"}),
        }

    def _eligible(self, scope: Scope, payload: DreamSweepPayload) -> tuple[list[str], int]:
        """The newest sessions with enough open episodes (up to the cap), and how many of the
        tenant's sessions were looked at."""
        chosen: list[str] = []
        scanned, offset = 0, 0
        while len(chosen) < payload.max_sessions_per_sweep:
            page, total = self._session_reads.list_sessions(scope, 100, offset)
            for session in page:
                scanned += 1
                stats = self._consolidation_reads.episode_stats(scope, session.id)
                if sum(1 for s in stats if not s.consolidated) >= payload.min_session_rounds:
                    chosen.append(session.id)
                    if len(chosen) == payload.max_sessions_per_sweep:
                        break
            offset += len(page)
            if not page or offset >= total:
                break
        return chosen, scanned


_PAYLOAD_FIELDS = frozenset(DreamSweepPayload.model_fields) - {"v", "scheduled_ms"}
