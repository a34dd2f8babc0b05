"""What SQLite does its own way for the shared ``MemoryWrites`` (``store.sql.memory_writes``).

Inserts are one statement per memory (in-process, no round trips), the keyword index is written
at the end of the transaction (``flush``), vectors are float32 BLOBs keyed by the memory's
``seq``; vector changes append to ``vec_log`` by trigger, so they cannot be split from the
memory they belong to.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from omoide.errors import NotFound
from omoide.store.ports.memories import Neighbour, NewMemory
from omoide.store.sql.shared import write_history
from omoide.store.sqlite import keyword, rows
from omoide.store.sqlite.dialect import SQLITE
from omoide.store.sqlite.shared import fetch_memory, session_pk
from omoide.types import HistoryEvent, MemoryItem, MemoryType, Scope, now_ms


class SQLiteMemoryStorage:
    """SQLite's part of the memory writes (see ``MemoryStorage``)."""

    vector_columns = "memory_seq, tenant, vec"
    vector_of = "v.memory_seq = m.seq"

    def __init__(self, conn: sqlite3.Connection, tokenizer: keyword.Tokenizer) -> None:
        self._conn = conn
        self._tokenizer = tokenizer
        # Keyword indexing waits for the end of the transaction (``flush``): one tokeniser pass
        # for a whole batch, and a turn whose context changes right after its insert (the next
        # turn arrives in the same add_many) is indexed once.
        self._unindexed: set[int] = set()
        self._changed: set[int] = set()

    def last_in_session(self, scope: Scope, session_id: str, type_: MemoryType) -> Neighbour | None:
        row = self._conn.execute(
            "SELECT m.id, m.text, m.context FROM memories m JOIN sessions s ON s.id = m.session_id"
            " WHERE s.user_id = ? AND s.scope_id = ? AND s.external_id = ? AND m.type = ?"
            " ORDER BY m.seq DESC LIMIT 1",
            (scope.user_id, scope.scope_id, session_id, type_.value),
        ).fetchone()
        return None if row is None else Neighbour(row["id"], row["text"], row["context"])

    def insert(
        self,
        scope: Scope,
        news: Sequence[NewMemory],
        actor: str,
        event: HistoryEvent,
        old_text: str | None,
        vectors: np.ndarray | None = None,
    ) -> list[MemoryItem]:
        # One writer and in-process statements: a loop costs no round trips here, and the
        # keyword rows of the batch are written together by ``flush`` anyway.
        items = [self._insert(scope, new, actor, event, old_text) for new in news]
        if vectors is None:
            return items
        self.put_vectors(scope, [i.id for i in items], vectors)
        return [i.model_copy(update={"embedded": True}) for i in items]

    def fetch(self, scope: Scope, memory_id: str) -> MemoryItem:
        return fetch_memory(self._conn, scope, memory_id)

    def changed(self, scope: Scope, memory_id: str, text: str | None) -> None:
        del scope
        if text is not None:
            self._reindex(memory_id)

    def text_sets(self, text: str) -> tuple[str, list[Any]]:
        return "text = ?", [text]

    def vectors_of(self, scope: Scope, memory_id: str) -> tuple[str, tuple[Any, ...]]:
        del scope
        return "memory_seq = (SELECT seq FROM memories WHERE id = ?)", (memory_id,)

    def set_context(self, scope: Scope, memory_id: str, context: str) -> None:
        self._conn.execute(
            "UPDATE memories SET context = ? WHERE id = ? AND user_id = ? AND scope_id = ?",
            (context, memory_id, scope.user_id, scope.scope_id),
        )
        self._reindex(memory_id)

    def flush(self) -> None:
        """Index what this transaction wrote; called by the store right before the commit."""
        seqs = sorted(self._unindexed | self._changed)
        fresh = self._unindexed
        self._unindexed, self._changed = set(), set()
        for start in range(0, len(seqs), 500):
            chunk = seqs[start : start + 500]
            found = self._conn.execute(
                "SELECT seq, tenant_token, text, context FROM memories"
                f" WHERE seq IN ({','.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
            docs = [(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in found]
            keyword.index_memories(self._conn, self._tokenizer, [d for d in docs if d[0] in fresh])
            old = [d for d in docs if d[0] not in fresh]
            keyword.index_memories(self._conn, self._tokenizer, old, replace=True)

    def put_vectors(self, scope: Scope, memory_ids: Sequence[str], vectors: np.ndarray) -> int:
        return sum(
            self.write_vector("memory_vectors", scope, memory_id, vectors[row], None)
            for row, memory_id in enumerate(memory_ids)
        )

    def _reindex(self, memory_id: str) -> None:
        """Index the memory's text and context again at the end of the transaction."""
        row = self._conn.execute("SELECT seq FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row is not None:
            self._changed.add(int(row[0]))

    def write_vector(
        self, table: str, scope: Scope, memory_id: str, vector: np.ndarray, text: str | None
    ) -> bool:
        # The text check runs inside the writer's transaction: an update() committed after
        # the vector was computed changed the text, and the vector of the old text is dropped.
        row = self._conn.execute(
            "SELECT seq, text FROM memories WHERE id = ? AND user_id = ? AND scope_id = ?",
            (memory_id, scope.user_id, scope.scope_id),
        ).fetchone()
        if row is None or (text is not None and row["text"] != text):
            return False  # deleted, or edited, since the vector was computed
        self._conn.execute(
            f"INSERT INTO {table} (memory_seq, tenant, vec) VALUES (?, ?, ?)"
            " ON CONFLICT (memory_seq) DO UPDATE SET vec = excluded.vec",
            (row["seq"], rows.tenant_key(scope), vector.astype(np.float32).tobytes()),
        )
        return True

    def _linked(self, seq: int | None, episode_id: str) -> bool:
        """The pair is recorded already (an episode listed twice in ``source_episodes``)."""
        row = self._conn.execute(
            "SELECT 1 FROM memory_sources WHERE memory_seq = ? AND episode_id = ?",
            (seq, episode_id),
        ).fetchone()
        return row is not None

    def _insert(
        self, scope: Scope, new: NewMemory, actor: str, event: HistoryEvent, old_text: str | None
    ) -> MemoryItem:
        ts = now_ms()
        created = new.created_at_ms or ts
        session = session_pk(self._conn, scope, new.session_id) if new.session_id else None
        memory_id = uuid.uuid4().hex
        cur = self._conn.execute(
            "INSERT INTO memories (id, user_id, scope_id, session_id, type, text, context,"
            " tenant_token, metadata, valid_from, supersedes, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                memory_id,
                scope.user_id,
                scope.scope_id,
                session,
                new.type.value,
                new.text,
                new.context,
                rows.tenant_token(scope),
                json.dumps(new.metadata),
                new.valid_from_ms or created,
                new.supersedes,
                created,
                ts,
            ),
        )
        self._unindexed.add(int(cur.lastrowid or 0))
        for episode_id in new.source_episodes:
            # Only an episode of the same tenant may back a memory (a foreign key alone would
            # accept any tenant's episode, and fail with a bare IntegrityError on none).
            linked = self._conn.execute(
                "INSERT OR IGNORE INTO memory_sources (memory_seq, episode_id) SELECT ?, id"
                " FROM episodes WHERE id = ? AND user_id = ? AND scope_id = ?",
                (cur.lastrowid, episode_id, scope.user_id, scope.scope_id),
            ).rowcount
            if not linked and not self._linked(cur.lastrowid, episode_id):
                raise NotFound(f"episode {episode_id!r} not found", id=episode_id)
        write_history(self._conn, SQLITE, scope, memory_id, event, old_text, new.text, actor)
        return fetch_memory(self._conn, scope, memory_id)
