"""Encryption overhead with the load drift cancelled: a plain and an encrypted store, side by side.

    python bench/encryption_interleaved.py [--items 10000] [--queries 200]

``bench/scale.py --quick --encryption-key K`` runs the plain and the encrypted scenario one
after the other (minutes apart); on a shared machine the load changes more between them than
encryption costs (its in-memory vector search, which encryption cannot touch, came out 1.68x
and 0.73x in two runs). Here both stores live in one process over the same corpus as scale.py's
(LoCoMo sentences, ``<speaker>: <1-3 sentences>``), the HashEmbedder (no model: the ratio is
the store's alone; real embeddings would dilute it), and every ingest batch and every query
runs on both, alternating which goes first. Reports median per-query ratios and total ingest
time ratios (encrypted / plain; > 1 is slower), and the open time (the one key derivation).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

KEY = "bench passphrase"
RECIPES = ("hybrid", "vector", "keyword")


def _open(db: Path, key: str | None) -> tuple[Any, float]:
    from omoide import Memory
    from omoide.config import load_settings

    settings = load_settings(embedder="hash", encryption_key=key, data_dir=db.parent)
    start = time.perf_counter()
    memory = Memory(db, settings=settings, workers=0)
    return memory, time.perf_counter() - start


def run(items: int, n_queries: int) -> dict[str, Any]:
    from scale import BATCH, corpus, questions, sentences

    from omoide.store.protocol import NewMemory

    pool = sentences()
    rows = corpus(items, 1, len(pool))
    texts = [f"{speaker}: {' '.join(pool[i] for i in ids)}" for _, _, speaker, ids in rows]
    folder = Path(tempfile.mkdtemp())
    plain, open_plain = _open(folder / "plain.db", None)
    secret, open_secret = _open(folder / "secret.db", KEY)
    stores = {"plain": plain, "encrypted": secret}
    ingest = {"plain": 0.0, "encrypted": 0.0}
    for n, i in enumerate(range(0, len(rows), BATCH)):
        batch = [
            NewMemory(text=texts[k], session_id=f"s{rows[k][1]}")
            for k in range(i, min(i + BATCH, len(rows)))
        ]
        for name in ("plain", "encrypted")[:: 1 if n % 2 else -1]:
            start = time.perf_counter()
            stores[name].add_many(batch, user_id="user0")
            ingest[name] += time.perf_counter() - start
    ratios: dict[str, list[float]] = {r: [] for r in RECIPES}
    for n, query in enumerate(questions(n_queries)):
        for recipe in RECIPES:
            took = {}
            for name in ("plain", "encrypted")[:: 1 if n % 2 else -1]:
                start = time.perf_counter()
                stores[name].search(query, user_id="user0", limit=10, recipe=recipe)
                took[name] = time.perf_counter() - start
            ratios[recipe].append(took["encrypted"] / took["plain"])
    for memory in stores.values():
        memory.close()
    sizes = {
        name: sum(p.stat().st_size for p in folder.glob(f"{name}.db*")) / 1e6
        for name in ("plain", "secret")
    }
    return {
        "items": items,
        "queries": n_queries,
        "ingest_seconds": ingest,
        "ingest_ratio": ingest["encrypted"] / ingest["plain"],
        "search_median_ratio": {r: statistics.median(v) for r, v in ratios.items()},
        "open_seconds": {"plain": open_plain, "encrypted": open_secret},
        "db_mb": sizes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    print(json.dumps(run(args.items, args.queries), indent=2))


if __name__ == "__main__":
    main()
