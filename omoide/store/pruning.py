"""Which query terms a keyword search ranks: the frequent-term pruning both backends apply.

One rule for both backends' keyword search (``store/sqlite/keyword.py``,
``store/postgres/fts.py``), decided on the tenant's own frequencies: once the tenant has
``MIN_DOCS`` memories, rarest first, until a term is in ``COMMON_SHARE`` of them or the
postings to rank pass ``POSTINGS_SHARE`` of them. Such terms have an IDF near 0 yet cost most
of the time (PostgreSQL, 100k memories of one tenant: a speaker's name in 32% of them made
a search 2.3 s); below ``MIN_DOCS`` nothing is pruned (on six memories a content word is
easily in 30% of them). Terms the tenant never used are dropped; never all of the ones it used.

Pruned terms still count where it matters: the best ``RESCORE_DEPTH`` memories by the kept
terms are scored again with every term the tenant used and re-ranked (``rescore``), the rest
keep their order after them. Measured (bench/locomo_scale.py: each LoCoMo dev conversation in a
tenant with 100k memories of another conversation's sentences): pruning alone at a 15% share
lost 0.024 recall@10 against no pruning at all; a 2% share with the best 500 rescored lost
nothing (the same hits, question for question) and searched faster than the 15% share alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

MIN_DOCS = 2_000
COMMON_SHARE = 0.3
POSTINGS_MAX = 5_000
RESCORE_DEPTH = 500


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
