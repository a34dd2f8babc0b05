"""WilmerAI discussion memory: chunk and vector memories of a discussion, and their search.

A WilmerAI ``discussionId`` is an omoide session. What each WilmerAI node maps to:

- ``QualityMemory`` -> ``quality_memory``: stores the turns of the resent conversation that
  are not stored yet (found by overlap: a resent or front-truncated history adds nothing), then
  applies the trigger rules (``omoide.engine.chunking.plan_chunks``) with the request's
  options. File style (``use_vector=False``) writes ``chunk`` memories through the session's
  chunk ledger (with an LLM a summary, without one the messages verbatim) and, with an LLM,
  rolls the session summary forward. Vector style writes one ``semantic`` memory per object the
  LLM returns (``title``, ``summary``, ``entities``, ``key_phrases``), its own tracker (the
  hash of the last processed message, in the session's metadata) keeping it from reprocessing.
- ``RecentMemory`` -> ``recent_memories`` (the last N chunks) or, without a discussion,
  ``recent_turns`` (the last N messages given).
- ``FullChatSummary`` -> ``discussion_summary``.
- ``VectorMemorySearch`` -> ``search_discussion``: ``;``-separated keywords, each quoted by the
  store, OR-combined, at most 60, ranked by bm25 within the discussion; ``recency=True``
  multiplies each score by ``2 ** (-age_days / half_life_days)``.

Discussion turns are written without queueing the engine's own chunk job: ``quality_memory``
is the one chunker of a discussion, so the request's thresholds are the ones that apply.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from omoide.compat.wilmer.formats import TRACKER_KEY, translate_ledger, vector_memory
from omoide.engine.chunking import ChunkConfig, ChunkMessage, Ledger, chunk_tokens, plan_chunks
from omoide.engine.chunks import MAX_CHUNKS_PER_PASS, chunk_messages, ledger_of
from omoide.engine.embedding import Embedding, index
from omoide.engine.memories import MemoryService
from omoide.errors import Conflict, FeatureDisabled, InvalidInput, NotFound
from omoide.extract import summarize
from omoide.llm import LLM
from omoide.llm.prompts import wilmer as wilmer_prompt
from omoide.llm.protocol import MeteredLLM
from omoide.retrieval.terms import MAX_TERMS, split_keywords
from omoide.store.protocol import (
    ChunkCursor,
    NewChunk,
    NewMemory,
    SessionMessage,
    SessionPatch,
    Store,
    Tx,
)
from omoide.types import (
    DEFAULT_ID,
    MemoryItem,
    MemoryType,
    Message,
    Scope,
    SearchFilters,
    SearchHit,
    Signal,
    now_ms,
)
from omoide.validate import check_limit, to_messages

CHUNK_BREAK = "--ChunkBreak--"  # WilmerAI's separator of recent memories
DEFAULT_HALF_LIFE_DAYS = 30.0
_DAY_MS = 86_400_000
_SEARCH_TYPES = [MemoryType.SEMANTIC, MemoryType.CHUNK]
_CONTROL = str.maketrans(dict.fromkeys(map(chr, range(32)), " ") | {'"': " "})


class QualityMemoryResult(BaseModel):
    """What one ``QualityMemory`` call did."""

    discussion_id: str
    style: Literal["file", "vector"]
    stored: int = Field(description="Messages of the request that were not stored yet.")
    mode: Literal["standard", "consolidation"] | None = None
    created: list[str] = Field(default_factory=list, description="Ids of new memories.")
    pending: int = Field(0, description="New messages not yet in a memory.")
    summary_id: str | None = None
    reason: str = ""


class DiscussionSummary(BaseModel):
    discussion_id: str
    summary: str | None = Field(None, description="The rolling summary; null before the first.")
    id: str | None = None
    last_chunk_hash: str | None = None


def sanitize_keyword(keyword: str) -> str:
    """A keyword as one FTS5 phrase: quotes and control characters become spaces, whitespace
    collapses. The store quotes it, so ``NEAR``, ``*`` or ``AND`` are only words."""
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


def _overlap(stored: list[tuple[str, str]], incoming: list[tuple[str, str]]) -> int:
    """How many leading incoming messages are the stored conversation's last ones."""
    if not stored or not incoming:
        return 0
    best = 0
    limit = min(len(stored), len(incoming))
    first = incoming[0]
    for size in range(1, limit + 1):
        if stored[-size] == first and stored[-size:] == incoming[:size]:
            best = size
    return best


class DiscussionService:
    """The WilmerAI nodes over one store: built from the same collaborators as the engine's
    services (``omoide.compat.wilmer.build``)."""

    def __init__(
        self,
        store: Store,
        embedding: Embedding,
        llm: LLM | None,
        memories: MemoryService,
        *,
        actor: str,
        max_text_chars: int,
    ) -> None:
        self._store = store
        self._embedding = embedding
        self._llm = llm
        self._memories = memories
        self._actor = actor
        self._max_text_chars = max_text_chars

    # QualityMemory ------------------------------------------------------------------------
    def quality_memory(
        self,
        discussion_id: str,
        messages: Sequence[dict[str, Any] | Message],
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        use_vector: bool = False,
        config: ChunkConfig | None = None,
    ) -> QualityMemoryResult:
        """Store the discussion's new turns and make the memories the trigger rules call for.

        ``messages`` is the whole conversation as WilmerAI sends it (system messages are
        ignored); resending it stores nothing twice. Vector style needs an LLM
        (``FeatureDisabled`` before anything is stored).

            >>> m.quality_memory("disc-1", history, config=ChunkConfig(chunkEstimatedTokenSize=300))
            QualityMemoryResult(style='file', stored=2, mode='standard', created=['...'], ...)
        """
        if use_vector and self._llm is None:
            raise FeatureDisabled(
                "vector memories need an LLM: set OMOIDE_LLM_BASE_URL and OMOIDE_LLM_MODEL"
            )
        config = config or ChunkConfig()
        scope = Scope(user_id=user_id, scope_id=scope_id)
        stored = self._store_turns(scope, discussion_id, messages)
        style: Literal["file", "vector"] = "vector" if use_vector else "file"
        result = QualityMemoryResult(discussion_id=discussion_id, style=style, stored=stored)
        try:
            self._store.sessions.get_session(scope, discussion_id)
        except NotFound:
            result.reason = "the discussion has no messages"
            return result
        if use_vector:
            return self._vector_pass(scope, discussion_id, config, result)
        return self._file_pass(scope, discussion_id, config, result)

    def _store_turns(
        self, scope: Scope, discussion_id: str, messages: Sequence[dict[str, Any] | Message]
    ) -> int:
        given = [m for m in to_messages(list(messages), self._max_text_chars) if m.role != "system"]
        try:
            known = self._store.ledger.session_messages(scope, discussion_id, None)
        except NotFound:
            known = []
        seen = _overlap([(m.role, m.content) for m in known], [(m.role, m.content) for m in given])
        new = given[seen:]
        if not new:
            return 0
        records = [
            NewMemory(
                text=m.content,
                session_id=discussion_id,
                metadata={"role": m.role, "source": "wilmer"},
            )
            for m in new
        ]
        vectors = self._embedding.try_embed([r.text for r in records])
        with self._store.transaction() as tx:
            tx.sessions.ensure_session(scope, discussion_id)
            episode = tx.sessions.insert_episode(scope, discussion_id, new)
            items = [self._memories.insert(tx, scope, r, [episode.id]) for r in records]
            index(tx, scope, [i.id for i in items], vectors)
        return len(new)

    def _file_pass(
        self, scope: Scope, discussion_id: str, config: ChunkConfig, result: QualityMemoryResult
    ) -> QualityMemoryResult:
        exists, cursor = self._store.ledger.chunk_state(scope, discussion_id)
        messages = self._store.ledger.session_messages(scope, discussion_id, cursor)
        if not exists and len(messages) < 3:
            result.reason = "fewer than 3 messages: nothing to check yet"
            return result
        hashed = chunk_messages(messages)
        origin = {c.hash: m for c, m in zip(hashed, messages, strict=True)}
        decision = plan_chunks(hashed, translate_ledger(hashed, ledger_of(exists, cursor)), config)
        due = decision.chunks[:MAX_CHUNKS_PER_PASS]
        result.mode, result.reason = decision.mode, decision.reason
        result.pending = len(decision.pending) + sum(map(len, decision.chunks[len(due) :]))
        llm = MeteredLLM(self._llm) if self._llm is not None else None
        new = [self._file_chunk(discussion_id, c, origin, decision.mode, llm, config) for c in due]
        summary = self._next_summary(scope, discussion_id, due, llm, config)
        texts = [c.memory.text for c in new] + ([summary.text] if summary else [])
        vectors = self._embedding.try_embed(texts) if texts else None
        with self._store.transaction() as tx:
            if tx.ledger.chunk_state(scope, discussion_id)[1] != cursor:
                raise Conflict(f"discussion {discussion_id!r} was chunked meanwhile")
            items = tx.ledger.record_chunks(
                scope, discussion_id, new, self._actor
            )  # also the state
            if summary is not None and items:
                summary.metadata["last_chunk_id"] = items[-1].id
                items.append(self._write_summary(tx, scope, summary))
                result.summary_id = items[-1].id
            index(tx, scope, [i.id for i in items], vectors)
            if llm is not None and llm.usage.requests:
                used = llm.usage
                tx.variables.add_usage(
                    scope, used.prompt_tokens, used.completion_tokens, used.requests, now_ms()
                )
        result.created = [i.id for i in items if i.type is MemoryType.CHUNK]
        return result

    def _file_chunk(
        self,
        discussion_id: str,
        chunk: list[ChunkMessage],
        origin: dict[str, SessionMessage],
        mode: str,
        llm: MeteredLLM | None,
        config: ChunkConfig,
    ) -> NewChunk:
        messages = [Message(role=m.role, content=m.content) for m in chunk]
        if llm is None:
            text = "\n".join(f"{m.role}: {m.content}" for m in messages)
        else:
            words = max(20, int(config.max_response_size_in_tokens / 1.35))
            text = summarize(llm, messages, None, max_words=words)
        last = origin[chunk[-1].hash]
        memory = NewMemory(
            text=text[: self._max_text_chars],
            type=MemoryType.CHUNK,
            session_id=discussion_id,
            metadata={
                "chunk_hash": chunk[-1].hash,
                "first_hash": chunk[0].hash,
                "messages": len(chunk),
                "mode": mode,
                "summarized": llm is not None,
                "wilmer": "file",
            },
            source_episodes=list(dict.fromkeys(origin[m.hash].episode_id for m in chunk)),
            valid_from_ms=last.created_ms,
        )
        cursor = ChunkCursor(chunk[-1].hash, last.created_ms, last.seq, last.index)
        return NewChunk(memory, cursor, len(chunk), chunk_tokens(chunk))

    def _next_summary(
        self,
        scope: Scope,
        discussion_id: str,
        chunks: list[list[ChunkMessage]],
        llm: MeteredLLM | None,
        config: ChunkConfig,
    ) -> NewMemory | None:
        """The rolling summary with the new chunks' messages folded in (needs an LLM)."""
        if llm is None or not chunks:
            return None
        previous = self._rolling(scope, discussion_id)
        messages = [Message(role=m.role, content=m.content) for c in chunks for m in c]
        words = max(50, int(config.max_response_size_in_tokens / 1.35))
        text = summarize(llm, messages, previous.text if previous else None, max_words=words)
        return NewMemory(
            text=text[: self._max_text_chars],
            type=MemoryType.SUMMARY,
            session_id=discussion_id,
            metadata={"summary_kind": "rolling", "last_chunk_hash": chunks[-1][-1].hash},
            supersedes=previous.id if previous else None,
        )

    def _write_summary(self, tx: Tx, scope: Scope, new: NewMemory) -> MemoryItem:
        if new.supersedes is None:
            return tx.memories.insert_memory(scope, new, self._actor)
        return tx.memories.supersede_memory(scope, new.supersedes, new, now_ms(), self._actor)

    def _rolling(self, scope: Scope, discussion_id: str) -> MemoryItem | None:
        filters = SearchFilters(session_id=discussion_id, types=[MemoryType.SUMMARY])
        items, _ = self._store.memories.list_memories(scope, filters, 1, 0)
        return items[0] if items else None

    def _vector_pass(
        self, scope: Scope, discussion_id: str, config: ChunkConfig, result: QualityMemoryResult
    ) -> QualityMemoryResult:
        assert self._llm is not None  # checked by quality_memory
        tracker = self._store.sessions.get_session(scope, discussion_id).metadata.get(TRACKER_KEY)
        since = None
        if isinstance(tracker, dict):
            since = ChunkCursor(tracker["hash"], *tracker["key"])
        messages = self._store.ledger.session_messages(scope, discussion_id, since)
        ledger = Ledger(exists=since is not None)
        if since is not None:
            key = (since.created_ms, since.seq, since.index)
            ledger = Ledger(exists=True, last_hash=since.last_hash, last_key=key)
        hashed = chunk_messages(messages)
        decision = plan_chunks(hashed, translate_ledger(hashed, ledger), config)
        due = decision.chunks[:MAX_CHUNKS_PER_PASS]
        result.mode, result.reason = decision.mode, decision.reason
        result.pending = len(decision.pending) + sum(map(len, decision.chunks[len(due) :]))
        if not due:
            return result
        llm = MeteredLLM(self._llm)
        records = [r for chunk in due for r in self._vector_records(discussion_id, chunk, llm)]
        vectors = self._embedding.try_embed([r.text for r in records]) if records else None
        last = due[-1][-1]
        with self._store.transaction() as tx:
            session = tx.sessions.ensure_session(scope, discussion_id)
            if session.metadata.get(TRACKER_KEY) != tracker:
                raise Conflict(f"discussion {discussion_id!r} was processed meanwhile")
            items = [tx.memories.insert_memory(scope, r, self._actor) for r in records]
            index(tx, scope, [i.id for i in items], vectors)
            mark = {"hash": last.hash, "key": list(last.key)}
            patch = SessionPatch(metadata={**session.metadata, TRACKER_KEY: mark})
            tx.sessions.update_session(scope, discussion_id, patch)
            used = llm.usage
            tx.variables.add_usage(
                scope, used.prompt_tokens, used.completion_tokens, used.requests, now_ms()
            )
        result.created = [i.id for i in items]
        return result

    def _vector_records(
        self, discussion_id: str, chunk: list[ChunkMessage], llm: MeteredLLM
    ) -> list[NewMemory]:
        messages = [Message(role=m.role, content=m.content) for m in chunk]
        reply = wilmer_prompt.build(messages).run(llm).value
        raw = "\n".join(f"{m.role}: {m.content}" for m in messages)
        records = [
            vector_memory(discussion_id, o.model_dump(), raw, chunk[-1].hash)
            for o in reply.memories
        ]
        for record in records:
            record.metadata["prompt_version"] = wilmer_prompt.PROMPT_VERSION
        return records

    # retrieval ------------------------------------------------------------------------
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
        scope = Scope(user_id=user_id, scope_id=scope_id)
        self._store.sessions.get_session(scope, discussion_id)
        filters = SearchFilters(session_id=discussion_id, types=[MemoryType.CHUNK])
        items, _ = self._store.memories.list_memories(scope, filters, n, 0)
        return list(reversed(items))

    def discussion_summary(
        self, discussion_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> DiscussionSummary:
        """The discussion's rolling summary (WilmerAI ``FullChatSummary``)."""
        scope = Scope(user_id=user_id, scope_id=scope_id)
        self._store.sessions.get_session(scope, discussion_id)
        item = self._rolling(scope, discussion_id)
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
        """WilmerAI ``VectorMemorySearch`` over the discussion's vector and chunk memories.

        ``keywords`` are ``;``-separated phrases (at most 60 are used), OR-combined and
        ranked by bm25. With ``recency`` each score is multiplied by
        ``2 ** (-age_days / half_life_days)`` (see ``recency_score``) before ranking.

            >>> m.search_discussion("disc-1", "Lisbon;team offsite", user_id="alice")
        """
        check_limit(limit, 0, maximum=1000)
        if half_life_days <= 0:
            raise InvalidInput(f"half_life_days must be positive, got {half_life_days}")
        scope = Scope(user_id=user_id, scope_id=scope_id)
        self._store.sessions.get_session(scope, discussion_id)
        terms = search_keywords(keywords)
        if not terms:
            return []
        filters = SearchFilters(session_id=discussion_id, types=_SEARCH_TYPES)
        fetch = max(limit * 5, 50) if recency else limit
        ranked = self._store.memories.keyword_search(scope, terms, filters, fetch)
        items = {m.id: m for m in self._store.memories.get_memories(scope, [i for i, _ in ranked])}
        hits = [
            SearchHit(memory=items[i], score=s, signals={"keyword": Signal(rank=rank, score=s)})
            for rank, (i, s) in enumerate(ranked)
            if i in items
        ]
        if recency:
            now = int(time.time() * 1000)
            for hit in hits:
                created = int(hit.memory.created_at.timestamp() * 1000)
                hit.score = recency_score(hit.score, created, now, half_life_days)
            hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:limit]
