"""Posting lists as numpy arrays, cached in process, for either backend's keyword index.

Why: ranking in SQL walks each posting of the query's terms through a B-tree and sums them in
a GROUP BY, most of a hybrid search's time in a large tenant. Here a term's postings (up to a
bound) are loaded once, the first time a search needs them, and scored with vector arithmetic
(docs/decisions/0008).

The database stays the source of truth. Each backend keeps a change log (the memory's seq and
whether it was indexed or unindexed, never its words), filled by triggers in the writer's
transaction, and its cache applies the entries it has not seen before it ranks: a memory
acknowledged by any process or server is ranked, a deleted one never is.

What differs per backend is composed in, not inherited: a ``Source`` reads whole lists (all
those a search misses at once: one round trip on PostgreSQL), the rows of some memories, and
the current postings of changed memories; following the log (which
entries are new, in which snapshot) is the backend's own (``store/sqlite/postings.py``,
``store/postgres/postings.py``). A tenant is any hashable key of the backend's choosing.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

# Postings held across tenants and terms (24 bytes each: ~96 MB at the bound); least recently
# used lists go first.
MAX_POSTINGS = 4_000_000
# Lists up to this long are loaded when a search first needs them. Reading a longer one into
# Python costs several times what the database's own scan does, so searches that need one
# rank in SQL instead, and rescoring reads only the rows it scores (``PostingLists.rows``).
LOAD_MAX = 5_000
# Rescoring needs a few hundred rows of a list: a whole one is loaded only when about as cheap.
RESCORE_LOAD_MAX = 500
PATCH_MAX = 2_000  # memories of a tenant changed since the last search, patched in place

# An entry of a change log: (tenant, memory seq, op), op 1 indexed, 0 unindexed.
Entry = tuple[Hashable, int, int]
# A posting read from the database: (memory seq, term frequency, document length).
Row = tuple[int, float, float]


@dataclass(frozen=True)
class Postings:
    """One term's postings in one tenant, ascending by memory seq."""

    seqs: np.ndarray  # int64
    tf: np.ndarray  # float64: weighted term frequency (text + 0.4 * context)
    dl: np.ndarray  # float64: the memory's length


EMPTY = Postings(np.zeros(0, np.int64), np.zeros(0, np.float64), np.zeros(0, np.float64))


class Source(Protocol):
    """How a backend reads its postings, in the caller's snapshot (``conn``)."""

    def read(self, conn: Any, tenant: Any, terms: Sequence[str]) -> dict[str, Postings]:
        """The whole list of each of ``terms`` (one read if it can)."""
        ...

    def read_some(
        self, conn: Any, tenant: Any, terms: Sequence[str], seqs: np.ndarray
    ) -> dict[str, Postings]:
        """The postings of each of ``terms`` that belong to ``seqs`` (one read if it can)."""
        ...

    def current(
        self, conn: Any, tenant: Any, seqs: Sequence[int], terms: set[str]
    ) -> dict[str, list[Row]]:
        """The postings the memories ``seqs`` have now in ``terms`` (absent: none)."""
        ...


class PostingLists:
    """Posting lists by ``(tenant, term)``, least recently used dropped first. Not locked:
    its owner (a backend's cache) holds ``lock`` around each use and its log catch-up."""

    def __init__(
        self,
        source: Source,
        max_postings: int = MAX_POSTINGS,
        *,
        rescore_load_max: int | None = None,
    ) -> None:
        self.lock = threading.Lock()
        self.source = source
        # None: ``RESCORE_LOAD_MAX``; a backend whose reads of some rows cost more than its
        # reads of a whole list over a few searches loads longer lists (PostgreSQL)
        self._rescore_load_max = rescore_load_max
        self._lists: OrderedDict[tuple[Any, str], Postings] = OrderedDict()
        self._tenants: Counter[Any] = Counter()  # lists held per tenant
        self._size = 0
        self._max = max_postings

    def __bool__(self) -> bool:
        return bool(self._lists)

    def __contains__(self, key: tuple[Any, str]) -> bool:
        return key in self._lists

    def holds(self, tenant: Any) -> bool:
        return tenant in self._tenants

    def lists(
        self, conn: Any, tenant: Any, terms: Sequence[str], dfs: dict[str, int], current: bool
    ) -> dict[str, Postings] | None:
        """The whole lists of ``terms``, or None if one is longer than ``LOAD_MAX`` and not
        cached. ``current``: the cache is in step with ``conn``'s snapshot (else lists are
        read from it and not kept)."""
        if any(dfs[t] > LOAD_MAX and not self._has(tenant, t, current) for t in terms):
            return None
        return self._whole(conn, tenant, terms, current)

    def rows(
        self,
        conn: Any,
        tenant: Any,
        terms: Sequence[str],
        dfs: dict[str, int],
        seqs: np.ndarray,
        current: bool,
    ) -> dict[str, Postings]:
        """For each of ``terms``, its postings of the memories ``seqs`` at least (ascending):
        a whole list when it is cached or small, else only the rows asked for (a thread that
        loaded long lists for later searches made them slower, not faster)."""
        bound = RESCORE_LOAD_MAX if self._rescore_load_max is None else self._rescore_load_max
        whole = [t for t in terms if dfs[t] <= bound or self._has(tenant, t, current)]
        some = [t for t in terms if t not in whole]
        found = self.source.read_some(conn, tenant, some, seqs) if some else {}
        found.update(self._whole(conn, tenant, whole, current))
        return found

    def _has(self, tenant: Any, term: str, current: bool) -> bool:
        return current and (tenant, term) in self._lists

    def _whole(
        self, conn: Any, tenant: Any, terms: Sequence[str], current: bool
    ) -> dict[str, Postings]:
        """The whole lists of ``terms``: the cached ones, and the others in one read."""
        found: dict[str, Postings] = {}
        for term in terms:
            cached = self._lists.get((tenant, term)) if current else None
            if cached is not None:
                self._lists.move_to_end((tenant, term))
                found[term] = cached
        missing = [t for t in terms if t not in found]
        if missing:
            for term, postings in self.source.read(conn, tenant, missing).items():
                if current:
                    self._keep((tenant, term), postings)
                found[term] = postings
        return {t: found[t] for t in terms}

    def _keep(self, key: tuple[Any, str], postings: Postings) -> None:
        if len(postings.seqs) > self._max:
            return  # served, not kept
        self._lists[key] = postings
        self._tenants[key[0]] += 1
        self._size += len(postings.seqs)
        while self._size > self._max:
            self._drop(next(iter(self._lists)))

    def _drop(self, key: tuple[Any, str]) -> None:
        gone = self._lists.pop(key)
        self._size -= len(gone.seqs)
        self._tenants[key[0]] -= 1
        if not self._tenants[key[0]]:
            del self._tenants[key[0]]

    def forget(self) -> None:
        self._lists.clear()
        self._tenants.clear()
        self._size = 0

    def apply(self, conn: Any, entries: Iterable[Entry]) -> None:
        """Each memory the entries name leaves the lists that hold it (for an unindexed one,
        every cached list of its tenant is searched: the log keeps no words) and joins those
        of the terms it has in ``conn``'s snapshot. Applying an entry twice changes nothing."""
        touched = self._touched(entries)
        changes: dict[tuple[Any, str], tuple[set[int], list[Row]]] = {}
        deleted: dict[Any, list[int]] = {}
        by_tenant: dict[Any, list[int]] = {}
        for (tenant, seq), was_deleted in touched.items():
            by_tenant.setdefault(tenant, []).append(seq)
            if was_deleted:
                deleted.setdefault(tenant, []).append(seq)
        for key, found in self._lists.items():
            if key[0] in deleted:
                held = found.seqs[np.isin(found.seqs, deleted[key[0]])]
                if len(held):
                    changes.setdefault(key, (set(), []))[0].update(held.tolist())
        for tenant, seqs in by_tenant.items():
            cached = {term for t, term in self._lists if t == tenant}
            for term, rows in self.source.current(conn, tenant, seqs, cached).items():
                key = (tenant, term)
                if key not in self._lists:
                    continue
                gone, added = changes.setdefault(key, (set(), []))
                for row in rows:
                    gone.add(row[0])  # never twice in one list
                    added.append(row)
        for key, (gone, added) in changes.items():
            found = self._lists[key]
            self._drop(key)
            self._keep(key, patched(found, gone, added))

    def _touched(self, entries: Iterable[Entry]) -> dict[tuple[Any, int], bool]:
        """The memories of cached tenants the entries name, and whether one was unindexed; a
        tenant with more than ``PATCH_MAX`` of them (an import, a large batch) loses its
        lists instead: reading them again is cheaper than patching them."""
        touched: dict[tuple[Any, int], bool] = {}
        for tenant, seq, op in entries:
            if tenant in self._tenants:
                memory = (tenant, int(seq))
                touched[memory] = touched.get(memory, False) or op == 0
        many = Counter(tenant for tenant, _ in touched)
        for tenant in [t for t, n in many.items() if n > PATCH_MAX]:
            for key in [k for k in self._lists if k[0] == tenant]:
                self._drop(key)
        return {k: v for k, v in touched.items() if many[k[0]] <= PATCH_MAX}


def patched(postings: Postings, gone: set[int], added: list[Row]) -> Postings:
    """``postings`` without the memories ``gone``, with ``added``, ascending by seq."""
    keep = ~np.isin(postings.seqs, np.fromiter(gone, np.int64, len(gone)))
    seqs = np.concatenate([postings.seqs[keep], np.array([a[0] for a in added], np.int64)])
    tf = np.concatenate([postings.tf[keep], np.array([a[1] for a in added], np.float64)])
    dl = np.concatenate([postings.dl[keep], np.array([a[2] for a in added], np.float64)])
    order = np.argsort(seqs, kind="stable")
    return Postings(seqs[order], tf[order], dl[order])


def from_rows(found: Sequence[Sequence[float]]) -> Postings:
    """A list from ``(seq, tf, dl)`` rows, in their order."""
    if not found:
        return EMPTY
    table = np.array(found, dtype=np.float64)
    return Postings(table[:, 0].astype(np.int64), table[:, 1].copy(), table[:, 2].copy())


def summed(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Each memory's score summed over the terms, in the parts' order (a left fold from the
    first, as SQL's ``sum`` adds; the same sums whatever else the cache holds); memories
    ascending."""
    if len(parts) == 1:
        return parts[0]
    seqs = np.concatenate([p[0] for p in parts])
    scores = np.concatenate([p[1] for p in parts])
    unique, where = np.unique(seqs, return_inverse=True)
    return unique, np.bincount(where, weights=scores, minlength=len(unique))


def best(seqs: np.ndarray, scores: np.ndarray, n: int) -> np.ndarray:
    """Positions of the ``n`` best, by score descending then seq ascending."""
    if len(scores) > n:
        floor = np.partition(scores, len(scores) - n)[len(scores) - n]
        pool = np.flatnonzero(scores >= floor)  # every tie at the floor competes on seq
    else:
        pool = np.arange(len(scores))
    return pool[np.lexsort((seqs[pool], -scores[pool]))][:n]
