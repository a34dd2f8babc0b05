"""Fusing ranked lists of ``(id, score)`` from several signals into one ranking.

Scores mean relevance on one scale for every query (what ``threshold`` filters on), not only
an order: ranks alone gave a nonsense query's best hit the same score as a perfect match's.

* hybrid: the fused rank value (RRF or weighted, 1 for a hit first in every signal) times the
  query's relevance ``Q = 1 - exp(-(c - relevance_floor) / relevance_scale)`` (0 when ``c`` is
  below the floor), ``c`` the best cosine among the dense hits. The order stays the fusion's;
  ``Q`` says whether the tenant holds anything about the query at all. On the LoCoMo dev set
  the best cosine of a question asked to its own conversation is >= 0.54 for 90% of them,
  asked to the other conversation <= 0.42 for 90% (a neighbouring topic of casual chat, often):
  with 0.35 / 0.12, threshold 0.3 keeps 99.6% of real questions and drops 83% of unrelated
  ones (bench/locomo.py reports it). The curve saturates: a paraphrase (cosine 0.74) scores
  0.96, never 1, and a loosely related memory (0.42: "What does the user like to drink?" for
  "The user likes jasmine tea") still passes 0.3.
* dense only: each hit's own cosine, clipped to [0, 1] (what JiuwenMemory's ``threshold``
  means); MiniLM puts unrelated text below 0.3 and loosely related text at 0.35-0.5.
* keywords only (or no vector yet): ``bm25 / (bm25 + keyword_saturation)``; bm25 cannot tell an
  unrelated query that shares a rare word from a relevant one, so this is the weakest scale.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

from omoide.retrieval.recipes import SearchRecipe
from omoide.retrieval.rerank import boost_factors
from omoide.types import Signal

Ranked = list[tuple[str, float]]
# Per signal of a hit: its (rank, score) there. Plain tuples: a search fuses ~300 candidates and
# returns ~10, and building a validated ``Signal`` for each candidate cost ~1.5 ms a search.
Fused = tuple[str, float, dict[str, tuple[int, float]]]


def fuse(recipe: SearchRecipe, signals: dict[str, Ranked]) -> list[Fused]:
    """Return ``(id, score in [0, 1], per-signal rank and score)``, best first.

    Ties break on the id so the same input always gives the same order.
    """
    ids, scores, seen = _fused(recipe, signals)
    return [(i, scores[i], seen[i]) for i in ids]


def signal_detail(seen: dict[str, tuple[int, float]]) -> dict[str, Signal]:
    """A hit's per-signal detail as the API reports it."""
    return {name: Signal(rank=rank, score=score) for name, (rank, score) in seen.items()}


def fused_ids(recipe: SearchRecipe, signals: dict[str, Ranked], limit: int) -> list[str]:
    """The first ``limit`` ids of ``fuse``'s order, without building its per-hit signals (what
    feedback and expansion read their top hits from before fusing again)."""
    return _fused(recipe, signals)[0][:limit]


_Seen = dict[str, dict[str, tuple[int, float]]]


def _fused(
    recipe: SearchRecipe, signals: dict[str, Ranked]
) -> tuple[list[str], dict[str, float], _Seen]:
    weights = {
        "keyword": recipe.keyword_weight,
        "vector": recipe.vector_weight,
        "feedback": recipe.feedback_weight,
        "expansion": recipe.expansion_weight,
    }
    active = {name: hits for name, hits in signals.items() if weights.get(name, 0) > 0}
    seen: _Seen = {}
    for name, hits in active.items():
        for rank, (item_id, score) in enumerate(hits):
            seen.setdefault(item_id, {})[name] = (rank, score)
    dense = active.get("vector") or []
    # ``order`` ranks, ``scores`` say how relevant: with a cosine below the floor every score
    # is 0, and the order still counts.
    if list(active) == ["vector"]:
        # The cosine itself: the JiuwenMemory interface's threshold is a cosine threshold.
        order = {i: sig["vector"][1] for i, sig in seen.items()}
        scores = {i: max(0.0, min(1.0, value)) for i, value in order.items()}
    elif not dense:
        order = {i: s[1] for i, sig in seen.items() if (s := sig.get("keyword")) is not None}
        sat = recipe.keyword_saturation
        scores = {i: max(0.0, v) / (max(0.0, v) + sat) for i, v in order.items()}
    else:
        order = (
            _rrf(recipe, active, seen, weights)
            if recipe.fusion == "rrf"
            else _weighted(active, seen, weights)
        )
        query_relevance = _relevance(recipe, max(score for _, score in dense))
        scores = {i: value * query_relevance for i, value in order.items()}
    return sorted(order, key=lambda i: (-order[i], i)), scores, seen


def _relevance(recipe: SearchRecipe, cosine: float) -> float:
    """A cosine as relevance in [0, 1): 0 up to the floor, then saturating."""
    return 1.0 - math.exp(-max(0.0, cosine - recipe.relevance_floor) / recipe.relevance_scale)


def _rrf(
    recipe: SearchRecipe,
    active: dict[str, Ranked],
    seen: _Seen,
    weights: dict[str, float],
) -> dict[str, float]:
    # Normalised by the best possible score (rank 0 in every active signal) to land in [0, 1].
    best = sum(weights[n] for n in active) / (recipe.rrf_k + 1) or 1.0
    return {
        item_id: sum(weights[n] / (recipe.rrf_k + rank + 1) for n, (rank, _) in sig.items()) / best
        for item_id, sig in seen.items()
    }


def _weighted(
    active: dict[str, Ranked], seen: _Seen, weights: dict[str, float]
) -> dict[str, float]:
    total_weight = sum(weights[n] for n in active) or 1.0
    bounds = {}
    for name, hits in active.items():
        values = [s for _, s in hits]
        bounds[name] = (min(values), max(values)) if values else (0.0, 0.0)
    out = {}
    for item_id, sig in seen.items():
        value = 0.0
        for name, (_, score) in sig.items():
            low, high = bounds[name]
            norm = 1.0 if high == low else (score - low) / (high - low)
            value += weights[name] * norm
        out[item_id] = value / total_weight
    return out


def adjust(
    recipe: SearchRecipe, query: str, fused: list[Fused], said: dict[str, tuple[str, int]]
) -> list[Fused]:
    """``fused`` with the recipe's speaker and date boosts applied (``omoide.retrieval.rerank``);
    ``said`` is each candidate's text and time (epoch ms). A boosted hit is ordered by its
    boosted value and reported at most 1 (ties keep the fusion's order)."""
    texts = {i: text for i, (text, _) in said.items()}
    times = {i: datetime.fromtimestamp(ms / 1000, UTC) for i, (_, ms) in said.items()}
    factors = boost_factors(
        query, texts, times, recipe.speaker_boost, recipe.date_boost, recipe.date_slack_days
    )
    boosted = [s * factors.get(i, 1.0) for i, s, _ in fused]
    order = sorted(range(len(fused)), key=lambda n: (-boosted[n], n))
    return [(fused[n][0], min(1.0, boosted[n]), fused[n][2]) for n in order]
