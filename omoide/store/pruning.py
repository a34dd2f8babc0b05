"""Which query terms a keyword search ranks: the frequent-term pruning both backends apply.

One rule for both backends' keyword search (``store/sqlite/keyword.py``,
``store/postgres/fts.py``), decided on the tenant's own frequencies: once the tenant has
``MIN_DOCS`` memories, rarest first, until a term is in ``COMMON_SHARE`` of them or the
postings to rank would pass ``POSTINGS_MAX``. Frequent terms carry little of bm25's weight
yet cost most of the time (PostgreSQL, 100k memories of one tenant: a speaker's name in 32% of
them made a search 2.3 s); below ``MIN_DOCS`` nothing is pruned (on six memories a content
word is easily in 30% of them). Terms the tenant never used are dropped; never all of the ones
it used. The budget is a number of postings, not a share of the tenant: what a query needs is
enough candidates, and the cost of ranking them no longer grows with the tenant.

Pruned terms still count where it matters: the best ``RESCORE_DEPTH`` memories by the kept
terms are scored again with every term the tenant used and re-ranked (``rescore``), the rest
keep their order after them. Measured (docs/decisions/0002, bench/README.md: each LoCoMo
dev conversation in a tenant with 3k-100k memories of another conversation's sentences):
dropping terms beyond 15% of the tenant's memories, the rule before, lost 0.02-0.045
recall@10 against no pruning; this rule lost nothing (the same hits, question for question).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

MIN_DOCS = 2_000
COMMON_SHARE = 0.3
POSTINGS_MAX = 5_000
RESCORE_DEPTH = 300


def prune(terms: Sequence[str], dfs: dict[str, int], docs: int) -> list[str]:
    """The terms worth ranking, in their given order."""
    present = [t for t in terms if dfs.get(t, 0) > 0]
    if docs < MIN_DOCS or len(present) < 2:
        return present
    keep: set[str] = set()
    postings = 0
    for df, term in sorted((dfs[t], t) for t in present):
        if keep and (df >= COMMON_SHARE * docs or postings + df > POSTINGS_MAX):
            break
        keep.add(term)
        postings += df
    return [t for t in present if t in keep]


def dropped(terms: Sequence[str], dfs: dict[str, int], kept: Sequence[str]) -> list[str]:
    """The terms the tenant used that ``prune`` left out, in their given order."""
    keep = set(kept)
    return [t for t in terms if dfs.get(t, 0) > 0 and t not in keep]


def rescore(
    ranked: Sequence[tuple[int, float]], extra: Mapping[int, float], depth: int
) -> list[tuple[int, float]]:
    """``ranked`` (best first by the kept terms) with the first ``depth`` re-ranked by their
    score plus ``extra`` (the pruned terms' score), ties by seq; the rest after them, as they
    were."""
    head = [(seq, score + extra.get(seq, 0.0)) for seq, score in ranked[:depth]]
    head.sort(key=lambda r: (-r[1], r[0]))
    return [*head, *ranked[depth:]]
