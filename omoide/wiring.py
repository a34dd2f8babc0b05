"""The one place ``Settings`` become objects: the store, embedder, LLM and the engine's
services (the ``knowledge`` group is the services' ``KnowledgeConfig`` as it is).

    >>> engine = build_engine(load_settings(), workers=0)   # nothing started yet
    >>> engine.start()

``build_services`` takes objects, not settings, so a test or an embedding application can
compose the services over its own store, embedder and LLM.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Literal

from omoide.config import KnowledgeConfig, Settings
from omoide.embed import Embedder, build_embedder
from omoide.engine.chunks.service import ChunkService, ChunkTrigger
from omoide.engine.consolidation.dreaming import DreamingService
from omoide.engine.consolidation.service import ConsolidationService
from omoide.engine.context import ContextService
from omoide.engine.core import Engine
from omoide.engine.expiry import ExpiryService
from omoide.engine.extraction.service import ExtractionService
from omoide.engine.extraction.steps import StepDeps
from omoide.engine.graph import GraphService
from omoide.engine.ingest import IngestService
from omoide.engine.llm_health import LLMHealth
from omoide.engine.maintenance import MaintenanceService
from omoide.engine.memories import MemoryService
from omoide.engine.mirror.service import MarkdownMirror
from omoide.engine.projects import ProjectService
from omoide.engine.scopes import ScopeService
from omoide.engine.search.service import SearchService
from omoide.engine.services import ServiceConfig, Services
from omoide.engine.sessions import SessionService
from omoide.engine.shared.embedding import META_MODEL, Embedding
from omoide.engine.shared.events import MemoryEvents
from omoide.engine.shared.job_signal import JobSignal
from omoide.engine.summaries import SummaryService
from omoide.engine.transfer.service import TransferService
from omoide.engine.variables import VariableService
from omoide.llm import LLM, build_llm
from omoide.llm.probe import probe
from omoide.observe import NO_OBSERVER, Observer
from omoide.redact import redact
from omoide.store import normalize_location, open_store
from omoide.store.protocol import Store

log = logging.getLogger("omoide")


def build_engine(
    settings: Settings,
    *,
    path: str | Path | None = None,
    embedder: Embedder | None = None,
    llm: LLM | None = None,
    workers: int | None = None,
    knowledge: KnowledgeConfig | None = None,
    observer: Observer = NO_OBSERVER,
) -> Engine:
    """The engine the settings describe; given objects replace the ones they would name.

    Opens (creating and migrating if new) the store; starts no thread. ``observer`` is handed
    to the embedding, the LLM client built here (a given ``llm`` keeps its own) and the job
    workers.
    """
    location = normalize_location(path) if path is not None else settings.store.location
    log.info("omoide store: %s", redact(str(location)))
    built = (
        build_llm(settings, timeout=settings.llm.timeout, observer=observer)
        if llm is None
        else None
    )
    chosen = llm if llm is not None else built
    log.info("omoide LLM: %s", chosen.name if chosen else "none (extraction disabled)")
    key = settings.store.encryption_passphrase  # the store and exports are encrypted with it
    if key is not None and settings.store.file_mirror_root is not None:
        log.warning(ENCRYPTED_BUT_FILES, settings.store.file_mirror_root)
    store = open_store(
        location,
        encryption_key=key,
        search_timeout=settings.store.pg_search_timeout,
        ann_threshold=settings.store.ann_threshold,
        ann_ef=settings.store.ann_ef,
    )
    if embedder is None:  # the runtime a store's vectors came from stays its runtime
        embedder = build_embedder(settings, store.admin.get_meta(META_MODEL))
    log.info("omoide embedder: %s", embedder.name)
    embedding = Embedding(store, embedder, observer)
    signal = JobSignal(
        store.jobs, per_tenant=settings.jobs.max_waiting_per_tenant, total=settings.jobs.max_waiting
    )
    config = ServiceConfig(
        knowledge=knowledge or settings.knowledge,
        recipe=settings.search.recipe,
        max_text_chars=settings.server.max_text_chars,
        max_messages=settings.server.max_messages,
        max_llm_calls=settings.llm.max_calls_per_episode,
        mirror_root=settings.store.file_mirror_root,
        encryption_key=key,
        models_dir=settings.store.models_dir,
        word_table_build=settings.search.word_table_build,
        implicit_conversations=settings.search.implicit_conversations,
        dreaming_min_interval_s=settings.jobs.dreaming_min_interval_s,
    )
    on_close: list[Callable[[], None]] = [built.close] if built is not None else []
    health = LLMHealth(chosen, check=_endpoint_check(settings) if built is not None else None)
    return Engine(
        store,
        embedding,
        chosen,
        signal,
        partial(build_services, store, embedding, chosen, signal, llm_health=health),
        config,
        workers=settings.jobs.workers if workers is None else workers,
        on_close=on_close,
        run_jobs=settings.jobs.run_jobs,
        lease_ms=round(settings.jobs.lease_s * 1000),
        poll_s=settings.jobs.poll_s,
        observer=observer,
        llm_available=getattr(chosen, "available", None),
        outage_probe_s=settings.llm.outage_probe_s,
        job_retention_s=settings.jobs.job_retention_days * 86_400,
    )


def _endpoint_check(settings: Settings) -> Callable[[], dict[str, Any]]:
    """The settings' LLM endpoint checked as ``omoide doctor`` does (its model list)."""
    base_url, model = settings.llm.base_url or "", settings.llm.model
    key = settings.llm.api_key.get_secret_value() if settings.llm.api_key else None
    return partial(probe, base_url, model, key)


def build_services(
    store: Store,
    embedding: Embedding,
    llm: LLM | None,
    signal: JobSignal,
    config: ServiceConfig,
    *,
    llm_health: LLMHealth | None = None,
) -> Services:
    """Every service, each given exactly what it uses (the graph: ``omoide.engine.services``)."""
    knowledge, actor, max_text_chars = config.knowledge, config.actor, config.max_text_chars
    recipe, max_llm_calls = config.recipe, config.max_llm_calls
    trigger = ChunkTrigger(knowledge)
    events = MemoryEvents()
    memories = MemoryService(
        store.memories,
        store,
        embedding,
        signal,
        trigger,
        actor=actor,
        max_text_chars=max_text_chars,
        max_messages=config.max_messages,
        events=events,
        implicit_conversations=config.implicit_conversations,
    )
    search = SearchService(
        store.memories,
        embedding,
        recipe=recipe,
        max_text_chars=max_text_chars,
        events=events,
        vocabulary_dir=config.models_dir,
        build_vocabulary=config.word_table_build,
    )
    mirror = _mirror(store, memories, events, config.mirror_root)
    graph = GraphService(store.graph, store, embedding)
    deps = StepDeps(store, embedding, search, actor, max_text_chars)
    trigger_kind: Literal["episode", "chunk"] = knowledge.summary_trigger
    consolidation = ConsolidationService(
        store.sessions, store.consolidation, store, embedding, llm, signal, knowledge
    )
    return Services(
        memories=memories,
        search=search,
        ingest=IngestService(
            store.memories,
            store.jobs,
            memories,
            signal,
            llm_enabled=llm is not None,
            summary_trigger=trigger_kind,
            max_text_chars=max_text_chars,
            max_messages=config.max_messages,
        ),
        sessions=SessionService(store.sessions, store),
        projects=ProjectService(store.sessions, store),
        summaries=SummaryService(
            store.memories,
            store.sessions,
            store,
            embedding,
            memories,
            signal,
            actor=actor,
            max_text_chars=max_text_chars,
            events=events,
        ),
        variables=VariableService(store.variables, store),
        graph=graph,
        context=ContextService(
            store.memories,
            store.sessions,
            store.graph,
            store.variables,
            store,
            search,
            graph,
            knowledge,
            max_text_chars=max_text_chars,
        ),
        chunks=ChunkService(
            store.sessions,
            store.jobs,
            store.chunks,
            store,
            embedding,
            llm,
            signal,
            deps,
            knowledge,
            actor=actor,
            max_text_chars=max_text_chars,
        ),
        consolidation=consolidation,
        extraction=ExtractionService(
            store.memories,
            store.sessions,
            store.jobs,
            store,
            llm,
            deps,
            max_llm_calls=max_llm_calls,
        ),
        maintenance=MaintenanceService(
            store.memories,
            store.jobs,
            store.admin,
            store,
            store.location,
            embedding,
            graph,
            signal,
            llm_health=llm_health or LLMHealth(llm),
        ),
        scopes=ScopeService(store.memories, store.graph, store),
        transfer=TransferService(store.admin, store, embedding, signal, key=config.encryption_key),
        expiry=ExpiryService(store.jobs, store.access, store, signal, actor=actor, events=events),
        dreaming=DreamingService(
            store.sessions,
            store.jobs,
            store.consolidation,
            store.schedules,
            store,
            consolidation,
            llm,
            signal,
            min_interval_s=config.dreaming_min_interval_s,
        ),
        events=events,
        mirror=mirror,
    )


ENCRYPTED_BUT_FILES = (
    "encryption at rest is on, but INDEX_BACKEND=file also writes every memory as plaintext"
    " markdown under %s: protect that directory, or leave INDEX_BACKEND unset"
)


def _mirror(
    store: Store, memories: MemoryService, events: MemoryEvents, root: Path | None
) -> MarkdownMirror | None:
    """The markdown mirror (``INDEX_BACKEND=file``), subscribed to the memory events."""
    if root is None:
        return None
    mirror = MarkdownMirror(store.memories, memories, root)
    events.on_written(mirror.on_written)
    events.on_reading(mirror.before_read)
    return mirror
