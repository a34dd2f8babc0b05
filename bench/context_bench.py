"""Context assembly: latency at 10k memories, and how often LoCoMo evidence lands in the block.

    python bench/context_bench.py              # both parts (~2 min on 2 cores)
    python bench/context_bench.py --queries 50 # fewer latency queries

Part 1, latency. One tenant of 10,000 memories built as in ``bench/scale.py`` (LoCoMo dev
sentences, 1-3 per memory; each sentence embedded once with the real all-MiniLM-L6-v2, a
memory's vector the normalised mean of its sentences'), plus a live session of 40 turns
(episodes), 20 profile entries, 5 variables, a session summary and a small graph, so every
section of the block has candidates. Each of the first N LoCoMo dev questions is asked with
budgets of 1k, 4k and 16k tokens (budgets interleaved, the first one rotating), with access
tracking on (its write included) and, for comparison, off; plain hybrid ``search`` (limit 10)
runs alongside. Latencies include embedding the query with the real model.

Part 2, evidence in the block. The LoCoMo dev conversations ingested as ``bench/locomo.py``
does (every turn a memory, ``add_many`` per session, user = sample id, no live session).
For every question (categories 1-4): the block of a 2,000-token ``context`` call, and the
evidence turns (``dia_id``) of the raw memories it cites. Reported: the share of questions
with *all* their evidence turns in the block, the mean share of evidence turns in it, and in
the same run recall@10 of plain hybrid search. Results: bench/results/context.json.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from lib.common import (
    DEFAULT_DATA,
    RESULTS_DIR,
    aggregate,
    load_locomo,
    machine_note,
    percentiles_ms,
    score_question,
    table,
    write_json,
)
from lib.corpus import LookupEmbedder, corpus, questions, sentence_vectors, sentences
from lib.locomo_run import session_records

from omoide import NewMemory
from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.memory import Memory
from omoide.types import MemoryType, Scope, now_ms

BUDGETS = (1000, 4000, 16000)
ITEMS = 10_000


def build_tenant(db: Path, model: Any) -> tuple[Memory, float]:
    """The 10k-memory tenant ``bench``; returns the engine and the ingest seconds."""
    pool = sentences()
    vectors = sentence_vectors(pool, model)
    rows = corpus(ITEMS, 1, len(pool))
    texts = [f"{speaker}: {' '.join(pool[i] for i in ids)}" for _, _, speaker, ids in rows]
    embedder = LookupEmbedder(model, {t: r[3] for t, r in zip(texts, rows, strict=True)}, vectors)
    memory = Memory(db, embedder=embedder, settings=Settings(llm_base_url=None), workers=0)
    start = time.perf_counter()
    for first in range(0, len(texts), 500):
        batch = [
            NewMemory(text=t, session_id=f"session_{rows[first + k][1]}")
            for k, t in enumerate(texts[first : first + 500])
        ]
        memory.add_many(batch, user_id="bench")
    seconds = time.perf_counter() - start
    rng = random.Random(7)
    for _ in range(20):
        pair = [
            {"role": "user", "content": pool[rng.randrange(len(pool))]},
            {"role": "assistant", "content": pool[rng.randrange(len(pool))]},
        ]
        memory.add(pair, user_id="bench", session_id="live", infer=False)
    profile = [f"interest {n}: {pool[rng.randrange(len(pool))]}" for n in range(20)]
    memory.add_many(
        [NewMemory(text=p, type=MemoryType.USER_PROFILE) for p in profile], user_id="bench"
    )
    memory.update_variables({f"var_{n}": f"value {n}" for n in range(5)}, user_id="bench")
    memory.create_summary("live", " ".join(pool[:12]), user_id="bench")
    scope = Scope(user_id="bench")
    with memory.store.transaction() as tx:
        people = [
            tx.graph.upsert_entity(scope, name, "person", now_ms())
            for name in ("Caroline", "Melanie", "Jon", "Gina", "Maria", "John")
        ]
        for a, b in itertools.pairwise(people):
            tx.graph.upsert_relationship(scope, a.id, b.id, "knows", None, now_ms())
    memory.run_jobs()
    return memory, seconds


def latency(memory: Memory, asked: list[str]) -> dict[str, Any]:
    for q in asked[:5]:  # untimed: first-call costs (tokenizer, vector cache, imports)
        memory.context(q, user_id="bench", session_id="live", token_budget=1000)
        memory.search(q, user_id="bench")
    runs = [("search", None, True)] + [(f"{b}", b, True) for b in BUDGETS]
    runs += [(f"{b} no-track", b, False) for b in BUDGETS]
    lat: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    tokens: dict[str, list[int]] = {name: [] for name, _, _ in runs}
    for index, q in enumerate(asked):
        turn = index % len(runs)
        for name, budget, track in runs[turn:] + runs[:turn]:
            start = time.perf_counter()
            if budget is None:
                memory.search(q, user_id="bench", limit=10)
            else:
                result = memory.context(
                    q, user_id="bench", session_id="live", token_budget=budget, track_access=track
                )
                tokens[name].append(result.tokens)
            lat[name].append(time.perf_counter() - start)
    return {
        name: {**percentiles_ms(lat[name]), "mean_tokens": _mean(tokens[name])}
        for name, _, _ in runs
    }


def evidence_in_block(model: Any, budget: int) -> dict[str, Any]:
    convs = load_locomo(DEFAULT_DATA)
    with tempfile.TemporaryDirectory() as folder:
        memory = Memory(
            Path(folder) / "locomo.db",
            embedder=model,
            settings=Settings(llm_base_url=None),
            workers=0,
        )
        with memory:
            for conv in convs:
                for records in session_records(conv):
                    memory.add_many(records, user_id=conv.sample_id)
            dia = {
                item.id: str(item.metadata.get("dia_id"))
                for conv in convs
                for item in memory.get_all(user_id=conv.sample_id, limit=10_000).items
            }
            all_in, shares, rows, qs, block_tokens, lat, lines = [], [], [], [], [], [], []
            for conv in convs:
                for q in conv.questions:
                    start = time.perf_counter()
                    result = memory.context(
                        q.question, user_id=conv.sample_id, token_budget=budget, track_access=False
                    )
                    lat.append(time.perf_counter() - start)
                    cited = {dia[i.id] for i in result.memories if i.id in dia}
                    relevant = q.evidence + q.unmatched
                    inside = [e for e in relevant if e in cited]
                    all_in.append(len(inside) == len(relevant))
                    shares.append(len(inside) / len(relevant))
                    block_tokens.append(result.tokens)
                    lines.append(len(result.memories))
                    hits = memory.search(q.question, user_id=conv.sample_id, limit=10).hits
                    retrieved = [str(h.memory.metadata.get("dia_id")) for h in hits]
                    rows.append(score_question(q, retrieved))
                    qs.append(q)
    search = aggregate(qs, rows)
    return {
        "questions": len(qs),
        "budget": budget,
        "all_evidence_in_block": statistics.fmean(all_in),
        "evidence_share_in_block": statistics.fmean(shares),
        "mean_block_tokens": statistics.fmean(block_tokens),
        "mean_memories_in_block": statistics.fmean(lines),
        "context_latency": percentiles_ms(lat),
        "search_recall@10": search["recall@10"],
        "search_all_evidence@10": statistics.fmean(r["recall@10"] == 1.0 for r in rows),
    }


def _mean(values: list[int]) -> float | None:
    return statistics.fmean(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--locomo-budget", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "context.json")
    args = parser.parse_args()
    model = build_embedder(Settings())
    model.embed(["warm up"])
    with tempfile.TemporaryDirectory() as folder:
        memory, ingest_s = build_tenant(Path(folder) / "ctx.db", model)
        with memory:
            part1 = latency(memory, questions(args.queries))
    print(f"## Context latency, one tenant of {ITEMS:,} memories ({args.queries} queries)\n")
    print(
        table(
            ["call", "p50 ms", "p95 ms", "mean tokens"],
            [
                [name, r["p50_ms"], r["p95_ms"], r["mean_tokens"] or "-"]
                for name, r in part1.items()
            ],
        )
    )
    part2 = evidence_in_block(model, args.locomo_budget)
    print(f"\n## LoCoMo dev, {part2['questions']} questions, {args.locomo_budget}-token block\n")
    print(
        table(
            ["measure", "value"],
            [
                ["all evidence turns in the block", part2["all_evidence_in_block"]],
                ["evidence turns in the block (mean share)", part2["evidence_share_in_block"]],
                ["plain hybrid search recall@10", part2["search_recall@10"]],
                ["plain hybrid search, all evidence in top 10", part2["search_all_evidence@10"]],
                ["mean block tokens", part2["mean_block_tokens"]],
                ["mean memories in the block", part2["mean_memories_in_block"]],
                [
                    "context p50 / p95 ms",
                    f"{part2['context_latency']['p50_ms']:.1f} / "
                    f"{part2['context_latency']['p95_ms']:.1f}",
                ],
            ],
        )
    )
    path = write_json(
        args.out.name,
        {"machine": machine_note(), "ingest_seconds": ingest_s, "latency": part1, "locomo": part2},
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
