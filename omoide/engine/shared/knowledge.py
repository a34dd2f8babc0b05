"""The knowledge lifecycle's settings as one object: chunking, summaries, context, consolidation.

``KnowledgeConfig`` is the ``knowledge`` group of ``omoide.config.Settings`` (defined there,
where the settings are); ``Memory(knowledge=KnowledgeConfig(...))`` replaces it.
"""

from __future__ import annotations

from omoide.config import ChunkConfig, KnowledgeConfig

__all__ = ["ChunkConfig", "KnowledgeConfig"]
