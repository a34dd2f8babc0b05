"""Store-level vector search on a kept database: exact scan vs the HNSW graph (ann.py).

    python bench/ann_store.py DB --mode exact --out exact.json
    python bench/ann_store.py DB --mode graph --out graph.json --truth exact.json

Each mode in its own process (its own peak RSS). Queries: the first ``--queries`` LoCoMo dev
questions embedded by the float model, searched in tenant ``user0`` (bench/scale.py's data)
through ``store.memories.vector_search`` (k=10, default filters). Reported: cold first search
(matrix load, or graph load/build), warm p50/p95, peak RSS and, with ``--truth``, recall@10
against the exact mode's ids (strict) and with equal-score ties counted.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    from common import percentiles_ms
    from scale import questions

    from omoide.embed.onnx import OnnxEmbedder
    from omoide.store.sqlite import SQLiteStore
    from omoide.types import Scope, SearchFilters

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--mode", choices=("exact", "graph"), required=True)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--truth", type=Path)
    args = parser.parse_args()
    if args.mode == "exact":
        os.environ["OMOIDE_ANN_THRESHOLD"] = str(10**12)
    vecs = OnnxEmbedder(threads=1).embed(questions(args.queries))
    store = SQLiteStore(args.db)
    scope, filters = Scope(user_id="user0", scope_id="default"), SearchFilters()
    start = time.perf_counter()
    store.memories.vector_search(scope, vecs[0], filters, 10)
    cold = time.perf_counter() - start
    store._vectors.wait_for_builds()  # a large graph is built by a thread meanwhile
    store.memories.vector_search(scope, vecs[0], filters, 10)  # switches to it
    ready = time.perf_counter() - start
    lat, got = [], []
    for v in vecs:
        start = time.perf_counter()
        got.append(store.memories.vector_search(scope, v, filters, 10))
        lat.append(time.perf_counter() - start)
    out = {
        "mode": args.mode,
        "cold_first_search_s": cold,
        "graph_ready_s": ready,  # first search + background build (0 for exact)
        "graph": graph_note(store),
        "warm": percentiles_ms(lat),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "loadavg": os.getloadavg(),
        "hits": got,
    }
    store.close()
    if args.truth:
        truth = json.loads(args.truth.read_text())["hits"]
        strict = [
            len({h[0] for h in g} & {h[0] for h in t}) / 10 for g, t in zip(got, truth, strict=True)
        ]
        ties = [
            sum(h[1] >= t[-1][1] - 1e-5 for h in g) / 10 for g, t in zip(got, truth, strict=True)
        ]
        out["recall_at_10_strict"] = float(np.mean(strict))
        out["recall_at_10_ties"] = float(np.mean(ties))
    args.out.write_text(json.dumps(out))
    print({k: v for k, v in out.items() if k != "hits"})


def graph_note(store: object) -> dict[str, object] | None:
    """Rows, nodes (distinct vectors) and file size of the tenant's graph, if it has one."""
    from omoide.store.sqlite import ann

    tenant = next(iter(store._vectors._tenants.values()), None)  # type: ignore[attr-defined]
    if not isinstance(tenant, ann.AnnTenant):
        return None
    files = store._vectors._files.dir  # type: ignore[attr-defined]
    return {
        "rows": tenant.n,
        "nodes": len(tenant.index),
        "files_mb": sum(p.stat().st_size for p in files.iterdir()) / 2**20,
        "ef_search": tenant.ef,
    }


if __name__ == "__main__":
    main()
