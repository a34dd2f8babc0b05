"""Memories: the retrievable items, their full-text rows, vectors and history.

``MemoryReads`` is read outside a transaction (``store.memories``);
``MemoryWrites`` is used inside one (``with store.transaction() as tx: tx.memories...``)
and sees the transaction's own writes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from omoide.types import (
    HistoryEntry,
    MemoryItem,
    MemoryType,
    Scope,
    SearchFilters,
)


@dataclass
class NewMemory:
    """A memory to insert. ``session_id`` is the session's external id."""

    text: str
    type: MemoryType = MemoryType.RAW
    metadata: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None
    context: str = ""
    source_episodes: list[str] = field(default_factory=list)
    valid_from_ms: int | None = None
    supersedes: str | None = None
    created_at_ms: int | None = None  # default now; a consolidation summary takes its episodes'


@dataclass
class Neighbour:
    id: str
    text: str
    context: str


class MemoryReads(Protocol):
    """Reads of memories."""

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> list[MemoryItem]: ...
    def list_memories(
        self, scope: Scope, filters: SearchFilters, limit: int, offset: int
    ) -> tuple[list[MemoryItem], int]: ...
    def latest_memories(
        self, scope: Scope, filters: SearchFilters, limit: int
    ) -> list[MemoryItem]: ...
    def keyword_search(
        self, scope: Scope, terms: Sequence[str], filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]: ...
    def vector_search(
        self, scope: Scope, vector: np.ndarray, filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]: ...
    def history(self, scope: Scope, memory_id: str) -> list[HistoryEntry]: ...
    def iter_memory_texts(self, batch: int) -> Iterator[list[tuple[Scope, str, str]]]: ...


class MemoryWrites(Protocol):
    """Writes of memories."""

    def insert_memory(self, scope: Scope, new: NewMemory, actor: str) -> MemoryItem: ...
    def supersede_memory(
        self, scope: Scope, old_id: str, new: NewMemory, at_ms: int, actor: str
    ) -> MemoryItem: ...
    def invalidate_memory(
        self, scope: Scope, memory_id: str, at_ms: int, actor: str
    ) -> MemoryItem: ...
    def last_in_session(
        self, scope: Scope, session_id: str, type_: MemoryType
    ) -> Neighbour | None: ...
    def set_context(self, scope: Scope, memory_id: str, context: str) -> None: ...
    def update_memory(
        self,
        scope: Scope,
        memory_id: str,
        text: str | None,
        metadata: dict[str, Any] | None,
        actor: str,
    ) -> MemoryItem: ...
    def delete_memory(self, scope: Scope, memory_id: str, actor: str) -> None: ...
    def put_vector(self, scope: Scope, memory_id: str, vector: np.ndarray) -> None: ...
    def clear_vectors(self) -> None: ...
