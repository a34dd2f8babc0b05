"""Keyword search on PostgreSQL before and after the pruning change (5,000-postings budget and
the best 500 rescored with the pruned lexemes, ``omoide/store/pruning.py``), on one tenant.

Loads ``--items`` memories of ``bench/scale.py``'s corpus (``<speaker>: <1-3 LoCoMo dev
sentences>``) into one tenant through the store port (keyword postings by the triggers of
migration 0006; no vectors), runs ``VACUUM ANALYZE``, then times for each LoCoMo question the
keyword search through the port (now) and the previous statement (commit 787690c, pruning at 15%
of the tenant, nothing rescored; re-created below), alternated query by query. Also prints how
many queries had lexemes pruned.

    python bench/pg_rescoring.py --items 100000 --queries 200
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import corpus_texts, questions
from scale_pg import schema_url, start_server

from omoide.retrieval.terms import keyword_terms
from omoide.store import open_store
from omoide.store.ports.memories import NewMemory
from omoide.store.postgres import counts, fts
from omoide.store.postgres.filters import memory_filter
from omoide.store.pruning import COMMON_SHARE, MIN_DOCS
from omoide.types import Scope, SearchFilters

SCOPE = Scope(user_id="u", scope_id="s")
K1, B = fts.K1, fts.B
# omoide/store/postgres/fts.py at 787690c, its POSTINGS_SHARE (0.15) written in, rows grouped and
# probed by seq as the postings are keyed since migration 0008
_PREVIOUS = f"""
WITH c AS ({counts.SQL}),
q AS (SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('omoide_fts', omoide_fold(%s))) u),
f AS MATERIALIZED (
    SELECT q.lexeme, (SELECT count(*) FROM memory_terms t
        WHERE t.user_id = %s AND t.scope_id = %s AND t.lexeme = q.lexeme) AS df
    FROM q
),
present AS (
    SELECT lexeme, df, row_number() OVER w AS rn, (sum(df) OVER w)::float8 AS postings,
        count(*) OVER () AS n
    FROM f WHERE df > 0
    WINDOW w AS (ORDER BY df, lexeme COLLATE "C" ROWS UNBOUNDED PRECEDING)
),
kept AS (
    SELECT p.lexeme, p.df FROM present p, c
    WHERE c.memories < {MIN_DOCS} OR p.n < 2 OR p.rn = 1
        OR (p.df::float8 < {COMMON_SHARE!r}::float8 * c.memories
            AND p.postings <= 0.15::float8 * c.memories)
),
idf AS (
    SELECT kept.lexeme, greatest(ln((c.memories::float8 - kept.df + 0.5) / (kept.df + 0.5)), 1e-6)
        AS idf
    FROM kept, c
),
scored AS (
    SELECT p.seq, sum(idf.idf * (p.w * {K1 + 1})
        / (p.w + {K1} * (1 - {B} + {B} * p.doc_len / (SELECT avgdl FROM c))) ORDER BY p.lexeme)
        AS score
    FROM memory_terms p JOIN idf ON idf.lexeme = p.lexeme
    WHERE p.user_id = %s AND p.scope_id = %s
        AND p.lexeme = ANY((SELECT array_agg(lexeme) FROM kept)::text[])
    GROUP BY p.seq
)
SELECT c.memories, h.id, h.score, (SELECT count(*) FROM present) - (SELECT count(*) FROM kept)
    AS pruned
FROM c LEFT JOIN LATERAL (
    SELECT f.id, r.seq, r.score
    FROM (SELECT seq, score FROM scored ORDER BY score DESC, seq) r
    CROSS JOIN LATERAL (
        SELECT m.id FROM memories m WHERE m.user_id = %s AND m.seq = r.seq AND ({{where}})
        LIMIT 1
    ) f
    ORDER BY r.score DESC, r.seq
    LIMIT %s
) h ON true
"""


def load(url: str, items: int) -> None:
    import psycopg

    store = open_store(url)
    texts = corpus_texts(items)
    start = time.perf_counter()
    for i in range(0, items, 1000):
        with store.transaction() as tx:
            tx.memories.insert_memories(SCOPE, [NewMemory(t) for t in texts[i : i + 1000]], "b")
        if (i + 1000) % 20_000 == 0:
            print(
                f"  {i + 1000:,} ({(i + 1000) / (time.perf_counter() - start):.0f}/s)", flush=True
            )
    store.close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


def main() -> None:
    import psycopg
    import psycopg.rows

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=120, help="hybrid's keyword fetch")
    parser.add_argument("--url", help="an already loaded schema (skips the ingest)")
    args = parser.parse_args()
    server = None
    url = args.url
    if url is None:
        base, server = start_server()
        url = schema_url(base, "rescoring")
        load(url, args.items)
    store = open_store(url)
    where = memory_filter(SCOPE, SearchFilters())
    sql = _PREVIOUS.replace("{where}", where[0])
    tenant = [SCOPE.user_id, SCOPE.scope_id]
    now_ms: list[float] = []
    before_ms: list[float] = []
    pruned = 0
    with psycopg.connect(url, autocommit=True, row_factory=psycopg.rows.dict_row) as conn:
        for n, question in enumerate(questions(args.queries)):
            terms = keyword_terms(question)
            text = " ".join(terms)
            params = [*tenant, text, *tenant, *tenant, SCOPE.user_id, *where[1], args.limit]
            for turn in (0, 1) if n % 2 else (1, 0):
                t0 = time.perf_counter()
                if turn:
                    store.memories.keyword_search(SCOPE, terms, SearchFilters(), args.limit)
                    now_ms.append((time.perf_counter() - t0) * 1000)
                else:
                    rows = conn.execute(sql, params).fetchall()
                    before_ms.append((time.perf_counter() - t0) * 1000)
                    pruned += bool(rows and rows[0]["pruned"])
    store.close()
    b, a = statistics.median(before_ms), statistics.median(now_ms)
    print(f"{args.queries} questions, limit {args.limit}; pruned before in {pruned} of them")
    print(f"keyword p50 ms: before {b:.2f}, now {a:.2f} ({a / b:.2f}x)")
    q = statistics.quantiles
    print(f"keyword p95 ms: before {q(before_ms, n=20)[-1]:.2f}, now {q(now_ms, n=20)[-1]:.2f}")
    if server is not None:
        server.cleanup()


if __name__ == "__main__":
    main()
