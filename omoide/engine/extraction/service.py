"""``ExtractionService``: LLM extraction as durable jobs, turning an ``add``'s messages into
memories.

``add`` commits one ``extract`` job per call (not per message) in the transaction that stores
the messages and their episode. A worker runs the job's steps (``extraction.steps``) in a
fixed order. Each step commits its writes together with a ``job_steps`` row, so a job that runs
again after a crash, an expired lease or a retry skips the steps already done: nothing is
duplicated. The steps do not depend on one another.

Outcomes, per step and per job:

- A step whose answer stays unusable (a bad answer after a repair request, a reply cut at its
  token budget, an invalid value) is recorded ``failed`` with the error as its ``detail``; the
  other steps still run. The job then ends ``done`` with ``result["outcome"] == "partial"``
  (``"done"`` when no step failed), and the add result's ``extraction.state`` is ``partial``.
  When every step that ran failed, the job is ``failed`` (outcome ``failed``).
- An error worth a retry (an LLM outage, HTTP 5xx, an embedder outage, a concurrent change)
  stops the job; the worker's ``RetryPolicy`` reschedules it (an outage without using up an
  attempt) and the steps done so far stay done and visible in ``result``.
- ``LLMRejected`` (the endpoint refuses the request itself) fails the job at once with a hint
  at the configuration.

While a step runs, a thread renews the job's lease (``LEASE_MS``) every ``RENEW_EVERY_S``, so
a step that takes minutes is not claimed again by a second worker.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from omoide.engine.extraction import steps
from omoide.errors import NotFound, OmoideError
from omoide.extract import MemVariable
from omoide.jobs.errors import JobFailed
from omoide.jobs.kinds import EXTRACT, ExtractPayload
from omoide.jobs.worker import LEASE_MS, describe_error
from omoide.llm import LLM, LLMRejected, require_llm
from omoide.llm.protocol import Usage
from omoide.store.ports.jobs import JobQueue
from omoide.store.ports.memories import MemoryReads
from omoide.store.ports.sessions import SessionReads
from omoide.store.protocol import Transactions, Tx
from omoide.types import Job, JobState, Message, Scope, dt_to_ms, now_ms

RENEW_EVERY_S = LEASE_MS / 4000  # a quarter of the lease: two renewals may fail in a row


class ExtractionService:
    """Runs ``extract`` jobs: ``steps.STEPS`` in order, within ``max_llm_calls`` per job."""

    def __init__(
        self,
        memory_reads: MemoryReads,
        session_reads: SessionReads,
        jobs: JobQueue,
        transactions: Transactions,
        llm: LLM | None,
        deps: steps.StepDeps,
        *,
        max_llm_calls: int,
    ) -> None:
        self._memory_reads = memory_reads
        self._session_reads = session_reads
        self._jobs = jobs
        self._transactions = transactions
        self._llm = llm
        self._deps = deps
        self._max_llm_calls = max_llm_calls

    def run_jobs(self, batch: Sequence[tuple[Job, ExtractPayload]]) -> dict[int, BaseException]:
        """The ``extract`` handler: finishes each job it completes; a failed job's error
        carries the steps it completed, kept on the row whether it retries or fails."""
        errors: dict[int, BaseException] = {}
        for job, payload in batch:
            try:
                self._run(job, payload)
            except OmoideError as exc:
                errors[job.id] = JobFailed(exc, job_result(self._jobs, job.id))
        return errors

    def _run(self, job: Job, payload: ExtractPayload) -> None:
        llm = require_llm(self._llm, "extraction")
        ctx = self._context(job, payload)
        if ctx is None:
            with self._transactions.transaction() as tx:
                tx.jobs.finish_job(
                    job.id, {"skipped": "the messages were deleted before extraction"}
                )
            return
        done = self._jobs.job_steps(job.id)
        spent = sum(int(record["calls"]) for record in done.values())
        limit = self._max_llm_calls
        for name in ctx.steps:
            if name in done:
                continue
            budget = steps.BudgetedLLM(llm, max(0, limit - spent), limit)
            with self._lease_kept(job.id):
                ours = self._run_step(ctx, name, budget)
            if not ours:
                return  # finished by a twin whose lease overlapped ours, or deleted
            spent += budget.calls
        self._finish(job.id)

    def _finish(self, job_id: int) -> None:
        """``done`` (outcome ``done`` or ``partial``), or ``failed`` when no step that ran
        succeeded: the failed steps' errors are the job's error."""
        result = job_result(self._jobs, job_id)
        with self._transactions.transaction() as tx:
            if result["outcome"] == "failed":
                failures = [
                    f"step {name}: {r['detail']}"
                    for name, r in result["steps"].items()
                    if r["status"] == "failed"
                ]
                tx.jobs.fail_job_now(job_id, "; ".join(failures), result)
            else:
                tx.jobs.finish_job(job_id, result)

    @contextmanager
    def _lease_kept(self, job_id: int) -> Iterator[None]:
        """Renew the job's lease in a thread while the block (one step) runs."""
        stop = threading.Event()

        def renew() -> None:
            while not stop.wait(RENEW_EVERY_S):
                try:
                    if not self._jobs.renew_lease(job_id, LEASE_MS):
                        return  # no longer running: nothing to keep
                except Exception:
                    continue

        thread = threading.Thread(target=renew, name=f"omoide-lease-{job_id}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def _run_step(self, ctx: steps.Context, name: str, llm: steps.BudgetedLLM) -> bool:
        """Compute the step, then apply and record it in one transaction; the tokens it spent
        are counted even when it fails. A step whose answer is unusable is recorded
        ``failed``; an error worth a retry (or a refused request) is raised for the job.
        False when the job is no longer ours to run."""
        committed = claimed = False
        try:
            record: dict[str, Any] = {"status": "done"}
            try:
                apply: steps.Apply | None = steps.STEPS[name](self._deps, ctx, llm)
            except steps.SkipStep as skip:
                apply, record = None, {"status": "skipped", "detail": str(skip)}
            except OmoideError as exc:
                if not step_failure(exc):
                    raise
                exc.fields.setdefault("step", name)
                apply, record = None, {"status": "failed", "detail": describe_error(exc)}
            usage = llm.usage
            record.update(
                calls=llm.calls,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
            )
            with self._transactions.transaction() as tx:
                claimed = tx.jobs.claim_step(ctx.job.id, name, LEASE_MS)
                if claimed:
                    if apply is not None:
                        record["detail"] = apply(tx)
                    tx.jobs.record_step(ctx.job.id, name, record)
                add_usage(tx, ctx.scope, usage)
                committed = True
        except OmoideError as exc:
            exc.fields.setdefault("step", name)
            raise
        finally:
            if not committed and llm.usage.requests:
                with self._transactions.transaction() as tx:  # failed calls cost tokens too
                    add_usage(tx, ctx.scope, llm.usage)
        return claimed or self._still_running(ctx.job.id)

    def _still_running(self, job_id: int) -> bool:
        try:
            return self._jobs.get_job(job_id).state is JobState.RUNNING
        except NotFound:
            return False

    def _context(self, job: Job, payload: ExtractPayload) -> steps.Context | None:
        """What the job works on, or None when its messages were deleted in the meantime."""
        scope = Scope(user_id=job.user_id, scope_id=job.scope_id)
        ctx = steps.Context(
            job=job,
            scope=scope,
            messages=[],
            steps=[s for s in steps.STEPS if s in payload.steps],
            episode_id=payload.episode_id,
            session_id=payload.session_id,
            at_ms=dt_to_ms(job.created_at),
            metadata=dict(payload.metadata),
            variables=[MemVariable.model_validate(v) for v in payload.variables],
        )
        try:
            if ctx.session_id is not None:
                ctx.project = self._session_reads.get_session(scope, ctx.session_id).project
            if ctx.episode_id is not None:
                ctx.messages = self._session_reads.get_episode(scope, ctx.episode_id).messages
                return ctx
        except NotFound:
            return None
        raw = self._memory_reads.get_memories(scope, list(payload.memory_ids))
        ctx.messages = [Message(role=m.metadata.get("role", "user"), content=m.text) for m in raw]
        return ctx if ctx.messages else None


def add_usage(tx: Tx, scope: Scope, usage: Usage) -> None:
    """Count an LLM's tokens and requests against the tenant, in ``tx``."""
    tx.variables.add_usage(
        scope, usage.prompt_tokens, usage.completion_tokens, usage.requests, now_ms()
    )


def step_failure(error: OmoideError) -> bool:
    """Whether ``error`` fails only its step: retrying cannot help (an unusable answer), and
    it is no configuration problem that every other step would meet too."""
    return not EXTRACT.policy.retryable(error) and not isinstance(error, LLMRejected)


def outcome(records: dict[str, dict[str, Any]]) -> str:
    """``done``: no step failed; ``partial``: some failed, others did their part;
    ``failed``: every step recorded failed."""
    statuses = {r["status"] for r in records.values()}
    if "failed" not in statuses:
        return "done"
    return "partial" if statuses - {"failed"} else "failed"


def job_result(jobs: JobQueue, job_id: int) -> dict[str, Any]:
    """An extraction job's result: each step's record, the outcome so far, and the totals."""
    records = jobs.job_steps(job_id)
    return {
        "outcome": outcome(records),
        "steps": {
            name: {k: r[k] for k in ("status", "detail", "calls")} for name, r in records.items()
        },
        "llm_calls": sum(r["calls"] for r in records.values()),
        "prompt_tokens": sum(r["prompt_tokens"] for r in records.values()),
        "completion_tokens": sum(r["completion_tokens"] for r in records.values()),
    }
