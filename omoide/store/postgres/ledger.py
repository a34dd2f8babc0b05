"""PostgreSQL side of chunking and access tracking: the chunk ledger, session messages, touches.

The ledger is append-only: one row per chunk memory with the hash and position of the last
message it covers, unique per session. ``record_chunks`` and ``reset_chunks`` lock the
session's row first, so the re-check of the ledger's last cursor sees every chunk a concurrent
writer committed (SQLite gets the same from its single writer).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from omoide.errors import Conflict
from omoide.store.ports.ledger import (
    ChunkCursor,
    ConsolidationPlan,
    EpisodeStat,
    NewChunk,
    SessionMessage,
    TenantActivity,
)
from omoide.store.postgres import activity, consolidation
from omoide.store.postgres.db import Conn, Database
from omoide.store.postgres.memory_writes import PostgresMemoryWrites
from omoide.store.postgres.shared import session_pk, write_history
from omoide.types import HistoryEvent, MemoryItem, MemoryType, Scope, now_ms

_LAST = (
    "SELECT last_hash, last_at, last_seq, last_index FROM chunk_ledger"
    " WHERE user_id = %s AND session_id = %s ORDER BY id DESC LIMIT 1"
)


def chunk_state(
    conn: Conn, scope: Scope, session_id: str, *, lock: bool = False
) -> tuple[bool, ChunkCursor | None]:
    """Whether the session has chunk state, and where its last chunk ended. ``lock`` (in a
    write transaction) takes the session's row lock first, so the answer stays true until
    commit: a concurrent chunking pass waits, then sees this one's cursor."""
    pk = session_pk(conn, scope, session_id, lock=lock)
    args = (scope.user_id, pk)
    exists = conn.execute(
        "SELECT 1 FROM chunk_state WHERE user_id = %s AND session_id = %s", args
    ).fetchone()
    row = conn.execute(_LAST, args).fetchone()
    cursor = None
    if row is not None:
        cursor = ChunkCursor(
            row["last_hash"], int(row["last_at"]), int(row["last_seq"]), int(row["last_index"])
        )
    return exists is not None, cursor


def session_messages(
    conn: Conn, scope: Scope, session_id: str, since: ChunkCursor | None
) -> list[SessionMessage]:
    """The session's messages in order, from the episode holding ``since`` on."""
    pk = session_pk(conn, scope, session_id)
    sql = "SELECT id, seq, created_at, messages FROM episodes"
    sql += " WHERE user_id = %s AND session_id = %s"
    params: list[Any] = [scope.user_id, pk]
    if since is not None:
        sql += " AND (created_at, seq) >= (%s, %s)"
        params += [since.created_ms, since.seq]
    out: list[SessionMessage] = []
    for row in conn.execute(sql + " ORDER BY created_at, seq", params):
        for index, message in enumerate(row["messages"]):
            out.append(
                SessionMessage(
                    episode_id=row["id"],
                    created_ms=int(row["created_at"]),
                    seq=int(row["seq"]),
                    index=index,
                    role=message.get("role", "user"),
                    content=message["content"],
                )
            )
    return out


def episode_stats(conn: Conn, scope: Scope, session_id: str) -> list[EpisodeStat]:
    pk = session_pk(conn, scope, session_id)
    cursor = conn.execute(
        "SELECT id, created_at, access_count, last_accessed_at, consolidated_at FROM episodes"
        " WHERE user_id = %s AND session_id = %s ORDER BY created_at, seq",
        (scope.user_id, pk),
    )
    return [
        EpisodeStat(
            r["id"],
            int(r["created_at"]),
            int(r["access_count"]),
            r["last_accessed_at"],
            r["consolidated_at"] is not None,
        )
        for r in cursor.fetchall()
    ]


class PostgresLedgerReads:
    """Ledger reads, each in one snapshot (see ``LedgerReads``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]:
        with self._db.read() as conn:
            return chunk_state(conn, scope, session_id)

    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]:
        with self._db.read() as conn:
            return session_messages(conn, scope, session_id, since)

    def episode_stats(self, scope: Scope, session_id: str) -> list[EpisodeStat]:
        with self._db.read() as conn:
            return episode_stats(conn, scope, session_id)

    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan:
        with self._db.read() as conn:
            return consolidation.consolidation_plan(conn, scope, episode_ids)

    def tenant_activity(
        self, before_ms: int, user_id: str | None, scope_id: str | None
    ) -> list[TenantActivity]:
        with self._db.read() as conn:
            return activity.tenant_activity(conn, before_ms, user_id, scope_id)

    def inactive_memories(self, scope: Scope, before_ms: int, limit: int) -> list[str]:
        with self._db.read() as conn:
            return activity.inactive_memories(conn, scope, before_ms, limit)


class PostgresLedgerWrites:
    """Ledger writes on the transaction's connection; chunk memories go through ``memories``."""

    def __init__(self, conn: Conn, memories: PostgresMemoryWrites) -> None:
        self._conn = conn
        self._memories = memories

    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]:
        return chunk_state(self._conn, scope, session_id, lock=True)

    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]:
        return session_messages(self._conn, scope, session_id, since)

    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan:
        return consolidation.consolidation_plan(self._conn, scope, episode_ids)

    def apply_consolidation(
        self,
        scope: Scope,
        session_id: str,
        consolidation_id: str,
        plan: ConsolidationPlan,
        report: dict[str, Any],
        actor: str,
    ) -> None:
        consolidation.apply(self._conn, scope, session_id, consolidation_id, plan, report, actor)

    def revert_consolidation(
        self, scope: Scope, consolidation_id: str, actor: str
    ) -> dict[str, Any]:
        return consolidation.revert(self._conn, scope, consolidation_id, actor)

    def touch(
        self, scope: Scope, memory_ids: Sequence[str], episode_ids: Sequence[str], at_ms: int
    ) -> int:
        """One more access, now, for each memory and its source episodes, and each episode
        given; return how many memories and episodes changed."""
        changed = 0
        args = (at_ms, scope.user_id, scope.scope_id)
        if memory_ids:
            ids = list(memory_ids)
            changed += self._conn.execute(
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = %s"
                " WHERE user_id = %s AND scope_id = %s AND id = ANY(%s)",
                (*args, ids),
            ).rowcount
            sources = self._conn.execute(
                "SELECT DISTINCT ms.episode_id FROM memory_sources ms JOIN memories m"
                " ON m.user_id = ms.user_id AND m.id = ms.memory_id"
                " WHERE m.user_id = %s AND m.scope_id = %s AND m.id = ANY(%s)",
                (scope.user_id, scope.scope_id, ids),
            )
            episode_ids = sorted({*episode_ids, *(r["episode_id"] for r in sources)})
        if episode_ids:
            changed += self._conn.execute(
                "UPDATE episodes SET access_count = access_count + 1, last_accessed_at = %s"
                " WHERE user_id = %s AND scope_id = %s AND id = ANY(%s)",
                (*args, list(episode_ids)),
            ).rowcount
        return changed

    def record_chunks(
        self, scope: Scope, session_id: str, chunks: Sequence[NewChunk], actor: str
    ) -> list[MemoryItem]:
        pk = session_pk(self._conn, scope, session_id, lock=True)
        _check_order(self._conn, scope, pk, session_id, chunks)
        ts = now_ms()
        self._conn.execute(
            "INSERT INTO chunk_state (user_id, session_id, created_at) VALUES (%s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            (scope.user_id, pk, ts),
        )
        items: list[MemoryItem] = []
        for chunk in chunks:
            item = self._memories.insert_memory(scope, chunk.memory, actor)
            try:
                with self._conn.transaction():
                    self._conn.execute(
                        "INSERT INTO chunk_ledger (user_id, session_id, memory_id, last_hash,"
                        " last_at, last_seq, last_index, messages, tokens, created_at)"
                        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        (
                            scope.user_id,
                            pk,
                            item.id,
                            chunk.cursor.last_hash,
                            chunk.cursor.created_ms,
                            chunk.cursor.seq,
                            chunk.cursor.index,
                            chunk.messages,
                            chunk.tokens,
                            ts,
                        ),
                    )
            except psycopg.errors.UniqueViolation as exc:
                raise Conflict(
                    f"session {session_id!r} already has a chunk ending at that message"
                ) from exc
            items.append(item)
        return items

    def reset_chunks(self, scope: Scope, session_id: str, actor: str) -> list[str]:
        """Forget the session's chunk state and ledger, and invalidate its chunk memories
        (kept in their history): the next pass starts over in consolidation mode."""
        pk = session_pk(self._conn, scope, session_id, lock=True)
        ts = now_ms()
        found = self._conn.execute(
            "UPDATE memories SET invalid_at = %s, updated_at = %s WHERE user_id = %s"
            " AND session_id = %s AND type = %s AND invalid_at IS NULL RETURNING id, text, seq",
            (ts, ts, scope.user_id, pk, MemoryType.CHUNK.value),
        ).fetchall()
        found.sort(key=lambda r: int(r["seq"]))
        for row in found:
            write_history(
                self._conn, scope, row["id"], HistoryEvent.DELETE, row["text"], None, actor
            )
        args = (scope.user_id, pk)
        self._conn.execute("DELETE FROM chunk_ledger WHERE user_id = %s AND session_id = %s", args)
        self._conn.execute("DELETE FROM chunk_state WHERE user_id = %s AND session_id = %s", args)
        return [row["id"] for row in found]


def _check_order(
    conn: Conn, scope: Scope, pk: int, session_id: str, chunks: Sequence[NewChunk]
) -> None:
    """The re-check inside the transaction: every chunk must end after the ledger's last
    chunk and after the chunk before it, so a run that read an older cursor cannot record
    chunks over ones a concurrent run committed meanwhile."""
    row = conn.execute(_LAST, (scope.user_id, pk)).fetchone()
    after = (
        None if row is None else (int(row["last_at"]), int(row["last_seq"]), int(row["last_index"]))
    )
    for chunk in chunks:
        here = (chunk.cursor.created_ms, chunk.cursor.seq, chunk.cursor.index)
        if after is not None and here <= after:
            raise Conflict(f"session {session_id!r} is already chunked past that message")
        after = here
