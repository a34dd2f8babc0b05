"""``MemoryAPI``: the memory operations the library and the HTTP client share.

``omoide.Memory`` (in process) and ``omoide.Client`` (over HTTP) both implement it, and the
type checker verifies that each does (``_conforms`` in ``memory.py`` and ``client.py``), so code
written against ``MemoryAPI`` runs on either:

    >>> def remember(memory: MemoryAPI, text: str) -> None:
    ...     memory.add(text, user_id="alice")
    >>> remember(Memory(), "I like jasmine tea")
    >>> remember(Client("http://127.0.0.1:8000"), "I like jasmine tea")

An omitted ``user_id``/``scope_id`` means ``"default"`` on both (the client leaves it to the
server, which with a tenant-bound key means the key's tenant).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from omoide.extract import MemVariable
from omoide.types import (
    AddInput,
    ContextResult,
    Episode,
    HistoryEntry,
    Job,
    JobState,
    MemoryItem,
    MemoryType,
    Page,
    Scope,
    SearchFilters,
    SearchResult,
    Session,
)


class MemoryAPI(Protocol):
    """Memories, sessions and jobs of one omoide, in process or over HTTP."""

    # memories
    def add(
        self,
        messages: AddInput,
        *,
        user_id: str = ...,
        scope_id: str = ...,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        type: MemoryType = MemoryType.RAW,
        infer: bool | None = None,
        mem_variables: Sequence[MemVariable | dict[str, Any]] | None = None,
        enable_long_term_mem: bool = True,
        enable_user_profile: bool = True,
        enable_semantic_memory: bool = True,
        enable_episodic_memory: bool = True,
        enable_summary_memory: bool = True,
        enable_graph: bool = True,
        wait: bool = False,
        timeout: float = 60.0,
        timestamp: datetime | None = None,
    ) -> list[MemoryItem]: ...
    def search(
        self,
        query: str,
        *,
        user_id: str = ...,
        scope_id: str = ...,
        filters: SearchFilters | None = None,
        limit: int = 10,
        threshold: float | None = None,
        recipe: str | None = None,
    ) -> SearchResult: ...
    def get(self, memory_id: str, *, user_id: str = ..., scope_id: str = ...) -> MemoryItem: ...
    def get_all(
        self,
        *,
        user_id: str = ...,
        scope_id: str = ...,
        filters: SearchFilters | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> Page: ...
    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        *,
        user_id: str = ...,
        scope_id: str = ...,
    ) -> MemoryItem: ...
    def delete(self, memory_id: str, *, user_id: str = ..., scope_id: str = ...) -> None: ...
    def delete_all(self, *, user_id: str = ..., scope_id: str = ...) -> int: ...
    def history(
        self, memory_id: str, *, user_id: str = ..., scope_id: str = ...
    ) -> list[HistoryEntry]: ...
    def context(
        self,
        query: str,
        *,
        user_id: str = ...,
        scope_id: str = ...,
        session_id: str | None = None,
        token_budget: int = 2000,
        recent_turns: int | None = None,
        recipe: str | None = None,
        track_access: bool = True,
    ) -> ContextResult: ...

    # sessions and episodes
    def create_session(
        self,
        session_id: str,
        *,
        user_id: str = ...,
        scope_id: str = ...,
        name: str | None = None,
        project: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Session: ...
    def get_session(
        self, session_id: str, *, user_id: str = ..., scope_id: str = ...
    ) -> Session: ...
    def list_sessions(
        self, *, user_id: str = ..., scope_id: str = ..., limit: int = 100, offset: int = 0
    ) -> tuple[list[Session], int]: ...
    def update_session(
        self,
        session_id: str,
        *,
        user_id: str = ...,
        scope_id: str = ...,
        name: str | None = None,
        project: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> Session: ...
    def delete_session(
        self, session_id: str, *, user_id: str = ..., scope_id: str = ...
    ) -> int: ...
    def list_episodes(
        self,
        session_id: str,
        *,
        user_id: str = ...,
        scope_id: str = ...,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[Episode], int]: ...

    # jobs and health
    def list_jobs(
        self,
        *,
        scope: Scope | None = None,
        state: JobState | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Job]: ...
    def job_counts(self, *, scope: Scope | None = None) -> dict[str, int]: ...
    def retry_job(self, job_id: int, *, scope: Scope | None = None) -> Job: ...
    def health(self, *, probe_embedder: bool = False) -> dict[str, Any]: ...
    def close(self) -> None: ...
