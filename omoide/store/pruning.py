"""Which query terms a keyword search ranks: the frequent-term pruning both backends apply.

One rule for both backends' keyword search (``store/sqlite/keyword.py``,
``store/postgres/fts.py``), decided on the tenant's own frequencies: once the tenant has
``MIN_DOCS`` memories, rarest first, until a term is in ``COMMON_SHARE`` of them or the
postings to rank pass ``POSTINGS_SHARE`` of them. Such terms have an IDF near 0 yet cost most
of the time (PostgreSQL, 100k memories of one tenant: a speaker's name in 32% of them made
a search 2.3 s); below ``MIN_DOCS`` nothing is pruned (on six memories a content word is
easily in 30% of them). Terms the tenant never used are dropped; never all of the ones it used.
"""

from __future__ import annotations

from collections.abc import Sequence

MIN_DOCS = 2_000
COMMON_SHARE = 0.3
POSTINGS_SHARE = 0.15


def prune(terms: Sequence[str], dfs: dict[str, int], docs: int) -> list[str]:
    """The terms worth ranking, in their given order."""
    present = [t for t in terms if dfs.get(t, 0) > 0]
    if docs < MIN_DOCS or len(present) < 2:
        return present
    keep: set[str] = set()
    postings = 0
    for df, term in sorted((dfs[t], t) for t in present):
        if keep and (df >= COMMON_SHARE * docs or postings + df > POSTINGS_SHARE * docs):
            break
        keep.add(term)
        postings += df
    return [t for t in present if t in keep]
