"""A search's reads on PostgreSQL with migration 0006 (counters, keyword postings) and without.

Before 0006 every search counted the tenant: bm25's N and average length (a CTE over all its
rows), N again for the pruning decision, the vector count (up to 20,001 rows: exact or HNSW)
and memories minus vectors (two counts); and keyword ranking unnested the tsvector of every
row holding a query lexeme (found by the GIN index), and counted each lexeme's rows for the
pruning. Now the counts come from ``tenant_counts`` and the keyword statistics and scores from
``memory_terms`` (index-only). This loads one tenant (``bench/scale.py``'s corpus:
``<speaker>: <1-3 LoCoMo sentences>``, random unit vectors, HNSW built above 20k; the ingest
rate per 10k rows is printed), builds the GIN index the old statements need, runs ``VACUUM
ANALYZE``, then times for each LoCoMo question the keyword half and the vector half
(``vector_search`` + ``unembedded_count``) of a search through the port, against the previous
statements re-created here, alternating old and new query by query so both see the same load.
Same hits and scores asserted.

    python bench/pg_tenant_counts.py --items 100000 --queries 60
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from omoide.retrieval.terms import keyword_terms
from omoide.store import open_store
from omoide.store.ports.memories import NewMemory
from omoide.store.postgres import ann, fts
from omoide.store.postgres.filters import memory_filter
from omoide.store.pruning import MIN_DOCS, prune
from omoide.types import Scope, SearchFilters

DIM = 384
SCOPE = Scope(user_id="u", scope_id="s")
TENANT = (SCOPE.user_id, SCOPE.scope_id)
# keyword search before 0006 (commit 5e153e1: omoide/store/postgres/fts.py), re-created
_OLD_TOKEN = "('t' || md5(%s || chr(31) || %s))::tsquery"

# One GIN scan finds the tenant's rows holding any query lexeme (filters aside: FTS5 counts
# every row in its statistics); their vectors, unnested once, give both each lexeme's document
# frequency and each row's term frequencies per weight. The caller's filters only decide which
# of those rows are ranked.
_OLD_SEARCH = f"""
WITH stats AS (
    SELECT count(*)::float8 AS n, greatest(coalesce(avg(doc_len), 1), 1)::float8 AS avgdl
    FROM memories WHERE user_id = %s AND scope_id = %s
),
matched AS MATERIALIZED (
    SELECT m.id, m.seq, m.doc_len, m.tsv, ({{where}}) AS keep FROM memories m
    WHERE m.user_id = %s AND m.scope_id = %s AND m.tsv @@ (%s::tsquery && {_OLD_TOKEN})
),
tf AS (
    SELECT mt.id, mt.seq, mt.doc_len, mt.keep, u.lexeme,
        (SELECT coalesce(sum(CASE wt WHEN 'A' THEN 1.0 WHEN 'B' THEN 0.4
                                ELSE 0 END), 0) FROM unnest(u.weights) wt) AS w
    FROM matched mt CROSS JOIN LATERAL unnest(mt.tsv) u
    WHERE u.lexeme = ANY(%s::text[])
),
idf AS (
    SELECT tf.lexeme, greatest(ln((st.n - count(*) + 0.5) / (count(*) + 0.5)), 1e-6) AS idf
    FROM tf CROSS JOIN stats st GROUP BY tf.lexeme, st.n
)
SELECT tf.id, sum(idf.idf * (tf.w * 2.2)
                  / (tf.w + 1.2 * (1 - 0.75 + 0.75 * tf.doc_len / st.avgdl))) AS score
FROM tf JOIN idf ON idf.lexeme = tf.lexeme CROSS JOIN stats st
WHERE tf.keep
GROUP BY tf.id, tf.seq
ORDER BY score DESC, tf.seq
LIMIT %s
"""


_OLD_DOCS = "SELECT count(*) AS n FROM memories WHERE user_id = %s AND scope_id = %s"
_OLD_FREQUENCIES = f"""
SELECT q.lexeme, (SELECT count(*) FROM memories m WHERE m.user_id = %s AND m.scope_id = %s
                  AND m.tsv @@ (q.query && {_OLD_TOKEN})) AS df
FROM unnest(%s::text[], %s::tsquery[]) AS q(lexeme, query)
"""
_OLD_SIZE = (
    "SELECT (SELECT count(*) FROM (SELECT 1 FROM memory_vectors WHERE user_id = %s"
    " AND scope_id = %s LIMIT %s) t) > %s AS large, (SELECT i.indisvalid FROM pg_index i"
    " JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s"
    " AND c.relnamespace = current_schema()::regnamespace) AS valid"
)
_OLD_UNEMBEDDED = (
    "SELECT (SELECT count(*) FROM memories WHERE user_id = %s AND scope_id = %s)"
    " - (SELECT count(*) FROM memory_vectors WHERE user_id = %s AND scope_id = %s) AS n"
)


def ingest(store: Any, items: int, rng: np.random.Generator) -> None:
    from scale import corpus, sentences

    pool = sentences()
    texts = [
        f"{sp}: {' '.join(pool[i] for i in ids)}" for _, _, sp, ids in corpus(items, 1, len(pool))
    ]
    started = time.perf_counter()
    for start in range(0, items, 500):
        if start and start % 10_000 == 0:
            rate = 10_000 / (time.perf_counter() - started)
            print(f"  rows {start - 10_000:,}-{start:,}: {rate:,.0f}/s", flush=True)
            started = time.perf_counter()
        with store.transaction() as tx:
            news = [NewMemory(text=t) for t in texts[start : start + 500]]
            made = tx.memories.insert_memories(SCOPE, news, "bench")
            vecs = rng.standard_normal((len(made), DIM)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            tx.memories.put_vectors(SCOPE, [m.id for m in made], vecs)


def old_keyword(store: Any, terms: list[str], limit: int) -> list[tuple[str, float]]:
    """``keyword_search`` as it was before 0006 (commit 5e153e1; needs the GIN index)."""
    with store.memories._db.read() as conn:
        where = memory_filter(SCOPE, SearchFilters())
        found = fts.lexemes(conn, terms)
        if len(found) >= 2:
            row = conn.execute(_OLD_DOCS, TENANT).fetchone()
            docs = int(row["n"]) if row else 0
            if docs >= MIN_DOCS:
                quoted = [fts.quote(lexeme) for lexeme in found]
                rows = conn.execute(_OLD_FREQUENCIES, (*TENANT, *TENANT, found, quoted))
                found = prune(found, {r["lexeme"]: int(r["df"]) for r in rows}, docs)
        if not found:
            return []
        sql = _OLD_SEARCH.replace("{where}", where[0])
        query = " | ".join(fts.quote(lexeme) for lexeme in found)
        params = [*TENANT, *where[1], *TENANT, query, *TENANT, found, limit]
        return [(str(r["id"]), float(r["score"])) for r in conn.execute(sql, params)]


def old_vector(store: Any, query: np.ndarray, limit: int) -> tuple[list[str], int]:
    """``vector_search`` + ``unembedded_count`` as they were before 0006."""
    with store.memories._db.read() as conn:
        where = memory_filter(SCOPE, SearchFilters())
        row = conn.execute(
            _OLD_SIZE, (*TENANT, ann.EXACT_MAX + 1, ann.EXACT_MAX, ann.index_name(DIM))
        ).fetchone()
        if row["large"] and row["valid"]:
            conn.execute(
                "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
                " set_config('hnsw.ef_search', %s, true),"
                " set_config('hnsw.max_scan_tuples', %s, true)",
                (str(max(ann.EF_SEARCH, 2 * limit)), str(ann.MAX_SCAN_TUPLES)),
            )
            sql, params = (
                ann.approximate_sql(DIM, where[0]),
                (query, *TENANT, *where[1], query, limit),
            )
        else:
            sql, params = ann.exact_sql(where[0]), (query, *TENANT, DIM, *where[1], limit)
        found = [str(r["id"]) for r in conn.execute(sql, params)]
    with store.memories._db.read() as conn:
        missing = conn.execute(_OLD_UNEMBEDDED, TENANT * 2).fetchone()
    return found, int(missing["n"])


def new_keyword(store: Any, terms: list[str], limit: int) -> list[tuple[str, float]]:
    return store.memories.keyword_search(SCOPE, terms, SearchFilters(), limit)


def new_vector(store: Any, query: np.ndarray, limit: int) -> tuple[list[str], int]:
    found = store.memories.vector_search(SCOPE, query, SearchFilters(), limit)
    return [i for i, _ in found], store.memories.unembedded_count(SCOPE)


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def compare(store: Any, questions: list[str], vectors: np.ndarray, limit: int) -> dict[str, float]:
    got: dict[str, list[float]] = {k: [] for k in ("kw_old", "kw_new", "vec_old", "vec_new")}
    for question, vector in zip(questions, vectors, strict=True):
        terms = keyword_terms(question)
        old, new = old_keyword(store, terms, limit), new_keyword(store, terms, limit)
        assert [i for i, _ in old] == [i for i, _ in new], question  # same ranking
        assert all(
            math.isclose(a, b, rel_tol=1e-12) for (_, a), (_, b) in zip(old, new, strict=True)
        )
        (vo, no), (vn, nn) = old_vector(store, vector, limit), new_vector(store, vector, limit)
        assert (sorted(vo), no) == (sorted(vn), nn)
        got["kw_old"].append(timed(lambda t=terms: old_keyword(store, t, limit)))
        got["kw_new"].append(timed(lambda t=terms: new_keyword(store, t, limit)))
        got["vec_old"].append(timed(lambda v=vector: old_vector(store, v, limit)))
        got["vec_new"].append(timed(lambda v=vector: new_vector(store, v, limit)))
    return {k: statistics.median(v) for k, v in got.items()}


def main() -> None:
    from scale import questions
    from scale_pg import schema_url, start_server

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--url", help="an already loaded schema (skips the ingest)")
    args = parser.parse_args()
    global SCOPE, TENANT  # an already loaded schema: its (only) tenant
    import psycopg

    if args.url:
        url = args.url
        with psycopg.connect(url) as conn:
            user_id, scope_id = conn.execute(
                "SELECT user_id, scope_id FROM memories LIMIT 1"
            ).fetchone()
        SCOPE, TENANT = Scope(user_id=user_id, scope_id=scope_id), (user_id, scope_id)
    else:
        base, _server = start_server()
        url = schema_url(base, "counts")
    store = open_store(url)
    rng = np.random.default_rng(7)
    if not args.url:
        started = time.perf_counter()
        ingest(store, args.items, rng)
        print(f"ingest {args.items}: {time.perf_counter() - started:.1f} s", flush=True)
        from omoide.store.postgres.db import connect

        if args.items > ann.EXACT_MAX:
            with connect(store.memories._db.url) as conn:
                ann.create_index(conn, DIM)
    with psycopg.connect(store.memories._db.url, autocommit=True) as conn:
        # what the old statements searched with (0006 dropped it: the new ones do not)
        conn.execute("CREATE INDEX IF NOT EXISTS bench_old_tsv ON memories USING gin (tsv)")
        conn.execute("VACUUM ANALYZE")
    qs = questions(args.queries)
    vectors = rng.standard_normal((len(qs), DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    r = compare(store, qs, vectors, args.limit)
    print(
        f"{args.items} memories, one tenant, p50 ms: keyword old {r['kw_old']:.2f} new"
        f" {r['kw_new']:.2f} ({r['kw_old'] / r['kw_new']:.2f}x); vector_search + unembedded_count"
        f" old {r['vec_old']:.2f} new {r['vec_new']:.2f} ({r['vec_old'] / r['vec_new']:.2f}x)",
        flush=True,
    )
    store.close()


if __name__ == "__main__":
    main()
