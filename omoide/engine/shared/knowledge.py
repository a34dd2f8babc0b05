"""The knowledge lifecycle's settings as one object: chunking, summaries, context, consolidation.

``Memory(knowledge=KnowledgeConfig(...))`` sets them; otherwise ``omoide.wiring`` takes them
from the ``Settings`` (``OMOIDE_CHUNK_*``, ``OMOIDE_SUMMARY_TRIGGER``, ``OMOIDE_CONTEXT_*``,
``OMOIDE_CONSOLIDATION_*``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ChunkConfig(BaseModel):
    """The trigger rules, under WilmerAI's names too (``chunkEstimatedTokenSize`` ...)."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    chunk_estimated_token_size: int = Field(1000, ge=1, alias="chunkEstimatedTokenSize")
    max_messages_between_chunks: int = Field(5, ge=1, alias="maxMessagesBetweenChunks")
    lookback_start_turn: int = Field(3, ge=0, alias="lookbackStartTurn")
    max_response_size_in_tokens: int = Field(400, ge=16, alias="maxResponseSizeInTokens")


class KnowledgeConfig(BaseModel):
    """``summary_trigger``: ``"episode"`` updates a session's rolling summary after every add
    (the extraction job's summary step); ``"chunk"`` updates it only when a chunk memory is
    made, from the chunk's messages, and links it to that chunk (WilmerAI)."""

    model_config = ConfigDict(frozen=True)

    chunks_enabled: bool = True
    chunks: ChunkConfig = Field(default_factory=ChunkConfig)
    summary_trigger: Literal["episode", "chunk"] = "episode"
    tokenizer: str = "cl100k_base"
    recent_turns: int = Field(6, ge=1, le=100)
    min_age_days: float = Field(7.0, ge=0)
    min_session_episodes: int = Field(10, ge=1)
    max_score: float = Field(0.1, ge=0)
    consolidation_batch: int = Field(50, ge=1, le=1000)
