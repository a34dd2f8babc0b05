"""SQLite ``MemoryReads``: lookups, lists, bm25 keyword search and exact vector search."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from functools import partial

import numpy as np

from omoide.errors import NotFound
from omoide.store import records
from omoide.store.ports.memories import Candidates, Nearest, Said
from omoide.store.sqlite import ann, keyword, rows
from omoide.store.sqlite.db import Database, snapshot
from omoide.store.sqlite.postings import PostingsCache
from omoide.store.sqlite.vectors import VectorCache
from omoide.types import UNNAMED_SESSION, HistoryEntry, MemoryItem, Scope, SearchFilters


class SQLiteMemoryReads:
    """Reads of memories on per-thread reader connections (see ``MemoryReads``)."""

    def __init__(
        self,
        db: Database,
        vectors: VectorCache,
        tokenizer: keyword.Tokenizer,
        postings: PostingsCache,
    ) -> None:
        self._db = db
        self._vectors = vectors
        self._tokenizer = tokenizer
        self._postings = postings

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> list[MemoryItem]:
        if not ids:
            return []
        conn = self._db.reader()
        found: dict[str, MemoryItem] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ",".join("?" * len(chunk))
            cursor = conn.execute(
                f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM} WHERE +m.user_id = ?"
                f" AND +m.scope_id = ? AND m.id IN ({marks})",
                (scope.user_id, scope.scope_id, *chunk),
            )
            for row in cursor:
                found[row["id"]] = rows.memory_from_row(row)
        return [found[i] for i in ids if i in found]

    def texts_and_times(
        self, scope: Scope, ids: Sequence[str], query: np.ndarray | None = None
    ) -> dict[str, Said]:
        conn = self._db.reader()
        out: dict[str, Said] = {}
        # the vector's bytes only when a cosine is asked for
        vec, join = ("v.vec", " LEFT JOIN memory_vectors v ON v.memory_seq = m.seq")
        if query is None:
            vec, join = "NULL", ""
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            cursor = conn.execute(
                "SELECT m.id, m.text, m.created_at,"
                " m.type = 'raw' AND s.external_id IS NOT NULL AND s.external_id != ?,"
                " json_extract(m.metadata, '$.role') IS 'assistant',"
                f" {vec} FROM memories m LEFT JOIN sessions s ON s.id = m.session_id{join}"
                " WHERE +m.user_id = ? AND +m.scope_id = ?"
                f" AND m.id IN ({','.join('?' * len(chunk))})",
                (UNNAMED_SESSION, scope.user_id, scope.scope_id, *chunk),
            )
            out.update(
                (
                    str(r[0]),
                    Said(str(r[1]), int(r[2]), bool(r[3]), bool(r[4]), _cosine(r[5], query)),
                )
                for r in cursor
            )
        return out

    def candidates(self, scope: Scope, ids: Sequence[str], query: np.ndarray | None) -> Candidates:
        # in process, reading every candidate's row would cost more than the hits' read after
        said = self.texts_and_times(scope, ids, query)
        return Candidates(said, ids, partial(self.get_memories, scope))

    def list_memories(
        self, scope: Scope, filters: SearchFilters, limit: int, offset: int
    ) -> tuple[list[MemoryItem], int]:
        conn = self._db.reader()
        where, params = rows.memory_filter(conn, scope, filters)
        with snapshot(conn):  # the page and its total from one snapshot
            total = conn.execute(f"SELECT count(*) FROM memories m WHERE {where}", params)
            total_count = int(total.fetchone()[0])
            cursor = conn.execute(
                f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM} WHERE {where}"
                " ORDER BY m.created_at DESC, m.seq DESC LIMIT ? OFFSET ?",
                (*params, limit, offset),
            )
            items = [rows.memory_from_row(r) for r in cursor]
        return items, total_count

    def latest_memories(self, scope: Scope, filters: SearchFilters, limit: int) -> list[MemoryItem]:
        conn = self._db.reader()
        where, params = rows.memory_filter(conn, scope, filters)
        cursor = conn.execute(
            f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM} WHERE {where}"
            " ORDER BY m.created_at DESC, m.seq DESC LIMIT ?",
            (*params, limit),
        )
        return [rows.memory_from_row(r) for r in cursor]

    def keyword_search(
        self, scope: Scope, terms: Sequence[str], filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]:
        if not terms or limit <= 0:
            return []
        conn = self._db.reader()
        tenant = rows.tenant_token(scope)
        with snapshot(conn):  # statistics and postings of one state of the tenant
            # Filters apply after ranking (statistics never depend on them), widening the
            # slice only when too few of the best pass.
            fetch = limit + 20
            while True:
                ranked = keyword.rank(conn, self._tokenizer, self._postings, tenant, terms, fetch)
                kept = _filter_seqs(conn, scope, filters, ranked)
                if len(kept) >= limit or len(ranked) < fetch:
                    return kept[:limit]
                fetch *= 8

    def vector_search(
        self, scope: Scope, vector: np.ndarray, filters: SearchFilters, limit: int
    ) -> Nearest:
        conn = self._db.reader()
        tenant = rows.tenant_key(scope)
        # Over-fetch a little for rows the filters drop (superseded, other types...), and widen
        # the scan only when that was not enough.
        fetch = limit + 20
        while True:
            candidates, size, approximate = self._vectors.top_k(conn, tenant, vector, fetch)
            if approximate and (filters.session_id is not None or fetch > ann.MAX_FETCH):
                # A selective filter (a session, or one most of the nearest rows fail): the
                # graph would have to walk most of the tenant, the filtered rows are few.
                return Nearest(_exact_filtered(conn, scope, filters, vector, limit), size)
            kept = _filter_seqs(conn, scope, filters, candidates)
            if len(kept) >= limit or fetch >= size:
                return Nearest(kept[:limit], size)
            fetch = min(size, fetch * 8)

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEntry]:
        scope_args = (scope.user_id, scope.scope_id)
        # A fact's versions (linked by ``supersedes``) share one history, oldest first.
        cursor = self._db.reader().execute(
            "WITH RECURSIVE"
            " older(id) AS (SELECT ? UNION SELECT m.supersedes FROM memories m JOIN older o"
            "  ON m.id = o.id WHERE m.supersedes IS NOT NULL AND m.user_id = ? AND m.scope_id = ?),"
            " newer(id) AS (SELECT ? UNION SELECT m.id FROM memories m JOIN newer n"
            "  ON m.supersedes = n.id WHERE m.user_id = ? AND m.scope_id = ?)"
            " SELECT * FROM history WHERE memory_id IN (SELECT id FROM older UNION"
            " SELECT id FROM newer) AND user_id = ? AND scope_id = ? ORDER BY id",
            (memory_id, *scope_args, memory_id, *scope_args, *scope_args),
        )
        entries = [records.history(r) for r in cursor]
        if not entries:
            raise NotFound(f"memory {memory_id!r} not found", id=memory_id)
        return entries

    def owner(self, memory_id: str) -> Scope | None:
        conn = self._db.reader()
        row = conn.execute(
            "SELECT user_id, scope_id FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        if row is None:  # deleted: its history still names the tenant
            row = conn.execute(
                "SELECT user_id, scope_id FROM history WHERE memory_id = ? LIMIT 1", (memory_id,)
            ).fetchone()
        return None if row is None else Scope(user_id=row["user_id"], scope_id=row["scope_id"])

    def iter_memory_texts(
        self, batch: int, *, unstaged: bool = False
    ) -> Iterator[list[tuple[Scope, str, str]]]:
        last = 0
        conn = self._db.reader()
        where = (
            " AND NOT EXISTS (SELECT 1 FROM vector_rebuild r WHERE r.memory_seq = m.seq)"
            if unstaged
            else ""
        )
        while True:
            cursor = conn.execute(
                f"SELECT seq, id, user_id, scope_id, text FROM memories m WHERE seq > ?{where}"
                " ORDER BY seq LIMIT ?",
                (last, batch),
            )
            chunk = cursor.fetchall()
            if not chunk:
                return
            last = int(chunk[-1]["seq"])
            yield [
                (Scope(user_id=r["user_id"], scope_id=r["scope_id"]), r["id"], r["text"])
                for r in chunk
            ]

    def unembedded_count(self, scope: Scope | None = None) -> int:
        conn = self._db.reader()
        if scope is not None:
            # Every search asks: the keyword index's per-tenant document count and the vector
            # cache's size are two lookups, where counting the rows cost ~5 ms at 100k.
            token = rows.tenant_token(scope)  # the keyword index's name for the tenant
            found = conn.execute("SELECT docs FROM kw_tenants WHERE tenant = ?", (token,))
            row = found.fetchone()
            memories = int(row[0]) if row is not None else 0
            return max(0, memories - self._vectors.count(conn, rows.tenant_key(scope)))
        with snapshot(conn):
            memories = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
            vectors = conn.execute("SELECT count(*) FROM memory_vectors").fetchone()[0]
        return max(0, int(memories) - int(vectors))


def _filter_seqs(
    conn: sqlite3.Connection,
    scope: Scope,
    filters: SearchFilters,
    candidates: list[tuple[int, float]],
) -> list[tuple[str, float]]:
    """The candidates (row key, score) that pass the filters, as (id, score), order kept."""
    if not candidates:
        return []
    where, params = rows.memory_filter(conn, scope, filters, by_key=True)
    allowed: dict[int, str] = {}
    seqs = [s for s, _ in candidates]
    for start in range(0, len(seqs), 500):
        chunk = seqs[start : start + 500]
        marks = ",".join("?" * len(chunk))
        cursor = conn.execute(
            f"SELECT m.seq, m.id FROM memories m WHERE m.seq IN ({marks}) AND {where}",
            (*chunk, *params),
        )
        allowed.update((int(r[0]), r[1]) for r in cursor)
    return [(allowed[s], score) for s, score in candidates if s in allowed]


def _exact_filtered(
    conn: sqlite3.Connection, scope: Scope, filters: SearchFilters, query: np.ndarray, limit: int
) -> list[tuple[str, float]]:
    """The ``limit`` rows passing the filters most similar to ``query``, by an exact scan of
    those rows only, in chunks (a graph tenant has no float matrix in memory)."""
    where, params = rows.memory_filter(conn, scope, filters)
    query = query.astype(np.float32, copy=False)
    best: list[tuple[float, int, str]] = []
    with snapshot(conn):
        cursor = conn.execute(
            f"SELECT m.seq, m.id, v.vec FROM memories m JOIN memory_vectors v"
            f" ON v.memory_seq = m.seq WHERE {where}",
            params,
        )
        while chunk := cursor.fetchmany(10_000):
            chunk = [r for r in chunk if len(r[2]) == query.shape[0] * 4]
            if not chunk:
                continue
            mat = np.frombuffer(b"".join(r[2] for r in chunk), dtype=np.float32)
            scores = mat.reshape(len(chunk), -1) @ query
            top = np.argsort(-scores, kind="stable")[:limit]
            best += [(float(scores[i]), int(chunk[i][0]), str(chunk[i][1])) for i in top]
            best = sorted(best, key=lambda x: (-x[0], x[1]))[:limit]
    return [(memory_id, score) for score, _, memory_id in best]


def _cosine(stored: bytes | None, query: np.ndarray | None) -> float | None:
    """A stored unit vector's cosine to ``query``; None when either is missing or their
    sizes differ (a vector of another model)."""
    if stored is None or query is None or len(stored) != query.shape[0] * 4:
        return None
    return float(np.frombuffer(stored, dtype=np.float32) @ query.astype(np.float32, copy=False))
