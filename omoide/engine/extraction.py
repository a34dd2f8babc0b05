"""LLM extraction as durable jobs: the job that turns an ``add``'s messages into memories.

``add`` commits one ``extract`` job per call (not per message) in the transaction that stores
the messages and their episode. A worker runs the job's steps (``omoide.engine.steps``) in a
fixed order. Each step commits its writes together with a ``job_steps`` row, so a job that runs
again after a crash, an expired lease or a retry skips the steps already done: nothing is
duplicated. Errors: a retryable one (HTTP 429/5xx, timeout, an embedder outage, a concurrent
change) reschedules the job with exponential backoff until ``max_attempts``; any other (an
answer that stays unusable after a repair request) fails the job at once. Either way the error
is kept on the job row, and the steps done so far stay done.
"""

from __future__ import annotations

import logging
from typing import Any

from omoide.embed.protocol import Embedder
from omoide.engine import steps
from omoide.errors import (
    BackendError,
    Conflict,
    FeatureDisabled,
    NotFound,
    OmoideError,
)
from omoide.extract import MemVariable
from omoide.jobs.worker import LEASE_MS, Worker, backoff_ms
from omoide.llm import LLM, require_llm
from omoide.llm.protocol import Usage
from omoide.store.protocol import Store, Tx
from omoide.types import (
    Job,
    JobState,
    Message,
    Scope,
    dt_to_ms,
    now_ms,
)

log = logging.getLogger("omoide.extraction")

EXTRACT_JOB = "extract"
MAX_ATTEMPTS = 5
_RETRYABLE = (Conflict, NotFound, FeatureDisabled)


class ExtractionMixin:
    store: Store
    embedder: Embedder
    llm: LLM | None
    max_llm_calls: int
    max_text_chars: int
    actor: str
    _workers: list[Worker]

    def _run_extract_jobs(self, jobs: list[Job]) -> None:
        for job in jobs:
            try:
                self._run_extract_job(job)
            except BackendError as exc:
                self._extraction_failed(job, exc, final=not exc.retryable)
            except _RETRYABLE as exc:
                self._extraction_failed(job, exc, final=False)
            except OmoideError as exc:
                self._extraction_failed(job, exc, final=True)

    def _run_extract_job(self, job: Job) -> None:
        llm = require_llm(self.llm, "extraction")
        ctx = self._context(job)
        if ctx is None:
            with self.store.transaction() as tx:
                tx.jobs.finish_job(
                    job.id, {"skipped": "the messages were deleted before extraction"}
                )
            return
        done = self.store.jobs.job_steps(job.id)
        spent = sum(int(record["calls"]) for record in done.values())
        for name in ctx.steps:
            if name in done:
                continue
            budget = steps.BudgetedLLM(llm, max(0, self.max_llm_calls - spent), self.max_llm_calls)
            if not self._run_step(ctx, name, budget):
                return  # finished by a twin whose lease overlapped ours, or deleted
            spent += budget.calls
        with self.store.transaction() as tx:
            tx.jobs.finish_job(job.id, self._job_result(job.id))

    def _run_step(self, ctx: steps.Context, name: str, llm: steps.BudgetedLLM) -> bool:
        """Compute the step, then apply and record it in one transaction; the tokens it spent
        are counted even when it fails. False when the job is no longer ours to run."""
        committed = claimed = False
        try:
            record: dict[str, Any] = {"status": "done"}
            try:
                apply: steps.Apply | None = steps.STEPS[name](self, ctx, llm)  # type: ignore[arg-type]
            except steps.SkipStep as skip:
                apply, record = None, {"status": "skipped", "detail": str(skip)}
            usage = llm.usage
            record.update(
                calls=llm.calls,
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
            )
            with self.store.transaction() as tx:
                claimed = tx.jobs.claim_step(ctx.job.id, name, LEASE_MS)
                if claimed:
                    if apply is not None:
                        record["detail"] = apply(tx)
                    tx.jobs.record_step(ctx.job.id, name, record)
                _add_usage(tx, ctx.scope, usage)
                committed = True
        except OmoideError as exc:
            exc.fields.setdefault("step", name)
            raise
        finally:
            if not committed and llm.usage.requests:
                with self.store.transaction() as tx:  # failed calls cost tokens too
                    _add_usage(tx, ctx.scope, llm.usage)
        return claimed or self._still_running(ctx.job.id)

    def _still_running(self, job_id: int) -> bool:
        try:
            return self.store.jobs.get_job(job_id).state is JobState.RUNNING
        except NotFound:
            return False

    def _context(self, job: Job) -> steps.Context | None:
        """What the job works on, or None when its messages were deleted in the meantime."""
        payload = job.payload
        scope = Scope(user_id=job.user_id, scope_id=job.scope_id)
        ctx = steps.Context(
            job=job,
            scope=scope,
            messages=[],
            steps=[s for s in steps.STEPS if s in payload.get("steps", [])],
            episode_id=payload.get("episode_id"),
            session_id=payload.get("session_id"),
            at_ms=dt_to_ms(job.created_at),
            metadata=payload.get("metadata", {}),
            variables=[MemVariable.model_validate(v) for v in payload.get("variables", [])],
        )
        try:
            if ctx.session_id is not None:
                ctx.project = self.store.sessions.get_session(scope, ctx.session_id).project
            if ctx.episode_id is not None:
                ctx.messages = self.store.sessions.get_episode(scope, ctx.episode_id).messages
                return ctx
        except NotFound:
            return None
        raw = self.store.memories.get_memories(scope, payload.get("memory_ids", []))
        ctx.messages = [Message(role=m.metadata.get("role", "user"), content=m.text) for m in raw]
        return ctx if ctx.messages else None

    def _job_result(self, job_id: int) -> dict[str, Any]:
        records = self.store.jobs.job_steps(job_id)
        return {
            "steps": {
                name: {k: r[k] for k in ("status", "detail", "calls")}
                for name, r in records.items()
            },
            "llm_calls": sum(r["calls"] for r in records.values()),
            "prompt_tokens": sum(r["prompt_tokens"] for r in records.values()),
            "completion_tokens": sum(r["completion_tokens"] for r in records.values()),
        }

    def _extraction_failed(self, job: Job, exc: OmoideError, *, final: bool) -> None:
        error = describe_error(exc)
        if final:
            with self.store.transaction() as tx:
                tx.jobs.fail_job_now(job.id, error, self._job_result(job.id))
            state = JobState.FAILED
        else:
            try:
                state = self.store.jobs.fail_job(job.id, error, backoff_ms(job.attempts))
            except NotFound:
                return  # deleted with its tenant while it ran
        log.warning("extraction job %s failed, now %s: %s", job.id, state.value, error)


def describe_error(exc: OmoideError) -> str:
    """One line for the job row: the step, the error, and the start of an unusable answer."""
    step = exc.fields.get("step")
    text = f"{type(exc).__name__}: {exc.message}"
    if step:
        text = f"step {step}: {text}"
    raw = exc.fields.get("raw")
    if isinstance(raw, str) and raw:
        text += f" | raw answer: {raw[:500]!r}"
    return text


def _add_usage(tx: Tx, scope: Scope, usage: Usage) -> None:
    tx.variables.add_usage(
        scope, usage.prompt_tokens, usage.completion_tokens, usage.requests, now_ms()
    )
