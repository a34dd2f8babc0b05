"""WilmerAI ``QualityMemory``: a discussion's new turns stored, and the memories WilmerAI's
trigger rules call for (see ``omoide.compat.wilmer.discussions`` for the mapping).

Discussion turns are written without queueing the engine's own chunk job: ``quality_memory``
is the one chunker of a discussion, so the request's thresholds are the ones that apply.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from omoide.chunking import (
    MAX_CHUNKS_PER_PASS,
    ChunkMessage,
    Ledger,
    chunk_messages,
    chunk_tokens,
    ledger_of,
    plan_chunks,
)
from omoide.compat.wilmer import prompt as wilmer_prompt
from omoide.compat.wilmer.discussions import rolling_summary
from omoide.compat.wilmer.formats import (
    TRACKER_KEY,
    text_block,
    translate_ledger,
    vector_memory,
    wilmer_hash,
)
from omoide.config import ChunkConfig
from omoide.errors import Conflict, FeatureDisabled, NotFound
from omoide.extract import summarize
from omoide.llm.protocol import MeteredLLM
from omoide.memory import Memory
from omoide.types import (
    DEFAULT_ID,
    ChunkCursor,
    MemoryType,
    Message,
    NewChunk,
    NewMemory,
    Scope,
    SessionMessage,
)
from omoide.validate import to_messages


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


class QualityMemoryService:
    """``QualityMemory`` over one ``Memory``: built by ``omoide.compat.wilmer.Wilmer``."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory
        self._llm = memory.llm
        self._max_text_chars = memory.max_text_chars

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
            self._memory.get_session(discussion_id, user_id=user_id, scope_id=scope_id)
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
            known = self._messages(scope, discussion_id, None)
        except NotFound:
            known = []
        seen = _overlap([(m.role, m.content) for m in known], [(m.role, m.content) for m in given])
        new = given[seen:]
        if not new:
            return 0
        # A transaction holds the database's write lock for every other writer: a first
        # QualityMemory of a long history goes in episodes of at most OMOIDE_MAX_MESSAGES.
        self._memory.record_turns(
            discussion_id,
            new,
            user_id=scope.user_id,
            scope_id=scope.scope_id,
            metadata={"source": "wilmer"},
        )
        return len(new)

    def _messages(
        self, scope: Scope, discussion_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]:
        return self._memory.session_messages(
            discussion_id, since=since, user_id=scope.user_id, scope_id=scope.scope_id
        )

    def _file_pass(
        self, scope: Scope, discussion_id: str, config: ChunkConfig, result: QualityMemoryResult
    ) -> QualityMemoryResult:
        exists, cursor = self._memory.chunk_state(
            discussion_id, user_id=scope.user_id, scope_id=scope.scope_id
        )
        messages = self._messages(scope, discussion_id, cursor)
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
        usage = llm.usage if llm is not None and llm.usage.requests else None
        items = self._memory.write_session(
            discussion_id,
            user_id=scope.user_id,
            scope_id=scope.scope_id,
            chunks=new,
            summary=summary,
            link_summary=True,
            extends=cursor,  # Conflict if the discussion was chunked meanwhile
            usage=usage,
        )
        if summary is not None and items and items[-1].type is MemoryType.SUMMARY:
            result.summary_id = items[-1].id
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
            text = text_block([m.content for m in messages])  # WilmerAI's text form
        else:
            words = max(20, int(config.max_response_size_in_tokens / 1.35))
            text = summarize(llm, messages, None, max_words=words)
        last = origin[chunk[-1].hash]
        memory = NewMemory(
            text=text[: self._max_text_chars],
            type=MemoryType.CHUNK,
            session_id=discussion_id,
            metadata={
                "chunk_hash": wilmer_hash(chunk[-1].content),  # WilmerAI's: its last message
                "wilmer_hash": wilmer_hash(chunk[-1].content),
                "first_hash": wilmer_hash(chunk[0].content),
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
        previous = rolling_summary(
            self._memory, discussion_id, user_id=scope.user_id, scope_id=scope.scope_id
        )
        messages = [Message(role=m.role, content=m.content) for c in chunks for m in c]
        words = max(50, int(config.max_response_size_in_tokens / 1.35))
        text = summarize(llm, messages, previous.text if previous else None, max_words=words)
        return NewMemory(
            text=text[: self._max_text_chars],
            type=MemoryType.SUMMARY,
            session_id=discussion_id,
            metadata={
                "summary_kind": "rolling",
                "last_chunk_hash": wilmer_hash(chunks[-1][-1].content),
            },
            supersedes=previous.id if previous else None,
        )

    def _vector_pass(
        self, scope: Scope, discussion_id: str, config: ChunkConfig, result: QualityMemoryResult
    ) -> QualityMemoryResult:
        assert self._llm is not None  # checked by quality_memory
        session = self._memory.get_session(
            discussion_id, user_id=scope.user_id, scope_id=scope.scope_id
        )
        tracker = session.metadata.get(TRACKER_KEY)
        since = None
        if isinstance(tracker, dict):
            since = ChunkCursor(tracker["hash"], *tracker["key"])
        messages = self._messages(scope, discussion_id, since)
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
        last = due[-1][-1]

        def advance(metadata: dict[str, Any]) -> dict[str, Any]:
            if metadata.get(TRACKER_KEY) != tracker:
                raise Conflict(f"discussion {discussion_id!r} was processed meanwhile")
            mark = {
                "hash": last.hash,
                "key": list(last.key),
                "wilmer_hash": wilmer_hash(last.content),
            }
            return {**metadata, TRACKER_KEY: mark}

        items = self._memory.write_session(
            discussion_id,
            user_id=scope.user_id,
            scope_id=scope.scope_id,
            memories=records,
            update_metadata=advance,
            usage=llm.usage,
        )
        result.created = [i.id for i in items]
        return result

    def _vector_records(
        self, discussion_id: str, chunk: list[ChunkMessage], llm: MeteredLLM
    ) -> list[NewMemory]:
        messages = [Message(role=m.role, content=m.content) for m in chunk]
        reply = wilmer_prompt.build(messages).run(llm).value
        raw = text_block([m.content for m in messages])
        records = [
            vector_memory(discussion_id, o.model_dump(), raw, wilmer_hash(chunk[-1].content))
            for o in reply.memories
        ]
        for record in records:
            record.metadata["prompt_version"] = wilmer_prompt.PROMPT_VERSION
        return records
