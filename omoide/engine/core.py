"""Engine: memories written, read and searched, composed from store, embedder, retrieval, jobs."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from omoide.config import Settings
from omoide.embed.protocol import Embedder
from omoide.engine.chunks import CHUNK_JOB, ChunksMixin
from omoide.engine.consolidate import CONSOLIDATE_JOB, ConsolidationMixin
from omoide.engine.context import ContextMixin
from omoide.engine.discussions import DiscussionsMixin
from omoide.engine.extraction import EXTRACT_JOB, MAX_ATTEMPTS, ExtractionMixin
from omoide.engine.graph import GraphMixin
from omoide.engine.ingest import IngestMixin
from omoide.engine.maintenance import EMBED_JOB, META_DIM, META_MODEL, MaintenanceMixin
from omoide.engine.policy import KnowledgeConfig
from omoide.engine.projects import ProjectsMixin
from omoide.engine.scopes import ScopesMixin
from omoide.engine.sessions import SessionsMixin
from omoide.engine.steps import EMBED_ENTITIES_JOB
from omoide.engine.summaries import SummariesMixin
from omoide.errors import EmbedderError, InvalidInput, NotFound
from omoide.jobs.worker import Worker
from omoide.llm import LLM
from omoide.retrieval.fusion import fuse
from omoide.retrieval.recipes import get_recipe
from omoide.retrieval.terms import keyword_terms
from omoide.store.protocol import NewMemory, Store, Tx
from omoide.types import (
    DEFAULT_ID,
    HistoryEntry,
    MemoryItem,
    MemoryType,
    Message,
    Page,
    Scope,
    SearchFilters,
    SearchHit,
    SearchResult,
)
from omoide.validate import check_limit, check_text

log = logging.getLogger("omoide")

NEIGHBOUR_CHARS = 1000


class Engine(
    IngestMixin,
    SessionsMixin,
    MaintenanceMixin,
    ExtractionMixin,
    ChunksMixin,
    SummariesMixin,
    ContextMixin,
    ConsolidationMixin,
    GraphMixin,
    ScopesMixin,
    ProjectsMixin,
    DiscussionsMixin,
):
    """Tenant-scoped memory operations over one ``Store``, one ``Embedder`` and, optionally,
    one ``LLM`` (without it, extraction reports itself disabled and everything else works).

    ``max_llm_calls`` caps the LLM calls of one add's extraction; later steps are skipped.
    ``knowledge`` sets chunking, summaries, context and consolidation (default: from the
    ``settings`` a ``Memory`` has, else ``KnowledgeConfig()``).
    """

    settings: Settings | None = None

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        llm: LLM | None = None,
        max_llm_calls: int = 6,
        recipe: str = "hybrid",
        max_text_chars: int = 100_000,
        workers: int = 1,
        actor: str = "library",
        knowledge: KnowledgeConfig | None = None,
    ) -> None:
        self._knowledge = knowledge
        self.store = store
        self.embedder = embedder
        self.llm = llm
        self.max_llm_calls = max_llm_calls
        self.recipe = get_recipe(recipe).name
        self.max_text_chars = max_text_chars
        self.actor = actor
        self._signature_checked = False
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="omoide-search")
        self._handlers = {
            EMBED_JOB: self._run_embed_jobs,
            EXTRACT_JOB: self._run_extract_jobs,
            EMBED_ENTITIES_JOB: self._run_embed_entity_jobs,
            CHUNK_JOB: self._run_chunk_jobs,
            CONSOLIDATE_JOB: self._run_consolidation_jobs,
        }
        self._workers = [Worker(store, self._handlers) for _ in range(workers)]
        for worker in self._workers:
            worker.start()

    @property
    def knowledge(self) -> KnowledgeConfig:
        if self._knowledge is not None:
            return self._knowledge
        # Not cached until a Memory's settings are set: its workers start (and may run a job)
        # before its __init__ sets them.
        if self.settings is None:
            return KnowledgeConfig()
        self._knowledge = KnowledgeConfig.from_settings(self.settings)
        return self._knowledge

    # embedding ------------------------------------------------------------------------
    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self.embedder.embed(texts)
        if not self._signature_checked:
            self._check_signature(vectors.shape[1])
        return vectors

    def _check_signature(self, dim: int) -> None:
        model, stored_dim = (
            self.store.admin.get_meta(META_MODEL),
            self.store.admin.get_meta(META_DIM),
        )
        if model is None:
            with self.store.transaction() as tx:
                tx.admin.set_meta(META_MODEL, self.embedder.name)
                tx.admin.set_meta(META_DIM, str(dim))
        elif model != self.embedder.name or int(stored_dim or 0) != dim:
            raise EmbedderError(
                f"this database was embedded with {model} ({stored_dim}-d) but the embedder is "
                f"{self.embedder.name} ({dim}-d); run `omoide reindex` to re-embed it",
                retryable=False,
                mismatch=True,
            )
        self._signature_checked = True

    def _try_embed(self, texts: Sequence[str]) -> np.ndarray | None:
        try:
            return self._embed(texts)
        except EmbedderError as exc:
            if not exc.retryable:
                raise
            log.warning("embedding failed, queued for retry: %s", exc)
            return None

    # writes ---------------------------------------------------------------------------
    def add_many(
        self,
        items: Sequence[NewMemory],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> list[MemoryItem]:
        """Bulk insert, embedded in batches: the fast path for imports."""
        for item in items:
            check_text(item.text, self.max_text_chars)
        return self._write(Scope(user_id=user_id, scope_id=scope_id), list(items), None)[0]

    def _write(
        self,
        scope: Scope,
        records: list[NewMemory],
        episode: list[Message] | None,
        extraction: dict[str, Any] | None = None,
    ) -> tuple[list[MemoryItem], dict[str, int]]:
        """Insert ``records`` (and the episode), their vectors or embed job, and the extraction
        job ``extraction`` describes, in one transaction; return the items and job ids."""
        if not records:
            raise InvalidInput("nothing to add")
        vectors = self._try_embed([r.text for r in records])
        with self.store.transaction() as tx:
            source: list[str] = []
            sessions = {r.session_id for r in records if r.session_id}
            for session_id in sorted(sessions):
                tx.sessions.ensure_session(scope, session_id)
            jobs: dict[str, int] = {}
            if episode is not None and len(sessions) == 1:
                source = [tx.sessions.insert_episode(scope, next(iter(sessions)), episode).id]
            self._link_neighbours(tx, scope, records)
            items = [self._insert(tx, scope, r, source) for r in records]
            if source and (chunk_job := self._queue_chunking(tx, scope, next(iter(sessions)))):
                jobs[CHUNK_JOB] = chunk_job
            pending = []
            for index, item in enumerate(items):
                if vectors is None:
                    pending.append(item.id)
                else:
                    tx.memories.put_vector(scope, item.id, vectors[index])
            if pending:
                jobs[EMBED_JOB] = tx.jobs.enqueue_job(scope, EMBED_JOB, {"memory_ids": pending})
            if extraction is not None and self.knowledge.summary_trigger == "chunk":
                # the chunk job rolls the summary forward instead of every add
                chosen = [step for step in extraction["steps"] if step != "summary"]
                extraction = {**extraction, "steps": chosen} if chosen else None
            if extraction is not None:
                extraction = {
                    **extraction,
                    "episode_id": source[0] if source else None,
                    "session_id": next(iter(sessions)) if len(sessions) == 1 else None,
                    "memory_ids": [i.id for i in items],
                }
                jobs[EXTRACT_JOB] = tx.jobs.enqueue_job(
                    scope, EXTRACT_JOB, extraction, MAX_ATTEMPTS
                )
        if jobs:
            self._wake_workers()
        if vectors is None:
            items = self.store.memories.get_memories(scope, [i.id for i in items])
        else:
            items = [i.model_copy(update={"embedded": True}) for i in items]
        return items, jobs

    def _insert(self, tx: Tx, scope: Scope, record: NewMemory, source: list[str]) -> MemoryItem:
        if not record.source_episodes and source:
            record.source_episodes = source
        return tx.memories.insert_memory(scope, record, self.actor)

    def _link_neighbours(self, tx: Tx, scope: Scope, records: list[NewMemory]) -> None:
        """Give each raw turn of a session its previous and next turn as keyword context.

        A turn's meaning often lives in its neighbours (the question it answers), so the keyword
        index sees them too, at a lower weight. Turns of one batch are linked here, before they
        are inserted; only the stored turn before a batch is updated (one full-text rewrite per
        session and batch, not one per turn). A record that comes with its own context keeps it.
        """
        last: dict[str, NewMemory] = {}
        for record in records:
            if record.type is not MemoryType.RAW or not record.session_id:
                continue
            if not record.context:
                text = record.text[:NEIGHBOUR_CHARS]
                prev = last.get(record.session_id)
                if prev is not None:
                    record.context = prev.text[:NEIGHBOUR_CHARS]
                    prev.context = f"{prev.context}\n{text}"
                elif stored := tx.memories.last_in_session(
                    scope, record.session_id, MemoryType.RAW
                ):
                    record.context = stored.text[:NEIGHBOUR_CHARS]
                    tx.memories.set_context(scope, stored.id, f"{stored.context}\n{text}")
            last[record.session_id] = record

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> MemoryItem:
        """Change a memory's text and/or metadata; the change is recorded in its history."""
        if text is None and metadata is None:
            raise InvalidInput("update needs text or metadata")
        if text is not None:
            check_text(text, self.max_text_chars)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        vectors = self._try_embed([text]) if text is not None else None
        with self.store.transaction() as tx:
            item = tx.memories.update_memory(scope, memory_id, text, metadata, self.actor)
            if text is not None:
                if vectors is not None:
                    tx.memories.put_vector(scope, memory_id, vectors[0])
                else:
                    tx.jobs.enqueue_job(scope, EMBED_JOB, {"memory_ids": [memory_id]})
        self._wake_workers()
        return self.get(memory_id, user_id=user_id, scope_id=scope_id) if text else item

    def delete(
        self, memory_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> None:
        """Delete one memory with its vector and index rows; its history records the delete."""
        with self.store.transaction() as tx:
            tx.memories.delete_memory(
                Scope(user_id=user_id, scope_id=scope_id), memory_id, self.actor
            )

    def delete_all(self, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID) -> int:
        """Delete everything of one tenant (memories, sessions, history, jobs); return the count."""
        with self.store.transaction() as tx:
            return tx.admin.delete_scope(Scope(user_id=user_id, scope_id=scope_id))

    def reset(self) -> None:
        """Delete every tenant's data and the recorded embedding model. Irreversible."""
        with self.store.transaction() as tx:
            tx.admin.delete_everything()
        self._signature_checked = False

    # reads ----------------------------------------------------------------------------
    def get(
        self, memory_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> MemoryItem:
        found = self.store.memories.get_memories(
            Scope(user_id=user_id, scope_id=scope_id), [memory_id]
        )
        if not found:
            raise NotFound(f"memory {memory_id!r} not found", id=memory_id)
        return found[0]

    def get_all(
        self,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        filters: SearchFilters | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> Page:
        """One page of memories, newest first, with the true total of all that match."""
        check_limit(limit, offset)
        items, total = self.store.memories.list_memories(
            Scope(user_id=user_id, scope_id=scope_id), filters or SearchFilters(), limit, offset
        )
        return Page(items=items, total=total, limit=limit, offset=offset)

    def history(
        self, memory_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> list[HistoryEntry]:
        """What happened to a memory, oldest first. For an extracted fact this covers all its
        versions (memories linked by ``supersedes``): ADD, then one UPDATE per new version
        (with the old and the new text), then DELETE if it was invalidated.
        """
        return self.store.memories.history(Scope(user_id=user_id, scope_id=scope_id), memory_id)

    def search(
        self,
        query: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        filters: SearchFilters | None = None,
        limit: int = 10,
        threshold: float | None = None,
        recipe: str | None = None,
    ) -> SearchResult:
        """Hybrid search; degrades to keywords (and says so) when the embedder is down."""
        check_text(query, self.max_text_chars, what="query")
        check_limit(limit, 0, maximum=1000)
        chosen = get_recipe(recipe or self.recipe)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        filters = filters or SearchFilters()
        signals: dict[str, list[tuple[str, float]]] = {}
        warnings: list[str] = []
        fetch = max(chosen.candidates, limit)
        # The keyword query runs on another thread while this one embeds the query: SQLite,
        # torch and numpy all release the GIL, so the two overlap on two cores.
        terms = keyword_terms(query)
        keyword = (
            self._pool.submit(self.store.memories.keyword_search, scope, terms, filters, fetch)
            if chosen.keyword
            else None
        )
        if chosen.vector:
            try:
                query_vec = self._embed([query])[0]
                signals["vector"] = self.store.memories.vector_search(
                    scope, query_vec, filters, fetch
                )
            except EmbedderError as exc:
                if exc.fields.get("mismatch"):
                    raise  # searching another model's vectors would return nonsense
                warnings.append(f"vector search unavailable, keyword results only: {exc}")
        if keyword is not None:
            signals["keyword"] = keyword.result()
        elif "vector" not in signals:
            signals["keyword"] = self.store.memories.keyword_search(scope, terms, filters, fetch)
        effective = chosen
        if "vector" not in signals and chosen.vector:
            effective = get_recipe("keyword")
        fused = [f for f in fuse(effective, signals) if threshold is None or f[1] >= threshold]
        fused = fused[:limit]
        items = {m.id: m for m in self.store.memories.get_memories(scope, [f[0] for f in fused])}
        hits = [
            SearchHit(memory=items[i], score=s, signals=sig) for i, s, sig in fused if i in items
        ]
        return SearchResult(
            hits=hits, recipe=chosen.name, degraded=bool(warnings), warnings=warnings
        )

    def close(self) -> None:
        for worker in self._workers:
            worker.stop()
        self._pool.shutdown(wait=True)
        self.store.close()
