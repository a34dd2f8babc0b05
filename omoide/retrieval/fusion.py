"""Fusing ranked lists of ``(id, score)`` from several signals into one ranking.

Scores mean relevance on one scale for every query (what ``threshold`` filters on), not only
an order: ranks alone gave a nonsense query's best hit the same score as a perfect match's.

* hybrid (the default, ``scorer="relevance"``): each candidate's probability of being relevant
  from its own evidence (``by_relevance``, ``omoide.retrieval.relevance``), ranked by it.
* hybrid_rrf (``scorer="fusion"``, the default until issue 31): the fused rank value (RRF or
  weighted, 1 for a hit first in every signal) times one factor for the whole query,
  ``Q = 1 - exp(-(c - relevance_floor) / relevance_scale)`` (0 when ``c`` is below the floor),
  ``c`` the best cosine among the dense hits: the order is the fusion's, and every hit of a
  query shares ``Q`` (bench/locomo.py reports how threshold 0.3 splits questions asked to
  their own conversation from those asked to another).
* dense only: each hit's own cosine, clipped to [0, 1] (so a caller's ``threshold`` is a
  cosine threshold); MiniLM puts unrelated text below 0.3 and loosely related text at 0.35-0.5.
* keywords only (or no vector yet): ``bm25 / (bm25 + keyword_saturation)``; bm25 cannot tell an
  unrelated query that shares a rare word from a relevant one, so this is the weakest scale.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime

from omoide.retrieval.recipes import SearchRecipe
from omoide.retrieval.relevance import Evidence, coverage, relevance
from omoide.retrieval.rerank import boost_factors, date_matches, named_turns
from omoide.retrieval.terms import keyword_terms
from omoide.types import Signal

Ranked = list[tuple[str, float]]
# Per signal of a hit: its (rank, score) there. Plain tuples: a search fuses ~300 candidates and
# returns ~10, and building a validated ``Signal`` for each candidate cost ~1.5 ms a search.
Fused = tuple[str, float, dict[str, tuple[int, float]]]
# Per candidate: its text, its time (epoch ms), whether it is a turn of a conversation, whether
# an assistant said it, and its cosine to the query when it was read
# (``omoide.store.ports.memories.Said``).
Said = tuple[str, int, bool, bool, float | None]


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
        # The cosine itself, so that a caller's threshold is a cosine threshold.
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
    recipe: SearchRecipe, query: str, fused: list[Fused], said: Mapping[str, Said]
) -> list[Fused]:
    """``fused`` with the recipe's speaker and date boosts applied (``omoide.retrieval.rerank``);
    ``said`` is each candidate's text and time (epoch ms). A boosted hit is ordered by its
    boosted value and reported at most 1 (ties keep the fusion's order)."""
    texts = {i: s[0] for i, s in said.items()}
    times = {i: datetime.fromtimestamp(s[1] / 1000, UTC) for i, s in said.items()}
    factors = boost_factors(
        query, texts, times, recipe.speaker_boost, recipe.date_boost, recipe.date_slack_days
    )
    boosted = [s * factors.get(i, 1.0) for i, s, _ in fused]
    order = sorted(range(len(fused)), key=lambda n: (-boosted[n], n))
    return [(fused[n][0], min(1.0, boosted[n]), fused[n][2]) for n in order]


def by_relevance(
    recipe: SearchRecipe,
    query: str,
    fused: list[Fused],
    said: Mapping[str, Said],
    population: int = 0,
) -> list[Fused]:
    """``fused``'s candidates scored by their relevance (``omoide.retrieval.relevance``) and
    ordered by it, best first (ties by id); ``said`` is each candidate's text and time (epoch
    ms) and kind, ``population`` the tenant's number of memories (0: unknown). Each hit's
    score comes from its own evidence: the speaker, date and coverage parts join its
    per-signal detail (rank 0) when they count."""
    texts = {i: s[0] for i, s in said.items()}
    times = {i: datetime.fromtimestamp(s[1] / 1000, UTC) for i, s in said.items()}
    by_speaker = named_turns(query, texts) if recipe.speaker_boost else set()
    in_period = date_matches(query, times, recipe.date_slack_days) if recipe.date_boost else set()
    asked = keyword_terms(query)
    out: list[Fused] = []
    for item_id, _, seen in fused:
        vector = seen.get("vector")
        cosine = vector[1] if vector is not None else said[item_id][4] if item_id in said else None
        evidence = Evidence(
            cosine=cosine,
            keyword=seen["keyword"][1] if "keyword" in seen else 0.0,
            coverage=coverage(asked, texts.get(item_id, "")),
            speaker=item_id in by_speaker,
            date=item_id in in_period,
            turn=item_id in said and said[item_id][2],
            assistant=item_id in said and said[item_id][3],
            population=population,
        )
        detail = dict(seen)
        if vector is None and cosine is not None:  # outside the vector list, read for its score
            detail["cosine"] = (0, cosine)
        for name, value in (
            ("coverage", evidence.coverage),
            ("speaker", float(evidence.speaker)),
            ("date", float(evidence.date)),
            ("turn", float(evidence.turn)),
            ("assistant", float(evidence.assistant)),
        ):
            if value:
                detail[name] = (0, value)
        out.append((item_id, relevance(evidence), detail))
    out.sort(key=lambda f: (-f[1], f[0]))
    return out
