"""``LedgerReads`` / ``LedgerWrites``: the chunk ledger, session messages, access counters.

The ledger is append-only: one row per chunk memory with the hash and position of the last
message it covers, unique per session, so two runs can never both record a chunk ending at the
same message. ``chunk_state`` says the session is chunked in standard mode. A write
transaction's ``chunk_state``, ``record_chunks`` and ``reset_chunks`` take the session's row
lock where rows are locked (the dialect's), so the re-check of the ledger's last cursor sees
every chunk a concurrent writer committed (SQLite gets the same from its single writer).

A memory's last use is the later of its last access (``touch``) and its last change; the
activity queries compute it in SQL so a tenant's counts are one scan of its rows.

Consolidation is ``store.sql.consolidation``; what differs per backend comes in the
``LedgerLayout``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
from omoide.store.ports.memories import MemoryWrites
from omoide.store.sql import consolidation
from omoide.store.sql.consolidation import ConsolidationLayout
from omoide.store.sql.dialect import Conn, Dialect, Reader
from omoide.store.sql.sessions import session_pk
from omoide.store.sql.shared import write_history
from omoide.types import HistoryEvent, MemoryItem, MemoryType, Scope, now_ms


@dataclass(frozen=True)
class LedgerLayout:
    """What differs in how a backend keys chunk rows and memory sources, and consolidates."""

    #: The column after ``created_at`` that orders a session's episodes as they were written.
    episode_order: str
    #: Whether ``chunk_state`` and ``chunk_ledger`` rows carry the tenant's ``user_id``.
    chunks_by_tenant: bool
    #: The join condition of ``memory_sources ms`` with ``memories m``.
    sources_join: str
    #: How the backend plans, snapshots and restores a consolidation.
    consolidation: ConsolidationLayout


class _Ledger:
    """The statements both ledger ports run, on a connection they are given."""

    def __init__(self, dialect: Dialect, layout: LedgerLayout) -> None:
        self._d = dialect
        self._layout = layout

    def chunks_of(self, scope: Scope, pk: int) -> tuple[str, tuple[Any, ...]]:
        """The condition on chunk rows of session ``pk``, and its parameters."""
        if self._layout.chunks_by_tenant:
            return "user_id = ? AND session_id = ?", (scope.user_id, pk)
        return "session_id = ?", (pk,)

    def last_chunk(self, conn: Conn, scope: Scope, pk: int) -> ChunkCursor | None:
        where, args = self.chunks_of(scope, pk)
        row = conn.execute(
            self._d.sql(
                "SELECT last_hash, last_at, last_seq, last_index FROM chunk_ledger"
                f" WHERE {where} ORDER BY id DESC LIMIT 1"
            ),
            args,
        ).fetchone()
        if row is None:
            return None
        return ChunkCursor(
            row["last_hash"], int(row["last_at"]), int(row["last_seq"]), int(row["last_index"])
        )

    def chunk_state(
        self, conn: Conn, scope: Scope, session_id: str, lock: bool = False
    ) -> tuple[bool, ChunkCursor | None]:
        """Whether the session has chunk state, and where its last chunk ended. ``lock`` (in a
        write transaction) takes the session's row lock first, so the answer stays true until
        commit: a concurrent chunking pass waits, then sees this one's cursor."""
        pk = session_pk(conn, self._d, scope, session_id, lock)
        where, args = self.chunks_of(scope, pk)
        exists = conn.execute(
            self._d.sql(f"SELECT 1 FROM chunk_state WHERE {where}"), args
        ).fetchone()
        return exists is not None, self.last_chunk(conn, scope, pk)

    def session_messages(
        self, conn: Conn, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]:
        """The session's messages in order, from the episode holding ``since`` on (all of them
        without a cursor)."""
        order = self._layout.episode_order
        sql = f"SELECT id, {order} AS seq, created_at, messages FROM episodes"
        sql += " WHERE user_id = ? AND session_id = ?"
        params: list[Any] = [scope.user_id, session_pk(conn, self._d, scope, session_id)]
        if since is not None:
            sql += f" AND (created_at, {order}) >= (?, ?)"
            params += [since.created_ms, since.seq]
        out: list[SessionMessage] = []
        for row in conn.execute(self._d.sql(f"{sql} ORDER BY created_at, {order}"), params):
            for index, message in enumerate(self._d.load_json(row["messages"])):
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


class SQLLedgerReads:
    """Ledger reads, each in one snapshot (see ``LedgerReads``)."""

    def __init__(self, db: Reader, dialect: Dialect, layout: LedgerLayout) -> None:
        self._db = db
        self._d = dialect
        self._layout = layout
        self._ledger = _Ledger(dialect, layout)

    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]:
        with self._db.read() as conn:
            return self._ledger.chunk_state(conn, scope, session_id)

    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]:
        with self._db.read() as conn:
            return self._ledger.session_messages(conn, scope, session_id, since)

    def episode_stats(self, scope: Scope, session_id: str) -> list[EpisodeStat]:
        with self._db.read() as conn:
            cursor = conn.execute(
                self._d.sql(
                    "SELECT id, created_at, access_count, last_accessed_at, consolidated_at"
                    " FROM episodes WHERE user_id = ? AND session_id = ?"
                    f" ORDER BY created_at, {self._layout.episode_order}"
                ),
                (scope.user_id, session_pk(conn, self._d, scope, session_id)),
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

    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan:
        with self._db.read() as conn:
            return consolidation.plan(conn, self._d, self._layout.consolidation, scope, episode_ids)

    def tenant_activity(
        self, before_ms: int, user_id: str | None, scope_id: str | None
    ) -> list[TenantActivity]:
        d = self._d
        sql = (
            "SELECT user_id, scope_id, count(*) AS n, count(invalid_at) AS old,"
            f" count(CASE WHEN {_used(d)} < ? THEN 1 END) AS idle FROM memories WHERE 1 = 1"
        )
        params: list[object] = [before_ms]
        if user_id is not None:
            sql += " AND user_id = ?"
            params.append(user_id)
        if scope_id is not None:
            sql += " AND scope_id = ?"
            params.append(scope_id)
        sql += f" GROUP BY user_id, scope_id ORDER BY user_id{d.binary}, scope_id{d.binary}"
        with self._db.read() as conn:
            return [
                TenantActivity(
                    Scope(user_id=r["user_id"], scope_id=r["scope_id"]),
                    int(r["n"]),
                    int(r["old"]),
                    int(r["idle"]),
                )
                for r in conn.execute(d.sql(sql), params)
            ]

    def inactive_memories(self, scope: Scope, before_ms: int, limit: int) -> list[str]:
        d, used = self._d, _used(self._d)
        with self._db.read() as conn:
            cursor = conn.execute(
                d.sql(
                    f"SELECT id FROM memories WHERE user_id = ? AND scope_id = ? AND {used} < ?"
                    f" ORDER BY {used}, id{d.binary} LIMIT ?"
                ),
                (scope.user_id, scope.scope_id, before_ms, limit),
            )
            return [r["id"] for r in cursor]


def _used(d: Dialect) -> str:
    """A memory's last use: the later of its last access and its last change."""
    return f"{d.greatest}(coalesce(last_accessed_at, 0), updated_at)"


class SQLLedgerWrites:
    """Ledger writes on the transaction's connection; chunk memories go through ``memories``."""

    def __init__(
        self, conn: Conn, dialect: Dialect, layout: LedgerLayout, memories: MemoryWrites
    ) -> None:
        self._conn = conn
        self._d = dialect
        self._layout = layout
        self._memories = memories
        self._ledger = _Ledger(dialect, layout)

    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]:
        return self._ledger.chunk_state(self._conn, scope, session_id, lock=True)

    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]:
        return self._ledger.session_messages(self._conn, scope, session_id, since)

    def consolidation_plan(self, scope: Scope, episode_ids: Sequence[str]) -> ConsolidationPlan:
        return consolidation.plan(
            self._conn, self._d, self._layout.consolidation, scope, episode_ids
        )

    def apply_consolidation(
        self,
        scope: Scope,
        session_id: str,
        consolidation_id: str,
        plan: ConsolidationPlan,
        report: dict[str, Any],
        actor: str,
    ) -> None:
        consolidation.apply(
            self._conn,
            self._d,
            self._layout.consolidation,
            scope,
            session_id,
            consolidation_id,
            plan,
            report,
            actor,
        )

    def revert_consolidation(
        self, scope: Scope, consolidation_id: str, actor: str
    ) -> dict[str, Any]:
        return consolidation.revert(
            self._conn, self._d, self._layout.consolidation, scope, consolidation_id, actor
        )

    def touch(
        self, scope: Scope, memory_ids: Sequence[str], episode_ids: Sequence[str], at_ms: int
    ) -> int:
        """One more access, now, for each memory and its source episodes, and each episode
        given; return how many memories and episodes changed."""
        d, u = self._d, self._d.unindexed  # u: the lookup by id beats a scan of the tenant's
        changed = 0
        args = (at_ms, scope.user_id, scope.scope_id)
        if memory_ids:
            among, ids = d.in_list("id", memory_ids)
            their, _ = d.in_list("m.id", memory_ids)
            changed += self._conn.execute(
                d.sql(
                    "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ?"
                    f" WHERE {u}user_id = ? AND {u}scope_id = ? AND {among}"
                ),
                (*args, *ids),
            ).rowcount
            sources = self._conn.execute(
                d.sql(
                    "SELECT DISTINCT ms.episode_id FROM memory_sources ms JOIN memories m"
                    f" ON {self._layout.sources_join} WHERE {u}m.user_id = ?"
                    f" AND {u}m.scope_id = ? AND {their}"
                ),
                (scope.user_id, scope.scope_id, *ids),
            )
            episode_ids = sorted({*episode_ids, *(r["episode_id"] for r in sources)})
        if episode_ids:
            among, ids = d.in_list("id", episode_ids)
            changed += self._conn.execute(
                d.sql(
                    "UPDATE episodes SET access_count = access_count + 1, last_accessed_at = ?"
                    f" WHERE user_id = ? AND scope_id = ? AND {among}"
                ),
                (*args, *ids),
            ).rowcount
        return changed

    def record_chunks(
        self, scope: Scope, session_id: str, chunks: Sequence[NewChunk], actor: str
    ) -> list[MemoryItem]:
        d = self._d
        pk = session_pk(self._conn, d, scope, session_id, lock=True)
        self._check_order(scope, pk, session_id, chunks)
        ts = now_ms()
        tenant = ("user_id, ", "?, ", (scope.user_id,)) if self._layout.chunks_by_tenant else None
        column, mark, owner = tenant or ("", "", ())
        self._conn.execute(
            d.sql(
                f"INSERT INTO chunk_state ({column}session_id, created_at) VALUES ({mark}?, ?)"
                " ON CONFLICT DO NOTHING"
            ),
            (*owner, pk, ts),
        )
        insert = d.sql(
            f"INSERT INTO chunk_ledger ({column}session_id, memory_id, last_hash, last_at,"
            f" last_seq, last_index, messages, tokens, created_at)"
            f" VALUES ({mark}?, ?, ?, ?, ?, ?, ?, ?, ?)"
        )
        items: list[MemoryItem] = []
        for chunk in chunks:
            item = self._memories.insert_memory(scope, chunk.memory, actor)
            at = chunk.cursor
            values = (at.last_hash, at.created_ms, at.seq, at.index, chunk.messages, chunk.tokens)
            try:
                with d.savepoint(self._conn):
                    self._conn.execute(insert, (*owner, pk, item.id, *values, ts))
            except d.unique_violation as exc:
                raise Conflict(
                    f"session {session_id!r} already has a chunk ending at that message"
                ) from exc
            items.append(item)
        return items

    def reset_chunks(self, scope: Scope, session_id: str, actor: str) -> list[str]:
        """Forget the session's chunk state and ledger, and invalidate its chunk memories
        (kept in their history): the next pass starts over in consolidation mode."""
        d = self._d
        pk = session_pk(self._conn, d, scope, session_id, lock=True)
        ts = now_ms()
        found = self._conn.execute(
            d.sql(
                "UPDATE memories SET invalid_at = ?, updated_at = ? WHERE user_id = ?"
                " AND session_id = ? AND type = ? AND invalid_at IS NULL RETURNING id, text, seq"
            ),
            (ts, ts, scope.user_id, pk, MemoryType.CHUNK.value),
        ).fetchall()
        found = sorted(found, key=lambda r: int(r["seq"]))
        for row in found:
            write_history(
                self._conn, d, scope, row["id"], HistoryEvent.DELETE, row["text"], None, actor
            )
        where, args = self._ledger.chunks_of(scope, pk)
        self._conn.execute(d.sql(f"DELETE FROM chunk_ledger WHERE {where}"), args)
        self._conn.execute(d.sql(f"DELETE FROM chunk_state WHERE {where}"), args)
        return [row["id"] for row in found]

    def _check_order(
        self, scope: Scope, pk: int, session_id: str, chunks: Sequence[NewChunk]
    ) -> None:
        """The re-check inside the transaction: every chunk must end after the ledger's last
        chunk and after the chunk before it, so a run that read an older cursor cannot record
        chunks over ones a concurrent run committed meanwhile."""
        last = self._ledger.last_chunk(self._conn, scope, pk)
        after = None if last is None else _position(last)
        for chunk in chunks:
            here = _position(chunk.cursor)
            if after is not None and here <= after:
                raise Conflict(f"session {session_id!r} is already chunked past that message")
            after = here


def _position(cursor: ChunkCursor) -> tuple[int, int, int]:
    return cursor.created_ms, cursor.seq, cursor.index
