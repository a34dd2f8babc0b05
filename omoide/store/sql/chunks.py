"""``ChunkReads`` / ``ChunkWrites``: a session's messages, its chunk state and chunk ledger.

The ledger is append-only: one row per chunk memory with the hash and position of the last
message it covers, unique per session, so two runs can never both record a chunk ending at the
same message. ``chunk_state`` says the session is chunked in standard mode. A write
transaction's ``chunk_state``, ``record_chunks`` and ``reset_chunks`` take the session's row
lock where rows are locked (the dialect's), so the re-check of the ledger's last cursor sees
every chunk a concurrent writer committed (SQLite gets the same from its single writer).

What differs per backend comes in the ``ChunkLayout``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from omoide.errors import Conflict
from omoide.store.ports.chunks import ChunkCursor, NewChunk, SessionMessage
from omoide.store.ports.memories import MemoryWrites
from omoide.store.sql.dialect import Conn, Dialect, Reader
from omoide.store.sql.sessions import session_pk
from omoide.store.sql.shared import write_history
from omoide.types import HistoryEvent, MemoryItem, MemoryType, Scope, now_ms


@dataclass(frozen=True)
class ChunkLayout:
    """What differs in how a backend keys chunk rows and orders a session's episodes."""

    #: The column after ``created_at`` that orders a session's episodes as they were written.
    episode_order: str
    #: Whether ``chunk_state`` and ``chunk_ledger`` rows carry the tenant's ``user_id``.
    chunks_by_tenant: bool


class _Chunks:
    """The statements both chunk ports run, on a connection they are given."""

    def __init__(self, dialect: Dialect, layout: ChunkLayout) -> None:
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


class SQLChunkReads:
    """Chunk reads, each in one snapshot (see ``ChunkReads``)."""

    def __init__(self, db: Reader, dialect: Dialect, layout: ChunkLayout) -> None:
        self._db = db
        self._chunks = _Chunks(dialect, layout)

    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]:
        with self._db.read() as conn:
            return self._chunks.chunk_state(conn, scope, session_id)

    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]:
        with self._db.read() as conn:
            return self._chunks.session_messages(conn, scope, session_id, since)


class SQLChunkWrites:
    """Chunk ledger writes on the transaction's connection; chunk memories go through
    ``memories``."""

    def __init__(
        self, conn: Conn, dialect: Dialect, layout: ChunkLayout, memories: MemoryWrites
    ) -> None:
        self._conn = conn
        self._d = dialect
        self._layout = layout
        self._memories = memories
        self._chunks = _Chunks(dialect, layout)

    def chunk_state(self, scope: Scope, session_id: str) -> tuple[bool, ChunkCursor | None]:
        return self._chunks.chunk_state(self._conn, scope, session_id, lock=True)

    def session_messages(
        self, scope: Scope, session_id: str, since: ChunkCursor | None
    ) -> list[SessionMessage]:
        return self._chunks.session_messages(self._conn, scope, session_id, since)

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
        where, args = self._chunks.chunks_of(scope, pk)
        self._conn.execute(d.sql(f"DELETE FROM chunk_ledger WHERE {where}"), args)
        self._conn.execute(d.sql(f"DELETE FROM chunk_state WHERE {where}"), args)
        return [row["id"] for row in found]

    def _check_order(
        self, scope: Scope, pk: int, session_id: str, chunks: Sequence[NewChunk]
    ) -> None:
        """The re-check inside the transaction: every chunk must end after the ledger's last
        chunk and after the chunk before it, so a run that read an older cursor cannot record
        chunks over ones a concurrent run committed meanwhile."""
        last = self._chunks.last_chunk(self._conn, scope, pk)
        after = None if last is None else _position(last)
        for chunk in chunks:
            here = _position(chunk.cursor)
            if after is not None and here <= after:
                raise Conflict(f"session {session_id!r} is already chunked past that message")
            after = here


def _position(cursor: ChunkCursor) -> tuple[int, int, int]:
    return cursor.created_ms, cursor.seq, cursor.index
