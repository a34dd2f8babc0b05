"""LoCoMo recall inside a large tenant: what the frequent-term pruning costs at scale.

    python bench/locomo_scale.py --distractors 100000 --shares 15%:0,100000000:0,5000:500

The dev LoCoMo data (two conversations) has no tenant above 2,000 memories, where pruning
starts (``omoide/store/pruning.py``), so the dev figures say nothing about it. Here each dev
conversation is stored in a tenant that first receives ``--distractors`` memories built like
``bench/scale.py``'s corpus, but only from the *other* conversation's sentences (1-3 of them,
under speaker names that are not the target's, in sessions of 20, dated before the target's
first session): the target's questions then compete with many memories whose words are
frequent in the tenant, the case pruning is for, without copies of their own evidence.
Distractor vectors are the normalised mean of their sentences' vectors (sentences embedded once
with the model), so the run takes minutes, not the hours 100k real embeddings would.

Each variant ``budget:depth`` sets the pruning's postings budget (``POSTINGS_MAX``; ``N%`` is
N% of the tenant's memories, the rule before) and how many of the best hits are rescored with
the pruned terms (``RESCORE_DEPTH``; 0 = none). Every question is asked with the ``hybrid`` and
``keyword`` recipes over the same store for every variant, variants interleaved question by
question; reported: recall@10 per variant with a paired bootstrap interval against the first,
and p50 latencies (query embedding included). ``--db-dir`` keeps the stores for later runs.
Results: bench/results/locomo_scale.json.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    DEFAULT_DATA,
    Conversation,
    load_locomo,
    machine_note,
    score_question,
    table,
    write_json,
)
from embed_cache import DiskCachedEmbedder
from locomo import session_records
from paired import bootstrap
from scale import sentences

import omoide.store.pruning as pruning
from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.memory import Memory
from omoide.store.protocol import NewMemory

NAMES = ["Priya", "Tomas", "Keiko", "Omar", "Lena", "Diego", "Ines", "Viktor", "Amara", "Noel"]
SESSION_LEN = 20
DEFAULT_DEPTH = pruning.RESCORE_DEPTH
DAY_MS = 86_400_000


class MixedEmbedder:
    """Distractor texts get the mean of their sentences' vectors; anything else the model."""

    def __init__(self, model: Any, parts: dict[str, list[int]], sentence_vecs: np.ndarray) -> None:
        self.model = model
        self.name = model.name
        self.parts = parts
        self.sv = sentence_vecs

    def embed(self, texts: Any) -> np.ndarray:
        if not all(t in self.parts for t in texts):
            return np.asarray(self.model.embed(list(texts)))
        vecs = np.stack([self.sv[self.parts[t]].mean(axis=0) for t in texts])
        return (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)


def distractors(
    pool: list[str], n: int, target: Conversation, seed: int = 42
) -> tuple[list[list[NewMemory]], dict[str, list[int]]]:
    """``n`` memories in sessions of ``SESSION_LEN``, dated one day apart before the target."""
    rng = random.Random(seed)
    speakers = {t.text.split(": ", 1)[0] for t in target.turns}
    names = [x for x in NAMES if x not in speakers]
    first = session_records(target)[0][0].created_at_ms or 0
    sessions: list[list[NewMemory]] = []
    parts: dict[str, list[int]] = {}
    count = -(-n // SESSION_LEN)
    for s in range(count):
        pair = rng.sample(names, 2)
        at = first - (count - s) * DAY_MS
        batch = []
        for i in range(min(SESSION_LEN, n - s * SESSION_LEN)):
            ids = rng.sample(range(len(pool)), rng.choice((1, 2, 2, 3)))
            text = f"{pair[i % 2]}: " + " ".join(pool[j] for j in ids)
            parts[text] = ids
            batch.append(NewMemory(text=text, session_id=f"d{s}", created_at_ms=at))
        sessions.append(batch)
    return sessions, parts


def use(variant: str, docs: int) -> None:
    """``budget`` or ``budget:depth``: the postings a query may rank (``POSTINGS_MAX``), or
    ``N%`` of the tenant's memories (the rule before), and the rescoring depth of the pruned
    terms (0: none)."""
    budget, _, depth = variant.partition(":")
    share = budget.endswith("%")
    pruning.POSTINGS_MAX = int(float(budget[:-1]) / 100 * docs) if share else int(budget)
    pruning.RESCORE_DEPTH = int(depth) if depth else DEFAULT_DEPTH


def run_target(
    target: Conversation, other: Conversation, model: Any, args: argparse.Namespace, tmp: Path
) -> dict[str, Any]:
    pool = sentences([other])
    pool_vecs = np.asarray(model.embed(pool))
    fake, parts = distractors(pool, args.distractors, target)
    path = tmp / f"{target.sample_id}-{args.distractors}.db"
    reused = path.exists()  # --db-dir: a store this benchmark filled before
    engine = Memory(path, embedder=MixedEmbedder(model, parts, pool_vecs), workers=0)
    user = target.sample_id
    start = time.perf_counter()
    if not reused:
        for batch in fake:
            engine.add_many(batch, user_id=user)
        for records in session_records(target):
            engine.add_many(records, user_id=user)
    ingest_s = time.perf_counter() - start
    print(
        f"{user}: {args.distractors} distractors + {len(target.turns)} turns in {ingest_s:.0f} s",
        flush=True,
    )
    engine.search(target.questions[0].question, user_id=user)  # a large tenant: graph built
    engine.store._vectors.wait_for_builds()  # the timings are of the graph, not the scan
    shares = args.shares.split(",")
    docs = args.distractors + len(target.turns)
    recall: dict[str, list[float]] = {s: [] for s in shares}
    keyword_ms: dict[str, list[float]] = {s: [] for s in shares}
    hybrid_ms: dict[str, list[float]] = {s: [] for s in shares}
    for share in shares:  # untimed warm-up of every share (word cache, page cache)
        use(share, docs)
        engine.search(target.questions[0].question, user_id=user, recipe="hybrid")
    for n, q in enumerate(target.questions):
        turn = n % len(shares)
        for share in shares[turn:] + shares[:turn]:
            use(share, docs)
            t0 = time.perf_counter()
            hits = engine.search(q.question, user_id=user, limit=10, recipe="hybrid").hits
            hybrid_ms[share].append((time.perf_counter() - t0) * 1000)
            got = [str((h.memory.metadata or {}).get("dia_id")) for h in hits]
            recall[share].append(score_question(q, got)["recall@10"])
            t0 = time.perf_counter()
            engine.search(q.question, user_id=user, limit=10, recipe="keyword")
            keyword_ms[share].append((time.perf_counter() - t0) * 1000)
    engine.close()
    return {
        "target": user,
        "distractors": args.distractors,
        "questions": len(target.questions),
        "ingest_s": ingest_s,
        "recall@10": {str(s): recall[s] for s in shares},
        "hybrid_ms": {str(s): hybrid_ms[s] for s in shares},
        "keyword_ms": {str(s): keyword_ms[s] for s in shares},
    }


def report(runs: list[dict[str, Any]], shares: list[str]) -> str:
    rows = []
    base = [r for run in runs for r in run["recall@10"][shares[0]]]
    for share in shares:
        values = [r for run in runs for r in run["recall@10"][share]]
        per = " / ".join(f"{statistics.mean(run['recall@10'][share]):.3f}" for run in runs)
        rows.append(
            (
                share,
                f"{statistics.mean(values):.3f}",
                per,
                str(bootstrap(base, values)) if share != shares[0] else "-",
                " / ".join(f"{statistics.median(run['hybrid_ms'][share]):.1f}" for run in runs),
                " / ".join(f"{statistics.median(run['keyword_ms'][share]):.1f}" for run in runs),
            )
        )
    names = " / ".join(run["target"] for run in runs)
    return table(
        [
            "postings share",
            "recall@10",
            f"per target ({names})",
            f"vs {shares[0]}",
            "hybrid p50 ms",
            "keyword p50 ms",
        ],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--distractors", type=int, default=100_000)
    parser.add_argument("--shares", default="15%:0,5000")
    parser.add_argument("--db-dir", type=Path, help="keep the stores here and reuse them")
    parser.add_argument("--embed-cache", type=Path, help="file of cached model vectors")
    args = parser.parse_args()
    convs = load_locomo(args.data)
    if len(convs) < 2:
        sys.exit("needs two conversations or more: each one's distractors come from another")
    model: Any = build_embedder(Settings())
    if args.embed_cache:
        model = DiskCachedEmbedder(model, args.embed_cache)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        where = args.db_dir or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        for i, target in enumerate(convs):
            runs.append(run_target(target, convs[(i + 1) % len(convs)], model, args, where))
    if isinstance(model, DiskCachedEmbedder):
        model.save()
    text = report(runs, args.shares.split(","))
    print(text)
    write_json("locomo_scale", {"machine": machine_note(), "runs": runs, "table": text})


if __name__ == "__main__":
    main()
