"""Prototypes of issue 13's recall directions, round 4, bench-only (bench/README.md).

    python bench/window_proto.py [--data DIR] [--embed-cache FILE] [--sets windows,weights,...]

The store is built as bench/locomo.py builds it; then, per variant, the search service's
vector signal is replaced by one computed here from vectors held in memory, or one more signal
is fused (under the recipe's ``feedback_weight``, the extra signal ``fuse`` knew then):

* ``windows``: multi-granularity dense scores from the turn's own vector, its window (previous +
  this + next turn of the session, embedded as one text, or the mean of the three vectors) and
  its session (mean), max-pooled or mixed, or the window as a third fused signal;
* ``weights``: fusion weights, rrf_k, candidates and boost sizes of the ``hybrid`` recipe;
* ``expansion`` / ``candidates``: each query word's nearest words (word vectors of the
  embedder) in the tenant's vocabulary or among the top fused hits' words, as a second keyword
  query (what omoide/retrieval/expansion.py now does).

Each variant is paired against the unchanged ``hybrid`` (bootstrap and leave one conversation
out). Results: bench/results/window_proto.json (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from common import CATEGORIES, DEFAULT_DATA, RESULTS_DIR, load_locomo, score_question, table
from embed_cache import DiskCachedEmbedder
from locomo import open_engine, session_records, warm_up
from paired import bootstrap, leave_one_out, per_group

from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.engine import search as search_module
from omoide.retrieval.recipes import RECIPES
from omoide.retrieval.rerank import speaker
from omoide.retrieval.terms import keyword_terms
from omoide.types import SearchFilters

Pool = Callable[[dict[str, np.ndarray]], np.ndarray]


def normed(m: np.ndarray) -> np.ndarray:
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)


class Tenant:
    """Per conversation: memory ids in turn order and their vector matrices."""

    def __init__(self, ids: list[str], mats: dict[str, np.ndarray]) -> None:
        self.ids = ids
        self.mats = mats


class ProxyMemories:
    """The store's memories reads with ``vector_search`` replaced by the current variant."""

    def __init__(self, inner: Any, tenants: dict[str, Tenant]) -> None:
        self._inner = inner
        self.tenants = tenants
        self.pool: Pool | None = None
        self.third: Pool | None = None
        self.third_hits: list[tuple[str, float]] = []
        self.expand: Callable[[Any, str, np.ndarray], list[str]] | None = None
        self.query = ""
        self.query_vec: np.ndarray | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def vector_search(self, scope: Any, vector: np.ndarray, filters: Any, limit: int) -> Any:
        t = self.tenants[scope.user_id]
        q = np.asarray(vector, dtype=np.float32)
        self.query_vec = q
        cos = {k: m @ q for k, m in t.mats.items()}
        if self.third is not None:
            extra = self.third(cos)
            top = np.argsort(-extra, kind="stable")[:limit]
            self.third_hits = [(t.ids[i], float(extra[i])) for i in top]
        self.scope = scope
        if self.pool is None:
            return self._inner.vector_search(scope, vector, filters, limit)
        score = self.pool(cos)
        top = np.argsort(-score, kind="stable")[:limit]
        return [(t.ids[i], float(score[i])) for i in top]


class ProxyStore:
    def __init__(self, inner: Any, memories: ProxyMemories) -> None:
        self._inner = inner
        self.memories = memories

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def windows(texts: list[list[str]], before: int, after: int) -> list[str]:
    out = []
    for session in texts:
        for i in range(len(session)):
            out.append("\n".join(session[max(0, i - before) : i + after + 1]))
    return out


def neighbour_mean(own: np.ndarray, sizes: list[int], before: int, after: int) -> np.ndarray:
    out = np.zeros_like(own)
    start = 0
    for n in sizes:
        for i in range(n):
            lo, hi = start + max(0, i - before), start + min(n, i + after + 1)
            out[start + i] = own[lo:hi].sum(axis=0)
        start += n
    return normed(out)


def session_mean(own: np.ndarray, sizes: list[int]) -> np.ndarray:
    out = np.zeros_like(own)
    start = 0
    for n in sizes:
        out[start : start + n] = own[start : start + n].mean(axis=0)
        start += n
    return normed(out)


def by_term(m: int, tau: float) -> Callable[[Any, str, np.ndarray], list[str]]:
    """Each query term's ``m`` nearest tenant words with cosine >= ``tau``."""

    def expand(t: Any, query: str, _qv: np.ndarray) -> list[str]:
        asked = keyword_terms(query)
        out: list[str] = []
        for w in asked:
            i = t.word_index.get(w)
            if i is None:
                continue
            sims = t.word_vecs @ t.word_vecs[i]
            for j in np.argsort(-sims)[1 : m + 1]:
                if sims[j] >= tau and t.vocab[j] not in asked and t.vocab[j] not in out:
                    out.append(t.vocab[j])
        return out

    return expand


def by_term_in(n: int, m: int, tau: float) -> Any:
    """``by_term`` with the neighbours taken from the words of the top ``n`` fused hits."""

    def expand(t: Any, query: str, _qv: np.ndarray, top: list[str]) -> list[str]:
        asked = keyword_terms(query)
        words = sorted({w for i in top for w in t.words_of[i] if w not in asked})
        if not words:
            return []
        rows = [t.word_index[w] for w in words]
        vecs = t.word_vecs[rows]
        out: list[str] = []
        for w in asked:
            i = t.word_index.get(w)
            if i is None:
                continue
            sims = vecs @ t.word_vecs[i]
            for j in np.argsort(-sims)[:m]:
                if sims[j] >= tau and words[j] not in out:
                    out.append(words[j])
        return out

    expand.candidates = n  # type: ignore[attr-defined]
    return expand


def by_query(n: int, tau: float) -> Callable[[Any, str, np.ndarray], list[str]]:
    """The ``n`` tenant words nearest the query's vector (cosine >= ``tau``)."""

    def expand(t: Any, query: str, qv: np.ndarray) -> list[str]:
        asked = set(keyword_terms(query))
        sims = t.word_vecs @ qv
        top = [j for j in np.argsort(-sims)[: n + len(asked)] if sims[j] >= tau]
        return [t.vocab[j] for j in top if t.vocab[j] not in asked][:n]

    return expand


OWN: Pool = lambda c: c["own"]  # noqa: E731


def _max(key: str, w: float) -> Pool:
    return lambda c: np.maximum(c["own"], w * c[key])


def _mix(key: str, a: float) -> Pool:
    return lambda c: (1 - a) * c["own"] + a * c[key]


def _sess(b: float, a: float = 0.0) -> Pool:
    return lambda c: (1 - a) * c["own"] + a * c["win3"] + b * c["sess"]


# name -> (dense signal, recipe overrides, window as a third fused signal: its pool and weight)
Variant = tuple[Pool | None, dict[str, Any], tuple[Pool, float] | None] | tuple[Any, ...]
SETS: dict[str, dict[str, Variant]] = {
    "windows": {
        "own (proxy)": (OWN, {}, None),
        **{f"max(own, {w}*win3)": (_max("win3", w), {}, None) for w in (0.8, 0.9, 0.95, 1.0)},
        **{f"max(own, {w}*win2)": (_max("win2", w), {}, None) for w in (0.9, 1.0)},
        **{f"mix {a} win3": (_mix("win3", a), {}, None) for a in (0.3, 0.5, 0.7)},
        **{f"mix {a} win2": (_mix("win2", a), {}, None) for a in (0.3, 0.5)},
        **{f"max(own, {w}*mean3)": (_max("mean3", w), {}, None) for w in (0.9, 1.0)},
        **{f"mix {a} mean3": (_mix("mean3", a), {}, None) for a in (0.3, 0.5)},
        **{f"own + {b}*sess": (_sess(b), {}, None) for b in (0.1, 0.2, 0.3)},
        **{f"mix 0.5 win3 + {b}*sess": (_sess(b, 0.5), {}, None) for b in (0.1, 0.2)},
        **{f"signal win3 w={w}": (OWN, {}, (_mix("win3", 1.0), w)) for w in (0.15, 0.3, 0.5)},
        **{f"signal mean3 w={w}": (OWN, {}, (_mix("mean3", 1.0), w)) for w in (0.15, 0.3)},
    },
    "expansion": {
        **{
            f"term m={m} tau={tau} w={w}": (OWN, {"feedback_weight": w}, None, by_term(m, tau))
            for m in (1, 3)
            for tau in (0.5, 0.65)
            for w in (0.15, 0.3)
        },
        **{
            f"query n={n} tau={tau} w={w}": (OWN, {"feedback_weight": w}, None, by_query(n, tau))
            for n in (3, 8)
            for tau in (0.3, 0.45)
            for w in (0.15, 0.3)
        },
    },
    "candidates": {
        **{
            f"term m={m} tau={tau} w={w}": (OWN, {"feedback_weight": w}, None, by_term(m, tau))
            for m in (3,)
            for tau in (0.5,)
            for w in (0.3,)
        },
        **{
            f"cand n={n} m={m} tau={tau} w={w}": (
                OWN,
                {"feedback_weight": w},
                None,
                by_term_in(n, m, tau),
            )
            for n in (10, 30, 100)
            for m in (1, 3)
            for tau in (0.5,)
            for w in (0.15, 0.3)
        },
    },
    "weights": {
        **{
            f"v={v},k={k},rrf={r}": (
                None,
                {"vector_weight": v, "keyword_weight": k, "rrf_k": r},
                None,
            )
            for v, k in ((0.2, 0.8), (0.3, 0.7), (0.4, 0.6), (0.5, 0.5), (0.6, 0.4))
            for r in (15, 30, 60)
        },
        **{f"candidates={n}": (None, {"candidates": n}, None) for n in (50, 200)},
        **{f"speaker={b}": (None, {"speaker_boost": b}, None) for b in (0.1, 0.5)},
        **{f"date={b}": (None, {"date_boost": b}, None) for b in (0.5, 2.0)},
    },
}


def build(engine: Any, model: Any, convs: list[Any]) -> tuple[dict[str, Tenant], dict[str, float]]:
    tenants = {}
    cost = {"turns": 0, "window_texts": 0}
    for conv in convs:
        ids: list[str] = []
        texts: list[list[str]] = []
        for records in session_records(conv):
            items = engine.add_many(records, user_id=conv.sample_id)
            ids += [i.id for i in items]
            texts.append([r.text for r in records])
        sizes = [len(s) for s in texts]
        flat = [t for s in texts for t in s]
        own = normed(np.asarray(model.embed(flat), dtype=np.float32))
        w3 = windows(texts, 1, 1)
        w2 = windows(texts, 1, 0)
        mats = {
            "own": own,
            "win3": normed(np.asarray(model.embed(w3), dtype=np.float32)),
            "win2": normed(np.asarray(model.embed(w2), dtype=np.float32)),
            "mean3": neighbour_mean(own, sizes, 1, 1),
            "sess": session_mean(own, sizes),
        }
        cost["turns"] += len(flat)
        cost["window_texts"] += len(w3)
        tenant = Tenant(ids, mats)
        names = {p.lower() for t in flat if (sp := speaker(t)) for p in sp.split()}
        vocab = sorted(
            {
                w
                for t in flat
                for w in keyword_terms(t, 10_000)
                if len(w) > 2 and w.isalpha() and w not in names
            }
        )
        tenant.vocab = vocab
        vs = set(vocab)
        tenant.words_of = {
            i: [w for w in keyword_terms(t, 10_000) if w in vs]
            for i, t in zip(ids, flat, strict=True)
        }
        tenant.word_vecs = normed(np.asarray(model.embed(vocab), dtype=np.float32))
        tenant.word_index = {w: i for i, w in enumerate(vocab)}
        cost["vocab"] = cost.get("vocab", 0) + len(vocab)
        tenants[conv.sample_id] = tenant
    return tenants, cost


def fuse_with_third(proxy: ProxyMemories, inner: Callable[..., Any]) -> Callable[..., Any]:
    """``fuse`` with the proxy's window ranking as one more signal (under the recipe's
    ``feedback_weight``, the one extra signal ``fuse`` knows)."""

    def fuse(recipe: Any, signals: dict[str, Any]) -> Any:
        if proxy.third is not None and "vector" in signals:
            signals = {**signals, "feedback": proxy.third_hits}
        if proxy.expand is not None and "vector" in signals and proxy.query_vec is not None:
            t = proxy.tenants[proxy.scope.user_id]
            if getattr(proxy.expand, "candidates", 0):
                top = [i for i, _, _ in inner(recipe, signals)[: proxy.expand.candidates]]
                extra = proxy.expand(t, proxy.query, proxy.query_vec, top)
            else:
                extra = proxy.expand(t, proxy.query, proxy.query_vec)
            if extra:
                terms = keyword_terms(proxy.query) + extra
                hits = proxy._inner.keyword_search(proxy.scope, terms, SearchFilters(), 100)
                signals = {**signals, "feedback": hits}
        return inner(recipe, signals)

    return fuse


def run(args: argparse.Namespace) -> dict[str, Any]:
    convs = load_locomo(args.data)
    groups = [(c.sample_id, len(c.questions)) for c in convs]
    model = DiskCachedEmbedder(build_embedder(Settings()), args.embed_cache)
    variants = {k: v for s in args.sets.split(",") for k, v in SETS[s].items()}
    names = ["store", *variants]
    for name, (_, overrides, third, *_rest) in variants.items():
        extra = {"feedback_weight": third[1]} if third else {}
        RECIPES["x:" + name] = RECIPES["hybrid"].model_copy(
            update={**overrides, **extra, "name": "x:" + name}
        )
    per_q: dict[str, list[float]] = {n: [] for n in names}
    cats: dict[str, dict[int, list[float]]] = {n: {} for n in names}
    with tempfile.TemporaryDirectory() as tmp:
        engine, timed = open_engine(Path(tmp) / "w.db", model)
        warm_up(timed)
        tenants, cost = build(engine, model, convs)
        service = engine._services.search
        proxy = ProxyMemories(service._store.memories, tenants)
        service._store = ProxyStore(service._store, proxy)
        search_module.fuse = fuse_with_third(proxy, search_module.fuse)
        for conv in convs:
            for q in conv.questions:
                for name in names:
                    pool, _, third, *rest = variants.get(name, (None, {}, None))
                    proxy.pool, proxy.third = pool, third[0] if third else None
                    proxy.expand = rest[0] if rest else None
                    proxy.query = q.question
                    recipe = "hybrid" if name == "store" else "x:" + name
                    hits = engine.search(
                        q.question, user_id=conv.sample_id, limit=20, recipe=recipe
                    ).hits
                    got = [str(h.memory.metadata.get("dia_id")) for h in hits]
                    r = score_question(q, got)["recall@10"]
                    per_q[name].append(r)
                    cats[name].setdefault(q.category, []).append(r)
        engine.close()
    model.save()
    base = per_q["store"]
    rows = []
    for name in names:
        p = bootstrap(base, per_q[name], args.bootstrap)
        conv = per_group(per_q[name], groups)
        cb = per_group(base, groups)
        rows.append(
            {
                "variant": name,
                "recall@10": float(np.mean(per_q[name])),
                "delta": p.delta,
                "ci": [p.low, p.high],
                "per_conversation_delta": {g: conv[g] - cb[g] for g in conv},
                "per_category": {
                    CATEGORIES[k]: float(np.mean(v)) for k, v in sorted(cats[name].items())
                },
            }
        )
    families: dict[str, list[str]] = {}
    for name in variants:
        if name != "own (proxy)":
            fam = (
                name.split("*")[-1].split(" ")[-1].strip(")")
                if "=" not in name
                else name.split("=")[0]
            )
            fam = name.split(" ")[0] if name.startswith(("term", "query", "cand")) else fam
            families.setdefault(fam, []).append(name)
    families["all"] = [n for n in variants if n != "own (proxy)"]
    loo = {
        fam: [
            {
                "held_out": h.held_out,
                "chosen": h.chosen,
                "delta": h.paired.delta,
                "ci": [h.paired.low, h.paired.high],
            }
            for h in leave_one_out(base, {n: per_q[n] for n in ns}, groups, args.bootstrap)
        ]
        for fam, ns in families.items()
    }
    return {"cost": cost, "rows": rows, "leave_one_out": loo, "per_question": per_q}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embed-cache", type=Path, default=RESULTS_DIR / "locomo_vectors.npz")
    parser.add_argument("--bootstrap", type=int, default=5000)
    parser.add_argument("--sets", default="windows,weights", help=", ".join(SETS))
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "window_proto.json")
    args = parser.parse_args()
    out = run(args)
    cats = list(out["rows"][0]["per_category"])
    print(
        table(
            ["variant", "R@10", "Δ [95% CI]", *out["rows"][0]["per_conversation_delta"], *cats],
            [
                [
                    r["variant"],
                    r["recall@10"],
                    f"{r['delta']:+.3f} [{r['ci'][0]:+.3f}, {r['ci'][1]:+.3f}]",
                    *(f"{v:+.3f}" for v in r["per_conversation_delta"].values()),
                    *r["per_category"].values(),
                ]
                for r in out["rows"]
            ],
        )
    )
    print("\nleave one conversation out")
    print(
        table(
            ["family", "held out", "chosen", "Δ [95% CI]"],
            [
                [
                    f,
                    h["held_out"],
                    h["chosen"],
                    f"{h['delta']:+.3f} [{h['ci'][0]:+.3f}, {h['ci'][1]:+.3f}]",
                ]
                for f, hs in out["leave_one_out"].items()
                for h in hs
            ],
        )
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
