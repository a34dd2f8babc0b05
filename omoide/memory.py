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
from typing import Any

from omoide.config import Settings, load_settings
from omoide.embed import Embedder
from omoide.engine import Engine, ExtractionRequest, KnowledgeConfig, Services
from omoide.engine.graph import MAX_NODES
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
    def add_many(
        self,
        items: Sequence[NewMemory],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> list[MemoryItem]:
        """See ``MemoryService.add_many``."""
        return self._services.memories.add_many(items, user_id=user_id, scope_id=scope_id)

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> MemoryItem:
        """See ``MemoryService.update``."""
        return self._services.memories.update(
            memory_id,
            text,
            metadata,
            user_id=user_id,
            scope_id=scope_id,
        )

    def delete(
        self, memory_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> None:
        """See ``MemoryService.delete``."""
        self._services.memories.delete(memory_id, user_id=user_id, scope_id=scope_id)

    def delete_all(self, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID) -> int:
        """See ``MemoryService.delete_all``."""
        return self._services.memories.delete_all(user_id=user_id, scope_id=scope_id)

    def reset(self) -> None:
        """See ``MemoryService.reset``."""
        self._services.memories.reset()

    def get(
        self, memory_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> MemoryItem:
        """See ``MemoryService.get``."""
        return self._services.memories.get(memory_id, user_id=user_id, scope_id=scope_id)

    def get_all(
        self,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        filters: SearchFilters | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> Page:
        """See ``MemoryService.get_all``."""
        return self._services.memories.get_all(
            user_id=user_id,
            scope_id=scope_id,
            filters=filters,
            limit=limit,
            offset=offset,
        )

    def history(
        self, memory_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> list[HistoryEntry]:
        """See ``MemoryService.history``."""
        return self._services.memories.history(memory_id, user_id=user_id, scope_id=scope_id)

    # search ------------------------------------------------------------------------------
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
        """See ``SearchService.search``."""
        return self._services.search.search(
            query,
            user_id=user_id,
            scope_id=scope_id,
            filters=filters,
            limit=limit,
            threshold=threshold,
            recipe=recipe,
        )

    # sessions ----------------------------------------------------------------------------
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
        """See ``SessionService.create_session``."""
        return self._services.sessions.create_session(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            name=name,
            project=project,
            metadata=metadata,
        )

    def get_session(
        self, session_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Session:
        """See ``SessionService.get_session``."""
        return self._services.sessions.get_session(session_id, user_id=user_id, scope_id=scope_id)

    def list_sessions(
        self,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Session], int]:
        """See ``SessionService.list_sessions``."""
        return self._services.sessions.list_sessions(
            user_id=user_id,
            scope_id=scope_id,
            limit=limit,
            offset=offset,
        )

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
        """See ``SessionService.update_session``."""
        return self._services.sessions.update_session(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            name=name,
            project=project,
            metadata=metadata,
        )

    def delete_session(
        self, session_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        """See ``SessionService.delete_session``."""
        return self._services.sessions.delete_session(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
        )

    def list_episodes(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Episode], int]:
        """See ``SessionService.list_episodes``."""
        return self._services.sessions.list_episodes(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            limit=limit,
            offset=offset,
        )

    def get_episode(
        self, episode_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Episode:
        """See ``SessionService.get_episode``."""
        return self._services.sessions.get_episode(episode_id, user_id=user_id, scope_id=scope_id)

    def delete_episode(
        self, episode_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        """See ``SessionService.delete_episode``."""
        return self._services.sessions.delete_episode(
            episode_id,
            user_id=user_id,
            scope_id=scope_id,
        )

    # projects ----------------------------------------------------------------------------
    def create_project(
        self,
        name: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        description: str | None = None,
        isolated: bool = False,
    ) -> Project:
        """See ``ProjectService.create_project``."""
        return self._services.projects.create_project(
            name,
            user_id=user_id,
            scope_id=scope_id,
            description=description,
            isolated=isolated,
        )

    def add_project(
        self,
        name: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        **fields: Any,
    ) -> Project:
        """See ``ProjectService.add_project``."""
        return self._services.projects.add_project(
            name,
            user_id=user_id,
            scope_id=scope_id,
            **fields,
        )

    def get_project(
        self, name: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Project:
        """See ``ProjectService.get_project``."""
        return self._services.projects.get_project(name, user_id=user_id, scope_id=scope_id)

    def list_projects(
        self,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Project], int]:
        """See ``ProjectService.list_projects``."""
        return self._services.projects.list_projects(
            user_id=user_id,
            scope_id=scope_id,
            limit=limit,
            offset=offset,
        )

    def update_project(
        self,
        name: str,
        fields: Mapping[str, Any],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> Project:
        """See ``ProjectService.update_project``."""
        return self._services.projects.update_project(
            name,
            fields,
            user_id=user_id,
            scope_id=scope_id,
        )

    def delete_project(
        self, name: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        """See ``ProjectService.delete_project``."""
        return self._services.projects.delete_project(name, user_id=user_id, scope_id=scope_id)

    # summaries ---------------------------------------------------------------------------
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
        """See ``SummaryService.list_summaries``."""
        return self._services.summaries.list_summaries(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            include_history=include_history,
            limit=limit,
            offset=offset,
        )

    def get_summary(
        self, summary_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> MemoryItem:
        """See ``SummaryService.get_summary``."""
        return self._services.summaries.get_summary(summary_id, user_id=user_id, scope_id=scope_id)

    def create_summary(
        self,
        session_id: str,
        text: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        metadata: dict[str, Any] | None = None,
    ) -> MemoryItem:
        """See ``SummaryService.create_summary``."""
        return self._services.summaries.create_summary(
            session_id,
            text,
            user_id=user_id,
            scope_id=scope_id,
            metadata=metadata,
        )

    def update_summary(
        self,
        summary_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> MemoryItem:
        """See ``SummaryService.update_summary``."""
        return self._services.summaries.update_summary(
            summary_id,
            text,
            metadata,
            user_id=user_id,
            scope_id=scope_id,
        )

    def delete_summary(
        self, summary_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> None:
        """See ``SummaryService.delete_summary``."""
        self._services.summaries.delete_summary(summary_id, user_id=user_id, scope_id=scope_id)

    # variables ---------------------------------------------------------------------------
    def get_variables(
        self,
        names: Sequence[str] | None = None,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> dict[str, VariableValue]:
        """See ``VariableService.get_variables``."""
        return self._services.variables.get_variables(names, user_id=user_id, scope_id=scope_id)

    def update_variables(
        self,
        variables: Mapping[str, Any],
        *,
        types: Mapping[str, str] | None = None,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> dict[str, VariableValue]:
        """See ``VariableService.update_variables``."""
        return self._services.variables.update_variables(
            variables,
            types=types,
            user_id=user_id,
            scope_id=scope_id,
        )

    def delete_variables(
        self, names: Sequence[str], *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> list[str]:
        """See ``VariableService.delete_variables``."""
        return self._services.variables.delete_variables(names, user_id=user_id, scope_id=scope_id)

    def token_usage(self, *, scope: Scope | None = None) -> TokenUsage:
        """See ``VariableService.token_usage``."""
        return self._services.variables.token_usage(scope=scope)

    # graph -------------------------------------------------------------------------------
    def list_entities(
        self,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        type: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Entity], int]:
        """See ``GraphService.list_entities``."""
        return self._services.graph.list_entities(
            user_id=user_id,
            scope_id=scope_id,
            type=type,
            limit=limit,
            offset=offset,
        )

    def get_entity(
        self, entity_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> Entity:
        """See ``GraphService.get_entity``."""
        return self._services.graph.get_entity(entity_id, user_id=user_id, scope_id=scope_id)

    def delete_entity(
        self, entity_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> None:
        """See ``GraphService.delete_entity``."""
        self._services.graph.delete_entity(entity_id, user_id=user_id, scope_id=scope_id)

    def list_relationships(
        self,
        *,
        entity_id: str | None = None,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Relationship], int]:
        """See ``GraphService.list_relationships``."""
        return self._services.graph.list_relationships(
            entity_id=entity_id,
            user_id=user_id,
            scope_id=scope_id,
            limit=limit,
            offset=offset,
        )

    def search_entities(
        self,
        query: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 10,
    ) -> EntitySearchResult:
        """See ``GraphService.search_entities``."""
        return self._services.graph.search_entities(
            query,
            user_id=user_id,
            scope_id=scope_id,
            limit=limit,
        )

    def neighborhood(
        self,
        entity_id: str,
        depth: int = 1,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        max_nodes: int = 200,
    ) -> Subgraph:
        """See ``GraphService.neighborhood``."""
        return self._services.graph.neighborhood(
            entity_id,
            depth,
            user_id=user_id,
            scope_id=scope_id,
            max_nodes=max_nodes,
        )

    def neighbors(
        self,
        entity_ids: Sequence[str],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        max_nodes: int = MAX_NODES,
    ) -> Subgraph:
        """See ``GraphService.neighbors``."""
        return self._services.graph.neighbors(
            entity_ids,
            user_id=user_id,
            scope_id=scope_id,
            max_nodes=max_nodes,
        )

    # context -----------------------------------------------------------------------------
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
        """See ``ContextService.context``."""
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

    def touch_memories(
        self, memory_ids: Sequence[str], *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        """See ``ContextService.touch_memories``."""
        return self._services.context.touch_memories(memory_ids, user_id=user_id, scope_id=scope_id)

    def touch_episodes(
        self, episode_ids: Sequence[str], *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> int:
        """See ``ContextService.touch_episodes``."""
        return self._services.context.touch_episodes(
            episode_ids,
            user_id=user_id,
            scope_id=scope_id,
        )

    # chunks ------------------------------------------------------------------------------
    def update_chunks(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        timeout: float = 60.0,
    ) -> ChunkResult:
        """See ``ChunkService.update_chunks``."""
        return self._services.chunks.update_chunks(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            timeout=timeout,
        )

    def reset_chunks(
        self, session_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> list[str]:
        """See ``ChunkService.reset_chunks``."""
        return self._services.chunks.reset_chunks(session_id, user_id=user_id, scope_id=scope_id)

    # consolidation -----------------------------------------------------------------------
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
        """See ``ConsolidationService.consolidation_candidates``."""
        return self._services.consolidation.consolidation_candidates(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            min_age_days=min_age_days,
            min_session_episodes=min_session_episodes,
            limit=limit,
        )

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
        """See ``ConsolidationService.consolidate``."""
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

    def revert_consolidation(
        self, consolidation_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> dict[str, Any]:
        """See ``ConsolidationService.revert_consolidation``."""
        return self._services.consolidation.revert_consolidation(
            consolidation_id,
            user_id=user_id,
            scope_id=scope_id,
        )

    def schedule_consolidation(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        max_score: float | None = None,
    ) -> int:
        """See ``ConsolidationService.schedule_consolidation``."""
        return self._services.consolidation.schedule_consolidation(
            session_id,
            user_id=user_id,
            scope_id=scope_id,
            max_score=max_score,
        )

    # maintenance -------------------------------------------------------------------------
    def list_jobs(
        self,
        *,
        scope: Scope | None = None,
        state: JobState | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Job]:
        """See ``MaintenanceService.list_jobs``."""
        return self._services.maintenance.list_jobs(
            scope=scope,
            state=state,
            limit=limit,
            offset=offset,
        )

    def job_counts(self, *, scope: Scope | None = None) -> dict[str, int]:
        """See ``MaintenanceService.job_counts``."""
        return self._services.maintenance.job_counts(scope=scope)

    def retry_job(self, job_id: int, *, scope: Scope | None = None) -> Job:
        """See ``MaintenanceService.retry_job``."""
        return self._services.maintenance.retry_job(job_id, scope=scope)

    def reindex(self, progress: Callable[[int, int], None] | None = None, batch: int = 256) -> int:
        """See ``MaintenanceService.reindex``."""
        return self._services.maintenance.reindex(progress, batch)

    def health(self, *, probe_embedder: bool = False) -> dict[str, Any]:
        """See ``MaintenanceService.health``."""
        return self._services.maintenance.health(probe_embedder=probe_embedder)

    # scopes ------------------------------------------------------------------------------
    def delete_scope_id(self, scope_id: str) -> int:
        """See ``ScopeService.delete_scope_id``."""
        return self._services.scopes.delete_scope_id(scope_id)


def _conforms(memory: Memory) -> MemoryAPI:
    """Type-checked: ``Memory`` implements the shared ``MemoryAPI``."""
    return memory
