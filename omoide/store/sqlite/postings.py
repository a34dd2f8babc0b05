"""The keyword index's posting lists as numpy arrays: an in-process cache of ``kw_postings``.

Why: ranking in SQL walked each posting of the query's terms through the B-tree and summed them
in a GROUP BY, most of a hybrid search's time at 100k memories in one tenant. Here a term's
postings (up to ``LOAD_MAX`` of them) are loaded once, the first time a search needs them, and
scored with vector arithmetic (docs/decisions/0008 has the figures). Longer lists are left to
SQLite, which scans them faster than Python can read them.

SQLite stays the source of truth. Every kw_docs insert or delete appends to ``kw_log`` (by
trigger, in the writer's transaction; the memory's seq, no words), and before each
ranking the cache applies the entries it has not seen to the lists it holds, so a memory
acknowledged by any process is ranked and a deleted one never is. A search whose snapshot is
older than the cache reads its lists from that snapshot instead.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

# Postings held across tenants and terms (24 bytes each: ~96 MB at the bound); least recently
# used lists go first.
MAX_POSTINGS = 4_000_000
# Lists up to this long are loaded when a search first needs them (~5 ms). Reading a longer
# one into Python costs several times what SQLite's own scan does (a name's 32k postings at
# 100k memories: ~30 ms against ~7), so searches that need one rank in SQL instead
# (``keyword.rank``) and rescoring reads only the rows it scores (``PostingsCache.rows``).
LOAD_MAX = 5_000
# Rescoring needs ~300 rows of a list: a whole one is loaded only when about as cheap.
RESCORE_LOAD_MAX = 500
_LOG_KEEP = 100_000
_PATCH_MAX = 2_000  # memories of a tenant changed since the last search, patched in place


@dataclass(frozen=True)
class Postings:
    """One term's postings in one tenant, ascending by memory seq."""

    seqs: np.ndarray  # int64
    tf: np.ndarray  # float64: text count + 0.4 * context count
    dl: np.ndarray  # float64: the memory's length


_EMPTY = Postings(np.zeros(0, np.int64), np.zeros(0, np.float64), np.zeros(0, np.float64))


class PostingsCache:
    """Posting lists by ``(tenant, term)``, kept in step with ``kw_log``; thread-safe."""

    def __init__(self, max_postings: int = MAX_POSTINGS) -> None:
        self._lock = threading.Lock()
        self._lists: OrderedDict[tuple[str, str], Postings] = OrderedDict()
        self._tenants: Counter[str] = Counter()  # lists held per tenant
        self._size = 0
        self._max = max_postings
        self._log_seq = 0

    def lists(
        self, conn: sqlite3.Connection, tenant: str, terms: Sequence[str], dfs: dict[str, int]
    ) -> dict[str, Postings] | None:
        """The whole lists of ``terms`` as ``conn``'s snapshot (the caller's) sees them, or
        None if one is longer than ``LOAD_MAX`` and not cached."""
        with self._lock:
            current = self._catch_up(conn)
            if any(dfs[t] > LOAD_MAX and not self._has(tenant, t, current) for t in terms):
                return None
            return {t: self._whole(conn, tenant, t, current) for t in terms}

    def rows(
        self,
        conn: sqlite3.Connection,
        tenant: str,
        terms: Sequence[str],
        dfs: dict[str, int],
        seqs: np.ndarray,
    ) -> dict[str, Postings]:
        """For each of ``terms``, its postings of the memories ``seqs`` at least (ascending),
        as ``conn``'s snapshot sees them: a whole list when it is cached or small. A longer
        list is not loaded for rescoring: only the rows asked for are read (~0.4 ms for 300
        of a name's 30k postings at 100k memories, whose whole list took ~30 ms to load). A
        thread that loaded such lists for later searches made them slower, not faster
        (bench/versions.py at 100k: p95 115-120 vs 41-46 ms while it loaded 109 lists)."""
        with self._lock:
            current = self._catch_up(conn)
            return {
                t: self._whole(conn, tenant, t, current)
                if dfs[t] <= RESCORE_LOAD_MAX or self._has(tenant, t, current)
                else _read_some(conn, tenant, t, seqs)
                for t in terms
            }

    def _has(self, tenant: str, term: str, current: bool) -> bool:
        return current and (tenant, term) in self._lists

    def _whole(self, conn: sqlite3.Connection, tenant: str, term: str, current: bool) -> Postings:
        """The cached list, or the one read from ``conn`` (kept if the cache is ``current``
        with that snapshot)."""
        key = (tenant, term)
        found = self._lists.get(key) if current else None
        if found is not None:
            self._lists.move_to_end(key)
            return found
        found = _read(conn, tenant, term)
        if current:
            self._keep(key, found)
        return found

    def _keep(self, key: tuple[str, str], postings: Postings) -> None:
        if len(postings.seqs) > self._max:
            return  # served, not kept
        self._lists[key] = postings
        self._tenants[key[0]] += 1
        self._size += len(postings.seqs)
        while self._size > self._max:
            self._drop(next(iter(self._lists)))

    def _drop(self, key: tuple[str, str]) -> None:
        gone = self._lists.pop(key)
        self._size -= len(gone.seqs)
        self._tenants[key[0]] -= 1
        if not self._tenants[key[0]]:
            del self._tenants[key[0]]

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
            self._forget()  # the log was trimmed past what we saw: reload lazily
        if self._lists:
            rows = conn.execute(
                "SELECT tenant, memory_seq, op FROM kw_log WHERE seq > ? AND seq <= ?",
                (self._log_seq, high),
            )
            self._apply(conn, rows)
        self._log_seq = high
        return True

    def _forget(self) -> None:
        self._lists.clear()
        self._tenants.clear()
        self._size = 0

    def _apply(self, conn: sqlite3.Connection, rows: Iterable[tuple[str, int, int]]) -> None:
        """Each memory the entries name leaves the lists that hold it (for a deleted one, every
        cached list of its tenant is searched: the log keeps no words) and joins those of the
        terms it has in this snapshot."""
        touched = self._touched(rows)
        changes: dict[tuple[str, str], tuple[set[int], list[tuple[int, float, float]]]] = {}
        deleted: dict[str, list[int]] = {}
        for (tenant, seq), was_deleted in touched.items():
            if was_deleted:
                deleted.setdefault(tenant, []).append(seq)
        for key, found in self._lists.items():
            if key[0] in deleted:
                held = found.seqs[np.isin(found.seqs, deleted[key[0]])]
                if len(held):
                    changes.setdefault(key, (set(), []))[0].update(held.tolist())
        for tenant, seq in touched:
            row = conn.execute(
                "SELECT dl, terms FROM kw_docs WHERE memory_seq = ? AND tenant = ?",
                (seq, tenant),
            ).fetchone()
            for term in json.loads(row[1]) if row is not None else []:
                key = (tenant, term)
                if key not in self._lists:
                    continue
                tf = conn.execute(
                    "SELECT tf FROM kw_postings WHERE tenant = ? AND term = ? AND memory_seq = ?",
                    (tenant, term, seq),
                ).fetchone()
                gone, added = changes.setdefault(key, (set(), []))
                gone.add(seq)  # never twice in one list
                if tf is not None:
                    added.append((seq, float(tf[0]), float(row[0])))
        for key, (gone, added) in changes.items():
            self._replace(key, _patched(self._lists[key], gone, added))

    def _touched(self, rows: Iterable[tuple[str, int, int]]) -> dict[tuple[str, int], bool]:
        """The memories of cached tenants the entries name, and whether one was unindexed; a
        tenant with more than ``_PATCH_MAX`` of them (an import, a large batch) loses its lists
        instead: reading them again is cheaper than patching them."""
        touched: dict[tuple[str, int], bool] = {}
        for tenant, seq, op in rows:
            if tenant in self._tenants:
                memory = (tenant, int(seq))
                touched[memory] = touched.get(memory, False) or op == 0
        many = Counter(tenant for tenant, _ in touched)
        for tenant in [t for t, n in many.items() if n > _PATCH_MAX]:
            for key in [k for k in self._lists if k[0] == tenant]:
                self._drop(key)
        return {k: v for k, v in touched.items() if many[k[0]] <= _PATCH_MAX}

    def _replace(self, key: tuple[str, str], postings: Postings) -> None:
        self._drop(key)
        self._keep(key, postings)


def _patched(postings: Postings, gone: set[int], added: list[tuple[int, float, float]]) -> Postings:
    keep = ~np.isin(postings.seqs, np.fromiter(gone, np.int64, len(gone)))
    seqs = np.concatenate([postings.seqs[keep], np.array([a[0] for a in added], np.int64)])
    tf = np.concatenate([postings.tf[keep], np.array([a[1] for a in added], np.float64)])
    dl = np.concatenate([postings.dl[keep], np.array([a[2] for a in added], np.float64)])
    order = np.argsort(seqs, kind="stable")
    return Postings(seqs[order], tf[order], dl[order])


def _read_some(conn: sqlite3.Connection, tenant: str, term: str, seqs: np.ndarray) -> Postings:
    """The postings of one term that belong to ``seqs``, ascending."""
    marks = ",".join("?" * len(seqs))
    found = conn.execute(
        "SELECT memory_seq, tf, dl FROM kw_postings WHERE tenant = ? AND term = ?"
        f" AND memory_seq IN ({marks}) ORDER BY memory_seq",
        (tenant, term, *np.sort(seqs).tolist()),
    ).fetchall()
    return _postings(found)


def _read(conn: sqlite3.Connection, tenant: str, term: str) -> Postings:
    """One list from the file, in key order (ascending seq)."""
    found = conn.execute(
        "SELECT memory_seq, tf, dl FROM kw_postings WHERE tenant = ? AND term = ?",
        (tenant, term),
    ).fetchall()
    return _postings(found)


def _postings(found: list[tuple[int, float, int]]) -> Postings:
    if not found:
        return _EMPTY
    table = np.array(found, dtype=np.float64)
    return Postings(table[:, 0].astype(np.int64), table[:, 1].copy(), table[:, 2].copy())


def trim_log(conn: sqlite3.Connection) -> None:
    """Keep ``kw_log`` bounded; caches that fell behind the trimmed part reload."""
    conn.execute("DELETE FROM kw_log WHERE seq <= (SELECT max(seq) FROM kw_log) - ?", (_LOG_KEEP,))
