"""Chunk memories and session summaries: the WilmerAI memory file, as durable jobs.

When an ``add`` stores an episode, its transaction also checks the trigger rules
(``omoide.engine.chunking.plan_chunks``) and, if a chunk is due, enqueues one ``chunk`` job for
the session (never two waiting at once). The job makes the chunks: with an LLM each chunk's
text is a summary of its messages (at most ``maxResponseSizeInTokens``); without one it is the
messages verbatim, one ``role: content`` line each, so chunking works offline. Chunks are
memories of type ``chunk``, embedded and searchable, each recorded in the ledger with the hash
of its last message, so no message is chunked twice. With ``summary_trigger="chunk"`` the job
also rolls the session's summary forward (the extraction pipeline's summary step, fed the
chunks' messages) and links it to the last chunk by id and hash.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from omoide.engine import steps
from omoide.engine.chunking import (
    ChunkMessage,
    Ledger,
    chunk_tokens,
    message_hash,
    plan_chunks,
)
from omoide.errors import BackendError, Conflict, NotFound, OmoideError
from omoide.extract import summarize
from omoide.llm import LLM
from omoide.llm.protocol import MeteredLLM
from omoide.store.protocol import ChunkCursor, NewChunk, NewMemory, SessionMessage, Store, Tx
from omoide.types import (
    DEFAULT_ID,
    ChunkResult,
    Job,
    MemoryType,
    Message,
    Scope,
    now_ms,
)

if TYPE_CHECKING:
    from omoide.engine.policy import KnowledgeConfig

log = logging.getLogger("omoide.chunks")

CHUNK_JOB = "chunk"
# A backlog (a long session chunked for the first time, or after a reset) is chunked a pass at
# a time, each pass a job of its own, so one job's LLM calls stay bounded.
MAX_CHUNKS_PER_PASS = 20


class ChunksMixin:
    store: Store
    llm: LLM | None
    actor: str
    max_text_chars: int

    if TYPE_CHECKING:  # Engine and its other mixins

        @property
        def knowledge(self) -> KnowledgeConfig: ...
        def _try_embed(self, texts: list[str]) -> Any: ...
        def _await_jobs(self, job_ids: list[int], timeout: float) -> None: ...
        def _wake_workers(self) -> None: ...
        def _extraction_failed(self, job: Job, exc: OmoideError, *, final: bool) -> None: ...

    # chunking ---------------------------------------------------------------------------
    def _queue_chunking(self, tx: Tx, scope: Scope, session_id: str) -> int | None:
        """In the transaction that stored an episode: enqueue a chunk job if one is due."""
        if not self.knowledge.chunks_enabled:
            return None
        payload = {"session_id": session_id}
        if tx.jobs.has_pending_job(scope, CHUNK_JOB, payload):
            return None
        exists, cursor = tx.ledger.chunk_state(scope, session_id)
        messages = tx.ledger.session_messages(scope, session_id, cursor)
        decision = plan_chunks(
            _chunk_messages(messages), _ledger(exists, cursor), self.knowledge.chunks
        )
        if not decision.triggered:
            return None
        return tx.jobs.enqueue_job(scope, CHUNK_JOB, payload)

    def update_chunks(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        timeout: float = 60.0,
    ) -> ChunkResult:
        """Run a chunking pass over a session now, through a durable job, and report it.

        A pass makes the chunks the trigger rules allow (at most ``MAX_CHUNKS_PER_PASS``; a
        further pass is queued for the rest) and gives the session chunk state (standard mode
        from then on), as WilmerAI's first memory check creates its file.

            >>> m.update_chunks("chat-1", user_id="alice").chunks
            ['3f2a...']
        """
        scope = Scope(user_id=user_id, scope_id=scope_id)
        self.store.sessions.get_session(scope, session_id)  # NotFound before queueing anything
        with self.store.transaction() as tx:
            job_id = tx.jobs.enqueue_job(scope, CHUNK_JOB, {"session_id": session_id, "now": True})
        self._await_jobs([job_id], timeout)
        job = self.store.jobs.get_job(job_id)
        if job.result is None or "mode" not in job.result:
            raise BackendError(
                f"chunk job {job_id} is {job.state.value}: {job.last_error or 'not finished'}"
            )
        return ChunkResult.model_validate(job.result)

    def reset_chunks(
        self, session_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> list[str]:
        """Forget a session's chunks (WilmerAI: delete the memory file): the chunk memories
        are invalidated (kept in their history), the ledger and chunk state are cleared, and
        the next pass re-chunks the whole session in consolidation mode (tokens only).
        Returns the invalidated chunk ids."""
        scope = Scope(user_id=user_id, scope_id=scope_id)
        with self.store.transaction() as tx:
            return tx.ledger.reset_chunks(scope, session_id, self.actor)

    def _run_chunk_jobs(self, jobs: list[Job]) -> None:
        for job in jobs:
            scope = Scope(user_id=job.user_id, scope_id=job.scope_id)
            session_id = str(job.payload.get("session_id"))
            try:
                result = self._chunk_pass(scope, session_id, job)
            except NotFound:
                with self.store.transaction() as tx:
                    tx.jobs.finish_job(job.id, {"skipped": "the session was deleted"})
            except BackendError as exc:
                self._extraction_failed(job, exc, final=not exc.retryable)
            except Conflict as exc:
                self._extraction_failed(job, exc, final=False)
            except OmoideError as exc:
                self._extraction_failed(job, exc, final=True)
            else:
                log.debug("chunk job %s: %s", job.id, result.reason)

    def _chunk_pass(self, scope: Scope, session_id: str, job: Job) -> ChunkResult:
        exists, cursor = self.store.ledger.chunk_state(scope, session_id)
        messages = self.store.ledger.session_messages(scope, session_id, cursor)
        hashed = _chunk_messages(messages)
        origin = {c.hash: m for c, m in zip(hashed, messages, strict=True)}
        decision = plan_chunks(hashed, _ledger(exists, cursor), self.knowledge.chunks)
        due, later = decision.chunks[:MAX_CHUNKS_PER_PASS], decision.chunks[MAX_CHUNKS_PER_PASS:]
        result = ChunkResult(
            session_id=session_id,
            mode=decision.mode,
            pending=len(decision.pending) + sum(len(chunk) for chunk in later),
            reason=decision.reason + (f"; {len(later)} more chunks queued" if later else ""),
        )
        llm = MeteredLLM(self.llm) if self.llm is not None else None
        new = [self._new_chunk(session_id, c, origin, decision.mode, llm) for c in due]
        summary = self._rolling_summary(scope, session_id, job, due, llm)
        vectors = self._try_embed([c.memory.text for c in new]) if new else None
        with self.store.transaction() as tx:
            if tx.ledger.chunk_state(scope, session_id)[1] != cursor:
                raise Conflict(f"session {session_id!r} was chunked meanwhile")
            items = tx.ledger.record_chunks(scope, session_id, new, self.actor)
            steps.index(tx, scope, [i.id for i in items], vectors)
            if summary is not None and items:
                ctx, apply = summary
                ctx.metadata["last_chunk_id"] = items[-1].id
                apply(tx)
                written = tx.memories.last_in_session(scope, session_id, MemoryType.SUMMARY)
                result.summary_id = written.id if written else None
            if llm is not None:
                used = llm.usage
                tx.variables.add_usage(
                    scope, used.prompt_tokens, used.completion_tokens, used.requests, now_ms()
                )
            result.chunks = [i.id for i in items]
            follow_up = {"session_id": session_id}
            if later and not tx.jobs.has_pending_job(scope, CHUNK_JOB, follow_up):
                tx.jobs.enqueue_job(scope, CHUNK_JOB, follow_up)  # a backlog goes a pass at a time
            tx.jobs.finish_job(job.id, result.model_dump())
        return result

    def _new_chunk(
        self,
        session_id: str,
        chunk: list[ChunkMessage],
        origin: dict[str, SessionMessage],
        mode: str,
        llm: MeteredLLM | None,
    ) -> NewChunk:
        last = origin[chunk[-1].hash]
        memory = NewMemory(
            text=self._chunk_text(llm, chunk),
            type=MemoryType.CHUNK,
            session_id=session_id,
            metadata={
                "chunk_hash": chunk[-1].hash,
                "first_hash": chunk[0].hash,
                "messages": len(chunk),
                "mode": mode,
                "summarized": llm is not None,
            },
            source_episodes=list(dict.fromkeys(origin[m.hash].episode_id for m in chunk)),
            valid_from_ms=last.created_ms,
        )
        cursor = ChunkCursor(chunk[-1].hash, last.created_ms, last.seq, last.index)
        return NewChunk(
            memory=memory, cursor=cursor, messages=len(chunk), tokens=chunk_tokens(chunk)
        )

    def _chunk_text(self, llm: MeteredLLM | None, chunk: list[ChunkMessage]) -> str:
        messages = [Message(role=m.role, content=m.content) for m in chunk]
        if llm is None:
            text = "\n".join(f"{m.role}: {m.content}" for m in messages)
        else:
            words = max(20, int(self.knowledge.chunks.max_response_size_in_tokens / 1.35))
            text = summarize(llm, messages, None, max_words=words)
        return text[: self.max_text_chars]

    def _rolling_summary(
        self,
        scope: Scope,
        session_id: str,
        job: Job,
        chunks: list[list[ChunkMessage]],
        llm: MeteredLLM | None,
    ) -> tuple[steps.Context, steps.Apply] | None:
        """The extraction pipeline's summary step over the new chunks' messages, when the
        summary follows chunks and an LLM is configured."""
        if not chunks or llm is None or self.knowledge.summary_trigger != "chunk":
            return None
        messages = [Message(role=m.role, content=m.content) for chunk in chunks for m in chunk]
        ctx = steps.Context(
            job=job,
            scope=scope,
            messages=messages,
            steps=["summary"],
            session_id=session_id,
            at_ms=now_ms(),
            metadata={"summary_kind": "rolling", "last_chunk_hash": chunks[-1][-1].hash},
        )
        return ctx, steps.summary(self, ctx, llm)  # type: ignore[arg-type]


def _chunk_messages(messages: list[SessionMessage]) -> list[ChunkMessage]:
    return [
        ChunkMessage(
            hash=message_hash(m.episode_id, m.index, m.role, m.content),
            content=m.content,
            role=m.role,
            key=(m.created_ms, m.seq, m.index),
        )
        for m in messages
    ]


def _ledger(exists: bool, cursor: ChunkCursor | None) -> Ledger:
    if cursor is None:
        return Ledger(exists=exists)
    key = (cursor.created_ms, cursor.seq, cursor.index)
    return Ledger(exists=exists, last_hash=cursor.last_hash, last_key=key)
