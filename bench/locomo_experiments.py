"""How LoCoMo recall@10 of the default search moves with fusion parameters and ingest variants.

    python bench/locomo_experiments.py [--data DIR] [--bootstrap 5000]

Bench-only: nothing under omoide/ changes. Recipes are ``SearchRecipe`` objects inserted into
``omoide.retrieval.recipes.RECIPES`` in this process; ingest variants are separate stores:

* ``default``     turns as bench/locomo.py stores them (the engine adds the previous and next
                  turn of the session to the keyword index, column ``context``, bm25 weight 0.4)
* ``date``        the session date prefixed to each turn's text: ``[<date>] <speaker>: ...``
* ``no-context``  no neighbour turns in the keyword index (a blank ``context`` is passed, which
                  makes the engine skip its neighbour logic)
* ``prev-only``   only the previous turn as context

and a query-time variant of the ``context`` column's bm25 weight (0.4 in the store), applied by
rewriting the store's keyword SQL on its reader connection.

Query embeddings are cached (latency is not measured here). Every difference is against the
engine's first default recipe (rrf k=60, weights 0.5/0.5, 100 candidates) on the ``default``
store, and also against BM25 alone, with a paired bootstrap 95% interval over questions; an
interval that contains 0 means the change is within noise on this set. ``hybrid`` is reported
with whatever parameters omoide/retrieval/recipes.py gives it at run time.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import DEFAULT_DATA, RESULTS_DIR, Conversation, load_locomo, machine_note, table
from locomo import TimedEmbedder, evaluate, ingest, open_engine, warm_up

from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.memory import Memory
from omoide.retrieval.recipes import RECIPES, SearchRecipe

# The change this script's findings argue for (chosen on this dev set: see the cross-check).
RECOMMENDED = "x_rrf30_v0.3_k0.7_c100"
# The engine's first default (rrf k=60, 0.5/0.5, 100 candidates): what every delta is against.
ORIGINAL = "x_rrf60_v0.5_k0.5_c100"
BM25_CALL = re.compile(r"bm25\(memories_fts,\s*1\.0,\s*0\.4")


class CachedEmbedder:
    """Embeds each distinct text once per process (the variants share most texts)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.cache: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            for text, vec in zip(missing, self.inner.embed(missing), strict=True):
                self.cache[text] = vec
        return np.stack([self.cache[t] for t in texts])


class _RewritingConnection:
    """A reader connection whose keyword SQL uses another bm25 weight for ``context``."""

    def __init__(self, conn: sqlite3.Connection, weight: float) -> None:
        self._conn = conn
        self._weight = weight

    def execute(self, sql: str, *args: Any) -> Any:
        return self._conn.execute(
            BM25_CALL.sub(f"bm25(memories_fts, 1.0, {self._weight}", sql), *args
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def set_context_weight(engine: Memory, weight: float | None) -> bool:
    """Route the store's reads through a rewriting connection (None: restore)."""
    store: Any = engine.store
    if not hasattr(store, "_reader_orig"):
        store._reader_orig = store._reader
    if weight is None:
        store._reader = store._reader_orig
        return True
    store._reader = lambda: _RewritingConnection(store._reader_orig(), weight)
    return True


def keyword_sql_has_weight() -> bool:
    import inspect

    from omoide.store.sqlite import store as sqlite_store

    return bool(BM25_CALL.search(inspect.getsource(sqlite_store)))


def recipe_grid() -> list[SearchRecipe]:
    grid = []
    weights = [(0.2, 0.8), (0.3, 0.7), (0.5, 0.5), (0.7, 0.3)]
    fusions = [("rrf", 10), ("rrf", 30), ("rrf", 60), ("weighted", 60)]
    for (fusion, k), (vw, kw), cand in itertools.product(fusions, weights, (50, 100, 200)):
        tag = f"rrf{k}" if fusion == "rrf" else "wtd"
        grid.append(
            SearchRecipe(
                name=f"x_{tag}_v{vw}_k{kw}_c{cand}",
                fusion=fusion,  # type: ignore[arg-type]
                rrf_k=k,
                vector_weight=vw,
                keyword_weight=kw,
                candidates=cand,
            )
        )
    return grid


def distinct(names: list[str]) -> list[str]:
    """The first name of each distinct configuration (``hybrid`` may equal a grid recipe)."""
    out: list[str] = []
    for name in names:
        params = RECIPES[name].model_dump(exclude={"name"})
        if all(RECIPES[o].model_dump(exclude={"name"}) != params for o in out):
            out.append(name)
    return out


def describe(r: SearchRecipe) -> str:
    prefix = f"{r.name}: " if not r.name.startswith("x_") else ""
    return prefix + _describe(r)


def _describe(r: SearchRecipe) -> str:
    if not r.vector:
        return "keyword only (BM25)"
    if not r.keyword:
        return "vector only"
    fusion = f"rrf k={r.rrf_k}" if r.fusion == "rrf" else "weighted"
    return f"{fusion}, v/k {r.vector_weight}/{r.keyword_weight}, cand {r.candidates}"


def bootstrap(base: list[float], other: list[float], n: int, seed: int = 7) -> tuple[float, ...]:
    a, b = np.asarray(base), np.asarray(other)
    diff = b - a
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(diff), size=(n, len(diff)))
    means = diff[idx].mean(axis=1)
    return float(diff.mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def build_store(
    tmp: Path, name: str, convs: list[Conversation], embedder: CachedEmbedder, context: str
) -> tuple[Memory, TimedEmbedder, dict[str, Any]]:
    engine, timed = open_engine(tmp / f"{name}.db", embedder)
    stats = ingest(engine, timed, convs, 0, context)
    print(f"  store {name}: {stats['items']} items in {stats['seconds']:.1f} s", flush=True)
    return engine, timed, stats


def run(args: argparse.Namespace) -> dict[str, Any]:
    convs = load_locomo(args.data)
    dated = load_locomo(args.data, date_prefix=True)
    embedder = CachedEmbedder(build_embedder(Settings()))
    grid = recipe_grid()
    for r in grid:
        RECIPES[r.name] = r
    rows: list[dict[str, Any]] = []

    def record(store: str, variant: str, recipe: str, result: dict[str, Any]) -> None:
        rows.append(
            {
                "store": store,
                "variant": variant,
                "recipe": recipe,
                "recall@10": result["recall@10"],
                "recall@5": result["recall@5"],
                "ndcg@10": result["ndcg@10"],
                "per_category_recall@10": {
                    k: v["recall@10"] for k, v in result["per_category_recall@10"].items()
                },
                "per_question": result["per_question_recall@10"],
            }
        )

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        engine, timed, _ = build_store(tmp, "default", convs, embedder, "engine")
        warm_up(timed)
        base = ["hybrid", "hybrid_weighted", "keyword", "vector"]
        start = time.perf_counter()
        results = evaluate(engine, timed, convs, base + [r.name for r in grid])
        print(f"  {len(results)} recipes in {time.perf_counter() - start:.0f} s", flush=True)
        for name, result in results.items():
            record("default", describe(RECIPES[name]), name, result)
        ranked = sorted(grid, key=lambda r: -results[r.name]["recall@10"])
        best = ranked[0].name
        check = distinct([ORIGINAL, "hybrid", "keyword", "vector", RECOMMENDED, best])

        if keyword_sql_has_weight():
            for weight in (0.0, 0.2, 0.7, 1.0):
                set_context_weight(engine, weight)
                found = evaluate(engine, timed, convs, check)
                for name, result in found.items():
                    record(f"context weight {weight}", describe(RECIPES[name]), name, result)
            set_context_weight(engine, None)
        else:
            print("  the store's keyword SQL changed: context-weight variants skipped")
        engine.close()

        for store, data, context in (
            ("date", dated, "engine"),
            ("no-context", convs, "none"),
            ("prev-only", convs, "prev"),
        ):
            engine, timed, _ = build_store(tmp, store, data, embedder, context)
            found = evaluate(engine, timed, data, check)
            for name, result in found.items():
                record(store, describe(RECIPES[name]), name, result)
            engine.close()

    def base(recipe: str) -> list[float]:
        row = next(r for r in rows if r["store"] == "default" and r["recipe"] == recipe)
        return row["per_question"]

    for row in rows:
        delta, low, high = bootstrap(base(ORIGINAL), row["per_question"], args.bootstrap)
        row.update(delta=delta, ci_low=low, ci_high=high, within_noise=low <= 0 <= high)
        delta, low, high = bootstrap(base("keyword"), row["per_question"], args.bootstrap)
        row.update(delta_kw=delta, ci_kw_low=low, ci_kw_high=high)
    sizes = [len(c.questions) for c in convs]
    return {
        "rows": rows,
        "best_grid_recipe": best,
        "recommended": RECOMMENDED,
        "original_default": ORIGINAL,
        "hybrid_now": RECIPES["hybrid"].model_dump(),
        "conversations": [c.sample_id for c in convs],
        "questions_per_conversation": sizes,
        "cross_check": cross_check(rows, [c.sample_id for c in convs], sizes),
    }


def cross_check(rows: list[dict[str, Any]], ids: list[str], sizes: list[int]) -> list[dict]:
    """Pick the best grid recipe on all conversations but one; score it on the one left out."""
    grid = [r for r in rows if r["store"] == "default" and r["recipe"].startswith("x_")]
    named = {r["recipe"]: r for r in rows if r["store"] == "default"}
    bounds = np.cumsum([0, *sizes])
    out = []
    for i, sample in enumerate(ids):
        held = slice(bounds[i], bounds[i + 1])
        mask = np.ones(bounds[-1], dtype=bool)
        mask[held] = False

        def score(row: dict[str, Any], m: Any) -> float:
            return float(np.asarray(row["per_question"])[m].mean())

        chosen = max(grid, key=lambda r: score(r, mask))
        out.append(
            {
                "held_out": sample,
                "chosen_on_others": chosen["recipe"],
                "held_out_recall@10": score(chosen, held),
                **{
                    f"held_out_{name}": score(named[name], held)
                    for name in (ORIGINAL, "hybrid", "keyword", "vector", RECOMMENDED)
                },
            }
        )
    return out


def report(rows: list[dict[str, Any]], top: int) -> str:
    default = [r for r in rows if r["store"] == "default"]
    named = [r for r in default if not r["recipe"].startswith("x_")]
    grid = sorted(
        (r for r in default if r["recipe"].startswith("x_")), key=lambda r: -r["recall@10"]
    )
    pick = [r for r in grid if r["recipe"] in (ORIGINAL, RECOMMENDED)]
    shown = []
    for r in pick + named + grid[:top] + grid[-3:]:
        if r not in shown:
            shown.append(r)
    others = [r for r in rows if r["store"] != "default"]
    headers = [
        "store",
        "recipe",
        "R@10",
        "Δ vs rrf60 0.5/0.5 [95% CI]",
        "significance",
        "Δ vs keyword [95% CI]",
        "R@5",
        "NDCG@10",
    ]

    def line(r: dict[str, Any]) -> list[Any]:
        return [
            r["store"],
            r["variant"],
            r["recall@10"],
            f"{r['delta']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]",
            "noise" if r["within_noise"] else "**significant**",
            f"{r['delta_kw']:+.3f} [{r['ci_kw_low']:+.3f}, {r['ci_kw_high']:+.3f}]",
            r["recall@5"],
            r["ndcg@10"],
        ]

    parts = [
        f"Recipes on the default store (original default, recommended, named recipes, top {top} "
        "and bottom 3 of the grid)",
        table(headers, [line(r) for r in shown]),
        "",
        "One-factor slices of the grid (R@10), other factors at the original default",
        slices(default),
        "",
        "Ingest and context variants",
        table(headers, [line(r) for r in others]),
        "",
        "recall@10 per category (default store)",
        category_rows([r for r in default if r["recipe"] in KEY_RECIPES]),
    ]
    return "\n".join(parts)


KEY_RECIPES = (ORIGINAL, "hybrid", "hybrid_weighted", "keyword", "vector", RECOMMENDED)


def category_rows(rows: list[dict[str, Any]]) -> str:
    cats = list(rows[0]["per_category_recall@10"])
    return table(
        ["recipe", *cats],
        [[r["variant"], *(r["per_category_recall@10"][c] for c in cats)] for r in rows],
    )


def slices(default: list[dict[str, Any]]) -> str:
    """R@10 as one parameter moves, the others at rrf k=60, 0.5/0.5, candidates 100."""
    by = {r["recipe"]: r["recall@10"] for r in default}
    lines = []
    lines.append(
        "fusion (0.5/0.5, cand 100): rrf k60 {:.3f} | weighted {:.3f}".format(
            by["x_rrf60_v0.5_k0.5_c100"], by["x_wtd_v0.5_k0.5_c100"]
        )
    )
    lines.append(
        "rrf_k (0.5/0.5, cand 100): "
        + " | ".join(f"k={k} {by[f'x_rrf{k}_v0.5_k0.5_c100']:.3f}" for k in (10, 30, 60))
    )
    for tag, label in (("rrf60", "rrf k60"), ("wtd", "weighted")):
        lines.append(
            f"weights v/k ({label}, cand 100): "
            + " | ".join(
                f"{v}/{k} {by[f'x_{tag}_v{v}_k{k}_c100']:.3f}"
                for v, k in ((0.2, 0.8), (0.3, 0.7), (0.5, 0.5), (0.7, 0.3))
            )
        )
        lines.append(
            f"candidates ({label}, 0.5/0.5): "
            + " | ".join(f"{c} {by[f'x_{tag}_v0.5_k0.5_c{c}']:.3f}" for c in (50, 100, 200))
        )
    return "\n".join(f"- {x}" for x in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--bootstrap", type=int, default=5000)
    parser.add_argument("--top", type=int, default=10, help="grid rows to print")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "locomo_experiments.json")
    args = parser.parse_args()
    meta = machine_note()
    start = time.perf_counter()
    out = run(args)
    meta["seconds"] = time.perf_counter() - start
    print("\n" + report(out["rows"], args.top))
    print(f"\nbest grid recipe: {out['best_grid_recipe']}; recommended: {RECOMMENDED}")
    print("\nCross-check: the best grid recipe chosen without one conversation, scored on it")
    cc = out["cross_check"]
    keys = [k for k in cc[0] if k != "held_out"]
    print(table(["held out", *keys], [[c["held_out"], *(c[k] for k in keys)] for c in cc]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": meta, "data": str(args.data), **out}, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
