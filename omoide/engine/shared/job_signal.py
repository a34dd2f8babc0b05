"""``JobSignal``: how a service that queued jobs tells the job runner, and waits for them.

Services only enqueue jobs (in their transactions); whoever owns the workers connects them
here (``Engine.start``). Without worker threads, ``wait`` runs the due jobs in the caller's
thread, so a library user with ``workers=0`` still gets ``wait=True`` semantics.

A caller that waits holds its thread for as long as the jobs take (an extraction behind a slow
LLM: a minute). In a server those threads are shared by every tenant, so ``waiting(scope)``
bounds them: at most ``per_tenant`` waiting callers of one tenant and ``total`` in all; one
more is refused with ``Busy`` (HTTP 429 with ``Retry-After``) before it writes anything. A
caller that reaches several tenants (an API key bound to a user reaches every scope of it) names
itself in ``WAITER``, and its waits count as one tenant's wherever they go.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from omoide.errors import Busy
from omoide.store.ports.jobs import JobQueue
from omoide.types import JobState, Scope

_WAIT_POLL_S = 0.05
_FINAL = (JobState.DONE, JobState.FAILED)

# Set by the HTTP server for a key bound to a user: spread over that user's scopes, its waits
# took OMOIDE_MAX_WAITING_PER_TENANT slots per scope, so one key filled OMOIDE_MAX_WAITING.
WAITER: ContextVar[str | None] = ContextVar("omoide_waiter", default=None)


class JobSignal:
    def __init__(
        self, jobs: JobQueue, *, per_tenant: int | None = None, total: int | None = None
    ) -> None:
        self._jobs = jobs
        self._per_tenant, self._total = per_tenant, total
        self._waiting: Counter[Scope | str] = Counter()
        self._guard = threading.Lock()
        self._wake: Callable[[], None] | None = None
        self._drain: Callable[[], int] | None = None

    def connect(self, *, wake: Callable[[], None] | None, drain: Callable[[], int]) -> None:
        """``wake`` nudges worker threads (None: there are none); ``drain`` runs due jobs here."""
        self._wake, self._drain = wake, drain

    def wake(self) -> None:
        if self._wake is not None:
            self._wake()

    @contextmanager
    def waiting(self, scope: Scope, timeout: float = 60.0) -> Iterator[None]:
        """A slot for one caller of ``scope`` that will ``wait`` up to ``timeout`` seconds;
        ``Busy`` when none is free."""
        retry_after = min(timeout, 10.0)  # some waiter is done by then, or gave up waiting
        who: Scope | str = WAITER.get() or scope
        with self._guard:
            mine, everyone = self._waiting[who], sum(self._waiting.values())
            if self._per_tenant is not None and mine >= self._per_tenant:
                whose = "this tenant" if who == scope else "this API key"
                raise Busy(
                    f"{whose} already has {mine} requests waiting for their jobs (the limit"
                    " is OMOIDE_MAX_WAITING_PER_TENANT): retry later, or add without waiting",
                    retry_after=max(1, round(retry_after)),
                )
            if self._total is not None and everyone >= self._total:
                raise Busy(
                    f"{everyone} requests are waiting for their jobs (the limit is"
                    " OMOIDE_MAX_WAITING): retry later, or add without waiting",
                    retry_after=max(1, round(retry_after)),
                )
            self._waiting[who] += 1
        try:
            yield
        finally:
            with self._guard:
                self._waiting[who] -= 1
                if not self._waiting[who]:
                    del self._waiting[who]

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
