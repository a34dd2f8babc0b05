"""The application core: one service per capability, composed in ``omoide.wiring``.

Every interface (library, HTTP, CLI) calls the services through ``Memory`` or ``Engine`` and
nothing below them.
"""

from omoide.config import KnowledgeConfig
from omoide.engine.core import Engine
from omoide.engine.ingest import ExtractionRequest
from omoide.engine.services import Services

__all__ = ["Engine", "ExtractionRequest", "KnowledgeConfig", "Services"]
