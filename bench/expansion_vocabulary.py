"""Hybrid search with and without the common words' table of the query expansion.

    python bench/scale.py --scenarios one-100k --db-dir DIR          # once: keeps DIR/one-100k.db
    python bench/expansion_vocabulary.py DIR/one-100k.db [--queries 200] [--tenants 1]
    python bench/expansion_vocabulary.py --db-url postgresql://... --queries 200

Two engines over the same store, each with its own word vectors, both cold: ``table``
(``omoide.engine.vocabulary``: the list's words read from the saved table, other words embedded
on demand) and ``on demand`` (every word embedded, as before the table). The same questions go
to both, alternating which goes first; latency includes embedding the query. The table is
built (or loaded) before timing starts. Also checks that both return the same hits.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from common import percentiles_ms, table
from scale import questions

from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.engine.vocabulary import shared_vocabulary
from omoide.engine.word_vectors import WordVectors
from omoide.memory import Memory


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
    models = Settings().data_dir.expanduser() / "models"
    started = time.perf_counter()
    assert shared_vocabulary(model.embed, model.name, models).wait(600)
    print(f"table ready after {time.perf_counter() - started:.1f} s")
    engines = {
        "table": Memory(location, embedder=model, workers=0),
        "on demand": Memory(location, embedder=model, workers=0),
    }
    search = engines["on demand"].engine.services.search
    search._words = WordVectors(engines["on demand"].engine.embedding, None)
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
