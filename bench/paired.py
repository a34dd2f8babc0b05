"""Paired comparisons of per-question metrics: bootstrap intervals and a leave-one-out check.

Two retrieval variants answer the same questions, so their difference is measured question by
question: resampling the questions (with replacement) and averaging the per-question
differences gives a 95% interval of the mean difference. An interval that contains 0 means the
change is within noise on this set.

Leave-one-conversation-out: a variant with a parameter is tuned (its value chosen) on all the
conversations but one and scored on the one left out, so a gain that only fits the tuning
dialogues shows up as no gain on the held-out one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Paired:
    delta: float
    low: float
    high: float

    @property
    def significant(self) -> bool:
        return not self.low <= 0.0 <= self.high

    def __str__(self) -> str:
        return f"{self.delta:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"


def bootstrap(
    base: Sequence[float], other: Sequence[float], n: int = 5000, seed: int = 7
) -> Paired:
    """Mean of ``other - base`` per question and its 95% percentile bootstrap interval."""
    diff = np.asarray(other, dtype=float) - np.asarray(base, dtype=float)
    if not len(diff):
        return Paired(float("nan"), float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(n, len(diff)))].mean(axis=1)
    return Paired(
        float(diff.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))
    )


@dataclass(frozen=True)
class HeldOut:
    held_out: str
    chosen: str  # the variant that was best on the other conversations
    paired: Paired  # its difference to the base on the held-out conversation


def leave_one_out(
    base: Sequence[float],
    variants: Mapping[str, Sequence[float]],
    groups: Sequence[tuple[str, int]],
    n: int = 5000,
) -> list[HeldOut]:
    """For each group (conversation id, number of questions, in question order): the variant
    with the best mean on the other groups, and its paired difference on this one."""
    bounds = np.cumsum([0, *(size for _, size in groups)])
    out = []
    for g, (name, _) in enumerate(groups):
        held = np.zeros(bounds[-1], dtype=bool)
        held[bounds[g] : bounds[g + 1]] = True
        chosen = max(variants, key=lambda v: float(np.asarray(variants[v])[~held].mean()))
        b = np.asarray(base)[held]
        o = np.asarray(variants[chosen])[held]
        out.append(HeldOut(name, chosen, bootstrap(b, o, n)))
    return out


def per_group(values: Sequence[float], groups: Sequence[tuple[str, int]]) -> dict[str, float]:
    """Mean of ``values`` per group (in question order)."""
    out, start = {}, 0
    for name, size in groups:
        out[name] = float(np.mean(values[start : start + size])) if size else float("nan")
        start += size
    return out
