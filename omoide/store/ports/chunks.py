"""A session's chunks: its messages in order, its chunk ledger, and recording chunks.

``ChunkReads`` is read outside a transaction (``store.chunks``); ``ChunkWrites`` is used inside
one (``with store.transaction() as tx: tx.chunks...``) and sees the transaction's own writes.
The reads ``ChunkWrites`` repeats (``chunk_state``, ``session_messages``) exist so a writer can
re-check, inside its transaction, what it computed from an earlier read outside it.

Tenant rule: every method takes a ``Scope`` and touches only that tenant's sessions, episodes
and memories; a session of another tenant is ``NotFound``.

The optimistic pattern chunking follows (and a backend must make safe): read outside a
transaction, do the slow work (LLM, embeddings), then in one transaction re-read
(``chunk_state``), compare, and write only if nothing moved. The backend re-checks what it can
itself: ``record_chunks`` refuses chunks that do not extend the ledger. Write transactions are
serialised (SQLite: ``BEGIN IMMEDIATE``), so a re-read in the transaction cannot change before
its commit; a backend with weaker isolation must lock the session's rows for that.

Message positions: a session's messages are ordered by their episode's ``(created_ms, seq)``
(``seq`` the episode's insertion order) and their ``index`` in it; a ``ChunkCursor`` is such a
position, compared as that tuple.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from omoide.types import ChunkCursor as ChunkCursor  # the ports' values: omoide.types
from omoide.types import (
    MemoryItem,
    Scope,
)
from omoide.types import NewChunk as NewChunk
from omoide.types import SessionMessage as SessionMessage


class ChunkReads(Protocol):
    """Reads of a session's chunk ledger and messages."""

    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]:
        """Whether the session is chunked in standard mode (it has chunk state, even before
        its first chunk), and the cursor after its last recorded chunk (None before the first).
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


class ChunkWrites(Protocol):
    """Writes of the chunk ledger, in the caller's transaction."""

    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]:
        """``ChunkReads.chunk_state`` inside the transaction (the re-check before
        ``record_chunks``)."""
        ...

    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]:
        """``ChunkReads.session_messages`` inside the transaction."""
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
