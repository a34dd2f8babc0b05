"""The storage seam: what the engine needs from a backend, and nothing else.

A backend implements ``Store`` (reads, job claiming, maintenance) and hands out ``Tx`` objects
from ``Store.transaction()``: everything written through one ``Tx`` commits together or not at
all, so a memory, its full-text row, its vector or embed job, and its history are never split.
Every method takes the tenant ``Scope``; no method returns rows of another tenant.
``tests/store/test_contract.py`` is the executable definition of this protocol.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from omoide.types import (
    Entity,
    Episode,
    HistoryEntry,
    Job,
    JobState,
    MemoryItem,
    MemoryType,
    Message,
    Project,
    Relationship,
    Scope,
    SearchFilters,
    Session,
    Subgraph,
    TokenUsage,
    Variable,
    VariableValue,
)


class Capability(StrEnum):
    KEYWORD_SEARCH = "keyword_search"
    VECTOR_SEARCH = "vector_search"
    BACKUP = "backup"


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
class SessionPatch:
    """Fields to change on a session; ``None`` means "leave as it is"."""

    name: str | None = None
    project: str | None = None
    metadata: dict[str, Any] | None = None


@dataclass
class Neighbour:
    id: str
    text: str
    context: str


class ExtractionTx(Protocol):
    """The writes of LLM extraction: fact versions, job steps, the graph, variables, usage."""

    def supersede_memory(
        self, scope: Scope, old_id: str, new: NewMemory, at_ms: int, actor: str
    ) -> MemoryItem: ...
    def invalidate_memory(
        self, scope: Scope, memory_id: str, at_ms: int, actor: str
    ) -> MemoryItem: ...
    def claim_step(self, job_id: int, step: str, lease_ms: int) -> bool: ...
    def record_step(self, job_id: int, step: str, record: dict[str, Any]) -> None: ...
    def fail_job_now(
        self, job_id: int, error: str, result: dict[str, Any] | None = None
    ) -> None: ...
    def upsert_entity(
        self,
        scope: Scope,
        name: str,
        type_: str,
        at_ms: int,
        episode_id: str | None = None,
        source: str = "extraction",
    ) -> Entity: ...
    def put_entity_vector(self, scope: Scope, entity_id: str, vector: np.ndarray) -> None: ...
    def upsert_relationship(
        self, scope: Scope, from_id: str, to_id: str, label: str, notes: str | None, at_ms: int
    ) -> Relationship: ...
    def delete_entity(self, scope: Scope, entity_id: str) -> None: ...
    def set_variables(
        self, scope: Scope, values: dict[str, tuple[VariableValue, str]], at_ms: int
    ) -> None: ...
    def delete_variables(self, scope: Scope, names: Sequence[str]) -> list[str]: ...
    def add_usage(
        self, scope: Scope, prompt_tokens: int, completion_tokens: int, requests: int, at_ms: int
    ) -> None: ...


class ExtractionStore(Protocol):
    """The reads of LLM extraction's results."""

    def get_episode(self, scope: Scope, episode_id: str) -> Episode: ...
    def get_job(self, job_id: int) -> Job: ...
    def job_steps(self, job_id: int) -> dict[str, dict[str, Any]]: ...
    def get_entity(self, scope: Scope, entity_id: str) -> Entity: ...
    def list_entities(
        self,
        scope: Scope,
        type_: str | None,
        limit: int,
        offset: int,
        mentioned_in: str | None = None,
    ) -> tuple[list[Entity], int]: ...
    def list_relationships(
        self, scope: Scope, entity_id: str | None, limit: int, offset: int
    ) -> tuple[list[Relationship], int]: ...
    def entity_vector_search(
        self, scope: Scope, vector: np.ndarray, limit: int
    ) -> list[tuple[str, float]]: ...
    def iter_entity_texts(self, batch: int) -> Iterator[list[tuple[Scope, str, str]]]: ...
    def get_variables(self, scope: Scope, names: Sequence[str] | None) -> list[Variable]: ...
    def token_usage(self, scope: Scope | None) -> TokenUsage: ...


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


class KnowledgeStore(Protocol):
    """Reads of graph traversal, chunking and consolidation."""

    def neighborhood(
        self, scope: Scope, entity_id: str, depth: int, max_nodes: int
    ) -> Subgraph: ...
    def neighbors(self, scope: Scope, entity_ids: Sequence[str], max_nodes: int) -> Subgraph: ...
    def find_entities(
        self, scope: Scope, text: str, limit: int, *, contained: bool = False
    ) -> list[Entity]: ...
    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]: ...
    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]: ...
    def episode_stats(self, scope: Scope, session_id: str) -> list[EpisodeStat]: ...
    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan: ...


class KnowledgeTx(Protocol):
    """Writes of access tracking, chunking and consolidation. The reads mirror the store's but
    see the transaction's own writes."""

    def touch(
        self, scope: Scope, memory_ids: Sequence[str], episode_ids: Sequence[str], at_ms: int
    ) -> int: ...
    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]: ...
    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]: ...
    def has_pending_job(self, scope: Scope, kind: str, payload: dict[str, Any]) -> bool: ...
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


class Tx(ExtractionTx, KnowledgeTx, Protocol):
    """Writes of one unit of work. Obtained only from ``Store.transaction()``."""

    def ensure_session(self, scope: Scope, session_id: str) -> Session: ...
    def create_session(
        self,
        scope: Scope,
        session_id: str,
        name: str | None,
        project: str | None,
        metadata: dict[str, Any],
    ) -> Session: ...
    def update_session(self, scope: Scope, session_id: str, patch: SessionPatch) -> Session: ...
    def delete_session(self, scope: Scope, session_id: str) -> int: ...
    def upsert_project(
        self, scope: Scope, name: str, description: str | None, isolated: bool
    ) -> Project: ...
    def insert_episode(self, scope: Scope, session_id: str, messages: list[Message]) -> Episode: ...
    def insert_memory(self, scope: Scope, new: NewMemory, actor: str) -> MemoryItem: ...
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
    def delete_scope(self, scope: Scope) -> int: ...
    def delete_everything(self) -> None: ...
    def put_vector(self, scope: Scope, memory_id: str, vector: np.ndarray) -> None: ...
    def enqueue_job(
        self, scope: Scope, kind: str, payload: dict[str, Any], max_attempts: int = 5
    ) -> int: ...
    def finish_job(self, job_id: int, result: dict[str, Any] | None = None) -> None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def clear_vectors(self) -> None: ...
    # projects (nexusAI): ``fields`` holds only the columns to set, already validated
    def insert_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project: ...
    def update_project(self, scope: Scope, name: str, fields: Mapping[str, Any]) -> Project: ...
    def delete_project(self, scope: Scope, name: str) -> int: ...
    def delete_episode(self, scope: Scope, episode_id: str) -> int: ...


class Store(ExtractionStore, KnowledgeStore, Protocol):
    """A tenant-scoped memory store. See the module docstring.

    ``history`` returns the entries of every version of a fact (memories linked by
    ``supersedes``), oldest first.
    """

    capabilities: frozenset[Capability]
    location: str

    def transaction(self) -> AbstractContextManager[Tx]: ...
    def close(self) -> None: ...
    def schema_version(self) -> int: ...
    def get_meta(self, key: str) -> str | None: ...

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

    def get_session(self, scope: Scope, session_id: str) -> Session: ...
    def list_sessions(self, scope: Scope, limit: int, offset: int) -> tuple[list[Session], int]: ...
    def list_episodes(
        self, scope: Scope, session_id: str, limit: int, offset: int
    ) -> tuple[list[Episode], int]: ...

    def claim_jobs(self, limit: int, lease_ms: int) -> list[Job]: ...
    def fail_job(self, job_id: int, error: str, backoff_ms: int) -> JobState: ...
    def retry_job(self, scope: Scope | None, job_id: int) -> Job: ...
    def list_jobs(
        self, scope: Scope | None, state: JobState | None, limit: int, offset: int
    ) -> list[Job]: ...
    def job_counts(self, scope: Scope | None) -> dict[str, int]: ...

    def iter_memory_texts(self, batch: int) -> Iterator[list[tuple[Scope, str, str]]]: ...
    def stats(self) -> dict[str, int]: ...
    def backup(self, dest: Path) -> None: ...

    # projects (nexusAI)
    def get_project(self, scope: Scope, name: str) -> Project: ...
    def list_projects(self, scope: Scope, limit: int, offset: int) -> tuple[list[Project], int]: ...
