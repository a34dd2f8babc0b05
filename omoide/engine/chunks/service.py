"""Chunk memories and session summaries of a session's messages, as durable jobs.

When an ``add`` stores an episode, its transaction also checks the trigger rules
(``chunking.plan_chunks``) and, if a chunk is due, enqueues one ``chunk`` job for
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
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias

from omoide.chunking import (
    MAX_CHUNKS_PER_PASS,
    ChunkMessage,
    chunk_messages,
    chunk_tokens,
    ledger_of,
    plan_chunks,
)
from omoide.config import KnowledgeConfig
from omoide.engine.extraction import steps
from omoide.engine.shared.embedding import Embedding, index
from omoide.engine.shared.job_signal import JobSignal
from omoide.errors import BackendError, Conflict, NotFound, OmoideError
from omoide.extract import summarize
from omoide.jobs.kinds import CHUNK, ChunkPayload
from omoide.jobs.queue import enqueue, has_pending
from omoide.llm import LLM
from omoide.llm.protocol import MeteredLLM, Usage
from omoide.store.ports.chunks import ChunkReads
from omoide.store.ports.jobs import JobQueue
from omoide.store.ports.sessions import SessionReads
from omoide.store.protocol import (
    ChunkCursor,
    NewChunk,
    NewMemory,
    SessionMessage,
    SessionPatch,
    Transactions,
    Tx,
)
from omoide.types import (
    DEFAULT_ID,
    ChunkResult,
    Job,
    MemoryItem,
    MemoryType,
    Message,
    Scope,
    now_ms,
)

log = logging.getLogger("omoide.chunks")

# A session's metadata as a write transaction reads it -> its new metadata (None: unchanged).
MetadataUpdate: TypeAlias = Callable[[dict[str, Any]], dict[str, Any] | None]


class ChunkTrigger:
    """Decides, in the transaction that stored an episode, whether a chunk job is due."""

    def __init__(self, knowledge: KnowledgeConfig) -> None:
        self._knowledge = knowledge

    def queue(self, tx: Tx, scope: Scope, session_id: str) -> int | None:
        """Enqueue a chunk job for the session if one is due and none waits; its id."""
        if not self._knowledge.chunks_enabled:
            return None
        payload = ChunkPayload(session_id=session_id)
        if has_pending(tx.jobs, scope, CHUNK, payload):
            return None
        exists, cursor = tx.chunks.chunk_state(scope, session_id)
        messages = tx.chunks.session_messages(scope, session_id, cursor)
        decision = plan_chunks(
            chunk_messages(messages), ledger_of(exists, cursor), self._knowledge.chunks
        )
        if not decision.triggered:
            return None
        return enqueue(tx.jobs, scope, CHUNK, payload)


class ChunkService:
    """Chunk passes (as ``chunk`` jobs), and resetting a session's chunks."""

    def __init__(
        self,
        session_reads: SessionReads,
        jobs: JobQueue,
        chunk_reads: ChunkReads,
        transactions: Transactions,
        embedding: Embedding,
        llm: LLM | None,
        signal: JobSignal,
        deps: steps.StepDeps,
        knowledge: KnowledgeConfig,
        *,
        actor: str,
        max_text_chars: int,
    ) -> None:
        self._session_reads = session_reads
        self._jobs = jobs
        self._chunk_reads = chunk_reads
        self._transactions = transactions
        self._embedding = embedding
        self._llm = llm
        self._signal = signal
        self._deps = deps
        self._knowledge = knowledge
        self._actor = actor
        self._max_text_chars = max_text_chars

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
        from then on), even when no chunk was due yet.

            >>> m.update_chunks("chat-1", user_id="alice").chunks
            ['3f2a...']
        """
        scope = Scope(user_id=user_id, scope_id=scope_id)
        self._session_reads.get_session(scope, session_id)  # NotFound before queueing anything
        with self._signal.waiting(scope, timeout):
            with self._transactions.transaction() as tx:
                payload = ChunkPayload(session_id=session_id, now=True)
                job_id = enqueue(tx.jobs, scope, CHUNK, payload)
            self._signal.wait([job_id], timeout)
        job = self._jobs.get_job(job_id)
        if job.result is not None and "skipped" in job.result:  # deleted while the pass waited
            raise NotFound(f"session {session_id!r} not found", id=session_id)
        if job.result is None or "mode" not in job.result:
            raise BackendError(
                f"chunk job {job_id} is {job.state.value}: {job.last_error or 'not finished'}"
            )
        return ChunkResult.model_validate(job.result)

    def reset_chunks(
        self, session_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> list[str]:
        """Forget a session's chunks, as if it had never been chunked: the chunk memories
        are invalidated (kept in their history), the ledger and chunk state are cleared, and
        the next pass re-chunks the whole session in consolidation mode (tokens only).
        Returns the invalidated chunk ids."""
        scope = Scope(user_id=user_id, scope_id=scope_id)
        with self._transactions.transaction() as tx:
            return tx.chunks.reset_chunks(scope, session_id, self._actor)

    def chunk_state(
        self, session_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> tuple[bool, ChunkCursor | None]:
        """Whether the session has chunk state (a pass has run on it), and where its last
        chunk ended (None before the first chunk). ``NotFound`` for an unknown session."""
        return self._chunk_reads.chunk_state(Scope(user_id=user_id, scope_id=scope_id), session_id)

    def session_messages(
        self,
        session_id: str,
        *,
        since: ChunkCursor | None = None,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> list[SessionMessage]:
        """The session's messages in conversation order: all, or from the episode holding
        ``since`` (a chunk's end: ``chunk_state``) on; the chunking rules
        (``omoide.chunking.plan_chunks``) skip what the ledger covers. ``NotFound`` for an
        unknown session.

            >>> [m.content for m in m.session_messages("chat-1", user_id="alice")]
        """
        scope = Scope(user_id=user_id, scope_id=scope_id)
        return self._chunk_reads.session_messages(scope, session_id, since)

    def write_session(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        chunks: Sequence[NewChunk] | None = None,
        memories: Sequence[NewMemory] = (),
        summary: NewMemory | None = None,
        link_summary: bool = False,
        extends: ChunkCursor | Literal["any"] | None = "any",
        update_metadata: MetadataUpdate | None = None,
        usage: Usage | None = None,
    ) -> list[MemoryItem]:
        """Write to one session in one transaction what the caller made itself (its own
        chunking, an import): ``chunks`` in the session's chunk ledger (each after the
        ledger's last, ``Conflict`` otherwise; even an empty list marks the session chunked,
        as a pass that found nothing due does; None leaves the ledger alone), then
        ``memories``, then ``summary`` (superseding the memory its ``supersedes`` names),
        their vectors (or an embed job), a change of the session's metadata and the LLM usage
        it cost. The session is created if needed. Returns the written memories in that order.

        ``extends``: the chunk end (``chunk_state``) the chunks were planned from; if the
        ledger moved meanwhile, ``Conflict`` and nothing is written (``"any"``: no check).
        ``link_summary``: the summary covers the chunks: it is written only with them and
        names the last one (``last_chunk_id`` in its metadata). ``update_metadata`` receives
        the session's metadata as the transaction reads it and returns the new metadata
        (None: unchanged); raising in it (``Conflict``) writes nothing. Queues no job but the
        embed job: no chunk pass, no extraction.
        """
        scope = Scope(user_id=user_id, scope_id=scope_id)
        texts = [c.memory.text for c in chunks or ()] + [m.text for m in memories]
        texts += [summary.text] if summary is not None else []
        vectors = self._embedding.try_embed(texts) if texts else None
        with self._transactions.transaction() as tx:
            if extends != "any" and tx.chunks.chunk_state(scope, session_id)[1] != extends:
                raise Conflict(f"session {session_id!r} was chunked meanwhile")
            session = tx.sessions.ensure_session(scope, session_id)
            metadata = update_metadata(session.metadata) if update_metadata else None
            items = []
            if chunks is not None:
                items = tx.chunks.record_chunks(scope, session_id, list(chunks), self._actor)
            linked = items[-1].id if link_summary and items else None
            items += [tx.memories.insert_memory(scope, m, self._actor) for m in memories]
            if summary is not None and (linked or not link_summary):
                if linked:
                    summary.metadata["last_chunk_id"] = linked
                items.append(self._write_summary(tx, scope, summary))
            index(tx, scope, [i.id for i in items], vectors)
            if metadata is not None:
                tx.sessions.update_session(scope, session_id, SessionPatch(metadata=metadata))
            if usage is not None:
                tx.variables.add_usage(
                    scope, usage.prompt_tokens, usage.completion_tokens, usage.requests, now_ms()
                )
        return items

    def _write_summary(self, tx: Tx, scope: Scope, summary: NewMemory) -> MemoryItem:
        if summary.supersedes is None:
            return tx.memories.insert_memory(scope, summary, self._actor)
        return tx.memories.supersede_memory(
            scope, summary.supersedes, summary, now_ms(), self._actor
        )

    def run_jobs(self, batch: Sequence[tuple[Job, ChunkPayload]]) -> dict[int, BaseException]:
        """The ``chunk`` handler: one pass per job, finished with its writes."""
        errors: dict[int, BaseException] = {}
        for job, payload in batch:
            scope = Scope(user_id=job.user_id, scope_id=job.scope_id)
            try:
                result = self._chunk_pass(scope, payload.session_id, job)
            except NotFound:
                with self._transactions.transaction() as tx:
                    tx.jobs.finish_job(job.id, {"skipped": "the session was deleted"})
            except OmoideError as exc:
                errors[job.id] = exc
            else:
                log.debug("chunk job %s: %s", job.id, result.reason)
        return errors

    def _chunk_pass(self, scope: Scope, session_id: str, job: Job) -> ChunkResult:
        exists, cursor = self._chunk_reads.chunk_state(scope, session_id)
        messages = self._chunk_reads.session_messages(scope, session_id, cursor)
        hashed = chunk_messages(messages)
        origin = {c.hash: m for c, m in zip(hashed, messages, strict=True)}
        decision = plan_chunks(hashed, ledger_of(exists, cursor), self._knowledge.chunks)
        due, later = decision.chunks[:MAX_CHUNKS_PER_PASS], decision.chunks[MAX_CHUNKS_PER_PASS:]
        result = ChunkResult(
            session_id=session_id,
            mode=decision.mode,
            pending=len(decision.pending) + sum(len(chunk) for chunk in later),
            reason=decision.reason + (f"; {len(later)} more chunks queued" if later else ""),
        )
        llm = MeteredLLM(self._llm) if self._llm is not None else None
        new = [self._new_chunk(session_id, c, origin, decision.mode, llm) for c in due]
        summary = self._rolling_summary(scope, session_id, job, due, llm)
        vectors = self._embedding.try_embed([c.memory.text for c in new]) if new else None
        with self._transactions.transaction() as tx:
            if tx.chunks.chunk_state(scope, session_id)[1] != cursor:
                raise Conflict(f"session {session_id!r} was chunked meanwhile")
            items = tx.chunks.record_chunks(scope, session_id, new, self._actor)
            index(tx, scope, [i.id for i in items], vectors)
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
            follow_up = ChunkPayload(session_id=session_id)
            if later and not has_pending(tx.jobs, scope, CHUNK, follow_up):
                enqueue(tx.jobs, scope, CHUNK, follow_up)  # a backlog goes a pass at a time
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
            words = max(20, int(self._knowledge.chunks.max_response_size_in_tokens / 1.35))
            text = summarize(llm, messages, None, max_words=words)
        return text[: self._max_text_chars]

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
        if not chunks or llm is None or self._knowledge.summary_trigger != "chunk":
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
        return ctx, steps.summary(self._deps, ctx, llm)
