"""Summaries of a session: memories of type ``summary``.

A session's rolling summary is its newest valid summary: the extraction job's summary step
(``summary_trigger="episode"``) or the chunk job (``"chunk"``) supersedes it with its next
version, and ``create_summary`` stores a new newest one. Consolidation adds summaries dated
like the episodes they replace, so they never become the rolling one. The CRUD here is the
memory CRUD with a type check.
"""

from __future__ import annotations

from typing import Any

from omoide.engine.memories import MemoryService
from omoide.engine.shared.embedding import Embedding, index
from omoide.engine.shared.events import MemoryEvents
from omoide.engine.shared.job_signal import JobSignal
from omoide.errors import NotFound
from omoide.store.ports.memories import MemoryReads
from omoide.store.ports.sessions import SessionReads
from omoide.store.protocol import NewMemory, Transactions
from omoide.types import DEFAULT_ID, MemoryItem, MemoryType, Page, Scope, SearchFilters
from omoide.validate import check_limit, check_text, check_value


class SummaryService:
    def __init__(
        self,
        memory_reads: MemoryReads,
        session_reads: SessionReads,
        transactions: Transactions,
        embedding: Embedding,
        memories: MemoryService,
        signal: JobSignal,
        *,
        actor: str,
        max_text_chars: int,
        events: MemoryEvents | None = None,
    ) -> None:
        self._events = events or MemoryEvents()
        self._memory_reads = memory_reads
        self._session_reads = session_reads
        self._transactions = transactions
        self._embedding = embedding
        self._memories = memories
        self._signal = signal
        self._actor = actor
        self._max_text_chars = max_text_chars

    def list_summaries(
        self,
        session_id: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        include_history: bool = False,
        limit: int = 100,
        offset: int = 0,
    ) -> Page:
        """A session's summaries, newest first: the rolling summary (the newest) and any
        made by consolidation or ``create_summary``; ``include_history`` adds the versions
        the rolling summary has superseded."""
        check_limit(limit, offset)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        self._session_reads.get_session(scope, session_id)
        filters = SearchFilters(
            session_id=session_id, types=[MemoryType.SUMMARY], include_invalid=include_history
        )
        items, total = self._memory_reads.list_memories(scope, filters, limit, offset)
        return Page(items=items, total=total, limit=limit, offset=offset)

    def get_summary(
        self, summary_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> MemoryItem:
        item = self._memories.get(summary_id, user_id=user_id, scope_id=scope_id)
        if item.type is not MemoryType.SUMMARY:
            raise NotFound(f"summary {summary_id!r} not found", id=summary_id)
        return item

    def create_summary(
        self,
        session_id: str,
        text: str,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
        metadata: dict[str, Any] | None = None,
    ) -> MemoryItem:
        """Store a summary of a session (created if needed); being the newest, it becomes
        the session's rolling summary, which later updates supersede."""
        check_text(text, self._max_text_chars)
        check_value(metadata, "metadata")  # a lone surrogate stored would break every listing
        check_value([user_id, scope_id, session_id], "ids")
        scope = Scope(user_id=user_id, scope_id=scope_id)
        new = NewMemory(
            text=text,
            type=MemoryType.SUMMARY,
            session_id=session_id,
            metadata={"summary_kind": "manual", **(metadata or {})},
        )
        vectors = self._embedding.try_embed([text])
        with self._transactions.transaction() as tx:
            tx.sessions.ensure_session(scope, session_id)
            item = tx.memories.insert_memory(scope, new, self._actor)
            index(tx, scope, [item.id], vectors)
        self._signal.wake()
        self._events.written(scope, {MemoryType.SUMMARY})
        return self._memories.get(item.id, user_id=user_id, scope_id=scope_id)

    def update_summary(
        self,
        summary_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        user_id: str = DEFAULT_ID,
        scope_id: str = DEFAULT_ID,
    ) -> MemoryItem:
        """Change a summary's text and/or metadata; its history keeps the old text."""
        self.get_summary(summary_id, user_id=user_id, scope_id=scope_id)
        return self._memories.update(summary_id, text, metadata, user_id=user_id, scope_id=scope_id)

    def delete_summary(
        self, summary_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> None:
        self.get_summary(summary_id, user_id=user_id, scope_id=scope_id)
        self._memories.delete(summary_id, user_id=user_id, scope_id=scope_id)
