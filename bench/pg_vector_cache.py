"""Would a small tenant's vectors scanned in the process bring PostgreSQL searches to SQLite's?

    python bench/pg_vector_cache.py                       # hash embedder, 1,000 memories
    python bench/pg_vector_cache.py --embedder local      # the bundled model (int8 graph)

One library process, one tenant of LoCoMo dev turns on each backend (``infer=False``), then the
same questions through four variants, interleaved query by query (each query runs every variant
in a rotating order, so load drift hits all four alike):

* ``sqlite``: a SQLite file;
* ``pg``: PostgreSQL as shipped (the tenant's counts and its exact scan in one statement);
* ``pg-scan``: the tenant's vectors held in a numpy matrix in the process and scanned there, no
  statement at all: an upper bound, since a real cache must learn of other processes' writes;
* ``pg-scan+probe``: the scan, then one statement keeping the hits still in the tenant (what
  SQLite's cache does for the search's filters): the least a coherent cache costs.

The variants replace the PostgreSQL store's ``vector_search`` on its instance; the rest of the
search (keyword half, candidates' read, scoring) runs as shipped. Reported: milliseconds per
search and SQLite's time over each variant's, per round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import types
from typing import Any

from lib.common import DEFAULT_DATA, load_locomo, machine_note, table
from lib.pgserver import schema_url, start_server


def _scan(reads: Any, cache: dict[str, Any], user: str, vector: Any) -> tuple[list[str], Any]:
    import numpy as np

    if user not in cache:  # loaded once: nothing is written while the questions run
        with reads._db.read_one(search=True) as conn:
            rows = conn.execute(
                "SELECT memory_id, embedding FROM memory_vectors"
                " WHERE user_id = %s AND scope_id = 'default'",
                (user,),
            ).fetchall()
        matrix = np.stack([r["embedding"].to_numpy().astype(np.float32) for r in rows])
        cache[user] = ([r["memory_id"] for r in rows], matrix)
    ids, matrix = cache[user]
    return ids, matrix @ vector.astype(np.float32)


def variants() -> dict[str, Any]:
    """``name -> vector_search`` replacement (None: as shipped)."""
    from omoide.store.ports.memories import Nearest

    cache: dict[str, Any] = {}

    def scan(self: Any, scope: Any, vector: Any, _filters: Any, limit: int) -> Any:
        ids, scores = _scan(self, cache, scope.user_id, vector)
        top = (-scores).argsort()[:limit]
        return Nearest([(ids[i], float(scores[i])) for i in top], len(ids), 0)

    def scan_probe(self: Any, scope: Any, vector: Any, _filters: Any, limit: int) -> Any:
        ids, scores = _scan(self, cache, scope.user_id, vector)
        top = (-scores).argsort()[: limit + 20]  # as SQLite's over-fetch for filtered rows
        with self._db.read_one(search=True) as conn:
            kept = {
                r["id"]
                for r in conn.execute(
                    "SELECT m.id FROM memories m WHERE m.user_id = %s AND m.scope_id = %s"
                    " AND m.invalid_at IS NULL AND m.id = ANY(%s::text[])",
                    (scope.user_id, scope.scope_id, [ids[i] for i in top]),
                )
            }
        hits = [(ids[i], float(scores[i])) for i in top if ids[i] in kept]
        return Nearest(hits[:limit], len(ids), 0)

    return {"sqlite": None, "pg": None, "pg-scan": scan, "pg-scan+probe": scan_probe}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", default="hash", help="hash or local (the bundled model)")
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.environ["OMOIDE_EMBEDDER"] = args.embedder
    from omoide import Memory  # after the embedder is chosen

    turns = [t.text for conv in load_locomo(DEFAULT_DATA) for _, _, ts in conv.sessions for t in ts]
    base, _server = start_server()
    url = schema_url(base, "bench")
    sqlite = Memory(tempfile.mkdtemp() + "/m.db", workers=0)
    pg = Memory(url, workers=0)
    for memory in (sqlite, pg):
        for text in turns[: args.memories]:
            memory.add(text, user_id="u", infer=False)
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")  # as a tenant this size is, once autovacuum has seen it
    reads = pg.store.memories
    shipped = reads.vector_search
    replacements = variants()
    queries = [t[:60] for t in turns[::5]][: args.queries]
    names = list(replacements)

    def run(name: str, query: str) -> float:
        fn = replacements[name]
        reads.vector_search = shipped if fn is None else types.MethodType(fn, reads)
        started = time.perf_counter()
        (sqlite if name == "sqlite" else pg).search(query, user_id="u", limit=10)
        return time.perf_counter() - started

    for query in queries[:10]:  # warm: the model, the caches, the prepared statements
        for name in names:
            run(name, query)
    per_round: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(args.rounds):
        spent = dict.fromkeys(names, 0.0)
        for j, query in enumerate(queries):
            for name in names[j % 4 :] + names[: j % 4]:
                spent[name] += run(name, query)
        for name in names:
            per_round[name].append(1000 * spent[name] / len(queries))
    rows = []
    for name in names:
        ratios = [s / v for s, v in zip(per_round["sqlite"], per_round[name], strict=True)]
        rows.append(
            [
                name,
                f"{statistics.median(per_round[name]):.2f}",
                f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})",
            ]
        )
    print(machine_note())
    print(f"{args.memories} memories, {len(queries)} questions, {args.rounds} rounds,"
          f" embedder {args.embedder}")  # fmt: skip
    print(table(["variant", "ms/search (median)", "sqlite / variant (range)"], rows))
    sqlite.close()
    pg.close()


if __name__ == "__main__":
    main()
