"""SQLite side of chunking and access tracking: the chunk ledger, session messages, touches.

The ledger (WilmerAI's ``_memories.jsonl`` with its hashes) is append-only: one row per chunk
memory with the hash and position of the last message it covers, unique per session, so two
runs can never both record a chunk ending at the same message. ``chunk_state`` is the
"memory file exists" flag: present, the session is chunked in standard mode.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from omoide.errors import Conflict
from omoide.store.ports.ledger import (
    ChunkCursor,
    ConsolidationPlan,
    EpisodeStat,
    NewChunk,
    SessionMessage,
    TenantActivity,
)
from omoide.store.sqlite import activity, cipher, consolidation
from omoide.store.sqlite.db import Database
from omoide.store.sqlite.memory_writes import SQLiteMemoryWrites
from omoide.store.sqlite.shared import session_pk, write_history
from omoide.types import HistoryEvent, MemoryItem, MemoryType, Scope, now_ms


def chunk_state(
    conn: sqlite3.Connection, scope: Scope, session_id: str
) -> tuple[bool, ChunkCursor | None]:
    """Whether the session has chunk state, and where its last chunk ended."""
    pk = session_pk(conn, scope, session_id)
    exists = conn.execute("SELECT 1 FROM chunk_state WHERE session_id = ?", (pk,)).fetchone()
    row = conn.execute(
        "SELECT last_hash, last_at, last_seq, last_index FROM chunk_ledger WHERE session_id = ?"
        " ORDER BY id DESC LIMIT 1",
        (pk,),
    ).fetchone()
    cursor = None if row is None else ChunkCursor(row[0], int(row[1]), int(row[2]), int(row[3]))
    return exists is not None, cursor


def session_messages(
    conn: sqlite3.Connection, scope: Scope, session_id: str, since: ChunkCursor | None
) -> list[SessionMessage]:
    """The session's messages in order, from the episode holding ``since`` on (all of them
    without a cursor)."""
    pk = session_pk(conn, scope, session_id)
    sql = "SELECT id, rowid, created_at, messages FROM episodes WHERE session_id = ?"
    params: list[Any] = [pk]
    if since is not None:
        sql += " AND (created_at, rowid) >= (?, ?)"
        params += [since.created_ms, since.seq]
    out: list[SessionMessage] = []
    for row in conn.execute(sql + " ORDER BY created_at, rowid", params):
        for index, message in enumerate(json.loads(row["messages"])):
            out.append(
                SessionMessage(
                    episode_id=row["id"],
                    created_ms=int(row["created_at"]),
                    seq=int(row["rowid"]),
                    index=index,
                    role=message.get("role", "user"),
                    content=message["content"],
                )
            )
    return out


def episode_stats(conn: sqlite3.Connection, scope: Scope, session_id: str) -> list[EpisodeStat]:
    pk = session_pk(conn, scope, session_id)
    cursor = conn.execute(
        "SELECT id, created_at, access_count, last_accessed_at, consolidated_at FROM episodes"
        " WHERE session_id = ? ORDER BY created_at, rowid",
        (pk,),
    )
    return [
        EpisodeStat(r[0], int(r[1]), int(r[2]), r[3], r[4] is not None) for r in cursor.fetchall()
    ]


class SQLiteLedgerReads:
    """Ledger reads on reader connections (see ``LedgerReads``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]:
        return chunk_state(self._db.reader(), scope, session_id)

    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]:
        return session_messages(self._db.reader(), scope, session_id, since)

    def episode_stats(self, scope: Scope, session_id: str) -> list[EpisodeStat]:
        return episode_stats(self._db.reader(), scope, session_id)

    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan:
        return consolidation.consolidation_plan(self._db.reader(), scope, episode_ids)

    def tenant_activity(
        self, before_ms: int, user_id: str | None, scope_id: str | None
    ) -> list[TenantActivity]:
        return activity.tenant_activity(self._db.reader(), before_ms, user_id, scope_id)

    def inactive_memories(self, scope: Scope, before_ms: int, limit: int) -> list[str]:
        return activity.inactive_memories(self._db.reader(), scope, before_ms, limit)


class SQLiteLedgerWrites:
    """Ledger writes on the transaction's connection; chunk memories go through ``memories``."""

    def __init__(self, conn: sqlite3.Connection, memories: SQLiteMemoryWrites) -> None:
        self._conn = conn
        self._memories = memories

    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]:
        return chunk_state(self._conn, scope, session_id)

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
            marks = ",".join("?" * len(memory_ids))
            changed += self._conn.execute(
                # unary + keeps SQLite on the id index, not a scan of the tenant's rows
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ?"
                f" WHERE +user_id = ? AND +scope_id = ? AND id IN ({marks})",
                (*args, *memory_ids),
            ).rowcount
            sources = self._conn.execute(
                "SELECT DISTINCT ms.episode_id FROM memory_sources ms JOIN memories m"
                f" ON m.seq = ms.memory_seq WHERE m.id IN ({marks}) AND +m.user_id = ?"
                " AND +m.scope_id = ?",
                (*memory_ids, scope.user_id, scope.scope_id),
            )
            episode_ids = sorted({*episode_ids, *(r[0] for r in sources)})
        if episode_ids:
            marks = ",".join("?" * len(episode_ids))
            changed += self._conn.execute(
                "UPDATE episodes SET access_count = access_count + 1, last_accessed_at = ?"
                f" WHERE user_id = ? AND scope_id = ? AND id IN ({marks})",
                (*args, *episode_ids),
            ).rowcount
        return changed

    def record_chunks(
        self, scope: Scope, session_id: str, chunks: Sequence[NewChunk], actor: str
    ) -> list[MemoryItem]:
        pk = session_pk(self._conn, scope, session_id)
        _check_order(self._conn, pk, session_id, chunks)
        ts = now_ms()
        self._conn.execute(
            "INSERT OR IGNORE INTO chunk_state (session_id, created_at) VALUES (?, ?)", (pk, ts)
        )
        items: list[MemoryItem] = []
        for chunk in chunks:
            item = self._memories.insert_memory(scope, chunk.memory, actor)
            try:
                self._conn.execute(
                    "INSERT INTO chunk_ledger (session_id, memory_id, last_hash, last_at,"
                    " last_seq, last_index, messages, tokens, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
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
            except cipher.IntegrityError as exc:
                raise Conflict(
                    f"session {session_id!r} already has a chunk ending at that message"
                ) from exc
            items.append(item)
        return items

    def reset_chunks(self, scope: Scope, session_id: str, actor: str) -> list[str]:
        """Forget the session's chunk state and ledger, and invalidate its chunk memories
        (kept in their history): the next pass starts over in consolidation mode."""
        pk = session_pk(self._conn, scope, session_id)
        ts = now_ms()
        found = self._conn.execute(
            "SELECT id, text FROM memories WHERE session_id = ? AND type = ?"
            " AND invalid_at IS NULL ORDER BY seq",
            (pk, MemoryType.CHUNK.value),
        ).fetchall()
        for row in found:
            self._conn.execute(
                "UPDATE memories SET invalid_at = ?, updated_at = ? WHERE id = ?",
                (ts, ts, row["id"]),
            )
            write_history(
                self._conn, scope, row["id"], HistoryEvent.DELETE, row["text"], None, actor
            )
        self._conn.execute("DELETE FROM chunk_ledger WHERE session_id = ?", (pk,))
        self._conn.execute("DELETE FROM chunk_state WHERE session_id = ?", (pk,))
        return [row["id"] for row in found]


def _position(cursor: ChunkCursor) -> tuple[int, int, int]:
    return cursor.created_ms, cursor.seq, cursor.index


def _check_order(
    conn: sqlite3.Connection, pk: int, session_id: str, chunks: Sequence[NewChunk]
) -> None:
    """The re-check inside the transaction: every chunk must end after the ledger's last
    chunk and after the chunk before it, so a run that read an older cursor cannot record
    chunks over ones a concurrent run committed meanwhile."""
    row = conn.execute(
        "SELECT last_at, last_seq, last_index FROM chunk_ledger WHERE session_id = ?"
        " ORDER BY id DESC LIMIT 1",
        (pk,),
    ).fetchone()
    after = None if row is None else (int(row[0]), int(row[1]), int(row[2]))
    for chunk in chunks:
        here = _position(chunk.cursor)
        if after is not None and here <= after:
            raise Conflict(f"session {session_id!r} is already chunked past that message")
        after = here
