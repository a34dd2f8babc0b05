"""The WilmerAI discussion memory (seed 004): /v1/discussions/{discussion_id}/....

A WilmerAI ``discussionId`` is an omoide session id. What each route calls:

    POST /v1/discussions/{id}/quality-memory   quality_memory      (QualityMemory)
    GET  /v1/discussions/{id}/recent-memories  recent_memories     (RecentMemory)
    POST /v1/discussions/recent-turns          recent_turns        (RecentMemory, stateless)
    GET  /v1/discussions/{id}/summary          discussion_summary  (FullChatSummary)
    POST /v1/discussions/{id}/search           search_discussion   (VectorMemorySearch)

(``quality_memory`` of ``omoide.compat.wilmer.QualityMemoryService``, the others of
``DiscussionService`` and its module).

Vector-style QualityMemory without an LLM is a 501 ``feature_disabled``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from omoide.api.deps import MemoryDep, TenancyDep
from omoide.compat.wilmer import Wilmer
from omoide.compat.wilmer.discussions import (
    CHUNK_BREAK,
    DiscussionSummary,
    recent_turns,
    search_keywords,
)
from omoide.compat.wilmer.quality import QualityMemoryResult
from omoide.compat.wilmer.wire import (
    DiscussionHits,
    QualityMemoryRequest,
    RecentMemories,
    RecentTurns,
    RecentTurnsRequest,
    SearchRequest,
)

router = APIRouter(prefix="/v1/discussions", tags=["wilmer"])


def get_wilmer(memory: MemoryDep) -> Wilmer:
    return Wilmer.of(memory)


WilmerDep = Annotated[Wilmer, Depends(get_wilmer)]

DiscussionId = Annotated[str, Path(min_length=1, max_length=256)]
UserQ = Annotated[str | None, Query(min_length=1, max_length=256)]


@router.post("/recent-turns")
def post_recent_turns(body: RecentTurnsRequest) -> RecentTurns:
    """RecentMemory without a discussion id: the last `n` turns of the messages given
    (system messages excluded). Stores nothing."""
    turns = recent_turns(body.messages, body.n)
    return RecentTurns(turns=turns, text="\n".join(f"{t.role}: {t.content}" for t in turns))


@router.post("/{discussion_id}/quality-memory")
def quality_memory(
    discussion_id: DiscussionId,
    body: QualityMemoryRequest,
    wilmer: WilmerDep,
    tenancy: TenancyDep,
) -> QualityMemoryResult:
    """QualityMemory: store the conversation's new turns (a resent history adds nothing) and
    create the memories WilmerAI's trigger rules call for: chunk memories (file style) or
    title/summary/entities/key_phrases memories (`useVectorForQualityMemory`, needs an LLM)."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    return wilmer.quality.quality_memory(
        discussion_id,
        body.messages,
        user_id=scope.user_id,
        scope_id=scope.scope_id,
        use_vector=body.options.use_vector,
        config=body.options.chunk_config(),
    )


@router.get("/{discussion_id}/recent-memories")
def recent_memories(
    discussion_id: DiscussionId,
    wilmer: WilmerDep,
    tenancy: TenancyDep,
    n: Annotated[int, Query(ge=1, le=1000)] = 5,
    user_id: UserQ = None,
    scope_id: UserQ = None,
) -> RecentMemories:
    """RecentMemory: the discussion's last `n` chunk memories, oldest first."""
    scope = tenancy.scope(user_id, scope_id)
    items = wilmer.discussions.recent_memories(
        discussion_id, n, user_id=scope.user_id, scope_id=scope.scope_id
    )
    text = CHUNK_BREAK.join(i.text for i in items)
    return RecentMemories(discussion_id=discussion_id, memories=items, text=text)


@router.get("/{discussion_id}/summary")
def summary(
    discussion_id: DiscussionId,
    wilmer: WilmerDep,
    tenancy: TenancyDep,
    user_id: UserQ = None,
    scope_id: UserQ = None,
) -> DiscussionSummary:
    """FullChatSummary: the discussion's rolling summary (`summary` is null before the first)."""
    scope = tenancy.scope(user_id, scope_id)
    return wilmer.discussions.discussion_summary(
        discussion_id, user_id=scope.user_id, scope_id=scope.scope_id
    )


@router.post("/{discussion_id}/search")
def search(
    discussion_id: DiscussionId, body: SearchRequest, wilmer: WilmerDep, tenancy: TenancyDep
) -> DiscussionHits:
    """VectorMemorySearch: `;`-separated keywords (each quoted, OR-combined, at most 60) ranked
    by bm25 over the discussion's vector and chunk memories; `recency` adds a time decay."""
    scope = tenancy.scope(body.user_id, body.scope_id)
    hits = wilmer.discussions.search_discussion(
        discussion_id,
        body.keywords,
        user_id=scope.user_id,
        scope_id=scope.scope_id,
        limit=body.limit,
        recency=body.recency,
        half_life_days=body.half_life_days,
    )
    return DiscussionHits(
        discussion_id=discussion_id, keywords=search_keywords(body.keywords), hits=hits
    )
