"""Request and response bodies of the WilmerAI discussion memory routes.

Options keep WilmerAI's names (``useVectorForQualityMemory``, ``chunkEstimatedTokenSize``,
``maxMessagesBetweenChunks``, ``lookbackStartTurn``, ``maxResponseSizeInTokens``). ``user_id``
and ``scope_id`` omitted mean ``"default"``, or the tenant a bound API key is limited to.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from omoide.api.models import MAX_COUNT
from omoide.config import ChunkConfig
from omoide.types import MemoryItem, Message, SearchHit

Id = Annotated[str | None, Field(min_length=1, max_length=256, description='Default "default".')]

_HISTORY = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Let's plan the team offsite in Lisbon in May."},
    {"role": "assistant", "content": "Great, Lisbon in May. How many people?"},
]


def _examples(*examples: dict[str, Any]) -> ConfigDict:
    return ConfigDict(
        extra="forbid", populate_by_name=True, json_schema_extra={"examples": list(examples)}
    )


class QualityMemoryOptions(BaseModel):
    """WilmerAI's discussion-id workflow options (defaults: WilmerAI's)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    use_vector: bool = Field(False, alias="useVectorForQualityMemory")
    chunk_estimated_token_size: int = Field(
        1000, ge=1, le=MAX_COUNT, alias="chunkEstimatedTokenSize"
    )
    max_messages_between_chunks: int = Field(
        5, ge=1, le=MAX_COUNT, alias="maxMessagesBetweenChunks"
    )
    lookback_start_turn: int = Field(3, ge=0, le=MAX_COUNT, alias="lookbackStartTurn")
    max_response_size_in_tokens: int = Field(
        400, ge=16, le=MAX_COUNT, alias="maxResponseSizeInTokens"
    )

    def chunk_config(self) -> ChunkConfig:
        return ChunkConfig(**self.model_dump(exclude={"use_vector"}))


class QualityMemoryRequest(BaseModel):
    model_config = _examples(
        {
            "messages": _HISTORY,
            "options": {"useVectorForQualityMemory": False, "chunkEstimatedTokenSize": 1000},
            "user_id": "alice",
        }
    )

    messages: list[dict[str, str]] = Field(
        description="The whole conversation, as WilmerAI sends it; system messages are ignored."
    )
    options: QualityMemoryOptions = Field(
        default_factory=lambda: QualityMemoryOptions.model_validate({})
    )
    user_id: Id = None
    scope_id: Id = None


class RecentTurnsRequest(BaseModel):
    model_config = _examples({"messages": _HISTORY, "n": 2})

    messages: list[dict[str, str]] = Field(min_length=1)
    n: int = Field(5, ge=1, le=1000, description="How many of the last turns to return.")


class SearchRequest(BaseModel):
    model_config = _examples(
        {"keywords": "Lisbon;team offsite;May", "limit": 5, "recency": False, "user_id": "alice"}
    )

    keywords: str = Field(
        min_length=1, description="Keywords or phrases separated by ';' (at most 60 are used)."
    )
    limit: int = Field(10, ge=1, le=1000)
    recency: bool = Field(False, description="Rank by bm25 * 2^(-age_days / half_life_days).")
    half_life_days: float = Field(30.0, gt=0)
    user_id: Id = None
    scope_id: Id = None


class RecentMemories(BaseModel):
    discussion_id: str
    memories: list[MemoryItem] = Field(description="The last N chunk memories, oldest first.")
    text: str = Field(description="Their texts joined by WilmerAI's '--ChunkBreak--'.")


class RecentTurns(BaseModel):
    turns: list[Message]
    text: str = Field(description="One 'role: content' line per turn.")


class DiscussionHits(BaseModel):
    discussion_id: str
    keywords: list[str] = Field(description="The sanitised keywords searched for.")
    hits: list[SearchHit]
