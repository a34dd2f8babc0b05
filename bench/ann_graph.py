"""The HNSW graph alone on a kept database's vectors: a node per row vs a node per distinct
(float16) vector, recall@10 against exact with equal scores counted, at several ef.

    python bench/ann_graph.py DB ROWS dedup|rows CONNECTIVITY EXPANSION_ADD

Everything in memory (the first ROWS rows of ``memory_vectors``); 200 LoCoMo questions; the top
30 nodes are expanded to their rows and re-scored from the float32 matrix. Prints one JSON line.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    import onnxruntime  # noqa: F401  (before usearch: see omoide/store/sqlite/ann.py)
    from scale import questions
    from usearch.index import Index

    from omoide.embed.onnx import OnnxEmbedder

    db, n_rows, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    connectivity, expansion_add = int(sys.argv[4]), int(sys.argv[5])
    queries = OnnxEmbedder(threads=1).embed(questions(200))
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    cursor = conn.execute(
        "SELECT vec FROM memory_vectors WHERE memory_seq <= ? ORDER BY memory_seq", (n_rows,)
    )
    chunks = []
    while chunk := cursor.fetchmany(50_000):
        chunks.append(np.frombuffer(b"".join(r[0] for r in chunk), dtype=np.float32))
    mat = np.concatenate(chunks).reshape(-1, queries.shape[1])
    tenth = -np.partition(-(queries @ mat.T), 9, axis=1)[:, 9]
    groups: list[list[int]] | None = None
    if mode == "dedup":
        half = mat.astype(np.float16)
        rows_as_bytes = half.view(np.dtype((np.void, half.shape[1] * 2))).ravel()
        _, first, inverse = np.unique(rows_as_bytes, return_index=True, return_inverse=True)
        vecs = mat[first]
        groups = [[] for _ in first]
        for row, group in enumerate(inverse.ravel()):
            groups[group].append(row)
    else:
        vecs = mat
    index = Index(
        ndim=mat.shape[1],
        metric="ip",
        dtype="f16",
        connectivity=connectivity,
        expansion_add=expansion_add,
    )
    start = time.time()
    index.add(np.arange(len(vecs), dtype=np.uint64), vecs, threads=2)
    out = {
        "rows": len(mat),
        "mode": mode,
        "connectivity": connectivity,
        "expansion_add": expansion_add,
        "nodes": len(vecs),
        "build_s": time.time() - start,
    }
    with tempfile.TemporaryDirectory() as tmp:
        index.save(f"{tmp}/g.usearch")
        out["file_mb"] = Path(f"{tmp}/g.usearch").stat().st_size / 2**20
    for ef in (64, 128, 320, 640):
        index.expansion_search = ef
        lat, found = [], []
        for qi, q in enumerate(queries):
            start = time.perf_counter()
            rows = [int(k) for k in index.search(q, 30).keys]
            if groups is not None:
                rows = [r for g in rows for r in groups[g]]
            scores = mat[rows] @ q
            top = np.argsort(-scores, kind="stable")[:10]
            lat.append(time.perf_counter() - start)
            found.append(np.sum(scores[top] >= tenth[qi] - 1e-5) / 10)
        out[f"ef{ef}"] = {"ties": float(np.mean(found)), "p50_ms": 1000 * float(np.median(lat))}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
