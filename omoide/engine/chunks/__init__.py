"""Chunk memories: a session's messages cut into summarised chunks, recorded in a ledger."""

from omoide.engine.chunks.service import ChunkService

__all__ = ["ChunkService"]
