"""PostgreSQL ``MemoryReads``: lookups, lists, bm25 keyword search and exact vector search."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import psycopg
from psycopg.rows import tuple_row

from omoide.errors import InvalidInput, NotFound
from omoide.store import records
from omoide.store.ports.memories import Candidates, Nearest, Said
from omoide.store.postgres import ann, counts, fts, rows
from omoide.store.postgres.arrays import text_array
from omoide.store.postgres.db import Conn, Database
from omoide.store.postgres.filters import memory_filter
from omoide.store.postgres.postings import PostingsCache
from omoide.types import UNNAMED_SESSION, HistoryEntry, MemoryItem, Scope, SearchFilters

_HISTORY = """
WITH RECURSIVE
 older(id) AS (SELECT %s::text UNION SELECT m.supersedes FROM memories m JOIN older o
  ON m.id = o.id WHERE m.supersedes IS NOT NULL AND m.user_id = %s AND m.scope_id = %s),
 newer(id) AS (SELECT %s::text UNION SELECT m.id FROM memories m JOIN newer n
  ON m.supersedes = n.id WHERE m.user_id = %s AND m.scope_id = %s)
SELECT * FROM history WHERE user_id = %s AND scope_id = %s
 AND memory_id IN (SELECT id FROM older UNION SELECT id FROM newer) ORDER BY id
"""


class PostgresMemoryReads:
    """Reads of memories, each in one read-only snapshot (see ``MemoryReads``)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._index_builder = ann.IndexBuilder(db.url)
        self._postings = PostingsCache()

    def get_memories(self, scope: Scope, ids: Sequence[str]) -> list[MemoryItem]:
        if not ids:
            return []
        with self._db.read_one(search=True) as conn:
            cursor = conn.execute(
                f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM} WHERE m.user_id = %s"
                " AND m.scope_id = %s AND m.id = ANY(%s::text[])",
                (scope.user_id, scope.scope_id, text_array(ids)),
            )
            found = {r["id"]: rows.memory(r) for r in cursor}
        return [found[i] for i in ids if i in found]

    def texts_and_times(
        self, scope: Scope, ids: Sequence[str], query: np.ndarray | None = None
    ) -> dict[str, Said]:
        return self._said(scope, ids, query, whole=False)[0]

    def candidates(self, scope: Scope, ids: Sequence[str], query: np.ndarray | None) -> Candidates:
        # the hits' rows come with the scoring's read: a search's last round trip goes
        said, held = self._said(scope, ids, query, whole=True)
        return Candidates(
            said,
            ids,
            lambda wanted: [rows.memory_of_array(held[i]) for i in wanted],
        )

    def _said(
        self, scope: Scope, ids: Sequence[str], query: np.ndarray | None, *, whole: bool
    ) -> tuple[dict[str, Said], dict[str, str]]:
        """``id -> Said`` of the found memories and, if ``whole``, each one's
        ``rows.ROW_ARRAY``."""
        if not ids:
            return {}, {}
        cosine, params = "NULL::float8", []
        join = rows.VECTOR_JOIN if whole or query is not None else ""
        extra = f", {rows.ROW_ARRAY}" if whole else ""
        if query is not None:  # the cosine only of a vector of the query's size
            vector = query.astype(np.float32, copy=False)
            cosine = "CASE WHEN vector_dims(v.embedding) = %s THEN -(v.embedding <#> %s) END"
            params = [int(vector.shape[0]), vector]
        # plain tuples in the binary format: the candidates' rows decode in less time
        with (
            self._db.read_one(search=True) as conn,
            conn.cursor(row_factory=tuple_row, binary=True) as cursor,
        ):
            found = cursor.execute(
                "SELECT m.id, m.text, m.created_at,"
                " m.type = 'raw' AND s.external_id IS NOT NULL AND s.external_id <> %s AS turn,"
                " m.metadata->>'role' IS NOT DISTINCT FROM 'assistant' AS assistant,"
                f" {cosine} AS cosine{extra} FROM memories m"
                " LEFT JOIN sessions s ON s.user_id = m.user_id AND s.id = m.session_id"
                f"{join} WHERE m.user_id = %s AND m.scope_id = %s AND m.id = ANY(%s::text[])",
                (UNNAMED_SESSION, *params, scope.user_id, scope.scope_id, text_array(ids)),
            ).fetchall()
        said = {
            r[0]: Said(
                r[1], int(r[2]), bool(r[3]), bool(r[4]), None if r[5] is None else float(r[5])
            )
            for r in found
        }
        return said, {r[0]: r[6] for r in found} if whole else {}

    def list_memories(
        self, scope: Scope, filters: SearchFilters, limit: int, offset: int
    ) -> tuple[list[MemoryItem], int]:
        with self._db.read() as conn:  # the page and its total from one snapshot
            where, params = memory_filter(scope, filters)
            total = conn.execute(f"SELECT count(*) AS n FROM memories m WHERE {where}", params)
            row = total.fetchone()
            cursor = conn.execute(
                f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM} WHERE {where}"
                " ORDER BY m.created_at DESC, m.seq DESC LIMIT %s OFFSET %s",
                (*params, limit, offset),
            )
            items = [rows.memory(r) for r in cursor]
        return items, int(row["n"]) if row else 0

    def latest_memories(self, scope: Scope, filters: SearchFilters, limit: int) -> list[MemoryItem]:
        with self._db.read() as conn:
            where, params = memory_filter(scope, filters)
            cursor = conn.execute(
                f"SELECT {rows.MEMORY_COLUMNS} FROM {rows.MEMORY_FROM} WHERE {where}"
                " ORDER BY m.created_at DESC, m.seq DESC LIMIT %s",
                (*params, limit),
            )
            return [rows.memory(r) for r in cursor]

    def keyword_search(
        self, scope: Scope, terms: Sequence[str], filters: SearchFilters, limit: int
    ) -> list[tuple[str, float]]:
        if not terms:
            return []
        where = memory_filter(scope, filters)
        tenant = (scope.user_id, scope.scope_id)
        # One snapshot for the cache's catch-up, the statistics, the lists and the filters: its
        # BEGIN goes with the catch-up and the statistics, its COMMIT with the filters' look-up
        # (two round trips when the lists are cached); a filter most rows fail needs a second
        # snapshot, which probes further down the order.
        with self._db.snapshot(search=True) as conn, _query_refused():
            hits = fts.rank(conn, self._postings, *tenant, terms, where, limit, end=True)
        if hits is None:
            with self._db.snapshot(search=True) as conn, _query_refused():
                hits = fts.rank(conn, self._postings, *tenant, terms, where, limit)
        return hits or []  # without ``end``, always a ranking

    def vector_search(
        self, scope: Scope, vector: np.ndarray, filters: SearchFilters, limit: int
    ) -> Nearest:
        """Inner product (cosine on unit vectors) over the tenant's vectors of the query's
        dimension, filters applied in the same query: exact for small tenants, HNSW with
        iterative scans for large ones (see ``ann``). A small tenant costs one statement (its
        counts and its exact search); a large one's counts only choose the plan, so its
        index search runs after them, in a snapshot of its own."""
        query = vector.astype(np.float32, copy=False)
        where = memory_filter(scope, filters)
        with self._db.read_one(search=True) as conn:
            tally, small = ann.exact_if_small(
                conn, scope.user_id, scope.scope_id, query, where, limit
            )
        found = small
        if found is None:
            with self._db.read(search=True) as conn:
                found = ann.search(
                    conn, scope.user_id, scope.scope_id, query, where, limit, tally.vectors,
                    self._index_builder,
                )  # fmt: skip
        if not found:
            with self._db.read_one(search=True) as conn:
                _check_dimension(conn, scope, query.shape[0])
        # the counts of the first statement: the search needs no statement of its own for them
        return Nearest(found, tally.vectors, max(0, tally.memories - tally.vectors))

    def history(self, scope: Scope, memory_id: str) -> list[HistoryEntry]:
        tenant = (scope.user_id, scope.scope_id)
        with self._db.read() as conn:
            cursor = conn.execute(_HISTORY, (memory_id, *tenant, memory_id, *tenant, *tenant))
            entries = [records.history(r) for r in cursor]
        if not entries:
            raise NotFound(f"memory {memory_id!r} not found", id=memory_id)
        return entries

    def owner(self, memory_id: str) -> Scope | None:
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT user_id, scope_id FROM memories WHERE id = %s LIMIT 1", (memory_id,)
            ).fetchone()
            if row is None:  # deleted: its history still names the tenant
                row = conn.execute(
                    "SELECT user_id, scope_id FROM history WHERE memory_id = %s LIMIT 1",
                    (memory_id,),
                ).fetchone()
        return None if row is None else Scope(user_id=row["user_id"], scope_id=row["scope_id"])

    def iter_memory_texts(
        self, batch: int, *, unstaged: bool = False
    ) -> Iterator[list[tuple[Scope, str, str]]]:
        last = 0
        where = (
            " AND NOT EXISTS (SELECT 1 FROM vector_rebuild r"
            " WHERE r.user_id = m.user_id AND r.memory_id = m.id)"
            if unstaged
            else ""
        )
        while True:
            with self._db.read() as conn:
                chunk = conn.execute(
                    f"SELECT seq, id, user_id, scope_id, text FROM memories m WHERE seq > %s{where}"
                    " ORDER BY seq LIMIT %s",
                    (last, batch),
                ).fetchall()
            if not chunk:
                return
            last = int(chunk[-1]["seq"])
            yield [
                (Scope(user_id=r["user_id"], scope_id=r["scope_id"]), r["id"], r["text"])
                for r in chunk
            ]

    def unembedded_count(self, scope: Scope | None = None) -> int:
        # Every search asks: memories minus vectors from the counters (every vector row
        # belongs to a memory of the same tenant: foreign key with cascade, scope_id copied
        # from the memory, which never changes scope), so no count over the tenant's rows.
        with self._db.read_one(search=True) as conn:
            if scope is None:
                return counts.unembedded(conn)
            tally = counts.read(conn, scope.user_id, scope.scope_id)
        return max(0, tally.memories - tally.vectors)


@contextmanager
def _query_refused() -> Iterator[None]:
    """A query the database's parser refuses as ``InvalidInput`` (never expected: every
    lexeme is quoted)."""
    try:
        yield
    except psycopg.errors.SyntaxError as exc:
        raise InvalidInput(f"keyword query rejected: {exc}") from exc


def _check_dimension(conn: Conn, scope: Scope, dim: int) -> None:
    """``InvalidInput`` when the tenant has vectors but none of the query's dimension (the
    embedder changed without a reindex), as SQLite reports it; nothing stored is no error."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM memory_vectors WHERE user_id = %s AND scope_id = %s)"
        " AS any, EXISTS (SELECT 1 FROM memory_vectors WHERE user_id = %s AND scope_id = %s"
        " AND vector_dims(embedding) = %s) AS same",
        (scope.user_id, scope.scope_id, scope.user_id, scope.scope_id, dim),
    ).fetchone()
    if row is not None and row["any"] and not row["same"]:
        raise InvalidInput(
            f"query vector has {dim} dimensions; the stored vectors have another"
            " (reindex after changing the embedder)"
        )
