"""``OutageGate``: after an LLM outage, the jobs waiting it out resume as soon as it is over.

A job that meets an outage (``LLMUnavailable``: nothing listens, a timeout, a 503) is deferred
for a backoff that grows to minutes (``RetryPolicy.outage_backoff_ms``). Without the gate each
job waits out its own backoff after the LLM is back (a restart, a crash). With it, the first
deferral starts a thread that asks a cheap question (the endpoint's model list: no tokens)
every ``interval_s``; when it answers, the deferred jobs are made due at once
(``JobQueue.release_jobs``) and the workers woken, and the thread sleeps until the next
deferral. A server that lists its models but refuses connections to its chat route would have
the jobs released again and again; so each release doubles the probe interval (up to
``MAX_INTERVAL_S``) until a job ends ``done``.

The gate is an ``Observer`` (it hears ``job_outcome(kind, "deferred")`` from the workers),
composed with the metrics observer by ``chain``. It finds the deferred jobs in the store, so
jobs deferred by other processes are released too. Only jobs that found the endpoint
unreachable are released: one deferred for a timeout, a 429 or a 503 met a server that was
there (busy generating, rate limiting, overloaded), which still answers its model list.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from omoide.observe import JobOutcome, Observer
from omoide.store.protocol import Store
from omoide.types import JobState

log = logging.getLogger("omoide.jobs")

SAMPLE = 1000  # pending jobs read per release
MAX_INTERVAL_S = 120.0
# Released: the jobs that found nothing listening (a restart, a crash). Not released when the
# model list answers: timeouts, 429 and 503 (a server busy generating, rate limiting or
# overloaded still lists its models), which wait out their backoff as the server asks.
OUTAGE_MARKS = ("LLMUnavailable", "unreachable")


class OutageGate:
    """``check()`` is True when the LLM endpoint answers (``omoide.llm.probe``); ``wake``
    wakes the workers. Constructing a gate starts nothing; the first deferral does."""

    def __init__(
        self,
        store: Store,
        check: Callable[[], bool],
        wake: Callable[[], None],
        interval_s: float = 5.0,
    ) -> None:
        self._store = store
        self._check = check
        self._wake = wake
        self._interval_s = interval_s
        self._wait_s = interval_s
        self._deferred = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def embed_call(self, seconds: float, error: str | None) -> None:  # noqa: ARG002
        return None

    def llm_call(self, seconds: float, error: str | None) -> None:  # noqa: ARG002
        return None

    def job_batch(self, kind: str, seconds: float) -> None:  # noqa: ARG002
        return None

    def job_outcome(self, kind: str, outcome: JobOutcome) -> None:  # noqa: ARG002
        if outcome == "done":
            self._wait_s = self._interval_s  # the LLM works: probe promptly next time
        elif outcome == "deferred" and not self._stop.is_set():
            self._deferred.set()
            self._start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._deferred.set()
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)

    def release(self) -> int:
        """Make the jobs deferred for an outage due now; how many were."""
        ids = [
            job.id
            for job in self._store.jobs.list_jobs(None, JobState.PENDING, SAMPLE, 0)
            if all(mark in (job.last_error or "") for mark in OUTAGE_MARKS)
        ]
        released = self._store.jobs.release_jobs(ids) if ids else 0
        if released:
            log.info("the LLM answers again: %d deferred job(s) released", released)
            self._wake()
        return released

    def _start(self) -> None:
        with self._lock:
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._loop, name="omoide-outage-gate", daemon=True
                )
                self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._deferred.wait()
            if self._stop.wait(self._wait_s):
                return
            try:
                if not self._check():
                    continue
                self._deferred.clear()  # a deferral from now on starts probing again
                if self.release():
                    self._wait_s = min(self._wait_s * 2, MAX_INTERVAL_S)
            except Exception:  # a failed probe or read: try again at the next interval
                log.exception("outage gate: probing or releasing failed")


def chain(*observers: Observer) -> Observer:
    """One observer telling each of ``observers`` in turn."""
    return _Chain(observers)


class _Chain:
    def __init__(self, observers: tuple[Observer, ...]) -> None:
        self._observers = observers

    def embed_call(self, seconds: float, error: str | None) -> None:
        for observer in self._observers:
            observer.embed_call(seconds, error)

    def llm_call(self, seconds: float, error: str | None) -> None:
        for observer in self._observers:
            observer.llm_call(seconds, error)

    def job_batch(self, kind: str, seconds: float) -> None:
        for observer in self._observers:
            observer.job_batch(kind, seconds)

    def job_outcome(self, kind: str, outcome: JobOutcome) -> None:
        for observer in self._observers:
            observer.job_outcome(kind, outcome)
