"""Chunk memories: a session's messages cut into summarised chunks (WilmerAI's ledger)."""

from omoide.engine.chunks.service import ChunkService

__all__ = ["ChunkService"]
