"""``MaintenanceService``: jobs, reindexing and health, the engine's operator-facing side."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from omoide.engine.embedding import META_DIM, META_MODEL, Embedding
from omoide.engine.graph import GraphService
from omoide.engine.llm_health import LLMHealth
from omoide.engine.signal import JobSignal
from omoide.errors import EmbedderError, OmoideError
from omoide.jobs.kinds import EmbedPayload
from omoide.store.protocol import Store
from omoide.types import Job, JobState, Scope
from omoide.validate import check_limit


class MaintenanceService:
    """``llm_health`` reports the configured LLM from a real call (see ``LLMHealth``)."""

    def __init__(
        self,
        store: Store,
        embedding: Embedding,
        graph: GraphService,
        signal: JobSignal,
        *,
        llm_health: LLMHealth,
    ) -> None:
        self._store = store
        self._embedding = embedding
        self._graph = graph
        self._signal = signal
        self._llm_health = llm_health

    def run_embed_jobs(self, batch: Sequence[tuple[Job, EmbedPayload]]) -> dict[int, BaseException]:
        """The ``embed`` handler: vectors for memories written while the embedder was down."""
        errors: dict[int, BaseException] = {}
        for job, payload in batch:
            scope = Scope(user_id=job.user_id, scope_id=job.scope_id)
            try:
                items = self._store.memories.get_memories(scope, list(payload.memory_ids))
                vectors = self._embedding.embed([i.text for i in items]) if items else None
                with self._store.transaction() as tx:
                    for row, item in enumerate(items):
                        assert vectors is not None
                        tx.memories.put_vector(scope, item.id, vectors[row])
                    tx.jobs.finish_job(job.id)
            except OmoideError as exc:
                errors[job.id] = exc
        return errors

    def list_jobs(
        self,
        *,
        scope: Scope | None = None,
        state: JobState | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Job]:
        check_limit(limit, offset)
        return self._store.jobs.list_jobs(scope, state, limit, offset)

    def job_counts(self, *, scope: Scope | None = None) -> dict[str, int]:
        return self._store.jobs.job_counts(scope)

    def retry_job(self, job_id: int, *, scope: Scope | None = None) -> Job:
        job = self._store.jobs.retry_job(scope, job_id)
        self._signal.wake()
        return job

    def reindex(self, progress: Callable[[int, int], None] | None = None, batch: int = 256) -> int:
        """Re-embed every memory (and entity) with the current embedder (after a model change);
        return the number of memories."""
        total = self._store.admin.stats()["memories"]
        probe = self._embedding.embedder.embed(["probe"])
        with self._store.transaction() as tx:
            tx.memories.clear_vectors()
            self._embedding.record_signature(tx, probe.shape[1])
        done = 0
        for chunk in self._store.memories.iter_memory_texts(batch):
            vectors = self._embedding.embedder.embed([text for _, _, text in chunk])
            with self._store.transaction() as tx:
                for (scope, memory_id, _), vector in zip(chunk, vectors, strict=True):
                    tx.memories.put_vector(scope, memory_id, vector)
            done += len(chunk)
            if progress:
                progress(done, total)
        self._graph.reembed(batch)
        return done

    def health(self, *, probe_embedder: bool = False) -> dict[str, Any]:
        """Status of each part: ``ok``, ``down`` or ``disabled``, with versions and counts."""
        from omoide._version import __version__

        out: dict[str, Any] = {"version": __version__}
        try:
            out["store"] = {
                "status": "ok",
                "location": self._store.location,
                "schema_version": self._store.admin.schema_version(),
            }
        except Exception as exc:  # health reports failures instead of raising them
            out["store"] = {"status": "down", "error": str(exc)}
        embedder: dict[str, Any] = {
            "name": self._embedding.name,
            "database_model": self._store.admin.get_meta(META_MODEL),
            "dimension": self._store.admin.get_meta(META_DIM),
            "status": "ok" if self._embedding.checked else "not loaded",
        }
        if probe_embedder:
            try:
                embedder["dimension"] = int(self._embedding.embed(["probe"]).shape[1])
                embedder["status"] = "ok"
            except EmbedderError as exc:
                embedder.update(status="down", error=str(exc))
        out["embedder"] = embedder
        out["llm"] = self._llm_health.report()
        out["jobs"] = self.job_counts()
        return out
