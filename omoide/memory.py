"""``Memory``: the embedded library entry point.

>>> from omoide import Memory
>>> m = Memory(path="/tmp/demo.db")
>>> m.add("I like jasmine tea", user_id="alice")
>>> m.search("what does alice drink?", user_id="alice").hits[0].memory.text
'I like jasmine tea'

``Memory`` has an ``Engine`` (``omoide.wiring.build_engine``) and delegates each public method
to the service that owns it; ``omoide.interface.MemoryAPI`` is the part it shares with
``omoide.Client``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from omoide.config import Settings, load_settings
from omoide.embed import Embedder
from omoide.engine import Engine, ExtractionRequest, KnowledgeConfig, Services
from omoide.engine.chunks import ChunkService
from omoide.engine.consolidate import ConsolidationService
from omoide.engine.context import ContextService
from omoide.engine.graph import MAX_NODES, GraphService
from omoide.engine.maintenance import MaintenanceService
from omoide.engine.memories import MemoryService
from omoide.engine.projects import ProjectDeleted, ProjectService, SessionsOnDelete
from omoide.engine.scopes import ScopeService
from omoide.engine.search import SearchService
from omoide.engine.sessions import SessionService
from omoide.engine.summaries import SummaryService
from omoide.engine.transfer import Progress, TransferReport, TransferService
from omoide.engine.variables import VariableService
from omoide.errors import InvalidInput
from omoide.extract import MemVariable
from omoide.interface import MemoryAPI
from omoide.llm import LLM
from omoide.store.protocol import NewMemory, Store
from omoide.types import (
    DEFAULT_ID,
    AddInput,
    AddResult,
    ChunkResult,
    ConsolidationCandidates,
    ConsolidationReport,
    ContextResult,
    Entity,
    EntitySearchResult,
    Episode,
    HistoryEntry,
    Job,
    JobState,
    MemoryItem,
    MemoryType,
    Page,
    Project,
    Relationship,
    Scope,
    SearchFilters,
    SearchResult,
    Session,
    Subgraph,
    TokenUsage,
    VariableValue,
)
from omoide.wiring import build_engine

_F = TypeVar("_F", bound=Callable[..., Any])


def _documented_by(source: Callable[..., Any]) -> Callable[[_F], _F]:
    """Give a delegating method the docstring of the service method it calls (``help()``)."""

    def apply(method: _F) -> _F:
        method.__doc__ = source.__doc__
        return method

    return apply


def _filters(filters: SearchFilters | Mapping[str, Any] | None) -> SearchFilters | None:
    """``filters`` as a ``SearchFilters``: a plain dict of its fields is accepted too."""
    if filters is None or isinstance(filters, SearchFilters):
        return filters
    if not isinstance(filters, Mapping):
        raise InvalidInput(
            f"filters: expected a dict or SearchFilters, got {type(filters).__name__}"
        )
    try:
        return SearchFilters.model_validate(dict(filters))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise InvalidInput(f"filters: {problems}", field="filters") from None


class Memory:
    """Memories in a local SQLite file, with their job workers running.

    ``path`` defaults to ``~/.omoide/omoide.db``; ``embedder`` to all-MiniLM-L6-v2 on the CPU,
    loaded on first use. ``llm`` is the model extraction uses; None builds the one the settings
    name (``OMOIDE_LLM_BASE_URL``, ``OMOIDE_LLM_MODEL``), or none, and extraction reports
    itself disabled. ``settings`` default to the environment and the ``.env`` files the server
    reads (``omoide.config.load_settings``); ``knowledge`` overrides their chunking, summary,
    context and consolidation part. Construction opens (and if new, creates) the store and
    starts ``workers`` job threads (``0``: jobs run in the caller's thread).

        >>> Memory(llm=OpenAICompatLLM("http://localhost:11434/v1", "qwen2.5:3b"))
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        embedder: Embedder | None = None,
        llm: LLM | None = None,
        settings: Settings | None = None,
        workers: int | None = None,
        knowledge: KnowledgeConfig | None = None,
    ) -> None:
        self.engine: Engine = build_engine(
            settings or load_settings(),
            path=path,
            embedder=embedder,
            llm=llm,
            workers=workers,
            knowledge=knowledge,
        )
        self.engine.start()

    @property
    def _services(self) -> Services:
        return self.engine.services

    @property
    def knowledge(self) -> KnowledgeConfig:
        """Chunking, summaries, context and consolidation settings in effect."""
        return self.engine.config.knowledge

    @knowledge.setter
    def knowledge(self, knowledge: KnowledgeConfig) -> None:
        """Change them: the services are rebuilt over the same store (no thread starts)."""
        self.engine.reconfigure(knowledge=knowledge)

    @property
    def store(self) -> Store:
        return self.engine.store

    @property
    def llm(self) -> LLM | None:
        return self.engine.llm

    @property
    def embedder(self) -> Embedder:
        return self.engine.embedding.embedder

    @embedder.setter
    def embedder(self, embedder: Embedder) -> None:
        """Swap the embedder (the database's recorded model still applies)."""
        self.engine.embedding.embedder = embedder

    def run_jobs(self, limit: int = 1000) -> int:
        """Run due jobs in this thread until none is due (or ``limit``); return the count."""
        return self.engine.run_jobs(limit)

    def close(self) -> None:
        """Stop the workers (they finish the batch in hand) and close the store."""
        self.engine.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ingest -------------------------------------------------------------------------------
    def add(
        self,
        messages: AddInput,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        type: MemoryType = MemoryType.RAW,
        infer: bool | None = None,
        mem_variables: Sequence[MemVariable | dict[str, Any]] | None = None,
        enable_long_term_mem: bool = True,
        enable_user_profile: bool = True,
        enable_semantic_memory: bool = True,
        enable_episodic_memory: bool = True,
        enable_summary_memory: bool = True,
        enable_graph: bool = True,
        wait: bool = False,
        timeout: float = 60.0,
    ) -> list[MemoryItem]:
        """Store each message as a memory (and, with a session, the exchange as an episode),
        and queue their LLM extraction in the same transaction.

        Extraction (``infer``): ``None`` extracts when an LLM is configured and ``type`` is raw;
        ``True`` asks for it and raises ``FeatureDisabled`` (before storing anything) when no
        LLM is configured, as does passing ``mem_variables``; ``False`` never extracts. The
        ``enable_*`` switches (Jiuwen ``add_messages``; an ``ExtractionRequest``) choose the
        memory types: ``episodic`` (the exchange verbatim, one memory, no LLM call),
        ``semantic`` (facts, reconciled with similar stored facts: an update supersedes the old
        fact, a delete invalidates it, nothing is erased), ``user_profile`` (attribute: value
        entries), ``summary`` (the session's rolling summary; needs a session) and
        ``enable_graph`` (entities and relationships). ``enable_long_term_mem=False`` turns them
        all off; ``mem_variables`` are extracted regardless. All of it is one durable job per
        call. With ``wait=True`` the call returns once the jobs it queued finished, or after
        ``timeout`` seconds. Returns the stored messages; ``add_messages`` takes the same
        arguments and also reports what became of the extraction.

            >>> m.add("I moved to Berlin", user_id="alice", session_id="chat-1", wait=True)
        """
        request = ExtractionRequest(
            long_term=enable_long_term_mem,
            user_profile=enable_user_profile,
            semantic=enable_semantic_memory,
            episodic=enable_episodic_memory,
            summary=enable_summary_memory,
            graph=enable_graph,
        )
        return self._services.ingest.add(
            messages,
            user_id=user_id,
            scope_id=scope_id,
            session_id=session_id,
            metadata=metadata,
            type=type,
            infer=infer,
            mem_variables=mem_variables,
            extraction=request,
            wait=wait,
            timeout=timeout,
        )

    def add_messages(
        self,
        messages: AddInput,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        mem_variables: Sequence[MemVariable | dict[str, Any]] | None = None,
        enable_long_term_mem: bool = True,
        enable_user_profile: bool = True,
        enable_semantic_memory: bool = True,
        enable_episodic_memory: bool = True,
        enable_summary_memory: bool = True,
        enable_graph: bool = True,
        wait: bool = False,
        timeout: float = 60.0,
    ) -> AddResult:
        """Store messages and extract memories from them, reporting what became of it.

        The arguments are ``add``'s. Never raises ``FeatureDisabled``: without an LLM the
        messages are stored and ``result.extraction.state`` is ``"disabled"``.

            >>> result = m.add_messages(msgs, user_id="alice", session_id="s1", wait=True)
            >>> result.extraction.state, [i.type for i in result.extracted]
            ('done', ['episodic', 'semantic', 'user_profile', 'summary'])
        """
        request = ExtractionRequest(
            long_term=enable_long_term_mem,
            user_profile=enable_user_profile,
            semantic=enable_semantic_memory,
            episodic=enable_episodic_memory,
            summary=enable_summary_memory,
            graph=enable_graph,
        )
        return self._services.ingest.add_messages(
            messages,
            user_id=user_id,
            scope_id=scope_id,
            session_id=session_id,
            metadata=metadata,
            mem_variables=mem_variables,
            extraction=request,
            wait=wait,
            timeout=timeout,
        )

    # memories ----------------------------------------------------------------------------
    @_documented_by(MemoryService.add_many)
    def add_many(
        self,
        items: Sequence[NewMemory],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> list[MemoryItem]:
        return self._services.memories.add_many(items, user_id=user_id, scope_id=scope_id)

    @_documented_by(MemoryService.update)
    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> MemoryItem:
        return self._services.memories.update(
            memory_id,
            text,
            metadata,
            user_id=user_id,
            scope_id=scope_id,
        )

    @_documented_by(MemoryService.delete)
    def delete(
        self, memory_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> None:
        self._services.memories.delete(memory_id, user_id=user_id, scope_id=scope_id)

    @_documented_by(MemoryService.delete_all)
    def delete_all(self, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID) -> int:
        return self._services.memories.delete_all(user_id=user_id, scope_id=scope_id)

    @_documented_by(MemoryService.reset)
    def reset(self) -> None:
        self._services.memories.reset()

    @_documented_by(MemoryService.get)
    def get(
        self, memory_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> MemoryItem:
        return self._services.memories.get(memory_id, user_id=user_id, scope_id=scope_id)

    @_documented_by(MemoryService.get_all)
    def get_all(
        self,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        filters: SearchFilters | Mapping[str, Any] | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> Page:
        return self._services.memories.get_all(
            user_id=user_id,
            scope_id=scope_id,
            filters=_filters(filters),
            limit=limit,
            offset=offset,
        )

    @_documented_by(MemoryService.history)
    def history(
        self, memory_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> list[HistoryEntry]:
        return self._services.memories.history(memory_id, user_id=user_id, scope_id=scope_id)

    @_documented_by(MemoryService.owner)
    def owner(self, memory_id: str) -> Scope:
        return self._services.memories.owner(memory_id)

    # search ------------------------------------------------------------------------------
    @_documented_by(SearchService.search)
    def search(
        self,
        query: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        filters: SearchFilters | Mapping[str, Any] | None = None,
        limit: int = 10,
        threshold: float | None = None,
        recipe: str | None = None,
    ) -> SearchResult:
        return self._services.search.search(
            query,
            user_id=user_id,
            scope_id=scope_id,
            filters=_filters(filters),
            limit=limit,
            threshold=threshold,
            recipe=recipe,
        )

    # sessions ----------------------------------------------------------------------------
    @_documented_by(SessionService.create_session)
    def create_session(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        name: str | None = None,
        project: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Session:
        return self._services.sessions.create_session(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            name=name,
            project=project,
            metadata=metadata,
        )

    @_documented_by(SessionService.get_session)
    def get_session(
        self, session_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Session:
        return self._services.sessions.get_session(session_id, user_id=user_id, scope_id=scope_id)

    @_documented_by(SessionService.list_sessions)
    def list_sessions(
        self,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Session], int]:
        return self._services.sessions.list_sessions(
            user_id=user_id,
            scope_id=scope_id,
            limit=limit,
            offset=offset,
        )

    @_documented_by(SessionService.update_session)
    def update_session(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        name: str | None = None,
        project: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Session:
        return self._services.sessions.update_session(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            name=name,
            project=project,
            metadata=metadata,
        )

    @_documented_by(SessionService.delete_session)
    def delete_session(
        self, session_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        return self._services.sessions.delete_session(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
        )

    @_documented_by(SessionService.list_episodes)
    def list_episodes(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Episode], int]:
        return self._services.sessions.list_episodes(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            limit=limit,
            offset=offset,
        )

    @_documented_by(SessionService.get_episode)
    def get_episode(
        self, episode_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Episode:
        return self._services.sessions.get_episode(episode_id, user_id=user_id, scope_id=scope_id)

    @_documented_by(SessionService.delete_episode)
    def delete_episode(
        self, episode_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        return self._services.sessions.delete_episode(
            episode_id,
            user_id=user_id,
            scope_id=scope_id,
        )

    # projects ----------------------------------------------------------------------------
    @_documented_by(ProjectService.create_project)
    def create_project(
        self,
        name: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        description: str | None = None,
        isolated: bool = False,
    ) -> Project:
        return self._services.projects.create_project(
            name,
            user_id=user_id,
            scope_id=scope_id,
            description=description,
            isolated=isolated,
        )

    @_documented_by(ProjectService.add_project)
    def add_project(
        self,
        name: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        **fields: Any,
    ) -> Project:
        return self._services.projects.add_project(
            name,
            user_id=user_id,
            scope_id=scope_id,
            **fields,
        )

    @_documented_by(ProjectService.get_project)
    def get_project(
        self, name: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Project:
        return self._services.projects.get_project(name, user_id=user_id, scope_id=scope_id)

    @_documented_by(ProjectService.list_projects)
    def list_projects(
        self,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Project], int]:
        return self._services.projects.list_projects(
            user_id=user_id,
            scope_id=scope_id,
            limit=limit,
            offset=offset,
        )

    @_documented_by(ProjectService.update_project)
    def update_project(
        self,
        name: str,
        fields: Mapping[str, Any],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> Project:
        return self._services.projects.update_project(
            name,
            fields,
            user_id=user_id,
            scope_id=scope_id,
        )

    @_documented_by(ProjectService.delete_project)
    def delete_project(
        self,
        name: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        sessions: SessionsOnDelete | None = None,
    ) -> ProjectDeleted:
        return self._services.projects.delete_project(
            name, user_id=user_id, scope_id=scope_id, sessions=sessions
        )

    # summaries ---------------------------------------------------------------------------
    @_documented_by(SummaryService.list_summaries)
    def list_summaries(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        include_history: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> Page:
        return self._services.summaries.list_summaries(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            include_history=include_history,
            limit=limit,
            offset=offset,
        )

    @_documented_by(SummaryService.get_summary)
    def get_summary(
        self, summary_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> MemoryItem:
        return self._services.summaries.get_summary(summary_id, user_id=user_id, scope_id=scope_id)

    @_documented_by(SummaryService.create_summary)
    def create_summary(
        self,
        session_id: str,
        text: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        metadata: dict[str, Any] | None = None,
    ) -> MemoryItem:
        return self._services.summaries.create_summary(
            session_id,
            text,
            user_id=user_id,
            scope_id=scope_id,
            metadata=metadata,
        )

    @_documented_by(SummaryService.update_summary)
    def update_summary(
        self,
        summary_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> MemoryItem:
        return self._services.summaries.update_summary(
            summary_id,
            text,
            metadata,
            user_id=user_id,
            scope_id=scope_id,
        )

    @_documented_by(SummaryService.delete_summary)
    def delete_summary(
        self, summary_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> None:
        self._services.summaries.delete_summary(summary_id, user_id=user_id, scope_id=scope_id)

    # variables ---------------------------------------------------------------------------
    @_documented_by(VariableService.get_variables)
    def get_variables(
        self,
        names: Sequence[str] | None = None,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> dict[str, VariableValue]:
        return self._services.variables.get_variables(names, user_id=user_id, scope_id=scope_id)

    @_documented_by(VariableService.update_variables)
    def update_variables(
        self,
        variables: Mapping[str, Any],
        *,
        types: Mapping[str, str] | None = None,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> dict[str, VariableValue]:
        return self._services.variables.update_variables(
            variables,
            types=types,
            user_id=user_id,
            scope_id=scope_id,
        )

    @_documented_by(VariableService.delete_variables)
    def delete_variables(
        self, names: Sequence[str], *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> list[str]:
        return self._services.variables.delete_variables(names, user_id=user_id, scope_id=scope_id)

    @_documented_by(VariableService.token_usage)
    def token_usage(self, *, scope: Scope | None = None) -> TokenUsage:
        return self._services.variables.token_usage(scope=scope)

    # graph -------------------------------------------------------------------------------
    @_documented_by(GraphService.upsert_entity)
    def upsert_entity(
        self,
        name: str,
        type: str,  # nexusAI's field name
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        source: str = "api",
        episode_id: str | None = None,
    ) -> Entity:
        return self._services.graph.upsert_entity(
            name, type, user_id=user_id, scope_id=scope_id, source=source, episode_id=episode_id
        )

    @_documented_by(GraphService.upsert_relationship)
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
        return self._services.graph.upsert_relationship(
            from_id, to_id, label, notes=notes, user_id=user_id, scope_id=scope_id
        )

    @_documented_by(GraphService.list_entities)
    def list_entities(
        self,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        type: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Entity], int]:
        return self._services.graph.list_entities(
            user_id=user_id,
            scope_id=scope_id,
            type=type,
            limit=limit,
            offset=offset,
        )

    @_documented_by(GraphService.get_entity)
    def get_entity(
        self, entity_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Entity:
        return self._services.graph.get_entity(entity_id, user_id=user_id, scope_id=scope_id)

    @_documented_by(GraphService.delete_entity)
    def delete_entity(
        self, entity_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> None:
        self._services.graph.delete_entity(entity_id, user_id=user_id, scope_id=scope_id)

    @_documented_by(GraphService.list_relationships)
    def list_relationships(
        self,
        *,
        entity_id: str | None = None,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Relationship], int]:
        return self._services.graph.list_relationships(
            entity_id=entity_id,
            user_id=user_id,
            scope_id=scope_id,
            limit=limit,
            offset=offset,
        )

    @_documented_by(GraphService.search_entities)
    def search_entities(
        self,
        query: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 10,
    ) -> EntitySearchResult:
        return self._services.graph.search_entities(
            query,
            user_id=user_id,
            scope_id=scope_id,
            limit=limit,
        )

    @_documented_by(GraphService.neighborhood)
    def neighborhood(
        self,
        entity_id: str,
        depth: int = 1,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        max_nodes: int = 200,
    ) -> Subgraph:
        return self._services.graph.neighborhood(
            entity_id,
            depth,
            user_id=user_id,
            scope_id=scope_id,
            max_nodes=max_nodes,
        )

    @_documented_by(GraphService.neighbors)
    def neighbors(
        self,
        entity_ids: Sequence[str],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        max_nodes: int = MAX_NODES,
    ) -> Subgraph:
        return self._services.graph.neighbors(
            entity_ids,
            user_id=user_id,
            scope_id=scope_id,
            max_nodes=max_nodes,
        )

    # context -----------------------------------------------------------------------------
    @_documented_by(ContextService.context)
    def context(
        self,
        query: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        session_id: str | None = None,
        token_budget: int = 2000,
        recent_turns: int | None = None,
        recipe: str | None = None,
        track_access: bool = True,
    ) -> ContextResult:
        return self._services.context.context(
            query,
            user_id=user_id,
            scope_id=scope_id,
            session_id=session_id,
            token_budget=token_budget,
            recent_turns=recent_turns,
            recipe=recipe,
            track_access=track_access,
        )

    @_documented_by(ContextService.touch_memories)
    def touch_memories(
        self, memory_ids: Sequence[str], *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        return self._services.context.touch_memories(memory_ids, user_id=user_id, scope_id=scope_id)

    @_documented_by(ContextService.touch_episodes)
    def touch_episodes(
        self, episode_ids: Sequence[str], *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        return self._services.context.touch_episodes(
            episode_ids,
            user_id=user_id,
            scope_id=scope_id,
        )

    # chunks ------------------------------------------------------------------------------
    @_documented_by(ChunkService.update_chunks)
    def update_chunks(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        timeout: float = 60.0,
    ) -> ChunkResult:
        return self._services.chunks.update_chunks(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            timeout=timeout,
        )

    @_documented_by(ChunkService.reset_chunks)
    def reset_chunks(
        self, session_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> list[str]:
        return self._services.chunks.reset_chunks(session_id, user_id=user_id, scope_id=scope_id)

    # consolidation -----------------------------------------------------------------------
    @_documented_by(ConsolidationService.consolidation_candidates)
    def consolidation_candidates(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        min_age_days: float | None = None,
        min_session_episodes: int | None = None,
        limit: int = 100,
    ) -> ConsolidationCandidates:
        return self._services.consolidation.consolidation_candidates(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            min_age_days=min_age_days,
            min_session_episodes=min_session_episodes,
            limit=limit,
        )

    @_documented_by(ConsolidationService.consolidate)
    def consolidate(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        run: bool = False,
        max_score: float | None = None,
        min_age_days: float | None = None,
        min_session_episodes: int | None = None,
        limit: int | None = None,
    ) -> ConsolidationReport:
        return self._services.consolidation.consolidate(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            run=run,
            max_score=max_score,
            min_age_days=min_age_days,
            min_session_episodes=min_session_episodes,
            limit=limit,
        )

    @_documented_by(ConsolidationService.revert_consolidation)
    def revert_consolidation(
        self, consolidation_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> dict[str, Any]:
        return self._services.consolidation.revert_consolidation(
            consolidation_id,
            user_id=user_id,
            scope_id=scope_id,
        )

    @_documented_by(ConsolidationService.schedule_consolidation)
    def schedule_consolidation(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        max_score: float | None = None,
    ) -> int:
        return self._services.consolidation.schedule_consolidation(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            max_score=max_score,
        )

    # maintenance -------------------------------------------------------------------------
    @_documented_by(MaintenanceService.list_jobs)
    def list_jobs(
        self,
        *,
        scope: Scope | None = None,
        state: JobState | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Job]:
        return self._services.maintenance.list_jobs(
            scope=scope,
            state=state,
            limit=limit,
            offset=offset,
        )

    @_documented_by(MaintenanceService.job_counts)
    def job_counts(self, *, scope: Scope | None = None) -> dict[str, int]:
        return self._services.maintenance.job_counts(scope=scope)

    @_documented_by(MaintenanceService.retry_job)
    def retry_job(self, job_id: int, *, scope: Scope | None = None) -> Job:
        return self._services.maintenance.retry_job(job_id, scope=scope)

    @_documented_by(MaintenanceService.reindex)
    def reindex(self, progress: Callable[[int, int], None] | None = None, batch: int = 256) -> int:
        return self._services.maintenance.reindex(progress, batch)

    @_documented_by(MaintenanceService.health)
    def health(self, *, probe_embedder: bool = False) -> dict[str, Any]:
        return self._services.maintenance.health(probe_embedder=probe_embedder)

    # export / import ---------------------------------------------------------------------

    @_documented_by(TransferService.export)
    def export(
        self,
        dest: str | Path,
        *,
        user_id: str | None = None,
        scope_id: str | None = None,
        progress: Progress | None = None,
    ) -> TransferReport:
        return self._services.transfer.export(
            Path(dest), user_id=user_id, scope_id=scope_id, progress=progress
        )

    @_documented_by(TransferService.import_)
    def import_file(
        self, source: str | Path, *, reembed: bool = False, progress: Progress | None = None
    ) -> TransferReport:
        return self._services.transfer.import_(Path(source), reembed=reembed, progress=progress)

    # scopes ------------------------------------------------------------------------------
    @_documented_by(ScopeService.delete_scope_id)
    def delete_scope_id(self, scope_id: str) -> int:
        return self._services.scopes.delete_scope_id(scope_id)


def _conforms(memory: Memory) -> MemoryAPI:
    """Type-checked: ``Memory`` implements the shared ``MemoryAPI``."""
    return memory
