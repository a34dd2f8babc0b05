"""SQLite's side of the in-process posting lists (``store/sql/postings.py``): ``kw_log``.

Every kw_docs insert or delete appends to ``kw_log`` (by trigger, in the writer's transaction;
the memory's seq, no words), and before each ranking the cache applies the entries it has not
seen to the lists it holds. A search whose snapshot is older than the cache reads its lists
from that snapshot instead.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import numpy as np

from omoide.store.sql.postings import MAX_POSTINGS, PostingLists, Postings, Row, from_rows

_LOG_KEEP = 100_000


class PostingsCache:
    """Posting lists by ``(tenant token, term)``, kept in step with ``kw_log``; thread-safe."""

    def __init__(self, max_postings: int = MAX_POSTINGS) -> None:
        self._lists = PostingLists(_Source(), max_postings)
        self._log_seq = 0

    def lists(
        self, conn: sqlite3.Connection, tenant: str, terms: Sequence[str], dfs: dict[str, int]
    ) -> dict[str, Postings] | None:
        """The whole lists of ``terms`` as ``conn``'s snapshot (the caller's) sees them, or
        None if one is longer than ``LOAD_MAX`` and not cached."""
        with self._lists.lock:
            return self._lists.lists(conn, tenant, terms, dfs, self._catch_up(conn))

    def rows(
        self,
        conn: sqlite3.Connection,
        tenant: str,
        terms: Sequence[str],
        dfs: dict[str, int],
        seqs: np.ndarray,
    ) -> dict[str, Postings]:
        """For each of ``terms``, its postings of the memories ``seqs`` at least (ascending),
        as ``conn``'s snapshot sees them (``PostingLists.rows``)."""
        with self._lists.lock:
            return self._lists.rows(conn, tenant, terms, dfs, seqs, self._catch_up(conn))

    def _catch_up(self, conn: sqlite3.Connection) -> bool:
        """Apply the log up to ``conn``'s snapshot; False if the snapshot is older than the
        cache (a search that began before a write another search has already seen)."""
        # Two statements: SQLite answers a lone min() or max() from the index, both by a scan.
        high = conn.execute("SELECT max(seq) FROM kw_log").fetchone()[0] or 0
        if high < self._log_seq:
            return False
        if high == self._log_seq:
            return True
        low = conn.execute("SELECT min(seq) FROM kw_log").fetchone()[0]
        if self._lists and (low is None or low > self._log_seq + 1):
            self._lists.forget()  # the log was trimmed past what we saw: reload lazily
        if self._lists:
            rows = conn.execute(
                "SELECT tenant, memory_seq, op FROM kw_log WHERE seq > ? AND seq <= ?",
                (self._log_seq, high),
            )
            self._lists.apply(conn, rows)
        self._log_seq = high
        return True


class _Source:
    """``kw_postings`` read through the caller's connection."""

    def read(
        self, conn: sqlite3.Connection, tenant: str, terms: Sequence[str]
    ) -> dict[str, Postings]:
        """Each list in key order (ascending seq), a statement per term (SQLite has no round
        trip to save)."""
        return {
            term: from_rows(
                conn.execute(
                    "SELECT memory_seq, tf, dl FROM kw_postings WHERE tenant = ? AND term = ?",
                    (tenant, term),
                ).fetchall()
            )
            for term in terms
        }

    def read_some(
        self, conn: sqlite3.Connection, tenant: str, terms: Sequence[str], seqs: np.ndarray
    ) -> dict[str, Postings]:
        """A statement per term (SQLite has no round trip to save)."""
        marks = ",".join("?" * len(seqs))
        ascending = np.sort(seqs).tolist()
        return {
            term: from_rows(
                conn.execute(
                    "SELECT memory_seq, tf, dl FROM kw_postings WHERE tenant = ? AND term = ?"
                    f" AND memory_seq IN ({marks}) ORDER BY memory_seq",
                    (tenant, term, *ascending),
                ).fetchall()
            )
            for term in terms
        }

    def current(
        self, conn: sqlite3.Connection, tenant: str, seqs: Sequence[int], terms: set[str]
    ) -> dict[str, list[Row]]:
        """Through each memory's ``kw_docs`` row (its terms), then a posting per cached term."""
        out: dict[str, list[Row]] = {}
        for seq in seqs:
            row = conn.execute(
                "SELECT dl, terms FROM kw_docs WHERE memory_seq = ? AND tenant = ?",
                (seq, tenant),
            ).fetchone()
            for term in json.loads(row[1]) if row is not None else []:
                if term not in terms:
                    continue
                tf = conn.execute(
                    "SELECT tf FROM kw_postings WHERE tenant = ? AND term = ? AND memory_seq = ?",
                    (tenant, term, seq),
                ).fetchone()
                if tf is not None:
                    out.setdefault(term, []).append((seq, float(tf[0]), float(row[0])))
        return out


def trim_log(conn: sqlite3.Connection) -> None:
    """Keep ``kw_log`` bounded; caches that fell behind the trimmed part reload."""
    conn.execute("DELETE FROM kw_log WHERE seq <= (SELECT max(seq) FROM kw_log) - ?", (_LOG_KEEP,))
