"""LoCoMo evidence retrieval: ingest every turn, then each question (categories 1-4) is a query.

    python bench/locomo.py                       # dev set (../shared/datasets/locomo-dev)
    python bench/locomo.py --data DIR_OR_FILE    # e.g. held-out conversations
    python bench/locomo.py --mem0-python /tmp/mem0venv/bin/python   # + mem0 in the same run

Each turn ``<speaker>: <text>`` (+ `` [image: <caption>]``) is one memory of that conversation's
user (user_id = sample id), session_id ``session_<n>``, metadata ``{dia_id, session,
session_date}``, ingested with ``Memory.add_many``, one call per session, in session order.
Metrics per question, averaged: evidence recall@k (k = 1, 5, 10, 20), NDCG@10 (binary), and
session-level recall@10; query latency includes embedding the query. Every recipe is measured
over the same store, with the recipes interleaved question by question so that machine load hits
them alike. Also (bench/lib/honesty.py): recall in a store mixed with decoy tenants
(``--decoys``), per category and per conversation, and precision/recall of ``--threshold`` on
questions asked to their own vs. another conversation. Results: bench/results/locomo.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from lib.common import (
    CATEGORIES,
    DEFAULT_DATA,
    RESULTS_DIR,
    Conversation,
    load_locomo,
    machine_note,
    peak_rss_mb,
    table,
)
from lib.embed_cache import DiskCachedEmbedder
from lib.honesty import (
    CachingEmbedder,
    alone_vs_mixed,
    decoys,
    per_conversation,
    threshold_report,
    threshold_table,
)
from lib.locomo_run import evaluate, ingest, open_engine, results_table, warm_up

from omoide.config import Settings
from omoide.embed import build_embedder

RECIPES = ("hybrid", "hybrid_weighted", "keyword", "vector")


def dataset_summary(convs: list[Conversation]) -> dict[str, Any]:
    evidence = [e for c in convs for q in c.questions for e in q.evidence + q.unmatched]
    return {
        "conversations": [c.sample_id for c in convs],
        "turns": sum(len(c.turns) for c in convs),
        "sessions": sum(len(c.sessions) for c in convs),
        "questions": sum(len(c.questions) for c in convs),
        "skipped_adversarial_cat5": sum(c.skipped_adversarial for c in convs),
        "skipped_without_evidence": sum(c.skipped_no_evidence for c in convs),
        "evidence_ids": len(evidence),
        "evidence_ids_unmatched": sum(len(q.unmatched) for c in convs for q in c.questions),
        "unmatched_examples": [u for c in convs for q in c.questions for u in q.unmatched][:10],
    }


def category_table(results: dict[str, dict[str, Any]]) -> str:
    cats = [f"{c} {n}" for c, n in CATEGORIES.items()]
    first = next(iter(results.values()))["per_category_recall@10"]
    headers = ["recipe", *(f"{c} (n={first[c]['n']})" for c in cats if c in first)]
    rows = [
        [name, *(r["per_category_recall@10"][c]["recall@10"] for c in cats if c in first)]
        for name, r in results.items()
    ]
    return table(headers, rows)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--db", type=Path, help="database file (default: a fresh temp file)")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "locomo.json")
    parser.add_argument("--recipes", default=",".join(RECIPES))
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--batch", type=int, default=0, help="turns per add_many (0 = session)")
    parser.add_argument(
        "--also-batch",
        type=int,
        default=500,
        help="also time ingest with add_many of N turns (spanning sessions) into a second, "
        "throwaway store (0 = skip)",
    )
    parser.add_argument("--date-prefix", action="store_true", help="prefix turns with the date")
    parser.add_argument("--mem0-python", help="python of a venv with mem0ai: run it too")
    parser.add_argument(
        "--decoys", type=int, default=2, help="decoy tenants per conversation (0 = no mixed run)"
    )
    parser.add_argument(
        "--sessions",
        choices=("both", "with", "without"),
        default="both",
        help="also measure a store whose turns were added one by one without session ids",
    )
    parser.add_argument(
        "--embed-cache",
        type=Path,
        help="keep vectors in this .npz file across runs (query latency then excludes them)",
    )
    parser.add_argument("--threshold", type=float, default=0.3)
    parser.add_argument("--threshold-recipes", default="hybrid,vector")
    return parser.parse_args()


def measure(args: argparse.Namespace, convs: list[Conversation]) -> dict[str, Any]:
    """Ingest, evaluate every recipe, and (optionally) time a batched ingest."""
    recipes = [r for r in args.recipes.split(",") if r]
    meta = machine_note()
    out: dict[str, Any] = {"machine": meta}
    model = build_embedder(Settings())
    if args.embed_cache:
        model = DiskCachedEmbedder(model, args.embed_cache)
    with tempfile.TemporaryDirectory() as tmp:
        engine, timed = open_engine(args.db or Path(tmp) / "locomo.db", model)
        out["model_load_s"] = warm_up(timed)
        import torch  # loaded by the embedder already; only to record its thread count

        meta["torch_threads"] = torch.get_num_threads()
        ing = out["ingest"] = ingest(engine, timed, convs, args.batch)
        print(
            f"ingest: {ing['items']} items in {ing['seconds']:.1f} s = "
            f"{ing['items_per_s']:.0f} items/s (embedding {ing['embed_seconds']:.1f} s; store "
            f"alone {ing['store_items_per_s']:.0f} items/s); model load "
            f"{out['model_load_s']:.1f} s",
            flush=True,
        )
        out["results"] = evaluate(engine, timed, convs, recipes, args.limit)
        out["threshold"] = [
            threshold_report(engine, convs, r, args.threshold)
            for r in args.threshold_recipes.split(",")
            if r
        ]
        engine.close()
        out["mixed"] = measure_mixed(args, convs, recipes, timed.inner, Path(tmp) / "mixed.db")
        out["without_sessions"] = measure_without_sessions(
            args, convs, recipes, timed.inner, Path(tmp) / "nosessions.db"
        )
        out["ingest_batched"] = None
        if args.also_batch:
            other, other_timed = open_engine(Path(tmp) / "batch.db", timed.inner)
            batched = out["ingest_batched"] = ingest(other, other_timed, convs, args.also_batch)
            other.close()
            print(
                f"ingest, add_many of {args.also_batch}: {batched['items_per_s']:.0f} items/s "
                f"(embedding {batched['embed_seconds']:.1f} s)",
                flush=True,
            )
    if isinstance(model, DiskCachedEmbedder):
        model.save()
    meta["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    meta["peak_rss_mb"] = peak_rss_mb()
    return out


def measure_mixed(
    args: argparse.Namespace,
    convs: list[Conversation],
    recipes: list[str],
    model: Any,
    path: Path,
) -> dict[str, Any] | None:
    """The same questions in a store that also holds decoy tenants (half written before the
    real conversations, half after)."""
    if not args.decoys:
        return None
    fakes = decoys(convs, args.decoys)
    engine, timed = open_engine(path, CachingEmbedder(model))
    half = len(fakes) // 2
    ingest(engine, timed, fakes[:half] + convs + fakes[half:], args.batch)
    results = evaluate(engine, timed, convs, recipes, args.limit)
    engine.close()
    return {"decoy_tenants": len(fakes), "results": results}


def measure_without_sessions(
    args: argparse.Namespace,
    convs: list[Conversation],
    recipes: list[str],
    model: Any,
    path: Path,
) -> dict[str, Any] | None:
    """The same questions in a store where every turn was added on its own, in order, with
    its time but no session id (issue 13, point 4: the engine links them by time alone)."""
    if args.sessions == "with":
        return None
    engine, timed = open_engine(path, model)
    stats = ingest(engine, timed, convs, batch=1, with_sessions=False)
    results = evaluate(engine, timed, convs, recipes, args.limit)
    engine.close()
    return {"ingest": stats, "results": results}


# mem0 in the same run ---------------------------------------------------------------------
def run_mem0(python: str, data: Path, limit: int, threads: int) -> dict[str, Any] | None:
    """bench/mem0_baseline.py in its own virtualenv (with omoide's torch thread count); its
    JSON result, or None if it failed."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "mem0.json"
        cmd = [python, str(Path(__file__).with_name("mem0_baseline.py"))]
        cmd += ["--data", str(data), "--out", str(out), "--limit", str(limit)]
        cmd += ["--threads", str(threads)]
        print(f"running mem0 baseline: {' '.join(cmd)}", flush=True)
        proc = subprocess.run(cmd, check=False)
        if proc.returncode != 0 or not out.exists():
            print(f"mem0 baseline failed (exit {proc.returncode})")
            return None
        return json.loads(out.read_text())


def ingest_again(convs: list[Conversation], batch: int) -> dict[str, Any]:
    """omoide's ingest once more, into a throwaway store (the second A of an A-B-A timing)."""
    with tempfile.TemporaryDirectory() as tmp:
        engine, timed = open_engine(Path(tmp) / "again.db")
        warm_up(timed)
        out = ingest(engine, timed, convs, batch)
        engine.close()
    return out


def compare_mem0(payload: dict[str, Any], mem0: dict[str, Any], after: dict[str, Any]) -> None:
    """Ingest ratio with omoide timed before and after mem0 (A-B-A), so load drift cancels."""
    rate = mem0["ingest"]["items_per_s"]
    results = payload["results"]
    print("\n" + results_table({"omoide hybrid": results["hybrid"], **mem0["results"]}))
    before = payload["ingest"]
    omoide = (before["items_per_s"] + after["items_per_s"]) / 2
    cpu = (before["cpu_seconds"] + after["cpu_seconds"]) / 2
    payload["ingest_after_mem0"] = after
    payload["ingest_vs_mem0"] = {
        "omoide_items_per_s_before_after": [before["items_per_s"], after["items_per_s"]],
        "omoide_items_per_s": omoide,
        "mem0_items_per_s": rate,
        "ratio": omoide / rate,
        "ratio_cpu_time": mem0["ingest"]["cpu_seconds"] / cpu,
    }
    print(
        f"ingest (add_many per session): omoide {before['items_per_s']:.0f} / "
        f"{after['items_per_s']:.0f} items/s before / after mem0's {rate:.0f} items/s = "
        f"{omoide / rate:.2f}x (target >= 3x); by CPU time "
        f"{payload['ingest_vs_mem0']['ratio_cpu_time']:.2f}x"
    )
    if payload.get("ingest_batched"):
        batched = payload["ingest_batched"]["items_per_s"]
        payload["ingest_vs_mem0"]["ratio_batched_500"] = batched / rate
        print(f"ingest (add_many of 500): omoide {batched:.0f} items/s = {batched / rate:.2f}x")


def main() -> None:
    args = parse_args()
    convs = load_locomo(args.data, date_prefix=args.date_prefix)
    data = dataset_summary(convs)
    print(
        f"{data['conversations']}: {data['turns']} turns, {data['questions']} questions "
        f"(skipped: {data['skipped_adversarial_cat5']} adversarial, "
        f"{data['skipped_without_evidence']} without evidence); evidence ids "
        f"{data['evidence_ids']}, unmatched {data['evidence_ids_unmatched']}",
        flush=True,
    )
    measured = measure(args, convs)
    results = measured["results"]
    print("\n" + results_table(results))
    print("\nrecall@10 per category\n" + category_table(results))
    print("\nrecall@10 per conversation\n" + per_conversation(convs, results))
    if measured.get("mixed"):
        mixed = measured["mixed"]["results"]
        print(f"\nmixed with {measured['mixed']['decoy_tenants']} decoy tenants")
        print(alone_vs_mixed(results, mixed))
        print("\nrecall@10 per category, mixed\n" + category_table(mixed))
    if measured.get("without_sessions"):
        without = measured["without_sessions"]["results"]
        print("\nwithout session ids (each turn added alone, with its time)")
        print(results_table(without))
        print(alone_vs_mixed(results, without, "without sessions"))
        print("\nrecall@10 per category, without session ids\n" + category_table(without))
        print(
            "\nrecall@10 per conversation, without session ids\n" + per_conversation(convs, without)
        )
    print(
        f"\nthreshold {args.threshold}: questions asked to their own conversation vs. to the "
        "others (a query answers when a hit scores >= threshold)\n"
        + threshold_table(measured["threshold"])
    )
    from omoide.retrieval.recipes import RECIPES as DEFINED

    payload: dict[str, Any] = {
        "benchmark": "locomo",
        "data": str(args.data),
        "recipes": {r: DEFINED[r].model_dump() for r in results},
        "date_prefix": args.date_prefix,
        "dataset": data,
        **measured,
    }
    if args.mem0_python:
        threads = measured["machine"]["torch_threads"]
        payload["mem0"] = run_mem0(args.mem0_python, args.data, args.limit, threads)
        if payload["mem0"] and "hybrid" in results:
            compare_mem0(payload, payload["mem0"], ingest_again(convs, args.batch))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
