"""``GraphService``: the tenant's entities and relationships, and graph reads: neighbourhoods
of a given depth, bulk 1-hop neighbours of many entities, and entity search by name, keyword
and vector.

Everything is tenant-scoped: an entity id of another tenant is ``NotFound``, and a walk never
crosses into another tenant's graph.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from omoide.engine.shared.embedding import Embedding
from omoide.errors import EmbedderError, InvalidInput, NotFound, OmoideError
from omoide.jobs.kinds import EMBED_ENTITIES, EmbedEntitiesPayload
from omoide.jobs.queue import enqueue
from omoide.store.ports.graph import GraphReads
from omoide.store.protocol import Transactions
from omoide.types import (
    DEFAULT_ID,
    Entity,
    EntityHit,
    EntitySearchResult,
    Job,
    Relationship,
    Scope,
    Subgraph,
    entity_text,
    now_ms,
)
from omoide.validate import check_limit, check_text

MAX_DEPTH = 6
MAX_NODES = 500


class GraphService:
    def __init__(
        self, graph_reads: GraphReads, transactions: Transactions, embedding: Embedding
    ) -> None:
        self._graph_reads = graph_reads
        self._transactions = transactions
        self._embedding = embedding

    def neighborhood(
        self,
        entity_id: str,
        depth: int = 1,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        max_nodes: int = 200,
    ) -> Subgraph:
        """Entities within ``depth`` relationships of ``entity_id`` (an id, or a name in any
        case), following edges in both directions, with the relationships between them:
        ``{nodes, edges}``. Each node carries its shortest distance (``depth`` 0 is the entity
        itself). Cycles are harmless; past ``max_nodes`` the nearest nodes are kept and
        ``truncated`` is set.

            >>> g = m.neighborhood(mei.id, depth=2, user_id="mei")
            >>> [(n.name, n.depth) for n in g.nodes]
            [('Mei', 0), ('Lin', 1), ('Shenzhen', 1), ('Acme', 2)]
        """
        _check_graph_args(depth, max_nodes)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        entity = self._entity(scope, entity_id)
        return self._graph_reads.neighborhood(scope, entity.id, depth, max_nodes)

    def neighbors(
        self,
        entity_ids: Sequence[str],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        max_nodes: int = MAX_NODES,
    ) -> Subgraph:
        """One hop around several entities at once: the entities (depth 0), every entity
        related to one of them (depth 1), and those relationships. Unknown ids are ignored."""
        if isinstance(entity_ids, str) or not isinstance(entity_ids, Sequence):
            raise InvalidInput("entity_ids must be a list of entity ids")
        if len(entity_ids) > 1000:
            raise InvalidInput("at most 1000 entity ids at once")
        _check_graph_args(1, max_nodes)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        return self._graph_reads.neighbors(scope, [str(i) for i in entity_ids], max_nodes)

    def search_entities(
        self,
        query: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 10,
    ) -> EntitySearchResult:
        """Entities by name: first those named in the query, or whose name contains it
        (keyword, score 1.0, most mentioned first), then the most similar names (vector,
        cosine). When the embedder is down only the keyword hits come back, marked degraded.

            >>> [h.entity.name for h in m.search_entities("where does mei live?").hits]
            ['Mei', 'Shenzhen', ...]
        """
        check_text(query, 10_000, what="query")
        check_limit(limit, 0, maximum=1000)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        named = self.entities_named(scope, query, limit)
        vector = self._similar_entities(query, user_id=user_id, scope_id=scope_id, limit=limit)
        hits = [EntityHit(entity=e, score=1.0) for e in named]
        seen = {e.id for e in named}
        hits += [h for h in vector.hits if h.entity.id not in seen and not vector.degraded]
        return EntitySearchResult(
            hits=hits[:limit], degraded=vector.degraded, warnings=vector.warnings
        )

    def entities_named(
        self, scope: Scope, text: str, limit: int = 20, *, contained: bool = True
    ) -> list[Entity]:
        """Entities whose name occurs in ``text`` as whole words (ignoring case), and with
        ``contained`` those whose name contains ``text``; most mentioned first."""
        found = self._graph_reads.find_entities(scope, text, limit * 5, contained=contained)
        folded = text.casefold().strip()
        named = [
            e
            for e in found
            if _mentions(folded, e.name.casefold()) or (contained and folded in e.name.casefold())
        ]
        return named[:limit]

    # entities and relationships -------------------------------------------------------------
    def list_entities(
        self,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        type: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Entity], int]:
        """One page of the tenant's entities, most recently mentioned first, and the total."""
        check_limit(limit, offset)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        return self._graph_reads.list_entities(scope, type, limit, offset)

    def get_entity(
        self, entity_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Entity:
        """One entity, by id or by name (any case)."""
        return self._entity(Scope(user_id=user_id, scope_id=scope_id), entity_id)

    def _entity(self, scope: Scope, id_or_name: str) -> Entity:
        """The tenant's entity with this id, else the one with this name (ignoring case), so a
        person can type "Mei" where a program passes an id."""
        check_text(id_or_name, 256, what="entity id")
        try:
            return self._graph_reads.get_entity(scope, id_or_name)
        except NotFound:
            wanted = id_or_name.strip().casefold()
            found = self._graph_reads.find_entities(scope, id_or_name.strip(), 20, contained=False)
            named = [e for e in found if e.name.casefold() == wanted]
            if not named:
                raise NotFound(
                    f"entity {id_or_name!r} not found: neither an entity id nor a name in this"
                    " tenant",
                    id=id_or_name,
                ) from None
            return named[0]

    def delete_entity(
        self, entity_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> None:
        """Delete an entity, its relationships, provenance and vector in one transaction."""
        with self._transactions.transaction() as tx:
            tx.graph.delete_entity(Scope(user_id=user_id, scope_id=scope_id), entity_id)

    def upsert_entity(
        self,
        name: str,
        type: str,  # the wire's field name, kept for keyword callers
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        source: str = "api",
        episode_id: str | None = None,
    ) -> Entity:
        """An entity written directly, without an LLM: a new ``(name, type)`` is created (with
        ``source``), an existing one gets ``mention_count + 1`` and ``last_seen_at`` now;
        ``episode_id`` (an episode of the tenant) is linked as provenance once. The entity's
        vector is written now, or queued when the embedder is down."""
        check_text(name, 256, what="entity name")
        check_text(type, 64, what="entity type")
        check_text(source, 64, what="entity source")
        scope = Scope(user_id=user_id, scope_id=scope_id)
        vectors = self._embedding.try_embed([entity_text(name.strip(), type.strip())])
        with self._transactions.transaction() as tx:
            entity = tx.graph.upsert_entity(
                scope, name.strip(), type.strip(), now_ms(), episode_id, source
            )
            if vectors is not None:
                tx.graph.put_entity_vector(scope, entity.id, vectors[0])
            else:
                payload = EmbedEntitiesPayload(entity_ids=[entity.id])
                enqueue(tx.jobs, scope, EMBED_ENTITIES, payload)
        return entity

    def upsert_relationship(
        self,
        from_id: str,
        to_id: str,
        label: str,
        *,
        notes: str | None = None,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> Relationship:
        """A relationship written directly: a new ``from -[label]-> to`` edge is created, an
        existing one gets ``mention_count + 1`` and keeps its notes (``notes`` are set only
        when it had none). ``NotFound`` when either entity is not the tenant's."""
        check_text(label, 256, what="relationship label")
        if notes is not None and notes.strip():
            check_text(notes, 10_000, what="relationship notes")
        notes = notes if notes and notes.strip() else None
        scope = Scope(user_id=user_id, scope_id=scope_id)
        with self._transactions.transaction() as tx:
            return tx.graph.upsert_relationship(
                scope, from_id, to_id, label.strip(), notes, now_ms()
            )

    def list_relationships(
        self,
        *,
        entity_id: str | None = None,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Relationship], int]:
        """The tenant's relationships, or those of one entity (either direction), and the total."""
        check_limit(limit, offset)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        return self._graph_reads.list_relationships(scope, entity_id, limit, offset)

    def _similar_entities(
        self,
        query: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 10,
    ) -> EntitySearchResult:
        """Entities whose name is most similar to ``query``.

        When the embedder is down it degrades (and says so) to the entities whose name appears
        in the query, e.g. ``"Mei"`` for ``"where does mei live?"``.
        """
        check_text(query, 10_000, what="query")
        check_limit(limit, 0, maximum=1000)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        try:
            vector = self._embedding.embed_query([query])[0]
        except EmbedderError as exc:
            if exc.fields.get("mismatch"):
                raise
            found, _ = self._graph_reads.list_entities(scope, None, limit, 0, mentioned_in=query)
            hits = [EntityHit(entity=e, score=1.0) for e in found]
            warning = f"entity vectors unavailable, name matches only: {exc}"
            return EntitySearchResult(hits=hits, degraded=True, warnings=[warning])
        hits = []
        for entity_id, score in self._graph_reads.entity_vector_search(scope, vector, limit):
            try:
                hits.append(
                    EntityHit(entity=self._graph_reads.get_entity(scope, entity_id), score=score)
                )
            except NotFound:
                continue  # deleted between the scan and the read
        return EntitySearchResult(hits=hits)

    # jobs ---------------------------------------------------------------------------------
    def run_embed_jobs(
        self, batch: Sequence[tuple[Job, EmbedEntitiesPayload]]
    ) -> dict[int, BaseException]:
        """The ``embed_entities`` handler: vectors for entities written while the embedder
        was down."""
        errors: dict[int, BaseException] = {}
        for job, payload in batch:
            try:
                self._embed_entities(job, payload.entity_ids)
            except OmoideError as exc:
                errors[job.id] = exc
        return errors

    def _embed_entities(self, job: Job, entity_ids: Sequence[str]) -> None:
        scope = Scope(user_id=job.user_id, scope_id=job.scope_id)
        entities = []
        for entity_id in entity_ids:
            try:
                entities.append(self._graph_reads.get_entity(scope, entity_id))
            except NotFound:
                continue  # deleted before its embedding arrived
        texts = [entity_text(e.name, e.type) for e in entities]
        vectors = self._embedding.embed(texts) if texts else None
        with self._transactions.transaction() as tx:
            for row, entity in enumerate(entities):
                assert vectors is not None
                tx.graph.put_entity_vector(scope, entity.id, vectors[row])
            tx.jobs.finish_job(job.id)

    def reembed(self, batch: int) -> int:
        """Re-embed every entity of every tenant (reindex); return the count."""
        done = 0
        for chunk in self._graph_reads.iter_entity_texts(batch):
            vectors = self._embedding.embed([text for _, _, text in chunk])
            with self._transactions.transaction() as tx:
                for (scope, entity_id, _), vector in zip(chunk, vectors, strict=True):
                    tx.graph.put_entity_vector(scope, entity_id, vector)
            done += len(chunk)
        return done


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def _check_graph_args(depth: int, max_nodes: int) -> None:
    if not isinstance(depth, int) or not 0 <= depth <= MAX_DEPTH:
        raise InvalidInput(f"depth must be between 0 and {MAX_DEPTH}, got {depth!r}")
    if not isinstance(max_nodes, int) or not 1 <= max_nodes <= MAX_NODES * 10:
        raise InvalidInput(f"max_nodes must be between 1 and {MAX_NODES * 10}, got {max_nodes!r}")
