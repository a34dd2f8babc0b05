"""WilmerAI discussion memory: ``QualityMemory`` (``quality``), ``RecentMemory``,
``FullChatSummary``, ``VectorMemorySearch`` (``discussions``) and ``omoide import wilmer``
(``importer``) and ``omoide export wilmer`` (``exporter``), each calling ``Memory`` like any
user of the library.

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
from omoide.memory import Memory

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
        """The four services over one ``Memory``; starts nothing, so building one per request
        is cheap."""
        return cls(
            quality=QualityMemoryService(memory),
            discussions=DiscussionService(memory),
            importer=WilmerImporter(memory),
            exporter=WilmerExporter(memory),
        )
