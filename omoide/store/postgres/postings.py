"""PostgreSQL's side of the in-process posting lists (``store/sql/postings.py``): ``kw_log``.

Triggers on ``memory_terms`` append one row per memory whose postings a statement added or
removed (migration 0010), in the writer's transaction. A search's first statement, holding the
cache's lock, reads the rows it has not seen, so its snapshot and the cache's position are
taken together: the lists it ranks from are those of its own snapshot, and a memory any
process or server committed before that snapshot is ranked.

Log ids follow inserts, not commits: a transaction may commit after one holding a higher id.
So the rows read are those above the highest id seen, plus those of the transactions the last
snapshot did not see yet (in progress then, or begun after it: ``xid``), whatever their ids.

A search whose snapshot is older than the cache's position (another thread applied newer rows
meanwhile) reads its lists from its snapshot and does not keep them (``version``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from psycopg import Cursor
from psycopg.rows import DictRow, tuple_row

from omoide.store.postgres.arrays import int_array, text_array
from omoide.store.postgres.db import Conn
from omoide.store.sql.postings import MAX_POSTINGS, PostingLists, Postings, Row, from_rows

Tenant = tuple[str, str]

# Rescoring reads the pruned lexemes' rows of the best memories: a statement of one index probe
# per row, each search again. A whole list up to this long is loaded once and kept instead.
RESCORE_LOAD_MAX = 50_000

# Log rows a catch-up reads at most; past them (a process idle through a bulk load) the cache
# forgets its lists instead of patching them.
CATCH_UP_MAX = 20_000

_POSITION = (
    "SELECT pg_current_snapshot()::text AS snap,"
    " (SELECT coalesce(max(id), 0) FROM kw_log) AS high,"
    " (SELECT coalesce(min(id), 0) FROM kw_log) AS low"
)
_NEW = " FROM kw_log WHERE id > %s OR xid >= %s::xid8 OR xid = ANY(%s::xid8[])"


class PostingsCache:
    """Posting lists by ``((user_id, scope_id), lexeme)``, kept in step with ``kw_log``;
    thread-safe."""

    def __init__(self, max_postings: int = MAX_POSTINGS) -> None:
        self._lists = PostingLists(_Source(), max_postings, rescore_load_max=RESCORE_LOAD_MAX)
        self._high = 0  # the highest log id seen
        self._xmax = "0"  # the last snapshot's first unseen transaction, and those in progress
        self._xip: list[str] = []
        self._version = 0  # bumped whenever the log had rows the cache had not seen

    def catch_up(self, conn: Conn, also: tuple[str, Sequence[Any]]) -> tuple[int, Cursor[DictRow]]:
        """Bring the cache to ``conn``'s snapshot, which this takes: call it as the first
        statement of a ``REPEATABLE READ`` transaction. Returns the version to hand to
        ``lists`` and ``rows`` in that transaction, and the cursor of ``also``, a statement
        sent right behind in one pipeline: with the commands the connection holds (its
        ``BEGIN``), one round trip."""
        with self._lists.lock:
            held = bool(self._lists)
            params: tuple[Any, ...] = (self._high, self._xmax, text_array(self._xip))
            if held:  # the entries themselves (a bounded number): the lists hold their memories
                sql = (
                    _POSITION + ", (SELECT coalesce(json_agg(json_build_array(user_id, scope_id,"
                    " seq, op)), '[]') FROM (SELECT user_id, scope_id, seq, op"
                    + _NEW
                    + " LIMIT %s) e) AS entries"
                )
                params = (*params, CATCH_UP_MAX)
            else:  # nothing held: whether anything changed
                sql = _POSITION + ", (SELECT EXISTS (SELECT 1" + _NEW + ")) AS changed"
            with conn.pipeline():  # nothing fetched inside: one round trip
                position = conn.execute(sql, params)
                then = conn.execute(also[0], also[1])
            row = position.fetchone()
            assert row is not None  # one row, always
            entries = row["entries"] if held else []
            changed = bool(entries) if held else bool(row["changed"])
            if held and int(row["low"]) > self._high + 1:
                self._lists.forget()  # trimmed past what we saw: reload lazily
            elif len(entries) >= CATCH_UP_MAX:
                self._lists.forget()  # more changes than patching is worth: reload lazily
            elif any(op == 2 for *_, op in entries):
                self._lists.forget()  # every posting went (TRUNCATE)
            elif entries:
                self._lists.apply(conn, [((u, s), seq, op) for u, s, seq, op in entries])
            if changed or not self._version:
                self._version += 1
            _, xmax, xip = str(row["snap"]).split(":")
            self._high = max(self._high, int(row["high"]))
            self._xmax = xmax
            self._xip = [x for x in xip.split(",") if x]
            return self._version, then

    def lists(
        self, conn: Conn, version: int, tenant: Tenant, terms: Sequence[str], dfs: dict[str, int]
    ) -> dict[str, Postings] | None:
        """The whole lists of ``terms`` in ``conn``'s snapshot, or None if one is longer than
        ``LOAD_MAX`` and not cached (``PostingLists.lists``)."""
        with self._lists.lock:
            return self._lists.lists(conn, tenant, terms, dfs, version == self._version)

    def rows(
        self,
        conn: Conn,
        version: int,
        tenant: Tenant,
        terms: Sequence[str],
        dfs: dict[str, int],
        seqs: np.ndarray,
    ) -> dict[str, Postings]:
        """For each of ``terms``, its postings of the memories ``seqs`` at least
        (``PostingLists.rows``)."""
        with self._lists.lock:
            return self._lists.rows(conn, tenant, terms, dfs, seqs, version == self._version)


class _Source:
    """``memory_terms`` read through the caller's connection (its snapshot)."""

    def read(self, conn: Conn, tenant: Tenant, terms: Sequence[str]) -> dict[str, Postings]:
        """One statement for every list: one round trip (an index range scan per lexeme)."""
        with conn.cursor(row_factory=tuple_row, binary=True) as cur:
            found = cur.execute(
                "SELECT lexeme, seq, w, doc_len FROM memory_terms WHERE user_id = %s"
                " AND scope_id = %s AND lexeme = ANY(%s::text[]) ORDER BY lexeme, seq",
                (*tenant, list(terms)),
            ).fetchall()
        rows: dict[str, list[tuple[int, float, float]]] = {t: [] for t in terms}
        for lexeme, seq, w, doc_len in found:
            rows[str(lexeme)].append((seq, w, doc_len))
        return {t: from_rows(r) for t, r in rows.items()}

    def read_some(
        self, conn: Conn, tenant: Tenant, terms: Sequence[str], seqs: np.ndarray
    ) -> dict[str, Postings]:
        """One statement for every term: one round trip."""
        with conn.cursor(row_factory=tuple_row) as cur:
            found = cur.execute(
                "SELECT lexeme, seq, w, doc_len FROM memory_terms WHERE user_id = %s"
                " AND scope_id = %s AND lexeme = ANY(%s::text[]) AND seq = ANY(%s::bigint[])"
                " ORDER BY lexeme, seq",
                (*tenant, list(terms), int_array(np.sort(seqs).tolist())),
            ).fetchall()
        rows: dict[str, list[tuple[int, float, float]]] = {t: [] for t in terms}
        for lexeme, seq, w, doc_len in found:
            rows[str(lexeme)].append((int(seq), float(w), float(doc_len)))
        return {t: from_rows(r) for t, r in rows.items()}

    def current(
        self, conn: Conn, tenant: Tenant, seqs: Sequence[int], terms: set[str]
    ) -> dict[str, list[Row]]:
        """Through each memory's lexemes (its tsvector), then its posting of each cached one."""
        out: dict[str, list[Row]] = {}
        with conn.cursor(row_factory=tuple_row) as cur:
            found: list[Any] = cur.execute(
                "SELECT t.lexeme, t.seq, t.w, t.doc_len"
                " FROM memories m CROSS JOIN LATERAL unnest(m.tsv) u JOIN memory_terms t"
                " ON t.user_id = m.user_id AND t.scope_id = m.scope_id AND t.lexeme = u.lexeme"
                " AND t.seq = m.seq"
                " WHERE m.user_id = %s AND m.scope_id = %s AND m.seq = ANY(%s::bigint[])"
                " AND u.lexeme = ANY(%s::text[])",
                (*tenant, list(seqs), sorted(terms)),
            ).fetchall()
        for lexeme, seq, w, doc_len in found:
            out.setdefault(str(lexeme), []).append((int(seq), float(w), float(doc_len)))
        return out
