"""Hybrid retrieval: keyword terms, recipes and fusion."""
