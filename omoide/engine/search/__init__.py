"""Hybrid search and its helpers (the query expansion's word vectors)."""

from omoide.engine.search.service import SearchService

__all__ = ["SearchService"]
