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
them alike. Also (bench/locomo_honesty.py): recall in a store mixed with decoy tenants
(``--decoys``), per category and per conversation, and precision/recall of ``--threshold`` on
questions asked to their own vs. another conversation. Results: bench/results/locomo.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import (
    CATEGORIES,
    DEFAULT_DATA,
    KS,
    RESULTS_DIR,
    Conversation,
    aggregate,
    load_locomo,
    machine_note,
    peak_rss_mb,
    percentiles_ms,
    score_question,
    session_time_ms,
    table,
)
from embed_cache import DiskCachedEmbedder
from locomo_honesty import (
    CachingEmbedder,
    alone_vs_mixed,
    decoys,
    per_conversation,
    threshold_report,
    threshold_table,
)

from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.memory import Memory
from omoide.store.protocol import NewMemory

RECIPES = ("hybrid", "hybrid_weighted", "keyword", "vector")


class TimedEmbedder:
    """Wraps an embedder and adds up the time spent in it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> Any:
        start = time.perf_counter()
        vectors = self.inner.embed(texts)
        self.seconds += time.perf_counter() - start
        self.texts += len(texts)
        return vectors


def open_engine(db_path: Path, embedder: Any = None) -> tuple[Memory, TimedEmbedder]:
    """A ``Memory`` on ``db_path`` with the default embedder (timed), no background workers."""
    timed = TimedEmbedder(embedder or build_embedder(Settings()))
    return Memory(db_path, embedder=timed, workers=0), timed


def warm_up(timed: TimedEmbedder) -> float:
    """Load the model before anything is timed; return the load time."""
    start = time.perf_counter()
    timed.inner.embed(["warm up the model"])
    return time.perf_counter() - start


def session_records(
    conv: Conversation, context: str = "engine", sessions: bool = True
) -> list[list[NewMemory]]:
    """One list of memories per session, in order; each turn's time is its session's date.

    ``sessions=False`` leaves out the session id (and the session's number and date in the
    metadata): the engine must link the turns into conversations from their times alone.
    ``context`` is for experiments only: ``engine`` leaves it to the engine (previous and next
    turn), ``none`` disables it (a blank context makes the engine skip its neighbour logic),
    ``prev`` gives each turn only the previous turn.
    """
    out = []
    for n, date, turns in conv.sessions:
        records = []
        at = session_time_ms(date)
        for i, t in enumerate(turns):
            ctx = ""
            if context == "none":
                ctx = " "
            elif context == "prev":
                ctx = turns[i - 1].text[:1000] if i else " "
            meta: dict[str, Any] = {"dia_id": t.dia_id}
            if sessions:
                meta.update(session=n, session_date=date)
            records.append(
                NewMemory(
                    text=t.text,
                    session_id=f"session_{n}" if sessions else None,
                    metadata=meta,
                    context=ctx,
                    created_at_ms=at,
                )
            )
        out.append(records)
    return out


def ingest(
    engine: Memory,
    timed: TimedEmbedder,
    convs: list[Conversation],
    batch: int = 0,
    context: str = "engine",
    with_sessions: bool = True,
) -> dict[str, Any]:
    """``add_many`` once per session (``batch=0``) or per ``batch`` turns of a conversation
    (spanning sessions), in session order. Times everything, embedding included."""
    groups = []
    for conv in convs:
        sessions = session_records(conv, context, with_sessions)
        if batch:
            flat = [r for records in sessions for r in records]
            sessions = [flat[i : i + batch] for i in range(0, len(flat), batch)]
        groups += [(conv.sample_id, records) for records in sessions]
    items = sum(len(records) for _, records in groups)
    embed_before = timed.seconds
    cpu_before = time.process_time()
    start = time.perf_counter()
    for user_id, records in groups:
        engine.add_many(records, user_id=user_id)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu_before
    embed_seconds = timed.seconds - embed_before
    return {
        "items": items,
        "add_many_calls": len(groups),
        "batch": batch or "session",
        "seconds": seconds,
        "items_per_s": items / seconds,
        "cpu_seconds": cpu,
        "embed_seconds": embed_seconds,
        "store_seconds": seconds - embed_seconds,
        "store_items_per_s": items / max(seconds - embed_seconds, 1e-9),
    }


def evaluate(
    engine: Memory,
    timed: TimedEmbedder,
    convs: list[Conversation],
    recipes: list[str],
    limit: int = 20,
) -> dict[str, Any]:
    """Run every question through every recipe (interleaved); metrics and latency per recipe."""
    # a few untimed queries first: first-query costs (cache loads, lazy imports) are not latency
    for conv in convs:
        for recipe in recipes:
            engine.search("warm up", user_id=conv.sample_id, limit=limit, recipe=recipe)
    rows: dict[str, list[dict[str, float]]] = {r: [] for r in recipes}
    lat: dict[str, list[float]] = {r: [] for r in recipes}
    embed_lat: dict[str, list[float]] = {r: [] for r in recipes}
    questions = []
    for conv in convs:
        for q in conv.questions:
            questions.append(q)
            turn = len(questions) % len(recipes)  # rotate which recipe runs first
            for recipe in recipes[turn:] + recipes[:turn]:
                before = timed.seconds
                start = time.perf_counter()
                result = engine.search(
                    q.question, user_id=conv.sample_id, limit=limit, recipe=recipe
                )
                lat[recipe].append(time.perf_counter() - start)
                embed_lat[recipe].append(timed.seconds - before)
                retrieved = [str(h.memory.metadata.get("dia_id")) for h in result.hits]
                rows[recipe].append(score_question(q, retrieved))
    out = {}
    for recipe in recipes:
        summary = aggregate(questions, rows[recipe])
        summary["latency"] = percentiles_ms(lat[recipe])
        summary["latency_query_embedding"] = percentiles_ms(embed_lat[recipe])
        summary["per_question_recall@10"] = [r["recall@10"] for r in rows[recipe]]
        out[recipe] = summary
    return out


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


def results_table(results: dict[str, dict[str, Any]]) -> str:
    headers = ["recipe", *(f"R@{k}" for k in KS), "NDCG@10", "sessR@10", "p50 ms", "p95 ms"]
    rows = [
        [
            name,
            *(r[f"recall@{k}"] for k in KS),
            r["ndcg@10"],
            r["session_recall@10"],
            f"{r['latency']['p50_ms']:.1f}" if "latency" in r else "-",
            f"{r['latency']['p95_ms']:.1f}" if "latency" in r else "-",
        ]
        for name, r in results.items()
    ]
    return table(headers, rows)


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
        from locomo_mem0 import compare_mem0, ingest_again, run_mem0

        payload["mem0"] = run_mem0(args.mem0_python, args.data, args.limit, threads)
        if payload["mem0"] and "hybrid" in results:
            compare_mem0(payload, payload["mem0"], ingest_again(convs, args.batch))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
