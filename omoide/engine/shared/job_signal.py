"""``JobSignal``: how a service that queued jobs tells the job runner, and waits for them.

Services only enqueue jobs (in their transactions); whoever owns the workers connects them
here (``Engine.start``). Without worker threads, ``wait`` runs the due jobs in the caller's
thread, so a library user with ``workers=0`` still gets ``wait=True`` semantics.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from omoide.store.ports.jobs import JobQueue
from omoide.types import JobState

_WAIT_POLL_S = 0.05
_FINAL = (JobState.DONE, JobState.FAILED)


class JobSignal:
    def __init__(self, jobs: JobQueue) -> None:
        self._jobs = jobs
        self._wake: Callable[[], None] | None = None
        self._drain: Callable[[], int] | None = None

    def connect(self, *, wake: Callable[[], None] | None, drain: Callable[[], int]) -> None:
        """``wake`` nudges worker threads (None: there are none); ``drain`` runs due jobs here."""
        self._wake, self._drain = wake, drain

    def wake(self) -> None:
        if self._wake is not None:
            self._wake()

    def wait(self, job_ids: Sequence[int], timeout: float) -> None:
        """Until every job is done or failed, or ``timeout`` seconds passed."""
        deadline = time.monotonic() + timeout
        pending = list(job_ids)
        while pending:
            if self._wake is not None:
                self._wake()
            elif self._drain is not None:
                self._drain()
            pending = [i for i in pending if self._jobs.get_job(i).state not in _FINAL]
            left = deadline - time.monotonic()
            if not pending or left <= 0:
                return
            time.sleep(min(_WAIT_POLL_S, left))
