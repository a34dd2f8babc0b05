"""Query expansion from embedding neighbours (issue 13, point 3: late fusion of a sparse
expansion, no LLM).

A question often names a thing by another word than the turn that answers it ("destress" /
"relax", "books" / "novel"). For each query word, the words of the top fused hits whose word
vectors (the memory embedder's, one word at a time) are nearest to it, above a cosine
``similarity``, form a second keyword query with the query's words, fused as one more signal.
The neighbours come from the tenant's own top hits, so the expansion uses nothing of other
tenants, and word vectors depend on the word alone.

Measured on the LoCoMo dev set (docs/decisions/0004, bench/README.md): 3 neighbours per word
from the top 30 hits, cosine >= 0.5, weight 0.15: +0.017 recall@10, both conversations up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import numpy as np

from omoide.retrieval.rerank import speaker
from omoide.retrieval.terms import keyword_terms

WordVectors = Callable[[Sequence[str]], Mapping[str, np.ndarray]]


def expandable(word: str) -> bool:
    """Words worth a vector: alphabetic, longer than two letters (not numbers or ids)."""
    return len(word) > 2 and word.isalpha()


@lru_cache(maxsize=20_000)
def _words(text: str) -> tuple[str, ...]:
    """The expandable words of a memory's text (the same top hits come back query after
    query, so their words are read once)."""
    return tuple(w for w in keyword_terms(text, 10_000) if expandable(w))


def expansion_terms(
    query: str,
    texts: Sequence[str],
    vectors: WordVectors,
    per_word: int,
    similarity: float,
) -> list[str]:
    """Up to ``per_word`` words of ``texts`` per query word, nearest first, each with a cosine
    >= ``similarity`` to it; never a query word or a speaker's name (every turn of a speaker
    has it). ``vectors`` gives unit word vectors, of the words it knows. Deterministic: words in
    first-seen order."""
    asked = keyword_terms(query)
    names = {part for t in texts if (s := speaker(t)) for part in s.split()}
    seeds = [w for w in asked if expandable(w) and w not in names]
    if not seeds or per_word <= 0:
        return []
    skip = set(asked) | names
    pool: dict[str, None] = {}
    for text in texts:
        for word in _words(text):
            if word not in skip:
                pool[word] = None
    if not pool:
        return []
    found = vectors([*seeds, *pool])  # words without a vector (outside its list) take no part
    words = [w for w in pool if w in found]
    if not words:
        return []
    matrix = np.stack([found[w] for w in words])
    out: dict[str, None] = {}
    for seed in (s for s in seeds if s in found):
        sims = matrix @ found[seed]
        for j in np.argsort(-sims, kind="stable")[:per_word]:
            if sims[j] >= similarity:
                out[words[j]] = None
    return list(out)
