"""``Engine``: the services over one store, and the job workers that run their jobs.

Constructing an engine builds its services (``build``, from ``omoide.wiring``) and starts
nothing; ``start()`` starts its worker threads (none with ``workers=0``: then jobs run in the
caller's thread, in ``run_jobs`` or a ``wait``; with ``run_jobs=False`` never: other processes,
``omoide worker``, run them and a ``wait`` only watches). Each job kind is registered with the one
service method that handles it, looked up when the job runs, so ``reconfigure`` (new
services over the same store) takes effect for the next job.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from omoide.embed.protocol import Embedder
from omoide.engine.embedding import Embedding
from omoide.engine.services import ServiceConfig, Services
from omoide.engine.signal import JobSignal
from omoide.jobs.gate import OutageGate, chain
from omoide.jobs.kinds import CHUNK, CONSOLIDATE, EMBED, EMBED_ENTITIES, EXTRACT
from omoide.jobs.worker import LEASE_MS, Registration, Worker, run_batch
from omoide.llm import LLM
from omoide.observe import NO_OBSERVER, Observer
from omoide.store.protocol import Store


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

    @property
    def embedder(self) -> Embedder:
        return self.embedding.embedder

    def start(self) -> None:
        """Start the worker threads and let the services wake them (or, without any, run the
        jobs they wait for in the waiting thread)."""
        wake = self._wake if self._workers else None
        self.signal.connect(wake=wake, drain=self.run_jobs if self._runs_jobs else _no_jobs)
        for worker in self._workers:
            worker.start()
        if self._workers and self._unwatch is None:  # jobs other processes enqueue wake them
            self._unwatch = self.store.watch_jobs(self._wake)

    def run_jobs(self, limit: int = 1000) -> int:
        """Run due jobs in this thread until none is due (or ``limit``); return the count."""
        done = 0
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

    def close(self) -> None:
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None
        if self._gate is not None:
            self._gate.stop()
        for worker in self._workers:
            worker.stop()
        self.services.search.close()
        self.store.close()
        for close in self._on_close:
            close()

    def _wake(self) -> None:
        for worker in self._workers:
            worker.wake()

    def _registrations(self) -> list[Registration[Any]]:
        """Each job kind's handler: the method of the service that owns the kind, looked up
        on the current services when a batch runs."""
        return [
            Registration(EMBED, lambda batch: self.services.maintenance.run_embed_jobs(batch)),
            Registration(EXTRACT, lambda batch: self.services.extraction.run_jobs(batch)),
            Registration(EMBED_ENTITIES, lambda batch: self.services.graph.run_embed_jobs(batch)),
            Registration(CHUNK, lambda batch: self.services.chunks.run_jobs(batch)),
            Registration(CONSOLIDATE, lambda batch: self.services.consolidation.run_jobs(batch)),
        ]


def _no_jobs() -> int:
    """What a ``wait`` runs in a process that leaves jobs to worker processes: nothing."""
    return 0
