"""Searches while a large tenant's graph is built, and the peak RSS of that process.

    python bench/scale.py --scenarios one-1m --db-dir DIR      # once: keeps DIR/one-1m.db
    mv DIR/one-1m.db.ann DIR/ann.saved                         # so that the graph is built
    python bench/ann_build.py DIR/one-1m.db [--queries 200] [--float32]

The first search of the tenant starts the build in a thread and loads the exact scan's matrix
(float16 from ``vectors.HALF_FROM`` rows); until the build ends, ``scale.py``'s questions are
asked in turn through the ``vector`` and ``hybrid`` recipes and timed. Then the same questions
through the graph. Peak RSS (``ru_maxrss``) at the end covers the build. ``--float32`` keeps
the matrix in float32 meanwhile, as before ``HALF_FROM`` (the baseline).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import machine_note, peak_rss_mb, percentiles_ms
from scale import questions

from omoide.config import Settings
from omoide.embed import build_embedder
from omoide.memory import Memory
from omoide.store.sqlite import vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--float32", action="store_true")
    args = parser.parse_args()
    if args.float32:
        vectors.HALF_FROM = 1 << 62
    engine = Memory(args.db, embedder=build_embedder(Settings()), workers=0)
    qs = questions(args.queries)
    start = time.perf_counter()
    engine.search(qs[0], user_id="user0", limit=10, recipe="vector")
    out: dict[str, object] = {
        "machine": machine_note(),
        "first_search_s": time.perf_counter() - start,
    }
    during: dict[str, list[float]] = {"vector": [], "hybrid": []}
    n = 0
    while engine.store._vectors._builds:  # the build's job is dropped by the search after it
        q = qs[n % len(qs)]
        for recipe in during:
            begin = time.perf_counter()
            engine.search(q, user_id="user0", limit=10, recipe=recipe)
            during[recipe].append(time.perf_counter() - begin)
        n += 1
    out["build_s"] = time.perf_counter() - start
    out["during_build"] = {r: {**percentiles_ms(v), "n": len(v)} for r, v in during.items()}
    after: dict[str, list[float]] = {"vector": [], "hybrid": []}
    for q in qs:
        for recipe in after:
            begin = time.perf_counter()
            engine.search(q, user_id="user0", limit=10, recipe=recipe)
            after[recipe].append(time.perf_counter() - begin)
    out["after_build"] = {r: percentiles_ms(v) for r, v in after.items()}
    out["peak_rss_mb"] = peak_rss_mb()
    engine.close()
    print(json.dumps(out, indent=1))
    if args.out:
        args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
