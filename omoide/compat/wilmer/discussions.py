"""WilmerAI discussion memory: chunk and vector memories of a discussion, and their search.

A WilmerAI ``discussionId`` is an omoide session. What each WilmerAI node maps to:

- ``QualityMemory`` -> ``quality_memory``: stores the turns of the resent conversation that
  are not stored yet (found by overlap: a resent or front-truncated history adds nothing), then
  applies the trigger rules (``omoide.chunking.plan_chunks``) with the request's
  options. File style (``use_vector=False``) writes ``chunk`` memories through the session's
  chunk ledger (with an LLM a summary, without one the messages verbatim) and, with an LLM,
  rolls the session summary forward. Vector style writes one ``semantic`` memory per object the
  LLM returns (``title``, ``summary``, ``entities``, ``key_phrases``), its own tracker (the
  hash of the last processed message, in the session's metadata) keeping it from reprocessing.
- ``RecentMemory`` -> ``recent_memories`` (the last N chunks) or, without a discussion,
  ``recent_turns`` (the last N messages given).
- ``FullChatSummary`` -> ``discussion_summary``.
- ``VectorMemorySearch`` -> ``search_discussion``: the discussion's vector memories only;
  ``;``-separated keywords, each quoted by the store, OR-combined, at most 60, ranked by
  bm25; ``recency=True`` multiplies each score by ``2 ** (-age_days / half_life_days)``.

``QualityMemory`` lives in ``omoide.compat.wilmer.quality``; the reads are here.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from omoide.errors import InvalidInput
from omoide.memory import Memory
from omoide.retrieval.terms import MAX_TERMS, split_keywords
from omoide.types import (
    DEFAULT_ID,
    MemoryItem,
    MemoryType,
    Message,
    SearchFilters,
    SearchHit,
)
from omoide.validate import check_limit, to_messages

CHUNK_BREAK = "--ChunkBreak--"  # WilmerAI's separator of recent memories
DEFAULT_HALF_LIFE_DAYS = 30.0
_DAY_MS = 86_400_000
# WilmerAI's sanitiser also turns "-" into a space before quoting.
_CONTROL = str.maketrans(dict.fromkeys(map(chr, range(32)), " ") | {'"': " ", "-": " "})


class DiscussionSummary(BaseModel):
    discussion_id: str
    summary: str | None = Field(None, description="The rolling summary; null before the first.")
    id: str | None = None
    last_chunk_hash: str | None = None


def sanitize_keyword(keyword: str) -> str:
    """A keyword as one FTS5 phrase: quotes, hyphens and control characters become spaces,
    whitespace collapses. The store quotes it, so ``NEAR``, ``*`` or ``AND`` are only words."""
    return " ".join(keyword.translate(_CONTROL).split())


def search_keywords(text: str) -> list[str]:
    """WilmerAI's keyword list: ``;``-separated, sanitised, empty ones dropped, at most 60."""
    cleaned = (sanitize_keyword(k) for k in split_keywords(text, limit=10 * MAX_TERMS))
    distinct = dict.fromkeys(k for k in cleaned if any(ch.isalnum() for ch in k))
    return list(distinct)[:MAX_TERMS]


def recency_score(score: float, created_ms: int, now: int, half_life_days: float) -> float:
    """``score * 2 ** (-age_days / half_life_days)``: a memory loses half its score per
    half-life of age (WilmerAI's ``recency_score`` time decay)."""
    age_days = max(0.0, (now - created_ms) / _DAY_MS)
    return score * math.pow(2.0, -age_days / half_life_days)


def recent_turns(messages: Sequence[dict[str, Any] | Message], n: int) -> list[Message]:
    """The stateless ``RecentMemory``: the last ``n`` non-system messages given."""
    if n < 1:
        raise InvalidInput(f"n must be at least 1, got {n}")
    msgs = [m for m in to_messages(list(messages), 10**7) if m.role != "system"]
    return msgs[-n:]


def rolling_summary(
    memory: Memory, discussion_id: str, *, user_id: str, scope_id: str
) -> MemoryItem | None:
    """The discussion's rolling summary: its newest valid summary memory."""
    items = memory.session_memories(
        discussion_id, user_id=user_id, scope_id=scope_id, types=[MemoryType.SUMMARY], limit=1
    )
    return items[0] if items else None


class DiscussionService:
    """``RecentMemory``, ``FullChatSummary`` and ``VectorMemorySearch`` over one ``Memory``."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def recent_memories(
        self,
        discussion_id: str,
        n: int = 5,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> list[MemoryItem]:
        """The discussion's last ``n`` chunk memories, oldest first (WilmerAI ``RecentMemory``).

        >>> [c.text for c in m.recent_memories("disc-1", 2, user_id="alice")]
        """
        check_limit(n, 0)
        if n < 1:
            raise InvalidInput(f"n must be at least 1, got {n}")
        self._memory.get_session(discussion_id, user_id=user_id, scope_id=scope_id)
        items = self._memory.session_memories(
            discussion_id, user_id=user_id, scope_id=scope_id, types=[MemoryType.CHUNK], limit=n
        )
        return list(reversed(items))

    def discussion_summary(
        self, discussion_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> DiscussionSummary:
        """The discussion's rolling summary (WilmerAI ``FullChatSummary``)."""
        self._memory.get_session(discussion_id, user_id=user_id, scope_id=scope_id)
        item = rolling_summary(self._memory, discussion_id, user_id=user_id, scope_id=scope_id)
        if item is None:
            return DiscussionSummary(discussion_id=discussion_id)
        last = item.metadata.get("last_chunk_hash")
        return DiscussionSummary(
            discussion_id=discussion_id,
            summary=item.text,
            id=item.id,
            last_chunk_hash=str(last) if last is not None else None,
        )

    def search_discussion(
        self,
        discussion_id: str,
        keywords: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        limit: int = 10,
        recency: bool = False,
        half_life_days: float = DEFAULT_HALF_LIFE_DAYS,
    ) -> list[SearchHit]:
        """WilmerAI ``VectorMemorySearch`` over the discussion's vector memories only (chunk
        memories have ``recent_memories``, as in WilmerAI).

        ``keywords`` are ``;``-separated phrases (at most 60 are used), OR-combined and
        ranked by bm25. With ``recency`` each score is multiplied by
        ``2 ** (-age_days / half_life_days)`` (see ``recency_score``) before ranking.

            >>> m.search_discussion("disc-1", "Lisbon;team offsite", user_id="alice")
        """
        check_limit(limit, 0, maximum=1000)
        if half_life_days <= 0:
            raise InvalidInput(f"half_life_days must be positive, got {half_life_days}")
        self._memory.get_session(discussion_id, user_id=user_id, scope_id=scope_id)
        terms = search_keywords(keywords)
        if not terms:
            return []
        filters = SearchFilters(
            session_id=discussion_id, types=[MemoryType.SEMANTIC], metadata={"wilmer": "vector"}
        )
        fetch = max(limit * 5, 50) if recency else limit
        hits = self._memory.keyword_search(
            terms, user_id=user_id, scope_id=scope_id, filters=filters, limit=fetch
        )
        if recency:
            now = int(time.time() * 1000)
            for hit in hits:
                created = int(hit.memory.created_at.timestamp() * 1000)
                hit.score = recency_score(hit.score, created, now, half_life_days)
            hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:limit]
