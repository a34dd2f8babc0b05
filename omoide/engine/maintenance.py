"""``MaintenanceService``: jobs, reindexing and health, the engine's operator-facing side.

A reindex builds the new vectors beside the live ones (``stage_vector``) and swaps them in one
transaction at the end, queuing an ``embed`` job for any memory written or edited too late to
be staged: killed at any point, every memory still has a vector or a queued job, search keeps
working on the old vectors, and the next run resumes from what was staged.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from omoide.engine.embedder_health import EmbedderHealth
from omoide.engine.graph import GraphService
from omoide.engine.llm_health import LLMHealth
from omoide.engine.shared.embedding import META_DIM, META_MODEL, Embedding
from omoide.engine.shared.job_signal import JobSignal
from omoide.errors import EmbedderError, OmoideError
from omoide.jobs.kinds import EMBED, EmbedPayload
from omoide.jobs.queue import enqueue
from omoide.redact import redact
from omoide.store.ports.admin import AdminReads
from omoide.store.ports.jobs import JobQueue
from omoide.store.ports.memories import MemoryReads
from omoide.store.protocol import Transactions, Tx
from omoide.types import Job, JobState, MemoryItem, Scope, now_ms
from omoide.validate import check_limit

META_REBUILD = "rebuild_embedder"  # "model:dim" the staged vectors of a reindex belong to
_JOB_IDS = 256  # memory ids per embed job queued by a reindex
PROBE_CHECK_S = 10.0  # budget of the integrity check a probing health call runs
# A probing health call re-runs the integrity check at most this often, one at a time (any
# tenant's key may probe; each check reads the whole file): the others report the last one.
PROBE_RECHECK_EVERY_S = 60.0
_NONE = np.zeros((0, 0), dtype=np.float32)  # the vectors of a job whose memories are all gone
PRUNE_BATCH = 1000  # finished jobs deleted per transaction
PRUNE_BATCHES = 50  # per call: a large backlog goes over several of the ticker's calls

log = logging.getLogger("omoide.jobs")


class MaintenanceService:
    """``llm_health`` reports the configured LLM from a real call (see ``LLMHealth``),
    ``embedder_health`` a remote embedder (see ``EmbedderHealth``; by default, one over
    ``embedding``)."""

    def __init__(
        self,
        memory_reads: MemoryReads,
        jobs: JobQueue,
        admin_reads: AdminReads,
        transactions: Transactions,
        location: str,
        embedding: Embedding,
        graph: GraphService,
        signal: JobSignal,
        *,
        llm_health: LLMHealth,
        embedder_health: EmbedderHealth | None = None,
    ) -> None:
        self._memory_reads = memory_reads
        self._jobs = jobs
        self._admin_reads = admin_reads
        self._transactions = transactions
        self._location = location
        self._embedding = embedding
        self._graph = graph
        self._signal = signal
        self._llm_health = llm_health
        self._endpoint_health = embedder_health or EmbedderHealth(embedding)
        self._recheck = threading.Lock()
        self._rechecked_at: float | None = None  # time.monotonic() of the last recheck

    def prune_finished_jobs(self, retention_s: float, batches: int = PRUNE_BATCHES) -> bool:
        """Delete the jobs that ended (done or failed) over ``retention_s`` seconds ago, in
        short transactions of ``PRUNE_BATCH`` jobs (a writer waits at most one of them);
        whether some are left after ``batches`` of them, for the next call."""
        before = now_ms() - round(retention_s * 1000)
        for _ in range(batches):
            deleted = self._jobs.prune_finished_jobs(before, PRUNE_BATCH)
            if deleted:
                log.info("jobs: deleted %d that ended over %.0f s ago", deleted, retention_s)
            if deleted < PRUNE_BATCH:
                return False
        return True

    def run_embed_jobs(self, batch: Sequence[tuple[Job, EmbedPayload]]) -> dict[int, BaseException]:
        """The ``embed`` handler: vectors for memories written while the embedder was down.

        The texts of every job of the batch, whatever its tenant, go to the embedder in one
        call (it sorts them by length into full runs: after an outage hundreds of one-turn
        jobs wait, and one text per run is the slowest way to embed them); each job's vectors
        are then stored in its own transaction, so a job that fails alone fails alone."""
        errors: dict[int, BaseException] = {}
        loaded: list[tuple[Job, Scope, list[MemoryItem]]] = []
        for job, payload in batch:
            scope = Scope(user_id=job.user_id, scope_id=job.scope_id)
            try:
                loaded.append(
                    (job, scope, self._memory_reads.get_memories(scope, payload.memory_ids))
                )
            except OmoideError as exc:
                errors[job.id] = exc
        vectors = self._embed_jobs([(job.id, items) for job, _, items in loaded], errors)
        for job, scope, items in loaded:
            if job.id in errors:
                continue
            try:
                with self._transactions.transaction() as tx:
                    for item, vector in zip(items, vectors[job.id], strict=True):
                        # Only over the text it was computed from: an update() since then
                        # stored (or queued) the new text's vector, which must stay.
                        tx.memories.put_vector(scope, item.id, vector, item.text)
                    tx.jobs.finish_job(job.id)
            except OmoideError as exc:
                errors[job.id] = exc
        return errors

    def _embed_jobs(
        self, jobs: list[tuple[int, list[MemoryItem]]], errors: dict[int, BaseException]
    ) -> dict[int, np.ndarray]:
        """Each job's vectors (row i for its item i) from one embed call; when that call is
        refused (not an outage), each job's texts again on their own, so one text the embedder
        rejects fails its job only. The jobs that fail go into ``errors``."""
        texts = [item.text for _, items in jobs for item in items]
        try:
            every = self._embedding.embed(texts) if texts else None
        except EmbedderError as exc:
            if exc.retryable or len(jobs) == 1:  # down for every job alike: no point in one by one
                errors.update((job_id, exc) for job_id, _ in jobs)
                return {}
            return self._embed_each(jobs, errors)
        out: dict[int, np.ndarray] = {}
        start = 0
        for job_id, items in jobs:
            out[job_id] = every[start : start + len(items)] if every is not None else _NONE
            start += len(items)
        return out

    def _embed_each(
        self, jobs: list[tuple[int, list[MemoryItem]]], errors: dict[int, BaseException]
    ) -> dict[int, np.ndarray]:
        out: dict[int, np.ndarray] = {}
        for job_id, items in jobs:
            try:
                out[job_id] = self._embedding.embed([i.text for i in items]) if items else _NONE
            except OmoideError as exc:
                errors[job_id] = exc
        return out

    def list_jobs(
        self,
        *,
        scope: Scope | None = None,
        state: JobState | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Job]:
        check_limit(limit, offset)
        return self._jobs.list_jobs(scope, state, limit, offset)

    def job_counts(self, *, scope: Scope | None = None) -> dict[str, int]:
        return self._jobs.job_counts(scope)

    def retry_job(self, job_id: int, *, scope: Scope | None = None) -> Job:
        job = self._jobs.retry_job(scope, job_id)
        self._signal.wake()
        return job

    def reindex(self, progress: Callable[[int, int], None] | None = None, batch: int = 256) -> int:
        """Re-embed every memory (and entity) with the current embedder (after a model change);
        return the number of memories embedded by this run.

        Resumable: a run killed midway leaves the old vectors in use and the new ones staged;
        the next run with the same embedder embeds only what is not staged yet. ``progress``
        gets (memories embedded by this run, total memories) after each committed batch.
        """
        dim = int(self._embedding.embed_unchecked(["probe"]).shape[1])
        target = f"{self._embedding.name}:{dim}"
        with self._transactions.transaction() as tx:
            if self._admin_reads.get_meta(META_REBUILD) != target:
                tx.memories.clear_staged_vectors()  # staged by another embedder: start over
                tx.admin.set_meta(META_REBUILD, target)
        total = self._admin_reads.stats()["memories"]
        done = 0
        for chunk in self._memory_reads.iter_memory_texts(batch, unstaged=True):
            vectors = self._embedding.embed_unchecked([text for _, _, text in chunk])
            with self._transactions.transaction() as tx:
                for (scope, memory_id, text), vector in zip(chunk, vectors, strict=True):
                    tx.memories.stage_vector(scope, memory_id, vector, text)
            done += len(chunk)
            if progress:
                progress(done, max(total, done))
        with self._transactions.transaction() as tx:
            _queue_embeds(tx, tx.memories.swap_staged_vectors())
            self._embedding.record_signature(tx, dim)
            tx.admin.set_meta(META_REBUILD, "")
        self._signal.wake()
        self._graph.reembed(batch)
        return done

    def health(self, *, probe_embedder: bool = False) -> dict[str, Any]:
        """Status of each part: ``ok``, ``degraded``, ``down`` or ``disabled``, with versions
        and counts. A remote embedder is asked whether it answers (cached briefly, see
        ``EmbedderHealth``); the bundled local model is ``not loaded`` until its first use.
        ``probe_embedder`` also checks for real: embeds a text through the embedder in use and
        re-runs the store's integrity check (bounded; ``omoide doctor``), at most once every
        ``PROBE_RECHECK_EVERY_S`` and one at a time (the probes in between report the last)."""
        from omoide._version import __version__

        out: dict[str, Any] = {"version": __version__}
        out["store"] = self._store_health(recheck=probe_embedder)
        out["embedder"] = self._embedder_health(probe_embedder)
        if out["store"]["status"] != "down":
            out["vectors"] = self._vector_health()
        out["llm"] = self._llm_health.report()
        try:
            out["jobs"] = self.job_counts()
        except OmoideError as exc:
            out["jobs"] = {"error": str(exc)}
        cleaned: dict[str, Any] = _redacted(out)
        return cleaned

    def _store_health(self, *, recheck: bool) -> dict[str, Any]:
        admin = self._admin_reads
        held = recheck and self._recheck.acquire(blocking=False)
        try:
            last = self._rechecked_at
            recheck = held and (last is None or time.monotonic() - last >= PROBE_RECHECK_EVERY_S)
            report: dict[str, Any] = {
                "status": "ok",
                "location": self._location,
                "schema_version": admin.schema_version(),
            }
            problems = admin.integrity(recheck=recheck, max_seconds=PROBE_CHECK_S)
            if recheck:
                self._rechecked_at = time.monotonic()
        except Exception as exc:  # health reports failures instead of raising them
            return {"status": "down", "error": str(exc)}
        finally:
            if held:
                self._recheck.release()
        report["integrity"] = (
            "unchecked" if problems is None else "ok" if not problems else "corrupt"
        )
        if problems:
            report.update(
                status="down",
                error="the database file is corrupt (restore a backup, or copy what is still"
                f" readable with `sqlite3 .recover`): {'; '.join(problems[:5])}",
            )
        return report

    def _embedder_health(self, probe: bool) -> dict[str, Any]:
        model = self._admin_reads.get_meta(META_MODEL)
        embedder: dict[str, Any] = {
            "name": self._embedding.name,
            "database_model": model,
            "dimension": self._admin_reads.get_meta(META_DIM),
            "status": "ok" if self._embedding.checked else "not loaded",
        }
        if not probe and (endpoint := self._endpoint_health.report()) is not None:
            embedder.update(endpoint)
        if probe:
            try:
                embedder["dimension"] = int(self._embedding.embed(["probe"]).shape[1])
                embedder["status"] = "ok"
            except EmbedderError as exc:
                embedder.update(status="down", error=str(exc))
        if model is not None and model != self._embedding.name:
            embedder.update(
                status="down",
                error=f"this database was embedded with {model} but the embedder is"
                f" {self._embedding.name}: vector search is refused until `omoide reindex`",
            )
        return embedder

    def _vector_health(self) -> dict[str, Any]:
        """Memories vector search cannot find: written while the embedder was down (their
        ``embed`` jobs pending or failed) or left by an interrupted reindex."""
        try:
            missing = self._memory_reads.unembedded_count()
        except OmoideError as exc:
            return {"status": "down", "error": str(exc)}
        if not missing:
            return {"status": "ok", "without_vector": 0}
        return {
            "status": "degraded",
            "without_vector": missing,
            "reason": f"{missing} memories have no vector yet, so vector search misses them:"
            " their embed jobs are pending or failed (`omoide jobs list`)",
        }


def _redacted(value: Any) -> Any:
    """Every string of a report with its secrets masked (a driver's or a server's text can
    quote a URL with its password or key): whoever reads the report, the same."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def _queue_embeds(tx: Tx, missing: list[tuple[Scope, str]]) -> None:
    """One ``embed`` job per tenant and ``_JOB_IDS`` memories, in the caller's transaction."""
    by_scope: dict[Scope, list[str]] = {}
    for scope, memory_id in missing:
        by_scope.setdefault(scope, []).append(memory_id)
    for scope, ids in by_scope.items():
        for start in range(0, len(ids), _JOB_IDS):
            enqueue(tx.jobs, scope, EMBED, EmbedPayload(memory_ids=ids[start : start + _JOB_IDS]))
