"""Ingest rate, search latency and peak RSS at 10k and 100k memories.

    python bench/scale.py            # one-10k, one-100k, multi-100k (~5-10 min on 2 cores)
    python bench/scale.py --quick    # one-10k only
    python bench/scale.py --quick --encryption-key K   # and again encrypted; prints the ratios
    python bench/scale.py --db-url postgresql://...   # PostgreSQL vs SQLite (bench/scale_pg.py)

Scenarios (each in its own process, so each peak RSS is its own):

* ``one-10k``     10,000 memories in one tenant, **real embeddings**: every text goes through the
                  local all-MiniLM-L6-v2 inside ``Engine.add_many`` (batches of 500).
* ``one-100k``    100,000 memories in one tenant.
* ``multi-100k``  100,000 memories over 100 tenants (1,000 each).

Corpus: LoCoMo dev turns split into their 1,814 distinct sentences (>= 4 words); each memory is
``<speaker>: <1-3 random sentences>``, 20 memories per session, two speakers per session drawn
from 10 names, seeded. For the 100k scenarios embedding 100k texts would take 10-20 minutes on
this machine, so each sentence is embedded once (cached in bench/results/.cache) and a memory's
vector is the normalised mean of its sentences' vectors; those vectors reach the store through
the same ``Engine.add_many`` path (batches of 500) via an embedder that looks them up, so the
100k ingest rate is the engine + SQLite rate without model time. The one-10k scenario gives the
real embedding rate, and the summary derives the end-to-end rate from the two.

Queries: the first 200 LoCoMo dev questions (categories 1-4), each on a random tenant, every
recipe per query in turn (``hybrid``, ``vector``, ``keyword``; which goes first rotates).
Latency includes embedding the query with the real model (1 query at a time). The first query
of each tenant (which loads its vectors into memory) is reported apart as the cold query.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lib.corpus import LookupEmbedder, corpus, questions, sentence_vectors, sentences

SCENARIOS: dict[str, dict[str, Any]] = {
    "one-10k": {"items": 10_000, "tenants": 1, "real_embeddings": True},
    "one-100k": {"items": 100_000, "tenants": 1, "real_embeddings": False},
    "multi-100k": {"items": 100_000, "tenants": 100, "real_embeddings": False},
    # not in the default run (~15 min of ingest + a graph build on 2 cores): --scenarios one-1m
    "one-1m": {"items": 1_000_000, "tenants": 1, "real_embeddings": False},
}
DEFAULT_SCENARIOS = ("one-10k", "one-100k", "multi-100k")
RECIPES = ("hybrid", "vector", "keyword")
BATCH = 500
TARGETS = {"one-100k": 20.0, "multi-100k": 10.0}  # hybrid p50 ms, query embedding included


def current_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# one scenario (child process) -------------------------------------------------------------
def run_scenario(name: str, n_queries: int, db_dir: Path) -> dict[str, Any]:  # noqa: PLR0915
    from lib.common import machine_note, peak_rss_mb, percentiles_ms
    from lib.locomo_run import TimedEmbedder

    from omoide import NewMemory
    from omoide.config import Settings
    from omoide.embed import build_embedder
    from omoide.memory import Memory

    spec = SCENARIOS[name]
    if (db_dir / f"{name}.db").exists():  # a kept database: never ingest into it twice
        return run_reused(name, n_queries, db_dir)  # the graph's timings on a kept database
    meta = machine_note()
    model = build_embedder(Settings())
    start = time.perf_counter()
    model.embed(["warm up the model"])
    load_s = time.perf_counter() - start
    pool = sentences()
    rows = corpus(spec["items"], spec["tenants"], len(pool))
    texts = [f"{speaker}: {' '.join(pool[i] for i in ids)}" for _, _, speaker, ids in rows]
    if spec["real_embeddings"]:
        embedder: Any = model
    else:
        ids_by_text = {text: row[3] for text, row in zip(texts, rows, strict=True)}
        embedder = LookupEmbedder(model, ids_by_text, sentence_vectors(pool, model))
    timed = TimedEmbedder(embedder)
    db = db_dir / f"{name}.db"
    engine = Memory(db, embedder=timed, workers=0)

    # ingest: batches of 500 per tenant, sessions in order
    print(f"[{name}] ingest {len(rows):,} memories ...", flush=True)
    start = time.perf_counter()
    cpu = time.process_time()
    i, report_at = 0, len(rows) // 10
    while i < len(rows):
        tenant = rows[i][0]
        j = i
        while j < len(rows) and j - i < BATCH and rows[j][0] == tenant:
            j += 1
        batch = [
            NewMemory(text=texts[k], session_id=f"s{rows[k][1]}", metadata={"k": k})
            for k in range(i, j)
        ]
        engine.add_many(batch, user_id=f"user{tenant}")
        i = j
        if i >= report_at:
            report_at += len(rows) // 10
            print(f"  {i:,} ({i / (time.perf_counter() - start):.0f} items/s)", flush=True)
    ingest_s = time.perf_counter() - start
    ingest = {
        "items": len(rows),
        "batch": BATCH,
        "seconds": ingest_s,
        "items_per_s": len(rows) / ingest_s,
        "cpu_seconds": time.process_time() - cpu,
        "embed_seconds": timed.seconds,
        "embedding": "real (all-MiniLM-L6-v2)" if spec["real_embeddings"] else "precomputed",
        "store_items_per_s": len(rows) / max(ingest_s - timed.seconds, 1e-9),
    }
    if spec["real_embeddings"]:
        ingest["embed_items_per_s"] = len(rows) / timed.seconds
    db_mb = sum(p.stat().st_size for p in db_dir.glob(f"{name}.db*")) / 1e6
    print(f"  ingest {ingest['items_per_s']:.0f} items/s, db {db_mb:.0f} MB", flush=True)

    # cold: the first query of each tenant loads its vectors
    rng = random.Random(7)
    qs = questions(n_queries)
    cold = []
    for tenant in range(spec["tenants"]):
        start = time.perf_counter()
        engine.search(qs[tenant % len(qs)], user_id=f"user{tenant}", limit=10)
        cold.append(time.perf_counter() - start)
    # warm
    lat: dict[str, list[float]] = {r: [] for r in RECIPES}
    emb: dict[str, list[float]] = {r: [] for r in RECIPES}
    hits: dict[str, list[int]] = {r: [] for r in RECIPES}
    for n, q in enumerate(qs):
        user = f"user{rng.randrange(spec['tenants'])}"
        # rotate which recipe goes first: a repeated query finds SQLite's pages warm
        for recipe in RECIPES[n % 3 :] + RECIPES[: n % 3]:
            before = timed.seconds
            start = time.perf_counter()
            found = engine.search(q, user_id=user, limit=10, recipe=recipe)
            lat[recipe].append(time.perf_counter() - start)
            emb[recipe].append(timed.seconds - before)
            hits[recipe].append(len(found.hits))
    rss_after_search = current_rss_mb()
    peak_before_recall = peak_rss_mb()
    vector_recall = recall_vs_exact(engine, qs[:100]) if name == "one-1m" else None
    engine.close()
    search = {}
    for recipe in RECIPES:
        rest = [a - b for a, b in zip(lat[recipe], emb[recipe], strict=True)]
        search[recipe] = {
            **percentiles_ms(lat[recipe]),
            "query_embedding": percentiles_ms(emb[recipe]),
            "without_embedding": percentiles_ms(rest),
            "mean_hits": sum(hits[recipe]) / len(hits[recipe]),
        }
    meta["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    import torch

    meta["torch_threads"] = torch.get_num_threads()
    meta["blas_env"] = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    return {
        "scenario": name,
        **spec,
        "machine": meta,
        "model_load_s": load_s,
        "ingest": ingest,
        "db_mb": db_mb,
        "cold_first_query": percentiles_ms(cold),
        "queries": len(qs),
        "search": search,
        "peak_rss_mb": peak_before_recall,
        "rss_after_search_mb": rss_after_search,
        "vector_recall_vs_exact": vector_recall,
    }


# one-1m: a kept database, the graph's recall ------------------------------------------------
def run_reused(name: str, n_queries: int, db_dir: Path) -> dict[str, Any]:
    """Search timings on a database a previous run of ``name`` left in ``--db-dir`` (its ingest
    takes ~15 min here): cold first query (graph load or build), warm p50/p95 per recipe,
    peak RSS, and the vector recall@10 of the store against an exact scan."""
    from lib.common import machine_note, peak_rss_mb
    from lib.locomo_run import TimedEmbedder

    from omoide.config import Settings
    from omoide.embed import build_embedder
    from omoide.memory import Memory

    spec = SCENARIOS[name]
    meta = machine_note()
    model = build_embedder(Settings())
    model.embed(["warm up the model"])
    timed = TimedEmbedder(model)
    engine = Memory(db_dir / f"{name}.db", embedder=timed, workers=0)
    qs = questions(n_queries)
    start = time.perf_counter()
    engine.search(qs[0], user_id="user0", limit=10)
    cold_s = time.perf_counter() - start
    print(f"[{name}] cold first query {cold_s:.1f} s (loads the graph, or starts its build)")
    engine.store._vectors.wait_for_builds()  # a graph being built: the timings are of it
    engine.search(qs[0], user_id="user0", limit=10)
    ready_s = time.perf_counter() - start
    print(f"[{name}] graph ready after {ready_s:.1f} s", flush=True)
    search = timed_searches(engine, timed, qs, spec["tenants"])
    rss_after_search = current_rss_mb()
    peak = peak_rss_mb()
    vector_recall = recall_vs_exact(engine, qs[:100])
    engine.close()
    return {
        "scenario": name,
        **spec,
        "reused_db": True,
        "machine": meta,
        "ann_threshold": os.environ.get("OMOIDE_ANN_THRESHOLD", "default"),
        "cold_first_query_s": cold_s,
        "graph_ready_s": ready_s,
        "queries": len(qs),
        "search": search,
        "peak_rss_mb": peak,
        "rss_after_search_mb": rss_after_search,
        "vector_recall_vs_exact": vector_recall,
    }


def timed_searches(engine: Any, timed: Any, qs: list[str], tenants: int) -> dict[str, Any]:
    """Warm latencies per recipe, the same loop as ``run_scenario``'s."""
    from lib.common import percentiles_ms

    rng = random.Random(7)
    lat: dict[str, list[float]] = {r: [] for r in RECIPES}
    emb: dict[str, list[float]] = {r: [] for r in RECIPES}
    for n, q in enumerate(qs):
        user = f"user{rng.randrange(tenants)}"
        for recipe in RECIPES[n % 3 :] + RECIPES[: n % 3]:
            before = timed.seconds
            start = time.perf_counter()
            engine.search(q, user_id=user, limit=10, recipe=recipe)
            lat[recipe].append(time.perf_counter() - start)
            emb[recipe].append(timed.seconds - before)
    out = {}
    for recipe in RECIPES:
        rest = [a - b for a, b in zip(lat[recipe], emb[recipe], strict=True)]
        out[recipe] = {
            **percentiles_ms(lat[recipe]),
            "query_embedding": percentiles_ms(emb[recipe]),
            "without_embedding": percentiles_ms(rest),
        }
    return out


def recall_vs_exact(engine: Any, qs: list[str]) -> dict[str, Any]:
    """The store's vector_search top 10 (graph or not) against an exact scan of the same rows,
    read from SQLite in chunks (no 1M matrix). ``strict``: share of the exact ids returned;
    ``ties``: share of returned rows whose cosine reaches the exact 10th best (the corpus
    repeats sentences, so equal vectors make the exact id set arbitrary)."""
    import sqlite3

    import numpy as np

    from omoide.types import Scope, SearchFilters

    store = engine.store
    vecs = engine.embedder.embed(qs)
    scope = Scope(user_id="user0", scope_id="default")
    got = [store.memories.vector_search(scope, v, SearchFilters(), 10) for v in vecs]
    conn = sqlite3.connect(f"file:{store.location}?mode=ro", uri=True)
    best = np.full((len(qs), 10), -2.0, dtype=np.float32)
    best_ids = np.zeros((len(qs), 10), dtype=object)
    cursor = conn.execute(
        "SELECT m.id, v.vec FROM memory_vectors v JOIN memories m ON m.seq = v.memory_seq"
        " WHERE m.user_id = ? AND m.scope_id = ?",
        (scope.user_id, scope.scope_id),
    )
    rows = 0
    while chunk := cursor.fetchmany(50_000):
        rows += len(chunk)
        mat = np.frombuffer(b"".join(r[1] for r in chunk), dtype=np.float32).reshape(len(chunk), -1)
        scores = vecs @ mat.T
        ids = np.array([r[0] for r in chunk], dtype=object)
        both = np.concatenate([best, scores], axis=1)
        both_ids = np.concatenate([best_ids, np.broadcast_to(ids, scores.shape)], axis=1)
        top = np.argsort(-both, axis=1, kind="stable")[:, :10]
        best = np.take_along_axis(both, top, axis=1)
        best_ids = np.take_along_axis(both_ids, top, axis=1)
    conn.close()
    strict = [len({h[0] for h in g} & set(best_ids[i])) / 10 for i, g in enumerate(got)]
    ties = [sum(h[1] >= best[i, 9] - 1e-5 for h in g) / 10 for i, g in enumerate(got)]
    return {
        "queries": len(qs),
        "tenant_rows": rows,  # the tenant's size as measured (a 1M ingest cut short is smaller)
        "recall_at_10_strict": float(np.mean(strict)),
        "recall_at_10_ties": float(np.mean(ties)),
    }


# orchestration ----------------------------------------------------------------------------
def summary(results: list[dict[str, Any]]) -> str:
    from lib.common import table

    real = next((r for r in results if r["real_embeddings"]), None)
    embed_rate = real["ingest"]["embed_items_per_s"] if real else None
    rows = []
    reused = [r for r in results if r.get("reused_db")]
    results = [r for r in results if not r.get("reused_db")]
    for r in results:
        ing = r["ingest"]
        e2e: float | None = ing["items_per_s"]
        if not r["real_embeddings"]:
            e2e = 1 / (1 / ing["store_items_per_s"] + 1 / embed_rate) if embed_rate else None
        s = r["search"]

        def pp(recipe: str, s: dict = s) -> str:
            return f"{s[recipe]['p50_ms']:.1f} / {s[recipe]['p95_ms']:.1f}"

        rows.append(
            [
                r["scenario"],
                f"{r['items']:,} / {r['tenants']}",
                f"{ing['items_per_s']:,.0f}" + ("" if r["real_embeddings"] else " (no model)"),
                "-"
                if e2e is None
                else f"{e2e:,.0f}" + ("" if r["real_embeddings"] else " (derived)"),
                f"{ing['store_items_per_s']:,.0f}",
                pp("hybrid"),
                pp("vector"),
                pp("keyword"),
                f"{s['hybrid']['query_embedding']['p50_ms']:.1f}",
                f"{s['hybrid']['without_embedding']['p50_ms']:.1f}",
                f"{r['cold_first_query']['p50_ms']:.0f}",
                f"{r['db_mb']:.0f}",
                f"{r['peak_rss_mb']:.0f} / {r['rss_after_search_mb']:.0f}",
            ]
        )
    headers = [
        "scenario",
        "items / tenants",
        "ingest items/s",
        "with real embedding",
        "engine+store only",
        "hybrid p50/p95 ms",
        "vector p50/p95",
        "keyword p50/p95",
        "query embed p50",
        "hybrid p50 w/o embed",
        "cold 1st query ms",
        "db MB",
        "RSS MB peak / after search",
    ]
    lines = [table(headers, rows), ""]
    for r in results:
        target = TARGETS.get(r["scenario"])
        if target:
            p50 = r["search"]["hybrid"]["p50_ms"]
            verdict = "MET" if p50 <= target else "MISSED"
            lines.append(
                f"target {r['scenario']}: hybrid p50 {p50:.1f} ms <= {target} ms: {verdict}"
            )
    return "\n".join(lines + [reused_summary(r) for r in reused])


def reused_summary(r: dict[str, Any]) -> str:
    s, rec = r["search"], r["vector_recall_vs_exact"]
    return (
        f"{r['scenario']} (kept database): cold first query {r['cold_first_query_s']:.1f} s;"
        f" p50/p95 ms hybrid {s['hybrid']['p50_ms']:.1f}/{s['hybrid']['p95_ms']:.1f},"
        f" vector {s['vector']['p50_ms']:.1f}/{s['vector']['p95_ms']:.1f},"
        f" keyword {s['keyword']['p50_ms']:.1f}/{s['keyword']['p95_ms']:.1f};"
        f" peak RSS {r['peak_rss_mb']:.0f} MB; {rec['tenant_rows']:,} rows;"
        " vector recall@10 vs exact"
        f" {rec['recall_at_10_strict']:.3f} (ties counted: {rec['recall_at_10_ties']:.3f})"
    )


def child_env(args: argparse.Namespace) -> dict[str, str]:
    env = dict(os.environ)
    if args.torch_threads:
        env["OMOIDE_EMBED_THREADS"] = str(args.torch_threads)
    if args.blas_threads:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(args.blas_threads)
    return env


def encrypted_runs(names: list[str], args: argparse.Namespace, tmp: Path) -> list[dict[str, Any]]:
    """Each scenario again on a database encrypted with ``--encryption-key`` (SQLCipher, through
    OMOIDE_ENCRYPTION_KEY), reported as ``NAME+enc``."""
    db_dir = tmp / "encrypted"
    db_dir.mkdir(exist_ok=True)
    env = child_env(args) | {"OMOIDE_ENCRYPTION_KEY": args.encryption_key}
    found = []
    for name in names:
        out = tmp / f"{name}+enc.json"
        cmd = [sys.executable, __file__, "--scenario", name, "--child-out", str(out)]
        cmd += ["--db-dir", str(db_dir), "--queries", str(args.queries)]
        start = time.perf_counter()
        if subprocess.run(cmd, check=False, timeout=3600, env=env).returncode != 0:
            print(f"[{name}+enc] failed")
            continue
        result = json.loads(out.read_text())
        result["wall_seconds"] = time.perf_counter() - start
        result["scenario"] = f"{name}+enc"
        found.append(result)
    return found


def encryption_ratios(results: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Encrypted / plain per scenario: ingest time per item and search p50s (> 1: slower)."""
    plain = {r["scenario"]: r for r in results}
    ratios = {}
    for enc in (r for r in results if r["scenario"].endswith("+enc")):
        base = plain.get(enc["scenario"].removesuffix("+enc"))
        if base is None:
            continue
        row = {"ingest_time": base["ingest"]["items_per_s"] / enc["ingest"]["items_per_s"]}
        for recipe in RECIPES:
            for part, key in (("", "p50_ms"), ("_without_embedding", "without_embedding")):
                a, b = enc["search"][recipe], base["search"][recipe]
                a, b = (a[key]["p50_ms"], b[key]["p50_ms"]) if part else (a[key], b[key])
                row[f"{recipe}_p50{part}"] = a / max(b, 1e-9)
        ratios[base["scenario"]] = row
    print("encrypted / plain:", json.dumps(ratios, indent=2))
    return ratios


def postgres_requested() -> bool:
    """``--db-url`` hands the whole run to bench/scale_pg.py (PostgreSQL vs SQLite)."""
    if not any(a == "--db-url" or a.startswith("--db-url=") for a in sys.argv[1:]):
        return False
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from scale_pg import main as postgres_main

    postgres_main(sys.argv[1:])
    return True


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the 10k scenario only")
    parser.add_argument("--scenarios", default=",".join(DEFAULT_SCENARIOS))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--scenario", help=argparse.SUPPRESS)  # child mode
    parser.add_argument("--child-out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--db-dir", type=Path, help="keep the databases here (default: temp)")
    parser.add_argument("--out", type=Path, help="default: bench/results/scale.json")
    parser.add_argument(
        "--torch-threads",
        type=int,
        help="OMOIDE_EMBED_THREADS for the scenarios (default: the engine's setting)",
    )
    parser.add_argument(
        "--blas-threads",
        type=int,
        help="OPENBLAS/OMP/MKL_NUM_THREADS for the scenarios (default: unset)",
    )
    parser.add_argument(
        "--encryption-key",
        help="also run every scenario on an encrypted database and report the ratios",
    )
    return parser


def main() -> None:
    if postgres_requested():
        return
    parser = build_parser()
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))

    if args.scenario:
        if not (args.child_out and args.db_dir):
            parser.error("--scenario needs --child-out and --db-dir")
        result = run_scenario(args.scenario, args.queries, args.db_dir)
        args.child_out.write_text(json.dumps(result))
        return

    from lib.common import RESULTS_DIR, machine_note

    names = ["one-10k"] if args.quick else [s for s in args.scenarios.split(",") if s]
    results = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        db_dir = args.db_dir or Path(tmp)
        db_dir.mkdir(parents=True, exist_ok=True)
        for name in names:
            out = Path(tmp) / f"{name}.json"
            cmd = [sys.executable, __file__, "--scenario", name, "--child-out", str(out)]
            cmd += ["--db-dir", str(db_dir), "--queries", str(args.queries)]
            start = time.perf_counter()
            limit = 7200 if name == "one-1m" else 1800  # 1M: ingest and a graph build
            proc = subprocess.run(cmd, check=False, timeout=limit, env=child_env(args))
            if proc.returncode != 0:
                print(f"[{name}] failed with exit code {proc.returncode}")
                continue
            result = json.loads(out.read_text())
            result["wall_seconds"] = time.perf_counter() - start
            results.append(result)
            for db in db_dir.glob(f"{name}.db*"):
                if not args.db_dir:
                    db.unlink()
        if args.encryption_key:
            results += encrypted_runs(names, args, Path(tmp))
    text = summary(results) if results else "no scenario finished"
    print("\n" + text)
    payload = {
        "benchmark": "scale",
        "machine": machine_note(),
        "total_seconds": time.perf_counter() - started,
        "results": results,
    }
    payload["scenarios"] = names
    payload["encryption_ratios"] = encryption_ratios(results) if args.encryption_key else None
    payload["thread_overrides"] = {"torch": args.torch_threads, "blas": args.blas_threads}
    path = args.out or RESULTS_DIR / "scale.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {path} ({payload['total_seconds']:.0f} s)")


if __name__ == "__main__":
    sys.exit(main())
