"""LLM extraction jobs: one step per memory type, applied in the job's transaction."""

from omoide.engine.extraction.service import ExtractionService

__all__ = ["ExtractionService"]
