"""``Services``: the engine's services, one per capability, as one value.

Built by ``omoide.wiring.build_services``; each service got exactly the collaborators it uses in
its constructor, so the graph below has a direction and no cycles (an arrow: "is given")::

    ingest ──> memories ──> embedding, signal, chunk trigger
    summaries ──> memories
    context ──> search ──> embedding
            └─> graph ──> embedding
    chunks, consolidation ──> embedding, signal, llm
    extraction, chunks ──> step deps ──> search, embedding
    maintenance ──> graph, embedding, signal
    sessions, projects, variables, scopes ──> store only
    transfer ──> embedding, signal
    expiry ──> signal; dreaming ──> consolidation, llm, signal
    mirror (optional) ──> memories; it hears memories' and search's events
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from omoide.config import KnowledgeConfig
from omoide.engine.chunks.service import ChunkService
from omoide.engine.consolidation.dreaming import DreamingService
from omoide.engine.consolidation.service import ConsolidationService
from omoide.engine.context import ContextService
from omoide.engine.expiry import ExpiryService
from omoide.engine.extraction.service import ExtractionService
from omoide.engine.graph import GraphService
from omoide.engine.ingest import IngestService
from omoide.engine.maintenance import MaintenanceService
from omoide.engine.memories import MemoryService
from omoide.engine.mirror.service import MarkdownMirror
from omoide.engine.projects import ProjectService
from omoide.engine.scopes import ScopeService
from omoide.engine.search.service import SearchService
from omoide.engine.sessions import SessionService
from omoide.engine.shared.events import MemoryEvents
from omoide.engine.summaries import SummaryService
from omoide.engine.transfer.service import TransferService
from omoide.engine.variables import VariableService


@dataclass(frozen=True)
class Services:
    memories: MemoryService
    search: SearchService
    ingest: IngestService
    sessions: SessionService
    projects: ProjectService
    summaries: SummaryService
    variables: VariableService
    graph: GraphService
    context: ContextService
    chunks: ChunkService
    consolidation: ConsolidationService
    extraction: ExtractionService
    maintenance: MaintenanceService
    scopes: ScopeService
    transfer: TransferService
    expiry: ExpiryService
    dreaming: DreamingService
    events: MemoryEvents
    mirror: MarkdownMirror | None = None


@dataclass(frozen=True)
class ServiceConfig:
    """The values the services are built with (``Settings`` reach them only through this)."""

    knowledge: KnowledgeConfig
    recipe: str = "hybrid"
    max_text_chars: int = 100_000
    max_messages: int = 1_000
    max_llm_calls: int = 6
    actor: str = "library"
    # INDEX_BACKEND=file: long-term memories mirrored as markdown under this root
    mirror_root: Path | None = None
    encryption_key: str | None = field(default=None, repr=False)  # exports are sealed with it
    # where the query expansion's common-word vectors are saved (omoide.engine.search.vocabulary)
    models_dir: Path | None = None
    word_table_build: bool = True  # False: load a saved table, never embed one
    # chat messages without a session are linked into implicit conversations (memories.py)
    implicit_conversations: bool = True
    dreaming_min_interval_s: float = 0.0  # a schedule sweeps at most this often
