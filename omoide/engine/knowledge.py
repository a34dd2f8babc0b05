"""Variables, the knowledge graph and token counters: the engine's view of what extraction wrote.

Everything here is tenant-scoped like the rest of the engine: an id of another tenant is
``NotFound``, and the same entity mentioned by two users is two entities.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from omoide.errors import EmbedderError, InvalidInput, NotFound
from omoide.extract import coerce
from omoide.store.protocol import Store
from omoide.types import (
    DEFAULT_ID,
    Entity,
    EntityHit,
    EntitySearchResult,
    Job,
    Relationship,
    Scope,
    TokenUsage,
    VariableValue,
    entity_text,
    now_ms,
)
from omoide.validate import check_limit, check_text

_PYTHON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),  # before int: True is an int too
    (int, "integer"),
    (float, "number"),
    (str, "string"),
)


class KnowledgeMixin:
    store: Store

    if TYPE_CHECKING:  # Engine

        def _embed(self, texts: Sequence[str]) -> np.ndarray: ...

    # variables ----------------------------------------------------------------------------
    def get_variables(
        self,
        names: Sequence[str] | None = None,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> dict[str, VariableValue]:
        """The tenant's variables by name (all of them when ``names`` is None); unknown names
        are absent from the result.

            >>> m.get_variables(["city"], user_id="alice")
            {'city': 'Shenzhen'}
        """
        scope = Scope(user_id=user_id, scope_id=scope_id)
        return {v.name: v.value for v in self.store.variables.get_variables(scope, _names(names))}

    def update_variables(
        self,
        variables: Mapping[str, Any],
        *,
        types: Mapping[str, str] | None = None,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> dict[str, VariableValue]:
        """Set variables; return them as stored.

        A value gets the type named in ``types``, else the type the variable already has, else
        the type of the Python value (str, bool, int, float). It is coerced to that type
        (``"42"`` becomes 42 for an integer) or refused with ``InvalidInput`` (lists, dicts,
        ``None``, ``"abc"`` for an integer); nothing is written when any value is refused.
        """
        if not isinstance(variables, Mapping):
            raise InvalidInput("variables must be a mapping of names to values")
        scope = Scope(user_id=user_id, scope_id=scope_id)
        names = _names(list(variables)) or []
        known = {v.name: v.type for v in self.store.variables.get_variables(scope, names)}
        typed: dict[str, tuple[VariableValue, str]] = {}
        for name, value in variables.items():
            type_ = (types or {}).get(name) or known.get(name) or _python_type(name, value)
            try:
                typed[name] = (coerce(value, type_), type_)
            except InvalidInput as exc:
                raise InvalidInput(f"variable {name!r}: {exc.message}") from exc
        with self.store.transaction() as tx:
            tx.variables.set_variables(scope, typed, now_ms())
        return {name: value for name, (value, _) in typed.items()}

    def delete_variables(
        self, names: Sequence[str], *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> list[str]:
        """Delete variables; return the names that existed (and are now gone)."""
        checked = _names(names)
        if checked is None:
            raise InvalidInput("names must be a list of variable names")
        with self.store.transaction() as tx:
            return tx.variables.delete_variables(Scope(user_id=user_id, scope_id=scope_id), checked)

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
        return self.store.graph.list_entities(scope, type, limit, offset)

    def get_entity(
        self, entity_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Entity:
        return self.store.graph.get_entity(Scope(user_id=user_id, scope_id=scope_id), entity_id)

    def delete_entity(
        self, entity_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> None:
        """Delete an entity, its relationships, provenance and vector in one transaction."""
        with self.store.transaction() as tx:
            tx.graph.delete_entity(Scope(user_id=user_id, scope_id=scope_id), entity_id)

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
        return self.store.graph.list_relationships(scope, entity_id, limit, offset)

    def search_entities(
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
            vector = self._embed([query])[0]
        except EmbedderError as exc:
            if exc.fields.get("mismatch"):
                raise
            found, _ = self.store.graph.list_entities(scope, None, limit, 0, mentioned_in=query)
            hits = [EntityHit(entity=e, score=1.0) for e in found]
            warning = f"entity vectors unavailable, name matches only: {exc}"
            return EntitySearchResult(hits=hits, degraded=True, warnings=[warning])
        hits = []
        for entity_id, score in self.store.graph.entity_vector_search(scope, vector, limit):
            try:
                hits.append(
                    EntityHit(entity=self.store.graph.get_entity(scope, entity_id), score=score)
                )
            except NotFound:
                continue  # deleted between the scan and the read
        return EntitySearchResult(hits=hits)

    def token_usage(self, *, scope: Scope | None = None) -> TokenUsage:
        """LLM tokens spent on extraction for one tenant, or for all when ``scope`` is None."""
        return self.store.variables.token_usage(scope)

    # jobs ---------------------------------------------------------------------------------
    def _run_embed_entity_jobs(self, jobs: list[Job]) -> None:
        for job in jobs:
            scope = Scope(user_id=job.user_id, scope_id=job.scope_id)
            entities = []
            for entity_id in job.payload.get("entity_ids", []):
                try:
                    entities.append(self.store.graph.get_entity(scope, entity_id))
                except NotFound:
                    continue  # deleted before its embedding arrived
            texts = [entity_text(e.name, e.type) for e in entities]
            vectors = self._embed(texts) if texts else None
            with self.store.transaction() as tx:
                for row, entity in enumerate(entities):
                    assert vectors is not None
                    tx.graph.put_entity_vector(scope, entity.id, vectors[row])
                tx.jobs.finish_job(job.id)

    def _reembed_entities(self, batch: int) -> int:
        done = 0
        for chunk in self.store.graph.iter_entity_texts(batch):
            vectors = self._embed([text for _, _, text in chunk])
            with self.store.transaction() as tx:
                for (scope, entity_id, _), vector in zip(chunk, vectors, strict=True):
                    tx.graph.put_entity_vector(scope, entity_id, vector)
            done += len(chunk)
        return done


def _names(names: Sequence[str] | None) -> list[str] | None:
    if names is None:
        return None
    if isinstance(names, str | bytes) or not isinstance(names, Sequence):
        raise InvalidInput("names must be a list of variable names")
    for name in names:
        check_text(name, 256, what="variable name")
    return list(names)


def _python_type(name: str, value: Any) -> str:
    for python_type, type_ in _PYTHON_TYPES:
        if isinstance(value, python_type):
            return type_
    raise InvalidInput(f"variable {name!r}: {value!r} is not a string, boolean, integer or number")
