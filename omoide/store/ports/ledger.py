"""The chunk ledger (WilmerAI-style chunks of a session), access tracking, consolidation.

``LedgerReads`` is read outside a transaction (``store.ledger``);
``LedgerWrites`` is used inside one (``with store.transaction() as tx: tx.ledger...``)
and sees the transaction's own writes. The reads that ``LedgerWrites`` repeats
(``chunk_state``, ``session_messages``, ``consolidation_plan``) exist so a writer can re-check,
inside its transaction, what it computed from an earlier read outside it.

Tenant rule: every method takes a ``Scope`` and touches only that tenant's sessions, episodes,
memories and graph rows; a session of another tenant is ``NotFound``.

The optimistic pattern both chunking and consolidation follow (and a backend must make safe):
read outside a transaction, do the slow work (LLM, embeddings), then in one transaction re-read
(``chunk_state`` / ``consolidation_plan``), compare, and write only if nothing moved. The
backend re-checks what it can itself: ``record_chunks`` refuses chunks that do not extend the
ledger, ``apply_consolidation`` refuses episodes consolidated meanwhile. Write transactions are
serialised (SQLite: ``BEGIN IMMEDIATE``), so a re-read in the transaction cannot change before
its commit; a backend with weaker isolation must lock the session's rows for that.

Message positions: a session's messages are ordered by their episode's ``(created_ms, seq)``
(``seq`` the episode's insertion order) and their ``index`` in it; a ``ChunkCursor`` is such a
position, compared as that tuple.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from omoide.types import ChunkCursor as ChunkCursor  # the ledger's values: omoide.types
from omoide.types import (
    MemoryItem,
    Scope,
)
from omoide.types import NewChunk as NewChunk
from omoide.types import SessionMessage as SessionMessage


@dataclass(frozen=True)
class EpisodeStat:
    """What consolidation ranks an episode by: age, accesses, and whether it is done."""

    episode_id: str
    created_ms: int
    access_count: int
    last_accessed_ms: int | None
    consolidated: bool


@dataclass(frozen=True)
class TenantActivity:
    """A tenant's memories by use: how many, how many superseded (no longer valid), and how
    many inactive (last used, by an access or a change, before the cutoff asked for)."""

    scope: Scope
    total: int
    superseded: int
    inactive: int


@dataclass
class ConsolidationPlan:
    """What consolidating ``episodes`` changes, as the store sees it now."""

    episodes: list[str]
    memories: list[str] = field(default_factory=list)
    vectors: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    relationships: list[str] = field(default_factory=list)


class LedgerReads(Protocol):
    """Reads of the chunk ledger, session messages and consolidation plans."""

    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]:
        """Whether the session is chunked in standard mode (WilmerAI: "the memory file
        exists"), and the cursor after its last recorded chunk (None before the first).
        ``NotFound`` if the tenant has no such session."""
        ...

    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]:
        """The session's messages in order; with ``since``, from the episode holding that
        position on (that episode's earlier messages included: the caller skips up to the
        cursor by hash). A message without a role reads as ``user``. ``NotFound`` if no such
        session."""
        ...

    def episode_stats(self, scope: Scope, session_id: str) -> list[EpisodeStat]:
        """Every episode of the session, oldest first, with its access counters and whether
        it is consolidated. ``NotFound`` if no such session."""
        ...

    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan:
        """What consolidating these episodes would change now (duplicates dropped, unknown
        ids contribute nothing; no error): the valid verbatim (raw, episodic) memories backed
        only by them, which of those have vectors, the extracted entities all of whose open
        provenance is among them, and those entities' relationships. Facts, profile entries,
        chunks and summaries are distilled knowledge and never in a plan."""
        ...

    def tenant_activity(
        self, before_ms: int, user_id: str | None, scope_id: str | None
    ) -> list[TenantActivity]:
        """Each tenant of ``user_id`` / ``scope_id`` (``None``: any) that has memories, ordered
        by user then scope, with its counts; inactive means the later of the last access
        (``touch``) and the last change is before ``before_ms``. Global: an operator's view
        across tenants when ``user_id`` is None."""
        ...

    def inactive_memories(self, scope: Scope, before_ms: int, limit: int) -> list[str]:
        """Ids of up to ``limit`` of the tenant's memories inactive since ``before_ms`` (as in
        ``tenant_activity``), least recently used first, then by id."""
        ...


class LedgerWrites(Protocol):
    """Writes of the ledger, access counters and consolidations, in the caller's
    transaction."""

    def touch(
        self, scope: Scope, memory_ids: Sequence[str], episode_ids: Sequence[str], at_ms: int
    ) -> int:
        """Count one access at ``at_ms`` on each memory, on the episodes they come from, and
        on each episode given (each episode once); return how many memories and episodes
        changed. Increments in place: concurrent touches all count. Ids not the tenant's are
        ignored."""
        ...

    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]:
        """``LedgerReads.chunk_state`` inside the transaction (the re-check before
        ``record_chunks``)."""
        ...

    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]:
        """``LedgerReads.session_messages`` inside the transaction."""
        ...

    def record_chunks(
        self, scope: Scope, session_id: str, chunks: Sequence[NewChunk], actor: str
    ) -> list[MemoryItem]:
        """Insert each chunk's memory (as ``MemoryWrites.insert_memory``) with its ledger
        row, in order, mark the session chunked, and return the memories.

        Re-checked inside the transaction: every chunk must end after the ledger's last
        recorded chunk and after the chunk before it, and no two chunks of a session may end
        at the same message (hash). ``Conflict`` otherwise, so of two runs that planned from
        the same cursor exactly one records its chunks. ``NotFound`` if no such session.
        """
        ...

    def reset_chunks(self, scope: Scope, session_id: str, actor: str) -> list[str]:
        """Forget the session's chunk state and ledger and invalidate its valid chunk
        memories (each with a ``DELETE`` history entry; rows kept); return their ids. The
        next pass starts over in consolidation mode. ``NotFound`` if no such session."""
        ...

    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan:
        """``LedgerReads.consolidation_plan`` inside the transaction: compute the plan
        handed to ``apply_consolidation`` here, in the same transaction."""
        ...

    def apply_consolidation(
        self,
        scope: Scope,
        session_id: str,
        consolidation_id: str,
        plan: ConsolidationPlan,
        report: dict[str, Any],
        actor: str,
    ) -> None:
        """Carry out ``plan`` and record it as ``consolidation_id`` with ``report`` (its
        ``summary_id`` is what a revert invalidates).

        The plan's memories are invalidated (``DELETE`` history each, rows kept) and lose
        their vectors; its episodes are marked consolidated (kept); its entities are deleted
        with their relationships after a snapshot of those rows is stored with the record.
        Only the episodes are re-checked: ``Conflict`` if any is consolidated already, gone,
        or not in this session; the rest is trusted, hence computing the plan in this
        transaction. ``NotFound`` if no such session.
        """
        ...

    def revert_consolidation(
        self, scope: Scope, consolidation_id: str, actor: str
    ) -> dict[str, Any]:
        """Undo a consolidation: its memories that are still invalid become valid again
        (``UPDATE`` history each; they need re-embedding), its episodes unconsolidated, its
        summary invalidated, and the swept entities restored (merged into a same-named one
        created since) with their provenance and the relationships whose ends exist.

        Returns ``{"memories": restored ids, "entities": restored or merged ids,
        "summary_id"}``. ``NotFound`` if not the tenant's; ``Conflict`` if already reverted.
        """
        ...
