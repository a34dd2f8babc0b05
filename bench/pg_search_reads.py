"""Per-search read overhead on PostgreSQL: the reads a vector search makes, before and after.

A search's vector half is ``vector_search`` then ``unembedded_count`` (``engine/search/service.py``).
This times both through the port on one tenant (random unit vectors, HNSW index built when the
tenant is large, as ``ann`` would), against the previous implementation of the same two calls
(an anti-join count; the tenant-size count, the index lookup and three ``SET LOCAL`` as
separate statements; ``SET TRANSACTION`` after ``BEGIN``) re-created here, interleaved in the
same run so both see the same load. Phases: right after the ingest (no VACUUM yet: index-only
scans still visit the heap) and after ``VACUUM ANALYZE`` (the steady state autovacuum keeps).

    python bench/pg_search_reads.py --items 30000 --queries 100
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scale_pg import schema_url, start_server
from omoide.store import open_store
from omoide.store.ports.memories import NewMemory
from omoide.store.postgres import ann
from omoide.store.postgres.filters import memory_filter
from omoide.types import Scope, SearchFilters

DIM = 384
SCOPE = Scope(user_id="u", scope_id="s")
_ANTI_JOIN = (
    "SELECT count(*) AS n FROM memories m WHERE NOT EXISTS (SELECT 1 FROM memory_vectors v"
    " WHERE v.user_id = m.user_id AND v.memory_id = m.id) AND m.user_id = %s AND m.scope_id = %s"
)


def ingest(store: Any, items: int, rng: np.random.Generator) -> None:
    for start in range(0, items, 2000):
        with store.transaction() as tx:
            news = [NewMemory(text=f"memo {j} about w{j % 97}") for j in range(start, start + 2000)]
            made = tx.memories.insert_memories(SCOPE, news[: items - start], "bench")
            vecs = rng.standard_normal((len(made), DIM)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            tx.memories.put_vectors(SCOPE, [m.id for m in made], vecs)


def before(store: Any, query: np.ndarray, limit: int) -> tuple[list[Any], int]:
    """The two calls as they were (commit c841444): two transactions, old statements."""
    db, tenant = store.memories._db, (SCOPE.user_id, SCOPE.scope_id)
    with db.pool.connection() as conn, conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        where = memory_filter(SCOPE, SearchFilters())
        row = conn.execute(
            "SELECT count(*) AS n FROM (SELECT 1 FROM memory_vectors WHERE user_id = %s"
            " AND scope_id = %s LIMIT %s) t",
            (*tenant, ann.EXACT_MAX + 1),
        ).fetchone()
        large = row is not None and int(row["n"]) > ann.EXACT_MAX
        if large and ann.has_index(conn, DIM):
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            conn.execute(f"SET LOCAL hnsw.ef_search = {max(ann.EF_SEARCH, 2 * limit)}")
            conn.execute(f"SET LOCAL hnsw.max_scan_tuples = {ann.MAX_SCAN_TUPLES}")
            sql, params = ann.approximate_sql(DIM, where[0]), (query, *tenant, *where[1])
            found = conn.execute(sql, (*params, query, limit)).fetchall()
        else:
            sql = ann.exact_sql(where[0])
            found = conn.execute(sql, (query, *tenant, DIM, *where[1], limit)).fetchall()
    with db.pool.connection() as conn, conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        missing = conn.execute(_ANTI_JOIN, tenant).fetchone()
    return found, int(missing["n"]) if missing else 0


def after(store: Any, query: np.ndarray, limit: int) -> tuple[list[Any], int]:
    found = store.memories.vector_search(SCOPE, query, SearchFilters(), limit)
    return found, store.memories.unembedded_count(SCOPE)


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def compare(store: Any, queries: np.ndarray, limit: int) -> dict[str, float]:
    """p50 ms of each variant, interleaved query by query; their hits must agree."""
    got: dict[str, list[float]] = {"before": [], "after": []}
    for q in queries:
        old, new = before(store, q, limit), after(store, q, limit)
        assert sorted(r["id"] for r in old[0]) == sorted(i for i, _ in new[0])  # same hits
        assert old[1] == new[1]
        got["before"].append(timed(lambda q=q: before(store, q, limit)))
        got["after"].append(timed(lambda q=q: after(store, q, limit)))
    q = queries[0]
    got["vector_search"] = [
        timed(lambda: store.memories.vector_search(SCOPE, q, SearchFilters(), limit))
        for _ in queries
    ]
    got["unembedded_count"] = [
        timed(lambda: store.memories.unembedded_count(SCOPE)) for _ in queries
    ]
    got["anti_join"] = [timed(lambda: _old_count(store)) for _ in queries]
    p50 = {k: statistics.median(v) for k, v in got.items()}
    return {**p50, "ratio": p50["before"] / p50["after"]}


def _old_count(store: Any) -> None:
    with store.memories._db.read() as conn:
        conn.execute(_ANTI_JOIN, (SCOPE.user_id, SCOPE.scope_id)).fetchone()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=30_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--limit", type=int, default=50)
    args = parser.parse_args()
    base, _server = start_server()
    url = schema_url(base, "reads")
    store = open_store(url)
    rng = np.random.default_rng(7)
    started = time.perf_counter()
    ingest(store, args.items, rng)
    print(f"ingest {args.items} memories: {time.perf_counter() - started:.1f} s", flush=True)
    if args.items > ann.EXACT_MAX:  # the index a large tenant's first search would build
        from omoide.store.postgres.db import connect

        with connect(store.memories._db.url) as conn:
            ann.create_index(conn, DIM)
    queries = rng.standard_normal((args.queries, DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    for phase in ("no vacuum", "vacuumed"):
        if phase == "vacuumed":
            import psycopg

            with psycopg.connect(store.memories._db.url, autocommit=True) as conn:
                conn.execute("VACUUM ANALYZE memories")
                conn.execute("VACUUM ANALYZE memory_vectors")
        r = compare(store, queries, args.limit)
        print(
            f"{phase}: vector_search + unembedded_count p50 before {r['before']:.2f} ms,"
            f" after {r['after']:.2f} ms, ratio {r['ratio']:.2f}x; after alone (one repeated"
            f" query): vector_search {r['vector_search']:.2f} ms, unembedded_count"
            f" {r['unembedded_count']:.2f} ms (anti-join {r['anti_join']:.2f} ms)",
            flush=True,
        )
    store.close()


if __name__ == "__main__":
    main()
