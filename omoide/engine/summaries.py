"""Summaries of a session: memories of type ``summary``.

A session's rolling summary is its newest valid summary: the extraction job's summary step
(``summary_trigger="episode"``) or the chunk job (``"chunk"``) supersedes it with its next
version, and ``create_summary`` stores a new newest one. Consolidation adds summaries dated
like the episodes they replace, so they never become the rolling one. The CRUD here is the
memory CRUD with a type check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from omoide.engine import steps
from omoide.errors import NotFound
from omoide.store.protocol import NewMemory, Store
from omoide.types import DEFAULT_ID, MemoryItem, MemoryType, Page, Scope, SearchFilters
from omoide.validate import check_limit, check_text


class SummariesMixin:
    store: Store
    actor: str
    max_text_chars: int

    if TYPE_CHECKING:  # Engine

        def _try_embed(self, texts: list[str]) -> Any: ...
        def _wake_workers(self) -> None: ...
        def get(self, memory_id: str, *, user_id: str, scope_id: str) -> MemoryItem: ...
        def update(
            self,
            memory_id: str,
            text: str | None = None,
            metadata: dict[str, Any] | None = None,
            *,
            user_id: str,
            scope_id: str,
        ) -> MemoryItem: ...
        def delete(self, memory_id: str, *, user_id: str, scope_id: str) -> None: ...

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
        self.store.sessions.get_session(scope, session_id)
        filters = SearchFilters(
            session_id=session_id, types=[MemoryType.SUMMARY], include_invalid=include_history
        )
        items, total = self.store.memories.list_memories(scope, filters, limit, offset)
        return Page(items=items, total=total, limit=limit, offset=offset)

    def get_summary(
        self, summary_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> MemoryItem:
        item = self.get(summary_id, user_id=user_id, scope_id=scope_id)
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
        check_text(text, self.max_text_chars)
        scope = Scope(user_id=user_id, scope_id=scope_id)
        new = NewMemory(
            text=text,
            type=MemoryType.SUMMARY,
            session_id=session_id,
            metadata={"summary_kind": "manual", **(metadata or {})},
        )
        vectors = self._try_embed([text])
        with self.store.transaction() as tx:
            tx.sessions.ensure_session(scope, session_id)
            item = tx.memories.insert_memory(scope, new, self.actor)
            steps.index(tx, scope, [item.id], vectors)
        self._wake_workers()
        return self.get(item.id, user_id=user_id, scope_id=scope_id)

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
        return self.update(summary_id, text, metadata, user_id=user_id, scope_id=scope_id)

    def delete_summary(
        self, summary_id: str, *, user_id: str = DEFAULT_ID, scope_id: str = DEFAULT_ID
    ) -> None:
        self.get_summary(summary_id, user_id=user_id, scope_id=scope_id)
        self.delete(summary_id, user_id=user_id, scope_id=scope_id)
