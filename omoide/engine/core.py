"""``Engine``: the services over one store, and the job workers that run their jobs.

Constructing an engine builds its services (``build``, from ``omoide.wiring``) and starts
nothing; ``start()`` starts its worker threads (none with ``workers=0``: then jobs run in the
caller's thread, in ``run_jobs`` or a ``wait``; with ``run_jobs=False`` never: other processes,
``omoide worker``, run them and a ``wait`` only watches). Each job kind is registered with the one
service method that handles it, looked up when the job runs, so ``reconfigure`` (new
services over the same store) takes effect for the next job. A process that runs jobs also runs
the scheduler of dreaming schedules (``Ticker``): every ``poll_s`` it enqueues the due sweeps
(claimed in the store, so several processes enqueue each once), and now and then (hourly at
most) it deletes the jobs that ended longer ago than ``job_retention_s`` (0: never), so the job
table does not grow with every add for ever.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeAlias, TypeVar

from omoide.embed.protocol import Embedder
from omoide.engine.services import ServiceConfig, Services
from omoide.engine.shared.embedding import Embedding
from omoide.engine.shared.job_signal import JobSignal
from omoide.jobs.gate import OutageGate, chain
from omoide.jobs.kinds import (
    CHUNK,
    CONSOLIDATE,
    DREAM_SWEEP,
    EMBED,
    EMBED_ENTITIES,
    EXPIRY_DELETE,
    EXPIRY_REFRESH,
    EXTRACT,
)
from omoide.jobs.worker import LEASE_MS, Registration, Worker, run_batch
from omoide.llm import LLM
from omoide.observe import NO_OBSERVER, Observer
from omoide.store.protocol import Store
from omoide.types import Job, Scope

P = TypeVar("P")
Handler: TypeAlias = Callable[[Sequence[tuple[Job, P]]], Mapping[int, BaseException]]

log = logging.getLogger("omoide.jobs")
PRUNE_EVERY_S = 3600.0  # the longest wait between two prunings of finished jobs


class Engine:
    """``on_close`` runs after the store is closed (e.g. closing an LLM client built for it).
    ``observer`` hears of every job batch and job outcome (``omoide.observe``).
    ``llm_available`` (the LLM's model list answers) lets the outage gate release the jobs
    deferred by an LLM outage as soon as it is over (``omoide.jobs.gate``), probing every
    ``outage_probe_s``; without it they wait out their backoff."""

    def __init__(
        self,
        store: Store,
        embedding: Embedding,
        llm: LLM | None,
        signal: JobSignal,
        build: Callable[[ServiceConfig], Services],
        config: ServiceConfig,
        *,
        workers: int = 1,
        on_close: Sequence[Callable[[], None]] = (),
        run_jobs: bool = True,
        lease_ms: int = LEASE_MS,
        poll_s: float = 0.5,
        observer: Observer = NO_OBSERVER,
        llm_available: Callable[[], bool] | None = None,
        outage_probe_s: float = 5.0,
        job_retention_s: float = 0.0,
    ) -> None:
        self.store = store
        self.embedding = embedding
        self.llm = llm
        self.signal = signal
        self.config = config
        self._build = build
        self.services = build(config)
        self._on_close = list(on_close)
        self._registered = self._registrations()
        self._runs_jobs = run_jobs
        self._lease_ms = lease_ms
        self._gate: OutageGate | None = None
        if llm_available is not None and outage_probe_s > 0 and run_jobs:
            self._gate = OutageGate(store, llm_available, self._wake, outage_probe_s)
            observer = chain(observer, self._gate)
        self._observer = observer
        count = workers if run_jobs else 0
        self._workers = [
            Worker(store, self._registered, poll_s, lease_ms, observer) for _ in range(count)
        ]
        self._unwatch: Callable[[], None] | None = None
        self._ticker = Ticker(self._tick, poll_s) if self._workers else None
        self._job_retention_s = job_retention_s
        self._next_prune = 0.0  # time.monotonic() of the next pruning of finished jobs
        self._started = False

    @property
    def embedder(self) -> Embedder:
        return self.embedding.embedder

    def start(self) -> None:
        """Start the worker threads and let the services wake them (or, without any, run the
        jobs they wait for in the waiting thread)."""
        self._started = True
        if self.services.mirror is not None:
            self.services.mirror.start()
        wake = self._wake if self._workers else None
        self.signal.connect(wake=wake, drain=self.run_jobs if self._runs_jobs else _no_jobs)
        for worker in self._workers:
            worker.start()
        if self._workers and self._unwatch is None:  # jobs other processes enqueue wake them
            self._unwatch = self.store.watch_jobs(self._wake)
        if self._ticker is not None:
            self._ticker.start()

    def run_jobs(self, limit: int = 1000) -> int:
        """Run due jobs in this thread until none is due (or ``limit``); return the count."""
        done = 0
        if self._runs_jobs:
            self._tick()  # a library without worker threads has no ticker: this is its tick
        while done < limit:
            claimed = run_batch(
                self.store,
                self._registered,
                min(32, limit - done),
                self._lease_ms,
                self._observer,
            )
            if not claimed:
                return done
            done += claimed
        return done

    def reconfigure(self, **changes: Any) -> None:
        """New services with these ``ServiceConfig`` fields changed (e.g. ``knowledge``).

        A change between operations: a job batch or a search running meanwhile may still
        finish on the old services."""
        old = self.services
        self.config = replace(self.config, **changes)
        self.services = self._build(self.config)
        old.search.close()
        if old.mirror is not None:
            old.mirror.stop()
        if self._started and self.services.mirror is not None:
            self.services.mirror.start()

    def close(self) -> None:
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None
        if self._ticker is not None:
            self._ticker.stop()
        if self._gate is not None:
            self._gate.stop()
        for worker in self._workers:
            worker.stop()
        if self.services.mirror is not None:
            self.services.mirror.stop()
        self.services.search.close()
        self.store.close()
        for close in self._on_close:
            close()

    def _tick(self) -> None:
        self._enqueue_due()
        if self._job_retention_s and time.monotonic() >= self._next_prune:
            self._prune_jobs()

    def _prune_jobs(self) -> None:
        try:
            more = self.services.maintenance.prune_finished_jobs(self._job_retention_s)
        except Exception:  # the next tick tries again
            log.exception("job retention: deleting finished jobs failed")
            more = False
        # a tenth of the retention between two prunings (an hour at most): the jobs deleted
        # late are a tenth of those kept at most
        every = min(PRUNE_EVERY_S, self._job_retention_s / 10)
        self._next_prune = time.monotonic() + (0.0 if more else every)

    def _enqueue_due(self) -> None:
        try:
            self.services.dreaming.enqueue_due()
        except Exception:  # the next tick tries again; a claim that failed rolled back
            log.exception("dreaming scheduler: enqueueing due sweeps failed")

    def _wake(self) -> None:
        for worker in self._workers:
            worker.wake()

    def _registrations(self) -> list[Registration[Any]]:
        """Each job kind's handler: the method of the service that owns the kind, looked up
        on the current services when a batch runs."""
        return [
            Registration(EMBED, lambda batch: self.services.maintenance.run_embed_jobs(batch)),
            Registration(
                EXTRACT, self._announcing(lambda batch: self.services.extraction.run_jobs(batch))
            ),
            Registration(EMBED_ENTITIES, lambda batch: self.services.graph.run_embed_jobs(batch)),
            Registration(
                CHUNK, self._announcing(lambda batch: self.services.chunks.run_jobs(batch))
            ),
            Registration(
                CONSOLIDATE,
                self._announcing(lambda batch: self.services.consolidation.run_jobs(batch)),
            ),
            Registration(
                EXPIRY_REFRESH, lambda batch: self.services.expiry.run_refresh_jobs(batch)
            ),
            Registration(EXPIRY_DELETE, lambda batch: self.services.expiry.run_delete_jobs(batch)),
            Registration(
                DREAM_SWEEP,
                self._announcing(lambda batch: self.services.dreaming.run_sweeps(batch)),
            ),
        ]

    def _announcing(self, handler: Handler[P]) -> Handler[P]:
        """``handler``, then the memory events told which tenants the batch wrote to (the
        jobs that write memories do so in their own transactions, not through
        ``MemoryService``)."""

        def run(batch: Sequence[tuple[Job, P]]) -> Mapping[int, BaseException]:
            failed = handler(batch)
            for scope in {Scope(user_id=j.user_id, scope_id=j.scope_id) for j, _ in batch}:
                self.services.events.written(scope)
            return failed

        return run


class Ticker:
    """Calls ``tick`` every ``period_s`` in a daemon thread until ``stop()``."""

    def __init__(self, tick: Callable[[], None], period_s: float) -> None:
        self._tick = tick
        self._period_s = period_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="omoide-ticker", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.wait(self._period_s):
            self._tick()


def _no_jobs() -> int:
    """What a ``wait`` runs in a process that leaves jobs to worker processes: nothing."""
    return 0
