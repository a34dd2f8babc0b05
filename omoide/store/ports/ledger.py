"""The chunk ledger (WilmerAI-style chunks of a session), access tracking, consolidation.

``LedgerReads`` is read outside a transaction (``store.ledger``);
``LedgerWrites`` is used inside one (``with store.transaction() as tx: tx.ledger...``)
and sees the transaction's own writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from omoide.store.ports.memories import NewMemory
from omoide.types import (
    MemoryItem,
    Scope,
)


@dataclass(frozen=True)
class SessionMessage:
    """One message of a session's episodes, in conversation order (``created_ms``, ``seq``,
    ``index``): ``seq`` is the episode's insertion order, ``index`` the message's place in it."""

    episode_id: str
    created_ms: int
    seq: int
    index: int
    role: str
    content: str


@dataclass(frozen=True)
class ChunkCursor:
    """Where a session's last chunk ended: the hash and position of its last message."""

    last_hash: str
    created_ms: int
    seq: int
    index: int


@dataclass(frozen=True)
class NewChunk:
    """A chunk to record in the ledger together with its memory."""

    memory: NewMemory
    cursor: ChunkCursor
    messages: int
    tokens: int


@dataclass(frozen=True)
class EpisodeStat:
    episode_id: str
    created_ms: int
    access_count: int
    last_accessed_ms: int | None
    consolidated: bool


@dataclass
class ConsolidationPlan:
    """What consolidating ``episodes`` changes, as the store sees it now."""

    episodes: list[str]
    memories: list[str] = field(default_factory=list)
    vectors: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    relationships: list[str] = field(default_factory=list)


class LedgerReads(Protocol):
    """Reads of ledger."""

    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]: ...
    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]: ...
    def episode_stats(self, scope: Scope, session_id: str) -> list[EpisodeStat]: ...
    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan: ...


class LedgerWrites(Protocol):
    """Writes of ledger."""

    def touch(
        self, scope: Scope, memory_ids: Sequence[str], episode_ids: Sequence[str], at_ms: int
    ) -> int: ...
    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]: ...
    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]: ...
    def record_chunks(
        self, scope: Scope, session_id: str, chunks: Sequence[NewChunk], actor: str
    ) -> list[MemoryItem]: ...
    def reset_chunks(self, scope: Scope, session_id: str, actor: str) -> list[str]: ...
    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan: ...
    def apply_consolidation(
        self,
        scope: Scope,
        session_id: str,
        consolidation_id: str,
        plan: ConsolidationPlan,
        report: dict[str, Any],
        actor: str,
    ) -> None: ...
    def revert_consolidation(
        self, scope: Scope, consolidation_id: str, actor: str
    ) -> dict[str, Any]: ...
