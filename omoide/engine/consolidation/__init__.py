"""Consolidation and dreaming: merging, decaying and re-deriving memories over time."""

from omoide.engine.consolidation.service import ConsolidationService

__all__ = ["ConsolidationService"]
