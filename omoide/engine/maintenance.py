"""Jobs, reindexing and health: the engine's operator-facing side."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from omoide.embed.protocol import Embedder
from omoide.errors import EmbedderError
from omoide.jobs.worker import Handler, Worker, run_batch
from omoide.llm import LLM
from omoide.store.protocol import Store
from omoide.types import Job, JobState, Scope
from omoide.validate import check_limit

EMBED_JOB = "embed"
META_MODEL = "embedding_model"
META_DIM = "embedding_dim"


class MaintenanceMixin:
    store: Store
    embedder: Embedder
    llm: LLM | None
    _signature_checked: bool
    _handlers: dict[str, Handler]
    _workers: list[Worker]

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    if TYPE_CHECKING:  # KnowledgeMixin

        def _reembed_entities(self, batch: int) -> int: ...

    def _run_embed_jobs(self, jobs: list[Job]) -> None:
        for job in jobs:
            scope = Scope(user_id=job.user_id, scope_id=job.scope_id)
            items = self.store.memories.get_memories(scope, job.payload.get("memory_ids", []))
            vectors = self._embed([i.text for i in items]) if items else None
            with self.store.transaction() as tx:
                for index, item in enumerate(items):
                    assert vectors is not None
                    tx.memories.put_vector(scope, item.id, vectors[index])
                tx.jobs.finish_job(job.id)

    def run_jobs(self, limit: int = 1000) -> int:
        """Run due jobs in this thread until none is due (or ``limit``); return the count."""
        done = 0
        while done < limit:
            claimed = run_batch(self.store, self._handlers, min(32, limit - done))
            if not claimed:
                return done
            done += claimed
        return done

    def _wake_workers(self) -> None:
        for worker in self._workers:
            worker.wake()

    def list_jobs(
        self,
        *,
        scope: Scope | None = None,
        state: JobState | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Job]:
        check_limit(limit, offset)
        return self.store.jobs.list_jobs(scope, state, limit, offset)

    def job_counts(self, *, scope: Scope | None = None) -> dict[str, int]:
        return self.store.jobs.job_counts(scope)

    def retry_job(self, job_id: int, *, scope: Scope | None = None) -> Job:
        job = self.store.jobs.retry_job(scope, job_id)
        self._wake_workers()
        return job

    def reindex(self, progress: Callable[[int, int], None] | None = None, batch: int = 256) -> int:
        """Re-embed every memory (and entity) with the current embedder (after a model change);
        return the number of memories."""
        total = self.store.admin.stats()["memories"]
        probe = self.embedder.embed(["probe"])
        with self.store.transaction() as tx:
            tx.memories.clear_vectors()
            tx.admin.set_meta(META_MODEL, self.embedder.name)
            tx.admin.set_meta(META_DIM, str(probe.shape[1]))
        self._signature_checked = True
        done = 0
        for chunk in self.store.memories.iter_memory_texts(batch):
            vectors = self.embedder.embed([text for _, _, text in chunk])
            with self.store.transaction() as tx:
                for (scope, memory_id, _), vector in zip(chunk, vectors, strict=True):
                    tx.memories.put_vector(scope, memory_id, vector)
            done += len(chunk)
            if progress:
                progress(done, total)
        self._reembed_entities(batch)
        return done

    def health(self, *, probe_embedder: bool = False) -> dict[str, Any]:
        """Status of each part: ``ok``, ``down`` or ``disabled``, with versions and counts."""
        from omoide._version import __version__

        out: dict[str, Any] = {"version": __version__}
        try:
            out["store"] = {
                "status": "ok",
                "location": self.store.location,
                "schema_version": self.store.admin.schema_version(),
            }
        except Exception as exc:  # health reports failures instead of raising them
            out["store"] = {"status": "down", "error": str(exc)}
        embedder: dict[str, Any] = {
            "name": self.embedder.name,
            "database_model": self.store.admin.get_meta(META_MODEL),
            "dimension": self.store.admin.get_meta(META_DIM),
            "status": "ok" if self._signature_checked else "not loaded",
        }
        if probe_embedder:
            try:
                embedder["dimension"] = int(self._embed(["probe"]).shape[1])
                embedder["status"] = "ok"
            except EmbedderError as exc:
                embedder.update(status="down", error=str(exc))
        out["embedder"] = embedder
        if self.llm is None:
            reason = "no LLM configured (OMOIDE_LLM_BASE_URL)"
            out["llm"] = {"status": "disabled", "reason": reason}
        else:
            out["llm"] = {"status": "ok", "model": self.llm.name}
        out["jobs"] = self.job_counts()
        return out
