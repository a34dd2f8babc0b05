"""A search in one statement returns what the previous statements returned, bit for bit.

The keyword search used to read the tenant's counts, the query's lexemes and their document
frequencies as statements of their own, prune in Python (``omoide.store.pruning``), then rank;
now one statement does all of it, the re-ranking of the best rows with the pruned lexemes
(``pruning.rescore``) included. The previous statements, followed by that re-ranking in
Python, are kept below as the reference and run on the same rows inside one snapshot: same
ids, same order, same scores, on a tenant large enough for the pruning (words of chosen
document frequencies, some equal, around both pruning limits) and on a small one. The exact
vector search (now one statement with the counts, reading memory rows in distance order only
as far as the limit takes) and ``ann.exact_sql`` are compared the same way with the previous
statement, which joined every vector to its memory before sorting: on vectors with many ties,
with and without a filter that most rows fail.
"""

from __future__ import annotations

import random

import numpy as np
import psycopg
import pytest
from pgvector.psycopg import register_vector

from omoide.store import pruning
from omoide.store.ports.memories import NewMemory
from omoide.store.postgres import PostgresStore, ann, counts, fts
from omoide.store.postgres.db import connect
from omoide.store.postgres.filters import memory_filter
from omoide.store.pruning import MIN_DOCS, POSTINGS_MAX, RESCORE_DEPTH, prune
from omoide.types import Scope, SearchFilters
from tests.store.contract import ALICE, BOB

# the distinct stemmed lexemes of the query's words (what the rows' vectors hold)
_LEXEMES = """
SELECT DISTINCT u.lexeme FROM unnest(to_tsvector('omoide_fts', omoide_fold(%s))) u
ORDER BY u.lexeme
"""
_FREQUENCIES = """
SELECT lexeme, count(*) AS df FROM memory_terms
WHERE user_id = %s AND scope_id = %s AND lexeme = ANY(%s::text[]) GROUP BY lexeme
"""
_PREVIOUS = f"""
WITH idf AS (
    SELECT lexeme, greatest(ln((%s::float8 - df + 0.5) / (df + 0.5)), 1e-6) AS idf
    FROM unnest(%s::text[], %s::bigint[]) AS q(lexeme, df)
),
scored AS (
    SELECT p.memory_id, p.seq, sum(idf.idf * (p.w * {fts.K1 + 1})
        / (p.w + {fts.K1} * (1 - {fts.B} + {fts.B} * p.doc_len / %s::float8)) ORDER BY p.lexeme)
        AS score
    FROM memory_terms p JOIN idf ON idf.lexeme = p.lexeme
    WHERE p.user_id = %s AND p.scope_id = %s AND p.lexeme = ANY(%s::text[])
    GROUP BY p.memory_id, p.seq
)
SELECT r.memory_id AS id, r.seq, r.score
FROM (SELECT memory_id, seq, score FROM scored ORDER BY score DESC, seq) r
CROSS JOIN LATERAL (
    SELECT 1 FROM memories m WHERE m.user_id = %s AND m.id = r.memory_id AND ({{where}}) LIMIT 1
) f
ORDER BY r.score DESC, r.seq
LIMIT %s
"""
# the pruned lexemes' part of the score of the given rows, summed in lexeme order
_EXTRA = f"""
WITH idf AS (
    SELECT lexeme, greatest(ln((%s::float8 - df + 0.5) / (df + 0.5)), 1e-6) AS idf
    FROM unnest(%s::text[], %s::bigint[]) AS q(lexeme, df)
)
SELECT p.seq, sum(idf.idf * (p.w * {fts.K1 + 1})
    / (p.w + {fts.K1} * (1 - {fts.B} + {fts.B} * p.doc_len / %s::float8)) ORDER BY p.lexeme)
    AS score
FROM memory_terms p JOIN idf ON idf.lexeme = p.lexeme
WHERE p.user_id = %s AND p.scope_id = %s AND p.memory_id = ANY(%s::text[])
GROUP BY p.seq
"""
WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "oscar",
]
# documents holding each word in the large tenant of 6,000: over 30% of it, exactly 30% (1,800:
# pruned), just under, and, rarest first, postings summing to exactly POSTINGS_MAX (kept) with
# the equal pair at 1,394 on that limit (ties go by code point: the second one is over it)
LARGE = 6_000
HOLDING = [3000, 1800, 1790, 1394, 1394, 1000, 800, 700, 500, 300, 200, 100, 5, 1]
assert sum(HOLDING[4:]) == POSTINGS_MAX and HOLDING[1] == 0.3 * LARGE


def _previous(store: PostgresStore, scope: Scope, terms: list[str], limit: int) -> list:
    """``keyword_search`` as the previous statements ran it, in one snapshot, then the
    re-ranking with the pruned lexemes in Python."""
    where = memory_filter(scope, SearchFilters())
    with store.memories._db.read() as conn:
        tally = counts.read(conn, scope.user_id, scope.scope_id)
        found = [str(r["lexeme"]) for r in conn.execute(_LEXEMES, (" ".join(terms),))]
        rows = conn.execute(_FREQUENCIES, (scope.user_id, scope.scope_id, found)).fetchall()
        dfs = {str(r["lexeme"]): int(r["df"]) for r in rows}
        kept = prune(found, dfs, tally.memories)
        if not kept:
            return []
        tenant = [scope.user_id, scope.scope_id]
        params = [tally.memories, kept, [dfs[k] for k in kept], tally.avgdl, *tenant, kept]
        sql = _PREVIOUS.replace("{where}", where[0])
        cursor = conn.execute(sql, [*params, scope.user_id, *where[1], 1_000_000])
        ranked = [(int(r["seq"]), float(r["score"]), str(r["id"])) for r in cursor]
        left = pruning.dropped(found, dfs, kept)
        extra: dict[int, float] = {}
        if left:
            head = [i for _, _, i in ranked[:RESCORE_DEPTH]]
            params = [tally.memories, left, [dfs[k] for k in left], tally.avgdl, *tenant, head]
            extra = {int(r["seq"]): float(r["score"]) for r in conn.execute(_EXTRA, params)}
        ids = {seq: i for seq, _, i in ranked}
        order = pruning.rescore([(seq, score) for seq, score, _ in ranked], extra, RESCORE_DEPTH)
        return [(ids[seq], score) for seq, score in order[:limit]]


_PREVIOUS_EXACT = (
    "SELECT m.id, m.seq, -(v.embedding <#> %s) AS score FROM memory_vectors v"
    " JOIN memories m ON m.user_id = v.user_id AND m.id = v.memory_id"
    " WHERE v.user_id = %s AND v.scope_id = %s AND vector_dims(v.embedding) = %s AND {where}"
    " ORDER BY v.embedding <#> %s, m.seq LIMIT %s"
)


def _fill(store: PostgresStore, scope: Scope, size: int, rng: random.Random) -> list[str]:
    holders = [rng.sample(range(size), min(size, n)) for n in HOLDING]
    texts = [[f"note {i % 7}"] for i in range(size)]
    for word, docs in zip(WORDS, holders, strict=True):
        for d in docs:
            texts[d].extend([word] * rng.choice((1, 1, 2, 3)))
    news = [
        NewMemory(
            text=" ".join(t), context="zulu said" if i % 5 == 0 else "", metadata={"k": i % 3}
        )
        for i, t in enumerate(texts)
    ]
    with store.transaction() as tx:
        made = tx.memories.insert_memories(scope, news, "t")
        vectors = np.eye(8, dtype=np.float32)[[i % 8 for i in range(size)]]
        vectors[::3] += 0.5  # many equal vectors: ties, which go by seq
        tx.memories.put_vectors(scope, [m.id for m in made], vectors)
    return [m.id for m in made]


def test_one_statement_ranks_as_the_previous_statements(
    pg_store: PostgresStore, pg_url: str
) -> None:
    rng = random.Random(5)
    assert LARGE > MIN_DOCS  # large enough to prune
    _fill(pg_store, ALICE, LARGE, rng)
    _fill(pg_store, BOB, 40, rng)
    with psycopg.connect(pg_url) as conn:  # plans, not results, wait for autovacuum otherwise
        conn.execute("ANALYZE memories")
        conn.execute("ANALYZE memory_terms")
    queries = [rng.sample(WORDS, rng.randint(1, 6)) for _ in range(60)]
    queries += [WORDS[:5], WORDS[1:4], ["juliet", "golf"], ["golf", "juliet", "echo"]]
    queries += [["kilo", "charlie"], ["nothing", "here"], ["mike", "unknown"], ["zulu", "lima"]]
    queries += [WORDS, WORDS[3:], WORDS[4:], [*WORDS[4:], "zulu"], ["note", "3", "delta"]]
    compared = 0
    for scope in (ALICE, BOB):
        for terms in queries:
            for limit in (5, 50, RESCORE_DEPTH + 100):  # the last reaches rows not rescored
                now = pg_store.memories.keyword_search(scope, terms, SearchFilters(), limit)
                before = _previous(pg_store, scope, terms, limit)
                assert [i for i, _ in now] == [i for i, _ in before], (scope, terms)
                for (_, a), (_, b) in zip(now, before, strict=True):
                    assert abs(a - b) <= 1e-12, (scope, terms)
                # the in-process lists (``fts.rank``) and the statement agree to the bit
                where = memory_filter(scope, SearchFilters())
                with pg_store.memories._db.read_one() as conn:
                    alone = fts.search(conn, scope.user_id, scope.scope_id, terms, where, limit)
                assert now == alone[0], (scope, terms)
                compared += len(now)
    assert compared > 10_000  # the queries found something to compare


def test_exact_vector_search_ranks_as_the_previous_statement(pg_store: PostgresStore) -> None:
    _fill(pg_store, ALICE, 300, random.Random(6))
    _fill(pg_store, BOB, 50, random.Random(7))
    rng = np.random.default_rng(3)
    compared = 0
    for filters in (SearchFilters(), SearchFilters(metadata={"k": 1})):
        where, args = memory_filter(ALICE, filters)
        for limit in (5, 40, 400):  # the last takes every row
            query = rng.standard_normal(8).astype(np.float32)
            now = pg_store.memories.vector_search(ALICE, query, filters, limit)
            tenant = (ALICE.user_id, ALICE.scope_id, 8)
            with pg_store.memories._db.read() as conn:
                before = conn.execute(
                    _PREVIOUS_EXACT.format(where=where), (query, *tenant, *args, query, limit)
                ).fetchall()
                exact = conn.execute(ann.exact_sql(where), (query, *tenant, *args, limit))
                assert [(r["id"], r["score"]) for r in exact] == [
                    (r["id"], r["score"]) for r in before
                ]
            assert now == [(str(r["id"]), float(r["score"])) for r in before]
            compared += len(now)
    assert compared == 5 + 40 + 300 + 5 + 40 + 100  # the filter keeps a third of the 300


def test_a_large_tenants_counts_statement_never_starts_the_exact_scan(
    pg_store: PostgresStore, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The statement that reads a tenant's counts also holds its exact search, gated on the
    counts: for a large tenant no vector row is read and no parallel worker is started (the
    gate once sat below a parallel Gather: 6 ms a search at 100k vectors for nothing)."""
    _fill(pg_store, ALICE, 300, random.Random(8))
    monkeypatch.setattr(ann, "EXACT_MAX", 100)  # alice is large now
    query = np.ones(8, dtype=np.float32)
    where = memory_filter(ALICE, SearchFilters())
    tenant = (ALICE.user_id, ALICE.scope_id)
    with connect(pg_url) as conn:
        register_vector(conn)
        conn.execute("ANALYZE memory_vectors")
        # make a parallel scan the planner's choice even on a small table
        for setting in ("parallel_setup_cost", "parallel_tuple_cost"):
            conn.execute(f"SET {setting} = 0")
        conn.execute("SET min_parallel_table_scan_size = 0")
        conn.execute("SET max_parallel_workers_per_gather = 2")
        conn.execute("SET enable_indexscan = off")
        conn.execute("SET enable_bitmapscan = off")
        tally, found = ann.exact_if_small(conn, *tenant, query, where, 10)
        assert tally.vectors == 300 and found is None
        params = (*tenant, query, *tenant, 8, *where[1], 10)
        explain = "EXPLAIN (ANALYZE, COSTS OFF) " + ann.exact_if_small_sql(where[0])
        plan = "\n".join(r["QUERY PLAN"] for r in conn.execute(explain, params))
        lines = plan.splitlines()
        scan = next(i for i, line in enumerate(lines) if "Seq Scan on memory_vectors" in line)
        assert "Parallel" in lines[scan]  # the plan the settings asked for
        gather = next(line for line in reversed(lines[:scan]) if "Gather" in line)
        assert "never executed" in gather, plan  # no worker started, no vector read

        monkeypatch.setattr(ann, "EXACT_MAX", 1_000)  # small again: the same statement answers
        tally, found = ann.exact_if_small(conn, *tenant, query, where, 10)
        assert found is not None and len(found) == 10
