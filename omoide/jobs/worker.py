"""A worker thread that drains the durable job table.

Jobs are rows committed with the data that caused them, so none is lost on a crash; a job whose
worker died is claimed again when its lease expires. Failures are retried with exponential
backoff and, after ``max_attempts``, marked ``failed`` with the error kept on the row, visible in
``omoide jobs`` and ``/v1/jobs``. Handlers must be idempotent: a job may run twice.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Callable

from omoide.store.protocol import Store
from omoide.types import Job

log = logging.getLogger("omoide.jobs")

Handler = Callable[[list[Job]], None]

LEASE_MS = 120_000
BASE_BACKOFF_MS = 1_000
MAX_BACKOFF_MS = 600_000


def backoff_ms(attempts: int) -> int:
    return int(min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** max(0, attempts - 1)))


def run_batch(store: Store, handlers: dict[str, Handler], limit: int = 32) -> int:
    """Claim and run up to ``limit`` due jobs; return how many were claimed."""
    jobs = store.jobs.claim_jobs(limit, LEASE_MS)
    by_kind: dict[str, list[Job]] = {}
    for job in jobs:
        by_kind.setdefault(job.kind, []).append(job)
    for kind, group in by_kind.items():
        handler = handlers.get(kind)
        if handler is None:
            for job in group:
                store.jobs.fail_job(
                    job.id, f"no handler for job kind {kind!r}", backoff_ms(job.attempts)
                )
            continue
        try:
            handler(group)
        except Exception:  # the one place that catches everything: the error goes on the row
            error = traceback.format_exc()
            for job in group:
                state = store.jobs.fail_job(job.id, error, backoff_ms(job.attempts))
                log.warning(
                    "job %s (%s) failed, now %s: %s",
                    job.id,
                    kind,
                    state.value,
                    error.strip().splitlines()[-1],
                )
    return len(jobs)


class Worker:
    """Runs ``run_batch`` in a daemon thread until ``stop()``; ``wake()`` skips the idle wait."""

    def __init__(self, store: Store, handlers: dict[str, Handler], idle_s: float = 0.5) -> None:
        self._store = store
        self._handlers = handlers
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
                claimed = run_batch(self._store, self._handlers)
            except Exception:
                log.exception("job worker: claiming failed; retrying")
                claimed = 0
            if not claimed:
                self._wake.wait(self._idle_s)
                self._wake.clear()
