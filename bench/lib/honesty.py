"""What bench/locomo.py reports besides recall alone in a store (issue 13, points 2 and 5).

* **Mixed with decoys**: the same conversations searched in a store that also holds decoy
  tenants: each conversation again under other user ids, its sessions in a shuffled order
  (seeded). A tenant's ranking must not depend on other tenants, so recall mixed must equal
  recall alone (it did not before per-tenant keyword statistics: 0.764 alone, 0.710 mixed).
* **Threshold**: every question asked to its own conversation (should find something) and to
  every other conversation (unrelated: should find nothing). A query "answers" when one hit
  scores >= the threshold; precision and recall of answering, and recall@10 of the evidence
  counting only hits above the threshold.
* **Per conversation**: recall@10 of each conversation alone, so a gain on one dialogue does
  not hide a loss on the other.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from typing import Any

import numpy as np

from lib.common import Conversation, recall_at, table
from omoide.memory import Memory


class CachingEmbedder:
    """An embedder that embeds each distinct text once: decoys repeat the real turns, and
    their ingest time is not what the mixed run measures."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            self._cache.update(zip(missing, self.inner.embed(missing), strict=True))
        return np.stack([self._cache[t] for t in texts])


def decoys(convs: list[Conversation], copies: int, seed: int = 13) -> list[Conversation]:
    """``copies`` decoy tenants per conversation: same turns, sessions shuffled, other ids."""
    rng = random.Random(seed)
    out = []
    for conv in convs:
        for n in range(copies):
            sessions = list(conv.sessions)
            rng.shuffle(sessions)
            out.append(Conversation(sample_id=f"decoy{n}-{conv.sample_id}", sessions=sessions))
    return out


def threshold_report(
    engine: Memory, convs: list[Conversation], recipe: str, threshold: float, limit: int = 10
) -> dict[str, Any]:
    """Answering precision/recall of ``threshold`` on own vs. other conversations' questions."""
    answered_own = answered_other = asked_other = 0
    recalls: list[float] = []
    top_own: list[float] = []
    top_other: list[float] = []
    for conv in convs:
        for q in conv.questions:
            for other in convs:
                hits = engine.search(
                    q.question, user_id=other.sample_id, limit=limit, recipe=recipe
                ).hits
                best = hits[0].score if hits else 0.0
                if other is conv:
                    kept = [
                        str(h.memory.metadata.get("dia_id")) for h in hits if h.score >= threshold
                    ]
                    recalls.append(recall_at(kept, q.evidence, 10))
                    answered_own += best >= threshold
                    top_own.append(best)
                else:
                    asked_other += 1
                    answered_other += best >= threshold
                    top_other.append(best)
    own = len(recalls)
    answered = answered_own + answered_other
    return {
        "recipe": recipe,
        "threshold": threshold,
        "questions_own": own,
        "questions_other": asked_other,
        "recall_answered": answered_own / own if own else float("nan"),
        "precision_answered": answered_own / answered if answered else float("nan"),
        "unrelated_answered": answered_other / asked_other if asked_other else float("nan"),
        "recall@10_above_threshold": statistics.fmean(recalls) if recalls else float("nan"),
        "top_score_own_median": statistics.median(top_own) if top_own else float("nan"),
        "top_score_other_median": statistics.median(top_other) if top_other else float("nan"),
    }


def threshold_table(reports: list[dict[str, Any]]) -> str:
    headers = ["recipe", "threshold", "precision", "recall", "unrelated answered"]
    headers += ["R@10 above thr", "top score own / other (median)"]
    rows = [
        [
            r["recipe"],
            r["threshold"],
            r["precision_answered"],
            r["recall_answered"],
            r["unrelated_answered"],
            r["recall@10_above_threshold"],
            f"{r['top_score_own_median']:.3f} / {r['top_score_other_median']:.3f}",
        ]
        for r in reports
    ]
    return table(headers, rows)


def per_conversation(convs: list[Conversation], results: dict[str, dict[str, Any]]) -> str:
    """recall@10 of each conversation, per recipe (from the per-question recalls)."""
    sizes = [(c.sample_id, len(c.questions)) for c in convs]
    headers = ["recipe", *(f"{sid} (n={n})" for sid, n in sizes)]
    rows = []
    for name, r in results.items():
        values = r["per_question_recall@10"]
        cells, start = [], 0
        for _, n in sizes:
            cells.append(statistics.fmean(values[start : start + n]) if n else float("nan"))
            start += n
        rows.append([name, *cells])
    return table(headers, rows)


def alone_vs_mixed(
    alone: dict[str, dict[str, Any]], mixed: dict[str, dict[str, Any]], label: str = "mixed"
) -> str:
    headers = ["recipe", "R@10 alone", f"R@10 {label}", "identical per question"]
    rows = [
        [
            name,
            alone[name]["recall@10"],
            mixed[name]["recall@10"],
            alone[name]["per_question_recall@10"] == mixed[name]["per_question_recall@10"],
        ]
        for name in alone
        if name in mixed
    ]
    return table(headers, rows)
