"""Fusing ranked lists of ``(id, score)`` from several signals into one ranking."""

from __future__ import annotations

from omoide.retrieval.recipes import SearchRecipe
from omoide.types import Signal

Ranked = list[tuple[str, float]]


def fuse(
    recipe: SearchRecipe, signals: dict[str, Ranked]
) -> list[tuple[str, float, dict[str, Signal]]]:
    """Return ``(id, score in [0, 1], per-signal rank and score)``, best first.

    Ties break on the id so the same input always gives the same order.
    """
    weights = {"keyword": recipe.keyword_weight, "vector": recipe.vector_weight}
    active = {name: hits for name, hits in signals.items() if weights.get(name, 0) > 0}
    seen: dict[str, dict[str, Signal]] = {}
    for name, hits in active.items():
        for rank, (item_id, score) in enumerate(hits):
            seen.setdefault(item_id, {})[name] = Signal(rank=rank, score=score)
    if list(active) == ["vector"]:
        # One dense signal: its cosine is a better-calibrated score than a rank.
        scores = {i: max(0.0, min(1.0, sig["vector"].score)) for i, sig in seen.items()}
    elif recipe.fusion == "rrf":
        scores = _rrf(recipe, active, seen, weights)
    else:
        scores = _weighted(active, seen, weights)
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return [(i, scores[i], seen[i]) for i in order]


def _rrf(
    recipe: SearchRecipe,
    active: dict[str, Ranked],
    seen: dict[str, dict[str, Signal]],
    weights: dict[str, float],
) -> dict[str, float]:
    # Normalised by the best possible score (rank 0 in every active signal) to land in [0, 1].
    best = sum(weights[n] for n in active) / (recipe.rrf_k + 1) or 1.0
    return {
        item_id: sum(weights[n] / (recipe.rrf_k + s.rank + 1) for n, s in sig.items()) / best
        for item_id, sig in seen.items()
    }


def _weighted(
    active: dict[str, Ranked], seen: dict[str, dict[str, Signal]], weights: dict[str, float]
) -> dict[str, float]:
    total_weight = sum(weights[n] for n in active) or 1.0
    bounds = {}
    for name, hits in active.items():
        values = [s for _, s in hits]
        bounds[name] = (min(values), max(values)) if values else (0.0, 0.0)
    out = {}
    for item_id, sig in seen.items():
        value = 0.0
        for name, signal in sig.items():
            low, high = bounds[name]
            norm = 1.0 if high == low else (signal.score - low) / (high - low)
            value += weights[name] * norm
        out[item_id] = value / total_weight
    return out
