"""The worker: claims due jobs, runs each kind's handler on its batch, records what happened.

Jobs are rows committed with the data that caused them, so none is lost on a crash; a job whose
worker died is claimed again when its lease expires. Handlers must therefore be idempotent: a
job may run twice.

The handler contract (``Registration``): a handler gets a batch of ``(job, payload)`` pairs of
its kind, each payload already parsed and validated. It finishes every job it completed itself
(``tx.jobs.finish_job`` in the transaction of that job's writes, so the job is done exactly
when its writes are) and returns the errors of the jobs that failed, by job id. The worker
applies the kind's ``RetryPolicy`` to each error: retry after a backoff, or fail for good; after
``max_attempts`` the store marks the job ``failed`` with the error on the row, visible in
``omoide jobs`` and ``/v1/jobs``. One job's error never changes another job's state. If the
handler raises, every job of the batch that is still running fails with that error; a job the
handler had already finished stays finished.

A job the worker cannot run (an invalid payload, a payload version newer than this code) fails
at once with the reason on the row; a kind it has no handler for is retried with backoff, since
a newer version may know it. Neither stops the worker or the batch.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias

from omoide.errors import NotFound, OmoideError
from omoide.jobs.errors import InvalidJobPayload, JobFailed
from omoide.jobs.kinds import KINDS
from omoide.jobs.kinds.base import JobKind, P
from omoide.jobs.policy import DEFAULT_POLICY, Decision, RetryPolicy
from omoide.llm.errors import LLMRejected
from omoide.observe import NO_OBSERVER, JobOutcome, Observer
from omoide.store.protocol import Store
from omoide.types import Job, JobState

log = logging.getLogger("omoide.jobs")

LEASE_MS = 120_000

# An LLMRejected job fails at once: the same request would be refused again.
REJECTED_HINT = (
    "the LLM endpoint refused the request itself; check OMOIDE_LLM_BASE_URL, OMOIDE_LLM_MODEL,"
    " OMOIDE_LLM_API_KEY and OMOIDE_LLM_RESPONSE_FORMAT (then retry the job)"
)

# Transitional: the engine's handlers before they are ``Registration``s (``Worker(store,
# {kind: handler})``): a handler that takes the raw jobs, reports through the store itself and
# raises for the whole batch. To be removed once the engine registers typed handlers.
Handler: TypeAlias = Callable[[list[Job]], None]


@dataclass(frozen=True)
class Registration(Generic[P]):
    """The handler of one job kind: runs a batch, returns the errors of failed jobs by id.

    A job the handler neither finishes nor reports stays ``running`` until its lease expires
    and is then claimed again (an attempt used), as after a crash."""

    kind: JobKind[P]
    handler: Callable[[Sequence[tuple[Job, P]]], Mapping[int, BaseException]]


# What ``run_batch`` and ``Worker`` take: registrations, or (transitional) the old handler dict.
Handlers: TypeAlias = Iterable[Registration[Any]] | Mapping[str, Handler]


def backoff_ms(attempts: int) -> int:
    """Transitional: the default policy's backoff (use ``kind.policy.backoff_ms``)."""
    return DEFAULT_POLICY.backoff_ms(attempts)


def run_batch(
    store: Store,
    registrations: Handlers,
    limit: int = 32,
    lease_ms: int = LEASE_MS,
    observer: Observer = NO_OBSERVER,
) -> int:
    """Claim (for ``lease_ms``) and run up to ``limit`` due jobs; return how many were
    claimed. ``observer`` hears each kind's batch time and each job's outcome."""
    table = _table(registrations, observer)
    jobs = store.jobs.claim_jobs(limit, lease_ms)
    by_kind: dict[str, list[Job]] = {}
    for job in jobs:
        by_kind.setdefault(job.kind, []).append(job)
    for name, group in by_kind.items():
        runner = table.get(name)
        started = time.perf_counter()
        try:
            if runner is None:
                _unhandled(store, name, group, observer)
            else:
                runner(store, group)
        except Exception:  # recording an outcome failed: the leases bring the jobs back
            log.exception("job worker: recording the outcome of %s jobs failed", name)
        observer.job_batch(name, time.perf_counter() - started)
    return len(jobs)


_Runner = Callable[[Store, list[Job]], None]


def _table(registrations: Handlers, observer: Observer) -> dict[str, _Runner]:
    if isinstance(registrations, Mapping):
        return {name: _legacy_runner(handler) for name, handler in registrations.items()}
    return {reg.kind.name: _runner(reg, observer) for reg in registrations}


def _runner(reg: Registration[P], observer: Observer) -> _Runner:
    def run(store: Store, group: list[Job]) -> None:
        _run_registered(store, reg, group, observer)

    return run


def _run_registered(
    store: Store, reg: Registration[P], group: list[Job], observer: Observer
) -> None:
    policy, name = reg.kind.policy, reg.kind.name
    batch: list[tuple[Job, P]] = []
    for job in group:
        try:
            batch.append((job, reg.kind.parse(job)))
        except InvalidJobPayload as exc:
            _observe(observer, name, _fail(store, policy, job, exc))
    if not batch:
        return
    try:
        errors = reg.handler(batch)
    except Exception as exc:  # the batch's error goes on the rows the handler left running
        for outcome in _fail_running(store, policy, [job for job, _ in batch], exc):
            _observe(observer, name, outcome)
        return
    ids = {job.id for job, _ in batch}
    for job, _ in batch:
        if job.id in errors:
            _observe(observer, name, _fail(store, policy, job, errors[job.id]))
        else:  # finished by the handler (or, rarely, left to its lease: counted as done)
            observer.job_outcome(name, "done")
    if stray := sorted(set(errors) - ids):
        log.warning(
            "%s handler reported errors for jobs not in its batch: %s", reg.kind.name, stray
        )


def _legacy_runner(handler: Handler) -> _Runner:
    def run(store: Store, group: list[Job]) -> None:
        try:
            handler(group)
        except Exception as exc:
            # As before typed handlers: any raise is retried with backoff, whatever the error.
            _fail_running(store, DEFAULT_POLICY, group, exc, always_retry=True)

    return run


def _observe(observer: Observer, kind: str, outcome: JobOutcome | None) -> None:
    if outcome is not None:
        observer.job_outcome(kind, outcome)


def _unhandled(store: Store, name: str, group: list[Job], observer: Observer) -> None:
    """A kind this worker has no handler for is retried with backoff, never failed at once: a
    newer version (a rolling upgrade) or another worker process may know it. After the kind's
    attempts it ends ``failed``, with the reason on the row."""
    kind = KINDS.get(name)
    policy = kind.policy if kind is not None else DEFAULT_POLICY
    known = ", ".join(sorted(KINDS))
    for job in group:
        message = f"no handler for job kind {name!r} in this worker (it knows: {known})"
        _observe(observer, name, _fail(store, policy, job, RuntimeError(message)))


def _fail_running(
    store: Store,
    policy: RetryPolicy,
    jobs: Sequence[Job],
    error: BaseException,
    *,
    always_retry: bool = False,
) -> list[JobOutcome | None]:
    """Fail the jobs still running; the ones the handler finished (or failed) keep their state.
    Returns the outcome of each job it failed (``done`` for one the handler had finished).

    The state read is a fast path; the store's guarded updates make it safe under races."""
    outcomes: list[JobOutcome | None] = []
    for job in jobs:
        try:
            state = store.jobs.get_job(job.id).state
        except NotFound:
            continue  # deleted with its tenant while it ran
        if state is JobState.RUNNING:
            outcomes.append(_fail(store, policy, job, error, always_retry=always_retry))
        elif state is JobState.DONE:
            outcomes.append("done")
    return outcomes


def _fail(
    store: Store,
    policy: RetryPolicy,
    job: Job,
    error: BaseException,
    *,
    always_retry: bool = False,
) -> JobOutcome | None:
    """Record one job's failure: rescheduled per ``policy`` (the store marks it failed when out
    of attempts), or failed at once when retrying cannot help. Returns what became of it (None
    when nothing could be recorded)."""
    cause, result = (error.cause, error.result) if isinstance(error, JobFailed) else (error, None)
    decision = policy.decide(cause, job.attempts)
    if always_retry and not decision.retry:
        decision = Decision(retry=True, delay_ms=policy.backoff_ms(job.attempts))
    message = describe_error(cause)
    try:
        if decision.retry and not decision.uses_attempt:
            state = store.jobs.defer_job(job.id, message, decision.delay_ms, result)
        elif decision.retry:
            state = store.jobs.fail_job(job.id, message, decision.delay_ms, result)
        else:
            with store.transaction() as tx:
                tx.jobs.fail_job_now(job.id, message, result)
            state = JobState.FAILED
    except NotFound:
        return None  # deleted with its tenant while it ran
    except Exception:  # one unrecorded failure must not stop the others; the lease retries it
        log.exception("job %s (%s): recording its failure failed", job.id, job.kind)
        return None
    last_line = message.strip().splitlines()[-1] if message.strip() else ""
    log.warning("job %s (%s) failed, now %s: %s", job.id, job.kind, state.value, last_line)
    if state is JobState.FAILED:
        return "failed"
    return "retried" if decision.uses_attempt else "deferred"


def describe_error(error: BaseException) -> str:
    """The error for the job row: one line for an omoide error (its step, its message and the
    start of an unusable answer), the traceback for an unexpected one (a bug to find)."""
    if not isinstance(error, OmoideError):
        return "".join(traceback.format_exception(error))
    text = f"{type(error).__name__}: {error.message}"
    if isinstance(error, LLMRejected):
        text += f" | {REJECTED_HINT}"
    if step := error.fields.get("step"):
        text = f"step {step}: {text}"
    raw = error.fields.get("raw")
    if isinstance(raw, str) and raw:
        text += f" | raw answer: {raw[:500]!r}"
    return text


class Worker:
    """Runs ``run_batch`` in a daemon thread until ``stop()``; ``wake()`` skips the idle wait.

    Constructing a worker starts nothing; ``start()`` does."""

    def __init__(
        self,
        store: Store,
        registrations: Handlers,
        idle_s: float = 0.5,
        lease_ms: int = LEASE_MS,
        observer: Observer = NO_OBSERVER,
    ) -> None:
        self._store = store
        self._lease_ms = lease_ms
        self._observer = observer
        # Mappings are taken as given (the engine fills its handler dict after construction).
        self._registrations = (
            registrations if isinstance(registrations, Mapping) else list(registrations)
        )
        self._idle_s = idle_s
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="omoide-worker", daemon=True)
            self._thread.start()

    def wake(self) -> None:
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        """Finish the batch in hand, then return. Unfinished jobs stay in the table."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                claimed = run_batch(
                    self._store,
                    self._registrations,
                    lease_ms=self._lease_ms,
                    observer=self._observer,
                )
            except Exception:
                log.exception("job worker: claiming failed; retrying")
                claimed = 0
            if not claimed:
                self._wake.wait(self._idle_s)
                self._wake.clear()
