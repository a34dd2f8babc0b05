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
from datetime import datetime
from pathlib import Path
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from pydantic import ValidationError

from omoide.config import Settings, load_settings
from omoide.embed import Embedder
from omoide.engine import Engine, ExtractionRequest, KnowledgeConfig, Services
from omoide.engine.chunks.service import ChunkService
from omoide.engine.consolidation.dreaming import DreamingService, DreamingStatus
from omoide.engine.consolidation.service import ConsolidationService
from omoide.engine.context import ContextService
from omoide.engine.expiry import ADMIN, USER_TASKS, ExpiryService, Owner, Submitted
from omoide.engine.expiry import Progress as ExpiryProgress
from omoide.engine.graph import GraphService
from omoide.engine.maintenance import MaintenanceService
from omoide.engine.memories import MemoryService
from omoide.engine.projects import ProjectDeleted, ProjectService
from omoide.engine.scopes import ScopeService
from omoide.engine.search.service import SearchService
from omoide.engine.sessions import SessionService
from omoide.engine.shared.job_signal import WAITER
from omoide.engine.summaries import SummaryService
from omoide.engine.transfer.service import Progress, TransferReport, TransferService
from omoide.engine.variables import VariableService
from omoide.errors import InvalidInput
from omoide.extract import MemVariable
from omoide.interface import MemoryAPI
from omoide.llm import LLM
from omoide.observe import NO_OBSERVER, Observer
from omoide.store.protocol import Store
from omoide.types import (
    DEFAULT_ID,
    AddInput,
    AddResult,
    MemoryItem,
    MemoryType,
    Page,
    Project,
    SearchFilters,
    SearchResult,
)
from omoide.wiring import build_engine

# The values Memory's methods take and return that are defined with their service: a user
# (and an interface in ``omoide.compat``) names them through this module, never the engine.
__all__ = [
    "ADMIN",
    "USER_TASKS",
    "WAITER",
    "DreamingStatus",
    "ExpiryProgress",
    "Memory",
    "Owner",
    "ProjectDeleted",
    "Submitted",
]

_F = TypeVar("_F", bound=Callable[..., Any])
_P = ParamSpec("_P")
_R = TypeVar("_R")


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


class _Delegate(Generic[_P, _R]):
    """A ``Memory`` method that *is* the same-named method of one of its engine's services:
    same signature, same docstring, typed from it, with no copy of either to keep in step.

    The service is looked up at each call: the services are rebuilt when the knowledge
    settings change (``Memory.knowledge = ...``). Read on the class (``Memory.search``,
    ``help()``, ``inspect.signature``) it is the service's function.
    """

    def __init__(self, service: str, method: Callable[Concatenate[Any, _P], _R]) -> None:
        self._service = service
        self._method = method
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Callable[Concatenate[Any, _P], _R]: ...
    @overload
    def __get__(self, obj: Memory, owner: type[Any]) -> Callable[_P, _R]: ...
    def __get__(
        self, obj: Memory | None, owner: type[Any]
    ) -> Callable[Concatenate[Any, _P], _R] | Callable[_P, _R]:
        if obj is None:
            return self._method
        service = getattr(obj.engine.services, self._service)
        bound: Callable[_P, _R] = getattr(service, self._method.__name__)
        return bound


class Memory:
    """Memories in a local SQLite file, with their job workers running.

    ``path`` defaults to ``~/.omoide/omoide.db``; ``embedder`` to all-MiniLM-L6-v2 on the CPU,
    loaded on first use. ``llm`` is the model extraction uses; None builds the one the settings
    name (``OMOIDE_LLM_BASE_URL``, ``OMOIDE_LLM_MODEL``), or none, and extraction reports
    itself disabled. ``settings`` default to the environment and the ``.env`` files the server
    reads (``omoide.config.load_settings``); ``knowledge`` overrides their chunking, summary,
    context and consolidation part. Construction opens (and if new, creates) the store and
    starts ``workers`` job threads (``0``: jobs run in the caller's thread). ``observer``
    hears of embed and LLM calls and job runs (``omoide.observe``; the server's ``/metrics``).

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
        observer: Observer = NO_OBSERVER,
    ) -> None:
        self.engine: Engine = build_engine(
            settings or load_settings(),
            path=path,
            embedder=embedder,
            llm=llm,
            workers=workers,
            knowledge=knowledge,
            observer=observer,
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
    def max_text_chars(self) -> int:
        """The longest text a memory may hold (``OMOIDE_MAX_TEXT_CHARS``)."""
        return self._services.memories.max_text_chars

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
        timestamp: datetime | None = None,
    ) -> list[MemoryItem]:
        """Store each message as a memory (and, with a session, the exchange as an episode),
        and queue their LLM extraction in the same transaction.

        Extraction (``infer``): ``None`` extracts when an LLM is configured and ``type`` is raw;
        ``True`` asks for it and raises ``FeatureDisabled`` (before storing anything) when no
        LLM is configured, as does passing ``mem_variables``; ``False`` never extracts. The
        ``enable_*`` switches (an ``ExtractionRequest``) choose the
        memory types: ``episodic`` (the exchange verbatim, one memory, no LLM call),
        ``semantic`` (facts, reconciled with similar stored facts: an update supersedes the old
        fact, a delete invalidates it, nothing is erased), ``user_profile`` (attribute: value
        entries), ``summary`` (the session's rolling summary; needs a session) and
        ``enable_graph`` (entities and relationships). ``enable_long_term_mem=False`` turns them
        all off; ``mem_variables`` are extracted regardless. All of it is one durable job per
        call. With ``wait=True`` the call returns once the jobs it queued finished, or after
        ``timeout`` seconds. ``timestamp`` is the episode's time: when the exchange happened,
        given to each message without a ``timestamp`` of its own (imported history; extraction
        reads relative dates from it). Returns the stored messages; ``add_messages`` takes the
        same arguments and also reports what became of the extraction.

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
            timestamp=timestamp,
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
        timestamp: datetime | None = None,
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
            timestamp=timestamp,
        )

    # memories ----------------------------------------------------------------------------
    add_many = _Delegate("memories", MemoryService.add_many)
    update = _Delegate("memories", MemoryService.update)
    delete = _Delegate("memories", MemoryService.delete)
    delete_all = _Delegate("memories", MemoryService.delete_all)
    reset = _Delegate("memories", MemoryService.reset)
    get = _Delegate("memories", MemoryService.get)

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

    session_memories = _Delegate("memories", MemoryService.session_memories)
    keyword_search = _Delegate("memories", MemoryService.keyword_search)
    record_turns = _Delegate("memories", MemoryService.record_turns)
    history = _Delegate("memories", MemoryService.history)
    owner = _Delegate("memories", MemoryService.owner)

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
    create_session = _Delegate("sessions", SessionService.create_session)
    get_session = _Delegate("sessions", SessionService.get_session)
    list_sessions = _Delegate("sessions", SessionService.list_sessions)
    update_session = _Delegate("sessions", SessionService.update_session)
    delete_session = _Delegate("sessions", SessionService.delete_session)
    list_episodes = _Delegate("sessions", SessionService.list_episodes)
    get_episode = _Delegate("sessions", SessionService.get_episode)
    delete_episode = _Delegate("sessions", SessionService.delete_episode)

    # projects ----------------------------------------------------------------------------
    create_project = _Delegate("projects", ProjectService.create_project)

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

    get_project = _Delegate("projects", ProjectService.get_project)
    list_projects = _Delegate("projects", ProjectService.list_projects)
    update_project = _Delegate("projects", ProjectService.update_project)
    delete_project = _Delegate("projects", ProjectService.delete_project)

    # expiry of unused memories (admin tasks, one at a time per owner) -------------------
    refresh_expiry = _Delegate("expiry", ExpiryService.refresh)
    expired_by_user = _Delegate("expiry", ExpiryService.by_user)
    delete_expired = _Delegate("expiry", ExpiryService.delete)
    latest_expiry_task = _Delegate("expiry", ExpiryService.latest)
    expiry_progress = _Delegate("expiry", ExpiryService.progress)

    # dreaming: scheduled consolidation sweeps per tenant ---------------------------------
    start_dreaming = _Delegate("dreaming", DreamingService.start)
    stop_dreaming = _Delegate("dreaming", DreamingService.stop)
    dreaming_status = _Delegate("dreaming", DreamingService.status)
    get_scope_config = _Delegate("dreaming", DreamingService.get_scope_config)
    set_scope_config = _Delegate("dreaming", DreamingService.set_scope_config)
    delete_scope_config = _Delegate("dreaming", DreamingService.delete_scope_config)

    # summaries ---------------------------------------------------------------------------
    list_summaries = _Delegate("summaries", SummaryService.list_summaries)
    get_summary = _Delegate("summaries", SummaryService.get_summary)
    create_summary = _Delegate("summaries", SummaryService.create_summary)
    update_summary = _Delegate("summaries", SummaryService.update_summary)
    delete_summary = _Delegate("summaries", SummaryService.delete_summary)

    # variables ---------------------------------------------------------------------------
    get_variables = _Delegate("variables", VariableService.get_variables)
    update_variables = _Delegate("variables", VariableService.update_variables)
    delete_variables = _Delegate("variables", VariableService.delete_variables)
    token_usage = _Delegate("variables", VariableService.token_usage)

    # graph -------------------------------------------------------------------------------
    upsert_entity = _Delegate("graph", GraphService.upsert_entity)
    upsert_relationship = _Delegate("graph", GraphService.upsert_relationship)
    list_entities = _Delegate("graph", GraphService.list_entities)
    get_entity = _Delegate("graph", GraphService.get_entity)
    delete_entity = _Delegate("graph", GraphService.delete_entity)
    list_relationships = _Delegate("graph", GraphService.list_relationships)
    search_entities = _Delegate("graph", GraphService.search_entities)
    neighborhood = _Delegate("graph", GraphService.neighborhood)
    neighbors = _Delegate("graph", GraphService.neighbors)

    # context -----------------------------------------------------------------------------
    context = _Delegate("context", ContextService.context)
    touch_memories = _Delegate("context", ContextService.touch_memories)
    touch_episodes = _Delegate("context", ContextService.touch_episodes)

    # chunks ------------------------------------------------------------------------------
    update_chunks = _Delegate("chunks", ChunkService.update_chunks)
    reset_chunks = _Delegate("chunks", ChunkService.reset_chunks)
    chunk_state = _Delegate("chunks", ChunkService.chunk_state)
    session_messages = _Delegate("chunks", ChunkService.session_messages)
    write_session = _Delegate("chunks", ChunkService.write_session)

    # consolidation -----------------------------------------------------------------------
    consolidation_candidates = _Delegate(
        "consolidation", ConsolidationService.consolidation_candidates
    )
    consolidate = _Delegate("consolidation", ConsolidationService.consolidate)
    revert_consolidation = _Delegate("consolidation", ConsolidationService.revert_consolidation)
    schedule_consolidation = _Delegate("consolidation", ConsolidationService.schedule_consolidation)

    # maintenance -------------------------------------------------------------------------
    list_jobs = _Delegate("maintenance", MaintenanceService.list_jobs)
    job_counts = _Delegate("maintenance", MaintenanceService.job_counts)
    retry_job = _Delegate("maintenance", MaintenanceService.retry_job)
    reindex = _Delegate("maintenance", MaintenanceService.reindex)
    health = _Delegate("maintenance", MaintenanceService.health)

    # export / import ---------------------------------------------------------------------

    @_documented_by(TransferService.export)
    def export(
        self,
        dest: str | Path,
        *,
        user_id: str | None = None,
        scope_id: str | None = None,
        progress: Progress | None = None,
        plain: bool = False,
    ) -> TransferReport:
        return self._services.transfer.export(
            Path(dest), user_id=user_id, scope_id=scope_id, progress=progress, plain=plain
        )

    @_documented_by(TransferService.import_)
    def import_file(
        self, source: str | Path, *, reembed: bool = False, progress: Progress | None = None
    ) -> TransferReport:
        return self._services.transfer.import_(Path(source), reembed=reembed, progress=progress)

    # scopes ------------------------------------------------------------------------------
    delete_scope_id = _Delegate("scopes", ScopeService.delete_scope_id)
    list_scopes = _Delegate("scopes", ScopeService.list_scopes)


def _conforms(memory: Memory) -> MemoryAPI:
    """Type-checked: ``Memory`` implements the shared ``MemoryAPI``."""
    return memory
