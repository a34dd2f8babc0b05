"""WilmerAI discussion memory: ``QualityMemory`` (``quality``), ``RecentMemory``,
``FullChatSummary``, ``VectorMemorySearch`` (``discussions``) and ``omoide import wilmer``
(``importer``) and ``omoide export wilmer`` (``exporter``), over the same store, embedding
and memory writes as the engine.

    >>> wilmer = Wilmer.of(memory)
    >>> wilmer.quality.quality_memory("disc-1", history)
    >>> wilmer.discussions.search_discussion("disc-1", "Lisbon;offsite")
    >>> wilmer.importer.import_wilmer("~/WilmerAI/Public/DiscussionIds", user_id="alice")
    >>> wilmer.exporter.export_wilmer("/tmp/DiscussionIds", "disc-1", user_id="alice")
"""

from __future__ import annotations

from dataclasses import dataclass

from omoide.compat.wilmer.discussions import DiscussionService
from omoide.compat.wilmer.exporter import WilmerExporter
from omoide.compat.wilmer.importer import WilmerImporter
from omoide.compat.wilmer.quality import QualityMemoryService
from omoide.engine.memories import MemoryService
from omoide.engine.shared.embedding import Embedding
from omoide.llm import LLM
from omoide.memory import Memory
from omoide.store.protocol import Store

__all__ = [
    "DiscussionService",
    "QualityMemoryService",
    "Wilmer",
    "WilmerExporter",
    "WilmerImporter",
]


@dataclass(frozen=True)
class Wilmer:
    quality: QualityMemoryService
    discussions: DiscussionService
    importer: WilmerImporter
    exporter: WilmerExporter

    @classmethod
    def of(cls, memory: Memory) -> Wilmer:
        """Over a ``Memory``'s store, embedding, LLM and memory writes."""
        engine = memory.engine
        return cls.over(engine.store, engine.embedding, engine.llm, engine.services.memories)

    @classmethod
    def over(
        cls,
        store: Store,
        embedding: Embedding,
        llm: LLM | None,
        memories: MemoryService,
        *,
        actor: str = "library",
    ) -> Wilmer:
        """Both services over these collaborators; starts nothing, so building one per
        request is cheap."""
        limit = memories.max_text_chars
        return cls(
            quality=QualityMemoryService(
                store, embedding, llm, memories, actor=actor, max_text_chars=limit
            ),
            discussions=DiscussionService(store),
            importer=WilmerImporter(store, embedding, actor=actor, max_text_chars=limit),
            exporter=WilmerExporter(store),
        )
