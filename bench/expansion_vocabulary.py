"""Hybrid search with and without the common words' table of the query expansion.

    python bench/scale.py --scenarios one-100k --db-dir DIR          # once: keeps DIR/one-100k.db
    python bench/expansion_vocabulary.py DIR/one-100k.db [--queries 200] [--tenants 1]
    python bench/expansion_vocabulary.py --db-url postgresql://... --queries 200

Two engines over the same store, each with its own word vectors, both cold: ``table``
(``omoide.engine.search.vocabulary``: the list's words read from the saved table, other words left
out) and ``on demand`` (every word embedded on demand into one cache
shared by all tenants, as before the table). The same questions go
to both, alternating which goes first; latency includes embedding the query. The table is
built (or loaded) before timing starts. Also counts the questions both answer with the same hits.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from pathlib import Path

import numpy as np
from common import percentiles_ms, table
from scale import questions

from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.engine.search.vocabulary import shared_vocabulary
from omoide.engine.shared.embedding import Embedding
from omoide.memory import Memory


class SharedCache:
    """Word vectors as before the table: every word embedded on demand, into one cache for
    every tenant (the code this bench compares with)."""

    def __init__(self, embedding: Embedding, max_words: int = 20_000) -> None:
        self.embedding = embedding
        self.calibrated = True
        self.max_words = max_words
        self.cache: OrderedDict[str, np.ndarray] = OrderedDict()

    def __call__(self, words: Sequence[str], owner: Hashable = "") -> dict[str, np.ndarray]:
        del owner  # one cache for all
        wanted = list(dict.fromkeys(words))
        found = {w: v for w in wanted if (v := self.cache.get(w)) is not None}
        missing = [w for w in wanted if w not in found]
        if missing:
            vectors = np.asarray(self.embedding.embed(missing), dtype=np.float32)
            norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            found.update(zip(missing, vectors / norms, strict=True))
        for word in wanted:
            self.cache[word] = found[word]
            self.cache.move_to_end(word)
        while len(self.cache) > self.max_words:
            self.cache.popitem(last=False)
        return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db", nargs="?", type=Path, help="an SQLite file (else --db-url)")
    parser.add_argument("--db-url", help="a PostgreSQL URL holding scale.py's tenants")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--tenants", type=int, default=1, help="user0..userN-1 of scale.py")
    args = parser.parse_args()
    location = args.db_url or str(args.db)
    model = build_embedder(Settings())
    model.embed(["warm up the model"])
    models = Settings().models_dir
    started = time.perf_counter()
    assert shared_vocabulary(model.embed, model.name, models).wait(600)
    print(f"table ready after {time.perf_counter() - started:.1f} s")
    engines = {
        "table": Memory(location, embedder=model, workers=0),
        "on demand": Memory(location, embedder=model, workers=0),
    }
    search = engines["on demand"].engine.services.search
    search._words = SharedCache(engines["on demand"].engine.embedding)
    rng = random.Random(7)
    lat: dict[str, list[float]] = {name: [] for name in engines}
    same = 0
    qs = questions(args.queries)
    for n, q in enumerate(qs):
        user = f"user{rng.randrange(args.tenants)}"
        order = list(engines) if n % 2 == 0 else list(reversed(engines))
        hits = {}
        for name in order:
            start = time.perf_counter()
            result = engines[name].search(q, user_id=user, limit=10)
            lat[name].append(time.perf_counter() - start)
            hits[name] = [(h.memory.id, round(h.score, 6)) for h in result.hits]
        same += hits["table"] == hits["on demand"]
    for engine in engines.values():
        engine.close()
    rows = []
    for name, seconds in lat.items():
        p = percentiles_ms(seconds)
        rows.append([name, f"{p['p50_ms']:.1f}", f"{p['p95_ms']:.1f}", f"{p['mean_ms']:.1f}"])
    print(table(["hybrid", "p50 ms", "p95 ms", "mean ms"], rows))
    ratio = percentiles_ms(lat["table"])["p50_ms"] / percentiles_ms(lat["on demand"])["p50_ms"]
    print(f"p50 ratio table / on demand: {ratio:.2f}; same hits in {same} of {len(qs)} queries")


if __name__ == "__main__":
    main()
