"""The relevance score on several shapes of memory: ranking, calibration, thresholds; its fit.

    python bench/relevance.py                  # measure: LoCoMo dev, LongMemEval dev, facts
    python bench/relevance.py --fit            # also fit the coefficients (printed) and
                                               # report each shape held out of the fit
    python bench/relevance.py --shapes facts --facts DIR[,DIR...] --reuse
    python bench/relevance.py --latency /tmp/s/one-100k.db   # p50 vs hybrid_rrf (scale.py db)

Each shape (``bench/lib/relevance_data.py``) is ingested through ``Memory`` into one SQLite file
under ``--cache`` (vectors cached beside it; ``--reuse`` keeps an ingested store). Every query
runs through ``search`` with a limit past the candidate count, so each hit's per-signal
evidence comes back (``signals``): that is what the model scores, and what ``--fit`` fits it on
(a pairwise ranking loss for the weights, then Platt scaling to a probability; see ``fit``).
Per shape: recall@5/10, hit@3, NDCG@10 of each recipe in ``--recipes`` as the search returns
them, and of the relevance score (the fitted one when ``--fit``); calibration (10 bins,
expected calibration error over every candidate); precision and recall of threshold 0.3, the
share of answerable questions whose best answer scores >= 0.3 and the share of never-said
questions with nothing >= 0.3, and how well a query's best score tells the two apart (ROC
AUC). Results: bench/results/relevance.json.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from lib.embed_cache import DiskCachedEmbedder
from lib.relevance_data import FACTS, INGEST, Query

from omoide import Memory
from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.retrieval import relevance
from omoide.retrieval.relevance import Evidence
from omoide.types import Scope, SearchFilters

RESULTS = Path(__file__).resolve().parent / "results" / "relevance.json"
CANDIDATES = 100  # what a search takes from each signal: the hits of a search of limit 100
THRESHOLD = 0.3
# A candidate: (memory id, evidence, relevant, ignored, text); a query's candidates.
Cand = tuple[str, Evidence, bool, bool, str]


def evidence_of(signals: dict[str, Any], population: int) -> Evidence:
    def value(name: str) -> float:
        s = signals.get(name)
        return float(s.score) if s is not None else 0.0

    vector = signals.get("vector") or signals.get("cosine")  # "cosine": read outside the list
    return Evidence(
        cosine=None if vector is None else float(vector.score),
        keyword=value("keyword"),
        coverage=value("coverage"),
        speaker=bool(value("speaker")),
        date=bool(value("date")),
        turn=bool(value("turn")),
        population=population,
        assistant=bool(value("assistant")),
    )


def population(memory: Memory, tenant: str) -> int:
    """How many vectors the tenant holds: what the search reads beside its nearest hits."""
    probe = memory.embedder.embed(["how many"])[0]
    nearest = memory.store.memories.vector_search(Scope(user_id=tenant), probe, SearchFilters(), 1)
    return nearest.population


def collect(
    name: str, cache: Path, recipes: list[str], reuse: bool, options: dict[str, Any]
) -> dict[str, Any]:
    """Ingest (or reuse) the shape; each query's candidates and each recipe's top 20."""
    db = cache / f"{name}.db"
    saved = cache / f"{name}-queries.pkl"
    embedder = DiskCachedEmbedder(build_embedder(Settings()), cache / f"{name}-vectors.npz")
    if not (reuse and db.exists() and saved.exists()):
        for path in cache.glob(f"{name}.db*"):
            path.unlink()
        memory = Memory(db, embedder=embedder, workers=0)
        shape = INGEST[name](memory, **options.get(name, {}))
        saved.write_bytes(pickle.dumps(shape.queries))
        embedder.save()
    else:
        memory = Memory(db, embedder=embedder, workers=0)
    queries: list[Query] = pickle.loads(saved.read_bytes())
    cands: list[list[Cand]] = []
    tops: dict[str, list[list[str]]] = {r: [] for r in recipes}
    sizes = {t: population(memory, t) for t in {q.tenant for q in queries}}
    for q in queries:
        hits = memory.search(q.text, user_id=q.tenant, limit=CANDIDATES).hits
        cands.append(
            [
                (
                    h.memory.id,
                    evidence_of(h.signals, sizes[q.tenant]),
                    h.memory.id in q.relevant,
                    h.memory.id in q.ignore,
                    h.memory.text,
                )
                for h in hits
            ]
        )
        for r in recipes:
            found = memory.search(q.text, user_id=q.tenant, limit=20, recipe=r).hits
            tops[r].append([h.memory.id for h in found])
    embedder.save()
    memory.close()
    data = {"queries": queries, "cands": cands, "tops": tops}
    (cache / f"{name}-cands.pkl").write_bytes(pickle.dumps(data))
    return data


# metrics ------------------------------------------------------------------------------------
def ranking(queries: list[Query], ranked: list[list[str]]) -> dict[str, float]:
    rows = []
    for q, ids in zip(queries, ranked, strict=True):
        if not q.relevant:
            continue
        rel = [i in q.relevant for i in ids]
        ideal = sum(1 / math.log2(n + 2) for n in range(min(10, len(q.relevant))))
        rows.append(
            {
                "recall@5": sum(rel[:5]) / len(q.relevant),
                "recall@10": sum(rel[:10]) / len(q.relevant),
                "hit@3": float(any(rel[:3])),
                "ndcg@10": sum(1 / math.log2(n + 2) for n, r in enumerate(rel[:10]) if r) / ideal,
            }
        )
    out = {k: round(float(np.mean([r[k] for r in rows])), 4) for k in rows[0]}
    if any(getattr(q, "answer_sessions", None) for q in queries):  # older caches lack it
        out["session_recall_all@5"] = session_recall_all(queries, ranked, 5)
    return out


def session_recall_all(queries: list[Query], ranked: list[list[str]], k: int) -> float:
    """LongMemEval's session-level recall_all@k: the share of answerable questions whose
    answer sessions all stand among the first ``k`` sessions of the ranking (a session ranks
    where its best turn does)."""
    found = []
    for q, ids in zip(queries, ranked, strict=True):
        if not getattr(q, "answer_sessions", None):
            continue
        order: list[str] = []
        for i in ids:
            s = q.session_of.get(i)
            if s is not None and s not in order:
                order.append(s)
        found.append(q.answer_sessions <= set(order[:k]))
    return round(float(np.mean(found)), 4)


Models = tuple[relevance.Model, relevance.Model]  # (turns, standalone memories)


def scored(cands: list[list[Cand]], models: Models) -> list[list[tuple[str, float]]]:
    out = []
    for query in cands:
        pairs = [
            (i, relevance.relevance(e, models[0] if e.turn else models[1])) for i, e, *_ in query
        ]
        out.append(sorted(pairs, key=lambda p: (-p[1], p[0])))
    return out


def calibration(
    queries: list[Query], cands: list[list[Cand]], scores: list[list[tuple[str, float]]]
) -> dict[str, Any]:
    del queries  # every candidate counts, of answerable and never-said questions alike
    pred, obs = [], []
    for query, ranked in zip(cands, scores, strict=True):
        label = {i: rel for i, _, rel, ign, _ in query if not ign}
        for i, s in ranked:
            if i in label:
                pred.append(s)
                obs.append(float(label[i]))
    p, o = np.array(pred), np.array(obs)
    bins = np.minimum((p * 10).astype(int), 9)
    table, ece = [], 0.0
    for b in range(10):
        m = bins == b
        if m.any():
            ece += abs(p[m].mean() - o[m].mean()) * m.sum() / len(p)
            table.append(
                (b / 10, int(m.sum()), round(float(p[m].mean()), 3), round(float(o[m].mean()), 3))
            )
    return {"ece": round(float(ece), 4), "bins": table}


def thresholds(
    queries: list[Query], scores: list[list[tuple[str, float]]], cut: float = THRESHOLD
) -> dict[str, float]:
    kept = right = relevant = found = answered = answerable = quiet = never = 0
    best: dict[bool, list[float]] = {True: [], False: []}  # a query's best score, by answerable
    for q, ranked in zip(queries, scores, strict=True):
        best[bool(q.relevant)].append(max((s for i, s in ranked if i not in q.ignore), default=0))
        above = [i for i, s in ranked if s >= cut and i not in q.ignore]
        kept += len(above)
        right += sum(i in q.relevant for i in above)
        if q.relevant:
            relevant += len(q.relevant)
            found += sum(i in q.relevant for i in above)
            answerable += 1
            answered += any(i in q.relevant for i in above)
        else:
            never += 1
            quiet += not above
    return {
        "precision@0.3": round(right / max(kept, 1), 4),
        "recall@0.3": round(found / max(relevant, 1), 4),
        "answer_scored_0.3": round(answered / max(answerable, 1), 4),
        "never_said_quiet": round(quiet / max(never, 1), 4) if never else float("nan"),
        "never_said": never,
        "best_score_auc": separation(best[True], best[False]),
    }


def separation(answerable: list[float], never_said: list[float]) -> float:
    """ROC AUC of a query's best score between answerable and never-said questions: how well
    any one threshold can tell them apart (0.5: not at all; nan without both kinds)."""
    if not answerable or not never_said:
        return float("nan")
    a, b = np.array(answerable)[:, None], np.array(never_said)[None, :]
    return round(float(np.mean((a > b) + 0.5 * (a == b))), 4)


def report(data: dict[str, Any], scores: list[list[tuple[str, float]]]) -> dict[str, Any]:
    queries, cands = data["queries"], data["cands"]
    out: dict[str, Any] = {r: ranking(queries, t) for r, t in data["tops"].items()}
    ranked = [[i for i, _ in s] for s in scores]
    out["relevance"] = ranking(queries, ranked)
    for other in ("hybrid_rrf", "vector"):
        if other in data["tops"]:
            out[f"relevance_vs_{other}_recall@10"] = paired(queries, ranked, data["tops"][other])
    out["calibration"] = calibration(queries, cands, scores)
    out["threshold"] = thresholds(queries, scores)
    return out


# fit ----------------------------------------------------------------------------------------
Group = tuple[str, str | None]  # (shape, one tenant of it or None for all)
Part = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # features, labels, query, size
# Shapes the models are not fitted on: small tenants (LoCoMo's sessions each a tenant of its
# own; the fact tenants cut in blocks of eight), which fit only the prior's weight, and the
# fact tenants written as chat messages (what a chat door such as JiuwenMemory's stores).
SMALL = ("locomo_sessions", "facts_small")
MEASURED_ONLY = (*SMALL, "facts_chat")


def groups(shapes: dict[str, dict[str, Any]]) -> list[Group]:
    """What the fit weighs alike and holds out in turn: each shape, and each fact tenant
    (the fact tenants are the only standalone memories: each is one style of writing)."""
    out: list[Group] = []
    for name, data in shapes.items():
        if name in MEASURED_ONLY:
            continue
        tenants = sorted({q.tenant for q in data["queries"]})
        out += [(name, t) for t in tenants] if name == "facts" else [(name, None)]
    return out


def design(data: dict[str, Any], turn: bool, tenant: str | None) -> Part:
    """Features, labels and query numbers of the candidates of one kind (ignored ones left
    out), of one tenant or all."""
    xs, ys, qs, sizes = [], [], [], []
    for n, (q, query) in enumerate(zip(data["queries"], data["cands"], strict=True)):
        if tenant is not None and q.tenant != tenant:
            continue
        for _, e, rel, ign, _ in query:
            if not ign and e.turn == turn:
                xs.append(relevance.features(e))
                ys.append(float(rel))
                qs.append(n)
                sizes.append(e.population)
    width = len(relevance.FEATURES)
    return np.array(xs).reshape(-1, width), np.array(ys), np.array(qs), np.array(sizes)


def _minimize(loss: Any, start: np.ndarray, bounds: list[Any]) -> np.ndarray:
    from scipy.optimize import minimize

    return np.asarray(minimize(loss, start, jac=True, method="L-BFGS-B", bounds=bounds).x)


def _pairs(parts: list[Part]) -> tuple[Any, Any]:
    """Feature differences (relevant minus not) of every pair within a query; weights that
    give each query of a shape the same total, and each shape the same total."""
    diffs, weights = [], []
    for x, y, qid, _ in parts:
        found = []
        for n in np.unique(qid):
            m = qid == n
            good, bad = x[m][y[m] == 1], x[m][y[m] == 0]
            if len(good) and len(bad):
                found.append((good[:, None, :] - bad[None, :, :]).reshape(-1, x.shape[1]))
        for d in found:
            diffs.append(d)
            weights.append(np.full(len(d), 1.0 / (len(d) * len(found) * len(parts))))
    return np.vstack(diffs), np.concatenate(weights)


def fit(parts: list[Part], l2: float = 1e-3) -> relevance.Model:
    """Ranking first, calibration second, each part (a shape or a fact tenant) weighted
    alike: the weights minimise a pairwise logistic loss (a relevant candidate above an
    irrelevant one of the same query; non-negative but the missing-cosine weight: the score
    rises with every kind of evidence), then one scale and one bias map ``w . x`` to a
    probability (Platt scaling on every candidate). The model's ``population`` is the
    smallest tenant of the fit: below it, the prior of a smaller tenant applies."""
    parts = [p for p in parts if len(p[1])]
    diffs, pw = _pairs(parts)
    n = diffs.shape[1]

    def rank_loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        p = 1 / (1 + np.exp(-(diffs @ w)))
        value = -np.sum(pw * np.log(p + 1e-12)) + l2 * np.sum(w**2) / 2
        return float(value), diffs.T @ (-(pw * (1 - p))) + l2 * w

    free = ("cosine_missing", "assistant")  # kinds of evidence, not amounts: either sign
    bounds = [(None, None) if f in free else (0, None) for f in relevance.FEATURES]
    w = _minimize(rank_loss, np.full(n, 0.1), bounds)
    z = np.concatenate([p[0] @ w for p in parts])
    y = np.concatenate([p[1] for p in parts])
    cw = np.concatenate([np.full(len(p[1]), 1.0 / (len(parts) * len(p[1]))) for p in parts])

    def platt(t: np.ndarray) -> tuple[float, np.ndarray]:
        p = 1 / (1 + np.exp(-(t[0] * z + t[1])))
        value = -np.sum(cw * (y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)))
        g = cw * (p - y)
        return float(value), np.array([np.sum(g * z), np.sum(g)])

    a, b = _minimize(platt, np.array([1.0, -3.0]), [(0, None), (None, None)])
    smallest = float(min(p[3].min() for p in parts))
    weights = tuple(round(float(v * a), 3) for v in w)
    return relevance.Model(weights, round(float(b), 3), smallest)


def fit_models(
    shapes: dict[str, dict[str, Any]], l2: float, leave_out: Group | None = None
) -> Models:
    """The turn model and the standalone model, each fitted on its kind's candidates of every
    group but ``leave_out`` (a kind with no data left keeps the coded model)."""
    kept = [g for g in groups(shapes) if g != leave_out]
    models = []
    for turn, coded in ((True, relevance.TURN), (False, relevance.STANDALONE)):
        parts = [design(shapes[s], turn, t) for s, t in kept]
        parts = [p for p in parts if p[1].sum() > 0]
        models.append(fit(parts, l2) if parts else coded)
    return models[0], borrow(models[1], models[0])


def borrow(standalone: relevance.Model, turn: relevance.Model) -> relevance.Model:
    """The standalone model with the turn model's speaker and date weights: no fact tenant
    names a speaker or a period, so its fit cannot learn them (a note that says who said it,
    or a question naming the day a note was written, should still count)."""
    weights = list(standalone.weights)
    for name in ("speaker", "date"):
        at = relevance.FEATURES.index(name)
        weights[at] = turn.weights[at]
    return relevance.Model(tuple(weights), standalone.bias, standalone.population)


def held_out(shapes: dict[str, dict[str, Any]], l2: float) -> dict[str, Any]:
    """Each shape scored by models fitted without it (fact tenants: without that tenant)."""
    out = {}
    for name, data in shapes.items():
        if name in MEASURED_ONLY:  # never fitted on: the models of every fitted shape
            out[name] = report(data, scored(data["cands"], fit_models(shapes, l2)))
            continue
        scores: list[list[tuple[str, float]]] = [[] for _ in data["queries"]]
        for group in [g for g in groups(shapes) if g[0] == name]:
            models = fit_models(shapes, l2, group)
            for n, q in enumerate(data["queries"]):
                if group[1] is None or q.tenant == group[1]:
                    scores[n] = scored([data["cands"][n]], models)[0]
        out[name] = report(data, scores)
    return out


def fit_assistant(shapes: dict[str, dict[str, Any]]) -> float:
    """The turn model's ``assistant`` weight with its other weights held at their coded
    values (``relevance.ASSISTANT_WEIGHT``): the pairwise loss of ``fit`` over the turns of
    every fitted shape, each shape and each query weighted alike. Only chat histories have
    assistant turns, so only they move it; the other shapes' rankings stay as they were."""
    at = relevance.FEATURES.index("assistant")
    held = np.array(relevance.TURN.weights)
    held[at] = 0.0
    parts = [design(shapes[s], True, t) for s, t in groups(shapes)]
    parts = [p for p in parts if p[1].sum() > 0]
    if not parts:  # only standalone memories measured: nothing moves it
        return relevance.ASSISTANT_WEIGHT
    diffs, pw = _pairs(parts)
    base, kind = diffs @ held, diffs[:, at]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        p = 1 / (1 + np.exp(-(base + w[0] * kind)))
        return float(-np.sum(pw * np.log(p + 1e-12))), np.array([np.sum(-pw * (1 - p) * kind)])

    return round(float(_minimize(loss, np.zeros(1), [(None, None)])[0]), 3)


def log_loss(data: dict[str, Any], weight: float) -> float:
    """Mean log loss of every candidate's relevance with the prior at ``weight``."""
    total, count = 0.0, 0
    for query in data["cands"]:
        for _, e, rel, ign, _ in query:
            if ign:
                continue
            m = relevance.model(e)
            z = m.bias + sum(w * x for w, x in zip(m.weights, relevance.features(e), strict=True))
            p = 1 / (1 + math.exp(-(z + relevance.prior(m, e.population, weight))))
            p = min(max(p, 1e-9), 1 - 1e-9)
            total -= math.log(p if rel else 1 - p)
            count += 1
    return total / max(count, 1)


def fit_prior(shapes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The prior's weight (``relevance.PRIOR_WEIGHT``) that minimises the log loss of each
    small shape on its own, and of both (weighted alike): a grid of 0.05."""
    grid = [round(0.05 * n, 2) for n in range(21)]
    small = {s: shapes[s] for s in SMALL if s in shapes}
    out: dict[str, Any] = {}
    for name, data in small.items():
        out[name] = min(grid, key=lambda w, d=data: log_loss(d, w))
    if small:
        out["both"] = min(grid, key=lambda w: sum(log_loss(d, w) for d in small.values()))
    return out


def paired(
    queries: list[Query], a: list[list[str]], b: list[list[str]], rounds: int = 2000
) -> dict[str, float]:
    """Recall@10 of ranking ``a`` minus ``b`` over the answerable questions, with a 95%
    paired bootstrap interval (questions resampled, seed fixed)."""
    diffs = [
        (len(set(x[:10]) & q.relevant) - len(set(y[:10]) & q.relevant)) / len(q.relevant)
        for q, x, y in zip(queries, a, b, strict=True)
        if q.relevant
    ]
    values = np.array(diffs)
    rng = np.random.default_rng(0)
    means = values[rng.integers(0, len(values), (rounds, len(values)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return {"diff": round(float(values.mean()), 4), "low": round(float(low), 4),
            "high": round(float(high), 4)}  # fmt: skip


def latency(db: Path, user_id: str, rounds: int = 3) -> dict[str, Any]:
    """p50 of the default search (``hybrid``) over that of the old default (``hybrid_rrf``) on
    one store, the LoCoMo dev questions in turn, the two recipes alternating (which goes first
    rotates), after a warm-up round: the same process, store and machine load for both."""
    from lib.common import load_locomo
    from lib.relevance_data import LOCOMO

    questions = [q.question for c in load_locomo(LOCOMO) for q in c.questions]
    recipes = ("hybrid", "hybrid_rrf")
    memory = Memory(db, workers=0)
    times: dict[str, list[float]] = {r: [] for r in recipes}
    for n, q in enumerate(questions * (rounds + 1)):
        for r in recipes[n % 2 :] + recipes[: n % 2]:
            start = time.perf_counter()
            memory.search(q, user_id=user_id, limit=10, recipe=r)
            if n >= len(questions):  # the first round warms caches up
                times[r].append(time.perf_counter() - start)
    memory.close()
    p50 = {r: statistics.median(t) * 1000 for r, t in times.items()}
    return {"p50_ms": p50, "ratio": p50["hybrid"] / p50["hybrid_rrf"], "searches": len(times[r])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default="locomo,longmemeval,facts")
    parser.add_argument("--recipes", default="hybrid,hybrid_rrf,vector")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/omoide-relevance"))
    parser.add_argument(
        "--facts",
        type=lambda v: [Path(p) for p in v.split(",")],
        default=[FACTS],
        help="fact tenants' folders, comma-separated",
    )
    parser.add_argument("--reuse", action="store_true", help="keep ingested stores")
    parser.add_argument("--lme-every", type=int, default=1, help="every n-th LongMemEval question")
    parser.add_argument(
        "--lme-distractors", type=int, default=0, help="other sessions a haystack keeps (0: all)"
    )
    parser.add_argument("--fit", action="store_true", help="fit the coefficients too")
    parser.add_argument(
        "--cached", action="store_true", help="score the candidates the last run saved"
    )
    parser.add_argument("--l2", type=float, default=1e-3)
    parser.add_argument("--latency", type=Path, help="only time hybrid vs hybrid_rrf on this db")
    parser.add_argument("--user", default="user0", help="the tenant --latency searches")
    args = parser.parse_args()
    if args.latency:
        print(json.dumps(latency(args.latency, args.user), indent=1))
        return
    args.cache.mkdir(parents=True, exist_ok=True)
    recipes = args.recipes.split(",")
    options = {
        "facts": {"folder": args.facts},
        "facts_small": {"folder": args.facts},
        "facts_chat": {"folder": args.facts},
        "longmemeval": {"every": args.lme_every, "distractors": args.lme_distractors},
    }
    shapes = {
        s: pickle.loads((args.cache / f"{s}-cands.pkl").read_bytes())
        if args.cached
        else collect(s, args.cache, recipes, args.reuse, options)
        for s in args.shapes.split(",")
    }
    coded = (relevance.TURN, relevance.STANDALONE)
    out: dict[str, Any] = {"coded": {"turn": coded[0], "standalone": coded[1]}}
    out["coded"]["shapes"] = {s: report(d, scored(d["cands"], coded)) for s, d in shapes.items()}
    if args.fit:
        models = fit_models(shapes, args.l2)
        out["fitted"] = {"features": relevance.FEATURES, "turn": models[0]}
        out["fitted"]["standalone"] = models[1]
        out["fitted"]["shapes"] = {
            s: report(d, scored(d["cands"], models)) for s, d in shapes.items()
        }
        out["held_out"] = held_out(shapes, args.l2)
        out["prior_weight"] = fit_prior(shapes)
        out["assistant_weight"] = fit_assistant(shapes)
    json.dump(out, sys.stdout, indent=1, default=str)
    print()
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=1, default=str))
    shutil.copy(RESULTS, args.cache / "relevance.json")


if __name__ == "__main__":
    main()
