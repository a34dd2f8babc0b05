"""``SearchService``: hybrid search over one tenant's memories.

The recipe (``omoide.retrieval.recipes``) names the signals and how they are fused. When the
embedder is down the search degrades to keywords and says so; an embedder of another model
than the database's is an error, since its vectors would be compared with nonsense.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path

import numpy as np

from omoide.engine.search.word_vectors import WordVectors
from omoide.engine.shared import activity
from omoide.engine.shared.checks import check_filters, check_scope
from omoide.engine.shared.embedding import Embedding
from omoide.engine.shared.events import MemoryEvents
from omoide.errors import EmbedderError
from omoide.retrieval.expansion import expansion_terms
from omoide.retrieval.fusion import (
    Fused,
    adjust,
    by_relevance,
    fuse,
    fused_ids,
    signal_detail,
)
from omoide.retrieval.recipes import SearchRecipe, get_recipe
from omoide.retrieval.rerank import feedback_terms
from omoide.retrieval.terms import keyword_terms
from omoide.store.ports.memories import Candidates, MemoryReads, Nearest, Said
from omoide.types import (
    DEFAULT_ID,
    Scope,
    SearchFilters,
    SearchHit,
    SearchResult,
)
from omoide.validate import check_limit, check_text, check_threshold


class SearchService:
    """``recipe`` is the default recipe's name. The thread pool spawns its threads on first
    use, so constructing the service starts none. ``events`` hear of each search before it
    runs (the markdown mirror's dirty check). ``vocabulary_dir`` keeps the common words'
    vectors of the query expansion (``search.vocabulary``), embedded there when missing
    unless ``build_vocabulary`` is False."""

    def __init__(
        self,
        memory_reads: MemoryReads,
        embedding: Embedding,
        *,
        recipe: str,
        max_text_chars: int,
        events: MemoryEvents | None = None,
        vocabulary_dir: Path | None = None,
        build_vocabulary: bool = True,
    ) -> None:
        self._memory_reads = memory_reads
        self._events = events or MemoryEvents()
        self._embedding = embedding
        self._words = WordVectors(embedding, vocabulary_dir, build=build_vocabulary)
        self.recipe = get_recipe(recipe).name
        self._max_text_chars = max_text_chars
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="omoide-search")

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
        check_text(query, self._max_text_chars, what="query")
        check_limit(limit, 0, maximum=1000)
        check_threshold(threshold)
        activity.note_search()  # background and bulk work yield while searches arrive
        chosen = get_recipe(recipe or self.recipe)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        check_scope(scope)
        check_filters(filters)
        self._events.reading(scope)
        filters = filters or SearchFilters()
        signals: dict[str, list[tuple[str, float]]] = {}
        warnings: list[str] = []
        query_vec: np.ndarray | None = None
        fetch = max(chosen.candidates, limit)
        # The keyword query runs on another thread while this one embeds the query: SQLite,
        # torch and numpy all release the GIL, so the two overlap on two cores.
        terms = keyword_terms(query)
        memories = self._memory_reads
        keyword: Future[list[tuple[str, float]]] | None = (
            self._pool.submit(memories.keyword_search, scope, terms, filters, fetch)
            if chosen.keyword
            else None
        )
        if chosen.vector:
            try:
                query_vec = self._embedding.embed_query([query])[0]
                nearest = memories.vector_search(scope, query_vec, filters, fetch)
                signals["vector"] = nearest
                missing = nearest.unembedded
                if missing is None:  # not read with the hits
                    missing = memories.unembedded_count(scope)
                if missing:
                    nearest.population += missing  # the prior counts memories, embedded or not
                    warnings.append(
                        f"{missing} memories have no vector yet (embed jobs pending or failed),"
                        " so vector search cannot find them"
                    )
            except EmbedderError as exc:
                if exc.fields.get("mismatch"):
                    raise  # searching another model's vectors would return nonsense
                warnings.append(f"vector search unavailable, keyword results only: {exc}")
        if keyword is not None:
            signals["keyword"] = keyword.result()
        elif "vector" not in signals:
            signals["keyword"] = memories.keyword_search(scope, terms, filters, fetch)
        effective = chosen
        if "vector" not in signals and chosen.vector:
            effective = get_recipe("keyword")
        fused, read = self._rank(
            chosen, effective, query, scope, terms, filters, fetch, signals, query_vec
        )
        fused = [f for f in fused if threshold is None or f[1] >= threshold][:limit]
        ids = [f[0] for f in fused]
        items = {m.id: m for m in read.memories(ids)} if read is not None else {}
        # a hit the scoring's read did not ask for (none, unless an earlier read scored it)
        asked = read.asked if read is not None else frozenset()
        if rest := [i for i in ids if i not in asked]:
            items.update((m.id, m) for m in memories.get_memories(scope, rest))
        hits = [
            SearchHit(memory=items[i], score=s, signals=signal_detail(sig))
            for i, s, sig in fused
            if i in items
        ]
        return SearchResult(
            hits=hits, recipe=chosen.name, degraded=bool(warnings), warnings=warnings
        )

    def _rank(
        self,
        chosen: SearchRecipe,
        effective: SearchRecipe,
        query: str,
        scope: Scope,
        terms: list[str],
        filters: SearchFilters,
        fetch: int,
        signals: dict[str, list[tuple[str, float]]],
        query_vec: np.ndarray | None,
    ) -> tuple[list[Fused], Candidates | None]:
        """The fused ranking with the recipe's feedback, expansion and boosts, and the
        relevance scorer's read of its candidates, which holds their rows. Feedback and
        expansion each add a keyword signal read from the top hits of the fusion so far; the
        hits are fused, with their per-signal detail, once at the end."""
        said: dict[str, Said] = {}
        if "vector" in signals and "keyword" in signals:
            if chosen.feedback_terms:
                self._feedback(chosen, query, scope, terms, filters, fetch, signals)
            if chosen.expansion_terms and self._words.calibrated:
                self._expand(chosen, query, scope, terms, filters, fetch, signals, said)
        fused = fuse(effective, signals)
        if chosen.scorer == "relevance" and "vector" in signals:
            # every candidate's own cosine: a keyword hit the vector list did not reach is
            # scored by its cosine, not by where that list happened to end
            unscored = [f[0] for f in fused if f[0] not in said or said[f[0]].cosine is None]
            read = None
            if unscored:
                read = self._memory_reads.candidates(scope, unscored, query_vec)
                said.update(read)
            nearest = signals["vector"]
            population = nearest.population if isinstance(nearest, Nearest) else 0
            return by_relevance(chosen, query, fused, said, population), read
        if chosen.speaker_boost or chosen.date_boost:
            if missing := [f[0] for f in fused if f[0] not in said]:
                said.update(self._memory_reads.texts_and_times(scope, missing))
            fused = adjust(chosen, query, fused, said)
        return fused, None

    def _expand(
        self,
        recipe: SearchRecipe,
        query: str,
        scope: Scope,
        terms: list[str],
        filters: SearchFilters,
        fetch: int,
        signals: dict[str, list[tuple[str, float]]],
        said: dict[str, Said],
    ) -> None:
        """Add the keyword signal of the query's words and their neighbours among the top
        hits' words; the top hits' texts stay in ``said`` for the boosts."""
        ids = fused_ids(recipe, signals, recipe.expansion_docs)
        said.update(self._memory_reads.texts_and_times(scope, ids))
        top = [said[i][0] for i in ids if i in said]
        try:
            extra = expansion_terms(
                query,
                top,
                partial(self._words, owner=(scope.user_id, scope.scope_id)),
                recipe.expansion_terms,
                recipe.expansion_similarity,
            )
        except EmbedderError:
            return  # the query's vector came through; without word vectors, no expansion
        if extra:
            memories = self._memory_reads
            signals["expansion"] = memories.keyword_search(scope, terms + extra, filters, fetch)

    def _feedback(
        self,
        recipe: SearchRecipe,
        query: str,
        scope: Scope,
        terms: list[str],
        filters: SearchFilters,
        fetch: int,
        signals: dict[str, list[tuple[str, float]]],
    ) -> None:
        """Add the keyword signal of the query extended by the top hits' shared words."""
        memories = self._memory_reads
        ids = fused_ids(recipe, signals, recipe.feedback_docs)
        top = memories.texts_and_times(scope, ids)
        texts = [top[i][0] for i in ids if i in top]  # best first: ties go to the better hit
        extra = feedback_terms(query, texts, recipe.feedback_terms)
        if extra:
            signals["feedback"] = memories.keyword_search(scope, terms + extra, filters, fetch)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
